"""The synchronous rack (switch + lock servers) and trace replay through it."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.dataplane import SwitchDataPlane
from netlock.geometry import SwitchGeometry
from netlock.lockserver import LockServer
from netlock.packets import ActionKind, LockRequest, Mode, Op
from netlock.timeless_rack import TimelessRack, replay_trace


def small_rack(servers: int = 2) -> TimelessRack:
    switch = SwitchDataPlane(SwitchGeometry.uniform(16, arrays=2))
    switch.install(0, 0, 0, 1)  # lock 0: 2 slots, so a third request overflows
    switch.install(1, 0, 2, 5)
    return TimelessRack(switch, [LockServer() for _ in range(servers)], lambda lock: lock % servers)


def acquire(lock: int, txn: int, mode: Mode = Mode.EXCLUSIVE) -> LockRequest:
    return LockRequest(Op.ACQUIRE, mode, lock, txn, txn)


def test_overflow_is_buffered_then_pushed_back_in_order():
    rack = small_rack()
    granted = {d.action.request.txn_id: d.action.request for t in (1, 2, 3, 4)
               for d in rack.send(acquire(0, t), 0) if d.action.kind == ActionKind.GRANT}
    assert list(granted) == [1]
    assert rack.tally.actions["OVERFLOW"] == 2
    order = []
    for txn in (1, 2, 3, 4):
        seen = rack.send(granted[txn].release(), 10)
        for d in seen:
            if d.action.kind == ActionKind.GRANT:
                order.append(d.action.request.txn_id)
                granted[d.action.request.txn_id] = d.action.request
    assert order == [2, 3, 4]
    assert rack.tally.actions["PUSH_BACK"] == 2
    assert rack.switch.is_drained(0)


def test_locks_not_in_the_switch_are_granted_by_their_server():
    rack = small_rack()
    seen = rack.send(acquire(7, 1), 0)
    assert [(d.action.kind, d.source) for d in seen] == [(ActionKind.GRANT, "server")]
    assert rack.servers[1].holders(7) and not rack.servers[0].holders(7)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from([0, 1]),
                          st.floats(0, 1e-3), st.floats(0, 1e-4)), min_size=1, max_size=60))
def test_replay_grants_every_request_once_and_leaves_queues_empty(rows):
    lock = np.array([r[0] for r in rows])
    mode = np.array([r[1] for r in rows])
    t_req = np.array([r[2] for r in rows])
    t_rel = t_req + np.array([r[3] for r in rows])
    txn = np.arange(len(rows))
    rack = small_rack()
    result = replay_trace(rack, lock, mode, t_req, t_rel, txn, txn)
    assert result.ungranted == 0 and result.dropped == 0
    assert result.granted == result.granted_by_switch + result.granted_by_server == len(rows)
    assert result.overflowed == result.pushed_back
    for lock_id in (0, 1):
        assert rack.switch.is_drained(lock_id)
    assert all(not s.holders(lk) for s in rack.servers for lk in range(6))
