"""Overflow to the lock server and push-back: q1 + q2 behave as one FIFO queue."""

from __future__ import annotations

from netlock.geometry import SwitchGeometry
from netlock.packets import ActionKind

from .harness import System, X, acq, kinds, rel

LOCK = 3


def system_with_capacity(capacity: int) -> System:
    system = System(SwitchGeometry.uniform(12, arrays=3))
    system.switch.install(LOCK, 0, 2, 1 + capacity)
    return system


def region(system: System) -> dict[str, int]:
    return system.switch.occupancy(LOCK)[0]


def test_overflowed_requests_are_granted_in_arrival_order():
    system = system_with_capacity(2)
    grants = []
    for txn in range(1, 6):
        grants += kinds(system.send(acq(LOCK, txn, X)))
    assert grants == [("GRANT", 1)]
    assert region(system)["server_held"] == 3
    assert [r.txn_id for r in system.server.buffered(LOCK, 0)] == [3, 4, 5]

    assert kinds(system.send(rel(LOCK, 1, X))) == [("GRANT", 2)]
    # q1 drains: the switch notifies, the server pushes back two, the first is granted
    assert kinds(system.send(rel(LOCK, 2, X))) == [("GRANT", 3)]
    assert region(system)["server_held"] == 1 and region(system)["count"] == 2
    # a new arrival must queue behind the one still buffered at the server
    assert system.send(acq(LOCK, 6, X)) == []
    assert [r.txn_id for r in system.server.buffered(LOCK, 0)] == [5, 6]
    order = []
    for txn in range(3, 7):
        order += [t for _, t in kinds(system.send(rel(LOCK, txn, X)))]
    assert order == [4, 5, 6]
    assert region(system)["server_held"] == 0
    # the backlog is gone and q1 has room: the switch enqueues directly again
    assert kinds(system.send(acq(LOCK, 7, X))) == [("GRANT", 7)]
    assert system.send(acq(LOCK, 8, X)) == []
    assert region(system)["count"] == 2 and not system.server.buffer_keys()


def test_notify_is_sent_once_and_carries_the_free_slots():
    system = system_with_capacity(3)
    switch = system.switch
    for txn in range(1, 6):
        switch.process(acq(LOCK, txn, X), 0)
    for txn in (1, 2):
        out = switch.process(rel(LOCK, txn, X, switch=switch), 0)
        assert out.actions[0].kind == ActionKind.GRANT
    out = switch.process(rel(LOCK, 3, X, switch=switch), 0)
    assert [(a.kind, a.count, a.request.priority) for a in out.actions] == [
        (ActionKind.NOTIFY_SERVER, 3, 0)]
    assert switch.resume(LOCK) == [], "no second notification before a push-back arrives"


def test_push_back_into_a_full_region_bounces_to_the_head_of_q2():
    system = system_with_capacity(1)
    switch, server = system.switch, system.server
    system.send(acq(LOCK, 1, X))
    system.send(acq(LOCK, 2, X))
    system.send(acq(LOCK, 3, X))
    pushed = server.notified(LOCK, 0, 1)
    assert kinds(pushed) == [("PUSH_BACK", 2)]
    out = switch.process(pushed[0].request, 0)
    assert kinds(out.actions) == [("OVERFLOW", 2)] and out.actions[0].request.push_back
    server.handle(out.actions[0], 0)
    assert [r.txn_id for r in server.buffered(LOCK, 0)] == [2, 3]
    assert region(system)["server_held"] == 2


def test_peak_occupancy_counts_both_queues():
    system = system_with_capacity(2)
    for txn in range(1, 6):
        system.send(acq(LOCK, txn, X))
    counters = system.switch.counters()
    assert counters["requests"].tolist() == [5]
    assert counters["peak_occupancy"].tolist() == [5]
    assert counters["occupancy"].tolist() == [5]
    system.switch.reset_counters()
    assert system.switch.counters()["requests"].tolist() == [0]
