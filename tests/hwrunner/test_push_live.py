"""Pushing plans to an emulated switch while clients acquire and release locks through it.

Plan A installs locks that servers were serving; plan B moves, adds and evicts locks. No
push may grant a lock twice, break S/X exclusion, or lose a queued request -- including
pushes that fail midway (rolled back or finished forward) and a push resumed from its
journal after a crash.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hwrunner.emulator import EmulatedSwitch
from hwrunner.journal import load_journal
from hwrunner.push import PushOptions, push, resume
from hwrunner.readback import check_layout, read_live
from hwrunner.server_handover import NoLockServers
from hwrunner.switch_contents import layout_for
from netlock.errors import TargetError
from netlock.plan import PartitionRange
from tests.hwrunner.flaky import Flaky, table_is
from tests.hwrunner.plans import make_plan
from tests.hwrunner.traffic import SimPacer, Traffic

LOCKS = list(range(1, 13))
PARTITION = (PartitionRange(0, 6, 0), PartitionRange(7, 999, 1))
PLAN_A = make_plan({1: (0, 3), 2: (4, 5), 3: (6, 6), 4: (7, 9), 5: (10, 11)},
                   partition=PARTITION)
PLAN_B = make_plan({1: (0, 3), 2: (12, 14), 4: (15, 15), 6: (4, 7), 7: (8, 9), 8: (16, 19)},
                   partition=PARTITION)
"""B keeps 1, moves 2 and 4 (4 shrinks into part of what was free), evicts 3 and 5, adds
6, 7 (into slots 3 and 5 left) and 8."""
OPTIONS = PushOptions(drain_timeout_s=0.05, quiesce_timeout_s=0.05, poll_s=20e-6)


@pytest.fixture
def live(small_profile):
    switch = EmulatedSwitch(small_profile, PLAN_A.geometry)
    traffic = Traffic(switch, PLAN_A, LOCKS, clients=10, seed=7)
    traffic.run(200)
    return switch, traffic


def goal_b(profile):
    return layout_for(PLAN_B, profile, layout_for(PLAN_A, profile))


def push_live(driver, profile, plan, traffic, **kw):
    return push(driver, profile, plan, servers=traffic.lock_servers(), pacer=SimPacer(traffic),
                options=kw.pop("options", OPTIONS), **kw)


def assert_safe(traffic: Traffic) -> None:
    traffic.finish()
    checker = traffic.checker
    assert checker.violations == 0
    assert checker.duplicates == 0
    assert checker.anomalies == []
    assert traffic.waiting == 0, "a queued request was lost"
    assert checker.grants == traffic.acquires


@pytest.mark.parametrize("seed", range(4))
def test_push_a_then_b_under_traffic(small_profile, seed):
    switch = EmulatedSwitch(small_profile, PLAN_A.geometry)
    traffic = Traffic(switch, PLAN_A, LOCKS, clients=10, seed=seed)
    traffic.run(200)
    a = push_live(switch, small_profile, PLAN_A, traffic)
    assert a.outcome == "installed" and a.verified and a.migrated_locks == 5
    traffic.run(300)
    served_by_switch = switch.dataplane.counters()
    assert served_by_switch["requests"].sum() > 0
    b = push_live(switch, small_profile, PLAN_B, traffic)
    assert b.outcome == "installed" and b.verified and b.migrated_locks == 7
    assert read_live(switch, small_profile).layout.lock_id.tolist() == [1, 2, 4, 6, 7, 8]
    traffic.run(300)
    again = push_live(switch, small_profile, PLAN_B, traffic)
    assert again.operations == 0 and again.outcome == "unchanged"
    assert_safe(traffic)
    assert sum(server.expired_total for server in traffic.servers) == 0


def test_overflow_and_contention_are_exercised(live, small_profile):
    switch, traffic = live
    push_live(switch, small_profile, PLAN_A, traffic)
    traffic.run(400)
    peaks = switch.dataplane.counters()["peak_occupancy"]
    assert peaks.max() > 4, "the test should overflow some switch queue"
    assert_safe(traffic)


def test_failure_before_the_point_of_no_return_rolls_back(live, small_profile, tmp_path: Path):
    switch, traffic = live
    push_live(switch, small_profile, PLAN_A, traffic)
    traffic.run(100)
    flaky = Flaky(switch, fail=table_is("queue_size_op_register"))
    journal = tmp_path / "push.journal"
    result = push_live(flaky, small_profile, PLAN_B, traffic, journal_path=journal)
    assert result.outcome == "rolled back" and result.verified
    assert "injected" in result.problems[0]
    assert not journal.exists()
    assert check_layout(switch, small_profile, layout_for(PLAN_A, small_profile)) == []
    traffic.run(200)
    assert_safe(traffic)


def test_drain_timeout_rolls_back_and_resumes_paused_locks(live, small_profile):
    switch, traffic = live
    push_live(switch, small_profile, PLAN_A, traffic)
    traffic.run(50)
    holder = next((c for c in traffic.clients if c.state == "holding" and c.lock == 3), None)
    while holder is None:
        traffic.run(1)
        holder = next((c for c in traffic.clients if c.state == "holding" and c.lock == 3),
                      None)
    holder.stuck = True
    result = push_live(switch, small_profile, PLAN_B, traffic)
    assert result.outcome == "rolled back"
    assert "drain: " in result.problems[0] and "still busy" in result.problems[0]
    paused = switch.read_registers("queue_size_op_register", ("f1",),
                                   read_live(switch, small_profile).layout.index)["f1"]
    assert not paused.any()
    holder.stuck = False
    traffic.run(200)
    assert_safe(traffic)


@pytest.mark.parametrize("error", [TargetError("injected: timeout"), KeyboardInterrupt()],
                         ids=["driver-error", "ctrl-c"])
def test_failure_after_the_point_of_no_return_finishes_forward(live, small_profile, error):
    switch, traffic = live
    push_live(switch, small_profile, PLAN_A, traffic)
    traffic.run(100)
    flaky = Flaky(switch, fail=table_is("check_lock_exist_table", "add"), error=error)
    result = push_live(flaky, small_profile, PLAN_B, traffic)
    assert result.outcome == "finished forward" and result.verified
    assert check_layout(switch, small_profile, goal_b(small_profile)) == []
    assert_safe(traffic)


def test_crash_midway_then_resume_from_the_journal(live, small_profile, tmp_path: Path):
    switch, traffic = live
    push_live(switch, small_profile, PLAN_A, traffic)
    traffic.run(100)
    journal = tmp_path / "push.journal"
    flaky = Flaky(switch, fail=table_is("left_bound_register"), times=5)
    with pytest.raises(TargetError, match=r"push stopped at step \d+ \(install\) after the point "
                                          r"of no return: .*run netlock push --resume"):
        push_live(flaky, small_profile, PLAN_B, traffic, journal_path=journal)
    recorded = load_journal(journal)
    assert recorded.direction == "forward" and recorded.goal == goal_b(small_profile)
    traffic.run(300)
    result = resume(switch, small_profile, journal, servers=traffic.lock_servers(),
                    pacer=SimPacer(traffic), options=OPTIONS)
    assert result.outcome == "finished forward" and result.verified
    assert not journal.exists()
    assert_safe(traffic)


def test_a_hard_crash_leaves_a_journal_that_resume_completes(live, small_profile,
                                                             tmp_path: Path):
    switch, traffic = live
    push_live(switch, small_profile, PLAN_A, traffic)
    traffic.run(100)
    journal = tmp_path / "push.journal"

    class Crash(BaseException):
        pass

    flaky = Flaky(switch, fail=table_is("check_lock_exist_table", "add"), error=Crash())
    with pytest.raises(Crash):
        push_live(flaky, small_profile, PLAN_B, traffic, journal_path=journal)
    assert load_journal(journal).step > 0
    traffic.run(200)
    result = resume(switch, small_profile, journal, servers=traffic.lock_servers(),
                    pacer=SimPacer(traffic), options=OPTIONS)
    assert result.verified and read_live(switch, small_profile).layout.lock_id.tolist() == [
        1, 2, 4, 6, 7, 8]
    assert_safe(traffic)


def test_a_corrupted_read_back_is_detected(live, small_profile):
    switch, traffic = live
    push_live(switch, small_profile, PLAN_A, traffic)

    def corrupt(table: str, index: np.ndarray, out: dict) -> None:
        if table == "right_bound_register" and 1 in index.tolist():
            out["f1"][2, index.tolist().index(1)] += 1

    result = push_live(Flaky(switch, corrupt=corrupt), small_profile, PLAN_B, traffic)
    assert not result.verified
    assert any("right_bound_register[1].f1 is [4, 4, 5, 4]" in p for p in result.problems)
    assert_safe(traffic)


@pytest.mark.parametrize("sabotage", ["skip take_over", "ignore handed-over requests"])
def test_the_checker_catches_a_broken_protocol(small_profile, sabotage):
    """Guards the guard: without the lock servers' part, requests are lost and it shows."""
    switch = EmulatedSwitch(small_profile, PLAN_A.geometry)
    traffic = Traffic(switch, PLAN_A, LOCKS, clients=10, seed=0)
    traffic.run(200)
    servers = traffic.lock_servers()
    if sabotage == "skip take_over":
        servers.take_over = lambda ids: None
    else:
        real = servers.hand_over
        servers.hand_over = lambda ids: real(ids) * 0
    pacer = SimPacer(traffic)
    push(switch, small_profile, PLAN_A, servers=servers, pacer=pacer, options=OPTIONS)
    traffic.run(300)
    push(switch, small_profile, PLAN_B, servers=servers, pacer=pacer, options=OPTIONS)
    traffic.finish()
    assert traffic.waiting > 0


