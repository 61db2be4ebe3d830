"""Fixtures of the conformance suite: the real SDE client and in-memory BFRuntime servers.

Skipped, with one reason, where neither ``$SDE_INSTALL`` nor ``../shared/bfrt-sde`` is there.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from hwrunner.profile import SwitchProfile
from tests.hwrunner import sde_tree
from tests.hwrunner.bfrt_program import SMALL, Sizes, netlock_bfrt


@pytest.fixture(scope="session")
def sde_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An SDE install holding the real client (built in a temp dir when none is set)."""
    reason = sde_tree.missing_reason()
    if reason:
        pytest.skip(reason)
    return sde_tree.installed_sde() or sde_tree.build_tree(tmp_path_factory.mktemp("sde"))


@pytest.fixture(scope="session")
def sde_client(sde_install: Path) -> ModuleType:
    """``bfrt_grpc.client``, imported from the SDE install."""
    tofino = str(sde_tree.tofino_dir(sde_install))
    if tofino not in sys.path:
        sys.path.append(tofino)
    import bfrt_grpc.client

    return bfrt_grpc.client


def start_server(bfrt: dict, pipes: int = 4, program: str = "netlock") -> Any:
    from tests.hwrunner.bfrt_server import BfruntimeServer

    return BfruntimeServer(bfrt, program=program, pipes=pipes)


@pytest.fixture
def serve(sde_client: ModuleType, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``serve(p4_16=False, sizes=SMALL, pipes=4, stats=False, doc=None)`` starts a server
    (of ``doc`` when given, else of the NetLock program so built); all stop at the end of the
    test. The real client is what ``import bfrt_grpc.client`` finds."""
    package = sys.modules["bfrt_grpc"]
    monkeypatch.setitem(sys.modules, "bfrt_grpc", package)
    monkeypatch.setitem(sys.modules, "bfrt_grpc.client", sde_client)
    started = []

    def start(p4_16: bool = False, sizes: Sizes = SMALL, pipes: int = 4,
              stats: bool = False, doc: dict | None = None) -> Any:
        server = start_server(doc or netlock_bfrt(p4_16, sizes, stats), pipes)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def target(server: Any) -> str:
    return f"grpc://{server.address}"


def write_bfrt(path: Path, bfrt: dict) -> Path:
    path.write_text(json.dumps(bfrt))
    return path


def sized(profile: SwitchProfile, batch_size: int = 5) -> SwitchProfile:
    """The public profile with small batches (several WriteRequests per step)."""
    return replace(profile, batch_size=batch_size)
