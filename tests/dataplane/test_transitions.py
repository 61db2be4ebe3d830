"""Algorithm 2's transitions on one switch queue, with exact pipeline pass counts.

This module is fast and also runs without the JIT (see test_jit_parity.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from netlock.dataplane import SwitchDataPlane
from netlock.dataplane.registers import L_EXCLUSIVE, L_SHARED, S_TXN
from netlock.geometry import SwitchGeometry
from netlock.packets import ActionKind, DropReason, Op

from .harness import S, X, acq, assert_one_access_per_pass, granted_slot, kinds, rel

LOCK = 7


def switch_with(left: int = 0, right: int = 7, slots: int = 20,
                release_check: str = "owner") -> SwitchDataPlane:
    switch = SwitchDataPlane(SwitchGeometry.uniform(slots, arrays=4), trace_capacity=10_000,
                             release_check=release_check)
    switch.install(LOCK, 0, left, right)
    switch.clear_trace()
    return switch


def holders(switch: SwitchDataPlane) -> tuple[int, int]:
    """(shared, exclusive) holders of LOCK."""
    row = switch.locks[switch.lock_index(LOCK)]
    return int(row[L_SHARED]), int(row[L_EXCLUSIVE])


@pytest.fixture(params=["owner", "none"])
def check(request: pytest.FixtureRequest) -> str:
    """Both release checks: the passes of Algorithm 2 are the same unless a shared holder
    behind the head releases first."""
    return request.param


def run(switch: SwitchDataPlane, *reqs):
    """Process requests; returns the last outcome after checking its access trace.

    A release without a slot names its grant's, as its client would."""
    outcome = None
    for req in reqs:
        slot = granted_slot(switch, req.lock_id, req.txn_id)
        if req.op == Op.RELEASE and req.slot == -1 and slot >= 0:
            req = replace(req, slot=slot)
        switch.clear_trace()
        outcome = switch.process(req, 0)
        trace = switch.access_trace()
        assert_one_access_per_pass(trace)
        passes_seen = len(np.unique(trace[:, 0]))
        if switch.lock_index(req.lock_id) >= 0:
            assert passes_seen == outcome.passes
        else:
            assert passes_seen <= outcome.passes == 1
    return outcome


def test_acquire_grants_when_empty_or_all_shared():
    switch = switch_with()
    assert kinds(run(switch, acq(LOCK, 1, S)).actions) == [("GRANT", 1)]
    assert kinds(run(switch, acq(LOCK, 2, S)).actions) == [("GRANT", 2)]
    out = run(switch, acq(LOCK, 3, X))
    assert (out.actions, out.passes) == ([], 1)
    assert run(switch, acq(LOCK, 4, S)).actions == [], "a shared request waits behind an X"


def test_shared_to_shared_reads_the_new_head():
    switch = switch_with(release_check="none")
    run(switch, acq(LOCK, 1, S), acq(LOCK, 2, S))
    out = run(switch, rel(LOCK, 2, S))
    assert (out.actions, out.passes) == ([], 2)
    assert switch.occupancy(LOCK)[0]["count"] == 1


def test_owner_check_marks_a_shared_release_behind_the_head():
    switch = switch_with()
    run(switch, acq(LOCK, 1, S), acq(LOCK, 2, S))
    out = run(switch, rel(LOCK, 2, S))
    assert (out.actions, out.passes) == ([], 1)
    assert switch.occupancy(LOCK)[0]["count"] == 2
    assert holders(switch) == (1, 0)
    out = run(switch, rel(LOCK, 1, S))
    assert (out.actions, out.passes) == ([], 2), "the head, then the marked slot behind it"
    assert switch.is_drained(LOCK)


def test_owner_check_dequeues_a_run_of_marked_slots_then_grants():
    switch = switch_with()
    run(switch, *[acq(LOCK, t, S) for t in (1, 2, 3)], acq(LOCK, 4, X))
    for t in (3, 2):
        out = run(switch, rel(LOCK, t, S))
        assert (out.actions, out.passes) == ([], 1)
    out = run(switch, rel(LOCK, 1, S))
    assert (kinds(out.actions), out.passes) == ([("GRANT", 4)], 4)
    assert switch.occupancy(LOCK)[0]["count"] == 1