def gap_servers(traffic: Traffic):
    """Lock servers around which a request for every handed-over lock reaches the switch
    before its table entry exists (what a real switch's control-plane latency allows)."""
    servers = traffic.lock_servers()
    real = servers.hand_over

    def hand_over(ids: np.ndarray) -> np.ndarray:
        held = real(ids)
        for lock in ids.tolist():
            traffic.request(lock)
        return held

    servers.hand_over = hand_over
    return servers


def test_requests_between_hand_over_and_table_entry_are_counted(live, small_profile):
    switch, traffic = live
    push_live(switch, small_profile, PLAN_A, traffic)
    traffic.run(300)
    servers = gap_servers(traffic)
    result = push(switch, small_profile, PLAN_B, servers=servers, pacer=SimPacer(traffic),
                  options=OPTIONS)
    assert result.verified
    assert sum(s.resent_total for s in traffic.servers) >= 5, "2, 4, 6, 7, 8 enter"
    assert_safe(traffic)
    held = switch.dataplane.regions[0, :, 5]
    assert (held >= 0).all() and not held.any(), "server-held back to 0 once all is granted"


@pytest.mark.parametrize("sabotage", ["buffer them uncounted", "never re-send them"])
def test_the_hand_over_gap_loses_requests_without_the_fix(live, small_profile, sabotage):
    """Guards the guard: the old protocol (requests in the gap join q2 uncounted) or dropping
    the re-send leaves requests that are never granted."""
    switch, traffic = live
    push_live(switch, small_profile, PLAN_A, traffic)
    traffic.run(300)
    servers = gap_servers(traffic)
    if sabotage == "never re-send them":
        servers.mapped = lambda ids: None
    else:
        for server in traffic.servers:
            server.hand_over = (lambda real: lambda lock, classes, priorities, **_: real(
                lock, classes, priorities))(server.hand_over)
    push(switch, small_profile, PLAN_B, servers=servers, pacer=SimPacer(traffic),
         options=OPTIONS)
    traffic.finish()
    held = switch.dataplane.regions[0, :, 5]
    assert traffic.waiting > 0 or (held < 0).any()


