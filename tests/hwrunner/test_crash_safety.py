"""A push cut anywhere -- between batches or inside one, once or again while resuming -- ends in
a verified switch after ``--resume`` or a plain push.

The switch here keeps every write it applied (a real switch does; the emulator's state file
does at each journaled step, see ``hwrunner.targets.checkpointer``), and the journal is what
the interrupted push left on disk. Plans have thousands of locks.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hwrunner.compile import compile_migration
from hwrunner.emulator import EmulatedSwitch
from hwrunner.operations import Operation
from hwrunner.push import push, resume
from hwrunner.readback import check_layout
from hwrunner.switch_contents import diff, layout_for
from tests.hwrunner.plans import make_plan

EXAMPLES = int(os.environ.get("NETLOCK_CRASH_EXAMPLES", "25"))
SLOTS = 12000
_rng = np.random.default_rng(19)
PLAN_A = make_plan([(i, int(s)) for i, s in zip(range(3000), _rng.integers(1, 4, 3000),
                                                 strict=True)], total_slots=SLOTS)
PLAN_B = make_plan([(i, int(s)) for i, s in zip(range(1500, 4500), _rng.integers(1, 4, 3000),
                                                 strict=True)], total_slots=SLOTS)
"""B keeps 1500 locks of A (most at new regions), evicts 1500 and adds 1500."""


class Crash(BaseException):
    """The process dies (SIGKILL): nothing after the cut runs, not even rollback."""


class CutAfter:
    """A driver that applies ``rows`` more rows -- the first part of a batch, when the cut falls
    inside one -- and then crashes."""

    def __init__(self, inner: EmulatedSwitch, rows: int) -> None:
        self.inner = inner
        self.budget = rows

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def write(self, op: Operation) -> None:
        if self.budget >= len(op):
            self.budget -= len(op)
            self.inner.write(op)
            return
        if self.budget:
            self.inner.write(op.take(slice(0, self.budget)))
        self.budget = 0
        raise Crash


@pytest.fixture(scope="module")
def prof():
    from hwrunner.profile import load_profile

    return replace(load_profile(), lock_capacity=8192, slot_capacity=SLOTS + 1, batch_size=700)


def total_rows(prof) -> int:
    a = layout_for(PLAN_A, prof)
    program = compile_migration(prof, diff(a, layout_for(PLAN_B, prof, a)))
    return program.operations


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0, 1, exclude_max=True), again=st.none() | st.integers(0, 5000),
       how=st.sampled_from(["resume", "plain push"]))
def test_a_push_cut_anywhere_is_finished(prof, tmp_path_factory, cut, again, how):
    journal = Path(tmp_path_factory.mktemp("crash")) / "push.journal"
    switch = EmulatedSwitch(prof, PLAN_A.geometry)
    assert push(switch, prof, PLAN_A).verified
    goal = layout_for(PLAN_B, prof, layout_for(PLAN_A, prof))
    rows = int(cut * total_rows(prof))
    with pytest.raises(Crash):
        push(CutAfter(switch, rows), prof, PLAN_B, journal_path=journal)
    assert journal.exists()
    if again is not None:
        with contextlib.suppress(Crash):
            resume(CutAfter(switch, again), prof, journal)
    if how == "resume" and journal.exists():
        result = resume(switch, prof, journal)
    else:
        result = push(switch, prof, PLAN_B, journal_path=journal)
    assert result.verified, result.problems
    assert not journal.exists()
    assert check_layout(switch, prof, goal) == []