def test_shared_to_shared_reads_the_waiting_exclusive(check):
    switch = switch_with(release_check=check)
    run(switch, acq(LOCK, 1, S), acq(LOCK, 2, S), acq(LOCK, 3, X))
    out = run(switch, rel(LOCK, 1, S))
    assert (out.actions, out.passes) == ([], 2)


def test_shared_to_exclusive(check):
    switch = switch_with(release_check=check)
    run(switch, acq(LOCK, 1, S), acq(LOCK, 2, X))
    out = run(switch, rel(LOCK, 1, S))
    assert (kinds(out.actions), out.passes) == ([("GRANT", 2)], 2)


def test_exclusive_to_exclusive(check):
    switch = switch_with(release_check=check)
    run(switch, acq(LOCK, 1, X), acq(LOCK, 2, X), acq(LOCK, 3, X))
    out = run(switch, rel(LOCK, 1, X))
    assert (kinds(out.actions), out.passes) == ([("GRANT", 2)], 2)


@pytest.mark.parametrize("run_length", [1, 2, 4])
@pytest.mark.parametrize("then_exclusive", [False, True])
def test_exclusive_to_shared_grants_the_run(run_length, then_exclusive, check):
    switch = switch_with(release_check=check)
    run(switch, acq(LOCK, 1, X), *[acq(LOCK, 10 + k, S) for k in range(run_length)])
    if then_exclusive:
        run(switch, acq(LOCK, 99, X))
    out = run(switch, rel(LOCK, 1, X))
    assert kinds(out.actions) == [("GRANT", 10 + k) for k in range(run_length)]
    assert out.passes == 1 + run_length + int(then_exclusive)


def test_exclusive_release_emptying_the_queue_takes_one_pass(check):
    switch = switch_with(release_check=check)
    run(switch, acq(LOCK, 1, X))
    out = run(switch, rel(LOCK, 1, X))
    assert (out.actions, out.passes) == ([], 1)
    assert switch.is_drained(LOCK)


def test_stale_exclusive_release_is_dropped_without_effect(check):
    switch = switch_with(release_check=check)
    run(switch, acq(LOCK, 1, X), acq(LOCK, 2, X))
    before = switch.snapshot()
    out = run(switch, rel(LOCK, 2, X))
    assert [(a.kind, a.reason) for a in out.actions] == [(ActionKind.DROP,
                                                           DropReason.STALE_RELEASE)]
    after = switch.snapshot()
    for name in ("locks", "regions", "slots"):
        assert np.array_equal(before[name], after[name])


@pytest.mark.parametrize("setup", [[], [(1, X)], [(1, X), (2, S)]])
def test_shared_release_without_a_granted_shared_head_is_stale(setup, check):
    switch = switch_with(release_check=check)
    run(switch, *[acq(LOCK, t, m) for t, m in setup])
    out = run(switch, rel(LOCK, 5, S))
    assert [(a.kind, a.reason) for a in out.actions] == [(ActionKind.DROP,
                                                           DropReason.STALE_RELEASE)]


def test_shared_releases_commute(check):
    switch = switch_with(release_check=check)
    run(switch, acq(LOCK, 1, S), acq(LOCK, 2, S), acq(LOCK, 3, X))
    assert run(switch, rel(LOCK, 2, S)).actions == []
    assert kinds(run(switch, rel(LOCK, 1, S)).actions) == [("GRANT", 3)]


