"""Shared fixtures: the shipped profile, the hand-written bf-rt.json files, small plans."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwrunner.profile import SwitchProfile, load_profile
from tests.hwrunner.conformance import sde_client, sde_install, serve  # noqa: F401 (fixtures)

FIXTURES = Path(__file__).parent / "fixtures"
P4_14 = FIXTURES / "bfrt_p4_14.json"
P4_16 = FIXTURES / "bfrt_p4_16.json"


@pytest.fixture
def profile() -> SwitchProfile:
    return load_profile("netlock-public")


@pytest.fixture
def small_profile(profile: SwitchProfile) -> SwitchProfile:
    """The public profile sized like the fixtures (64 lock indices, 128 slots)."""
    from dataclasses import replace

    return replace(profile, lock_capacity=64, slot_capacity=129, batch_size=3)