PARTITION_C = (PartitionRange(0, 3, 1), PartitionRange(4, 6, 0), PartitionRange(7, 999, 0))
PLAN_C = make_plan({1: (0, 3), 2: (12, 14), 4: (15, 15), 6: (4, 7), 7: (8, 9), 8: (16, 19)},
                   partition=PARTITION_C)
"""B's locks with a new partition: locks 0..3 move to server 1, 7.. to server 0."""


@pytest.mark.parametrize("seed", range(3))
def test_a_partition_change_moves_server_state_under_traffic(small_profile, seed):
    switch = EmulatedSwitch(small_profile, PLAN_A.geometry)
    traffic = Traffic(switch, PLAN_A, LOCKS, clients=12, seed=seed)
    traffic.run(200)
    push_live(switch, small_profile, PLAN_A, traffic)
    traffic.run(300)
    busy = {lock for s in traffic.servers for lock in s.served_locks()}
    assert busy & set(range(9, 13)), "server 1 serves locks that move to server 0"
    result = push_live(switch, small_profile, PLAN_C, traffic)
    assert result.outcome == "installed" and result.verified
    assert switch.server_of(np.array([2, 5, 9])).tolist() == [1, 0, 0]
    old_one, old_zero = traffic.servers[1], traffic.servers[0]
    assert not [x for x in old_one.served_locks() if x >= 7] and not old_one.leaving
    assert not [x for x in old_zero.served_locks() if x <= 3] and not old_zero.arriving
    traffic.run(300)
    assert_safe(traffic)