def test_head_and_tail_wrap_inside_a_region_spanning_two_arrays(check):
    switch = switch_with(left=3, right=6, release_check=check)  # arrays hold slots 0-4 and 5-9
    assert switch.geometry.slot_array[3] != switch.geometry.slot_array[6]
    run(switch, acq(LOCK, 1, X), acq(LOCK, 2, X), acq(LOCK, 3, X))
    granted = [1]
    for txn in range(4, 40):
        run(switch, acq(LOCK, txn, X))
        out = run(switch, rel(LOCK, granted[-1], X))
        granted += [a.request.txn_id for a in out.actions]
        region = switch.occupancy(LOCK)[0]
        assert region["count"] == 3 and 3 <= region["head"] <= 6
        head = region["head"]
        assert switch.slots[head, S_TXN] == granted[-1], "the head slot holds the holder"
    assert granted == list(range(1, 38))


def test_run_of_shared_crossing_the_array_boundary(check):
    switch = switch_with(left=3, right=7, release_check=check)
    run(switch, acq(LOCK, 1, X), *[acq(LOCK, t, S) for t in (2, 3, 4, 5)])
    out = run(switch, rel(LOCK, 1, X))
    assert kinds(out.actions) == [("GRANT", t) for t in (2, 3, 4, 5)]
    assert out.passes == 5


def test_requests_for_unknown_locks_go_to_the_server():
    switch = switch_with()
    for req in (acq(3, 1, X), rel(3, 1, X)):
        out = run(switch, req)
        assert (kinds(out.actions), out.passes) == ([("TO_SERVER", 1)], 1)
        assert out.actions[0].request is req


def test_the_access_checker_catches_two_indices_in_one_pass():
    with pytest.raises(AssertionError, match="head_register"):
        assert_one_access_per_pass(np.array([[3, 6, 1], [3, 6, 2]]))


@pytest.mark.parametrize("check", ["owner", "none"])
def test_a_duplicated_shared_release_frees_another_holder_only_without_the_owner_check(check):
    switch = switch_with(release_check=check)
    run(switch, acq(LOCK, 1, S), acq(LOCK, 2, S), acq(LOCK, 3, X))
    release = replace(rel(LOCK, 1, S), slot=granted_slot(switch, LOCK, 1))
    assert run(switch, release).actions == []
    again = run(switch, release).actions
    if check == "owner":
        assert [(a.kind, a.reason) for a in again] == [(ActionKind.DROP,
                                                         DropReason.STALE_RELEASE)]
        assert holders(switch) == (1, 0), "transaction 2 still holds alone"
    else:
        assert kinds(again) == [("GRANT", 3)], "the paper's rule grants X beside holder 2"


@pytest.mark.parametrize("check", ["owner", "none"])
def test_a_release_arriving_after_its_lease_expired(check):
    switch = switch_with(release_check=check)
    run(switch, acq(LOCK, 1, S))
    late = replace(rel(LOCK, 1, S), slot=granted_slot(switch, LOCK, 1))
    switch.process(acq(LOCK, 2, S), 300)
    switch.process(acq(LOCK, 3, X), 300)
    switch.expire(500, 400)
    assert holders(switch) == (1, 0)
    out = run(switch, late)
    if check == "owner":
        assert [a.kind for a in out.actions] == [ActionKind.DROP]
        assert holders(switch) == (1, 0)
    else:
        assert kinds(out.actions) == [("GRANT", 3)], "holder 2's lock was freed"


def test_owner_check_refuses_a_slot_reused_by_another_transaction():
    switch = switch_with(left=0, right=0)
    run(switch, acq(LOCK, 1, X))
    first = replace(rel(LOCK, 1, X), slot=granted_slot(switch, LOCK, 1))
    run(switch, first)
    assert kinds(run(switch, acq(LOCK, 2, X)).actions) == [("GRANT", 2)]
    assert granted_slot(switch, LOCK, 2) == first.slot
    assert [a.kind for a in run(switch, first).actions] == [ActionKind.DROP]
    for slot in (-1, 5, 10**6):
        out = switch.process(replace(rel(LOCK, 2, X), slot=slot), 0)
        assert [a.kind for a in out.actions] == [ActionKind.DROP], slot
    assert holders(switch) == (0, 1)