def test_a_transfer_timeout_rolls_back_the_partition_and_the_servers(live, small_profile):
    switch, traffic = live
    push_live(switch, small_profile, PLAN_A, traffic)
    holder = None
    while holder is None:
        traffic.run(1)
        holder = next((c for c in traffic.clients if c.state == "holding" and c.lock >= 9), None)
    holder.stuck = True
    result = push_live(switch, small_profile, PLAN_C, traffic)
    assert result.outcome == "rolled back" and result.verified
    assert "lock server 1 still has holders of locks 7.." in result.problems[0]
    assert check_layout(switch, small_profile, layout_for(PLAN_A, small_profile)) == []
    assert all(not s.leaving and not s.arriving for s in traffic.servers)
    holder.stuck = False
    traffic.run(200)
    assert_safe(traffic)


def test_the_checker_catches_a_partition_change_without_transfer(live, small_profile):
    """Guards the guard: rewriting the partition alone sends releases to the wrong server."""
    switch, traffic = live
    push_live(switch, small_profile, PLAN_A, traffic)
    traffic.run(300)
    servers = traffic.lock_servers()
    servers.begin_transfer = servers.finish_transfer = lambda moves: None
    push(switch, small_profile, PLAN_C, servers=servers, pacer=SimPacer(traffic),
         options=OPTIONS)
    traffic.finish()
    checker = traffic.checker
    assert checker.anomalies or checker.violations or traffic.waiting


def test_a_partition_change_needs_lock_servers_the_push_controls(small_profile):
    switch = EmulatedSwitch(small_profile, PLAN_A.geometry)
    push(switch, small_profile, PLAN_A)
    with pytest.raises(TargetError, match=r"moves locks 0\.\.3 from lock server 0 to 1 \(2 "
                                          r"range\(s\).*--servers-idle"):
        push(switch, small_profile, PLAN_C)
    assert read_live(switch, small_profile).layout == layout_for(PLAN_A, small_profile)
    result = push(switch, small_profile, PLAN_C, servers=NoLockServers(idle=True))
    assert result.verified and result.outcome == "installed"


def test_a_failing_partition_write_after_a_transfer_finishes_forward(live, small_profile):
    switch, traffic = live
    push_live(switch, small_profile, PLAN_A, traffic)
    traffic.run(300)
    flaky = Flaky(switch, fail=table_is("forward_to_server_table", "delete"))
    result = push_live(flaky, small_profile, PLAN_C, traffic)
    assert result.outcome == "finished forward" and result.verified
    assert switch.server_of(np.array([2, 9])).tolist() == [1, 0]
    assert all(not s.leaving and not s.arriving for s in traffic.servers)
    assert_safe(traffic)
