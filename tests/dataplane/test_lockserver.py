"""The lock server: serving non-resident locks, buffering overflow, moving locks."""

from __future__ import annotations

from dataclasses import replace

import pytest

from netlock.lockserver import LockServer
from netlock.packets import ActionKind, DropReason

from .harness import S, X, acq, kinds, rel

LOCK = 11


def overflow(req):
    return replace(req, overflow=True)


def test_serves_locks_fifo_with_shared_runs():
    server = LockServer()
    grants = []
    for txn, mode in ((1, S), (2, S), (3, X), (4, S), (5, S)):
        grants += kinds(server.process(acq(LOCK, txn, mode), 0))
    assert grants == [("GRANT", 1), ("GRANT", 2)]
    assert server.process(rel(LOCK, 2, S), 0) == []
    assert kinds(server.process(rel(LOCK, 1, S), 0)) == [("GRANT", 3)]
    assert kinds(server.process(rel(LOCK, 3, X), 0)) == [("GRANT", 4), ("GRANT", 5)]
    for txn in (4, 5):
        server.process(rel(LOCK, txn, S), 0)
    assert not server.served_locks(), "an idle lock leaves no state behind"


def test_priorities_at_the_server():
    server = LockServer()
    server.process(acq(LOCK, 1, X, 1), 0)
    server.process(acq(LOCK, 2, X, 1), 0)
    server.process(acq(LOCK, 3, S, 0), 0)
    server.process(acq(LOCK, 4, S, 0), 0)
    assert kinds(server.process(rel(LOCK, 1, X, 1), 0)) == [("GRANT", 3), ("GRANT", 4)]


def test_a_waiting_higher_class_keeps_a_lower_class_from_joining_the_holders():
    """S held in class 1, X waiting in class 0: a new class-1 S is compatible with the holder
    but must wait behind the higher class's X (the priority block in the grant kernel)."""
    server = LockServer()
    assert kinds(server.process(acq(LOCK, 1, S, 1), 0)) == [("GRANT", 1)]
    assert server.process(acq(LOCK, 2, X, 0), 0) == []
    assert server.process(acq(LOCK, 3, S, 1), 0) == []
    assert [r.txn_id for r in server.holders(LOCK)] == [1]
    assert kinds(server.process(rel(LOCK, 1, S, 1), 0)) == [("GRANT", 2)]
    assert kinds(server.process(rel(LOCK, 2, X, 0), 0)) == [("GRANT", 3)]


@pytest.mark.parametrize("release, reason", [
    (rel(LOCK, 9, X), DropReason.STALE_RELEASE),
    (rel(LOCK, 1, S), DropReason.STALE_RELEASE),
    (rel(LOCK + 1, 1, X), DropReason.NOT_HELD),
])
def test_stale_releases_are_dropped(release, reason):
    server = LockServer()
    server.process(acq(LOCK, 1, X), 0)
    out = server.process(release, 0)
    assert [(a.kind, a.reason) for a in out] == [(ActionKind.DROP, reason)]
    assert [r.txn_id for r in server.holders(LOCK)] == [1]


def test_overflow_is_buffered_never_granted_and_pushed_back_in_order():
    server = LockServer()
    for txn in (1, 2, 3):
        assert server.process(overflow(acq(LOCK, txn, S)), 0) == []
    pushed = server.notified(LOCK, 0, 2)
    assert kinds(pushed) == [("PUSH_BACK", 1), ("PUSH_BACK", 2)]
    assert all(a.request.push_back and not a.request.overflow for a in pushed)
    bounced = replace(pushed[1].request, overflow=True)
    server.process(bounced, 0)
    assert [r.txn_id for r in server.buffered(LOCK, 0)] == [2, 3]
    assert kinds(server.notified(LOCK, 0, 5)) == [("PUSH_BACK", 2), ("PUSH_BACK", 3)]
    assert server.notified(LOCK, 0, 5) == [] and not server.buffer_keys()


def test_take_over_serves_the_buffer_in_class_order():
    server = LockServer()
    for txn, mode, cls in ((1, S, 1), (2, X, 0), (3, S, 0)):
        server.process(overflow(acq(LOCK, txn, mode, cls)), 0)
    out = server.take_over(LOCK, 5)
    assert kinds(out) == [("GRANT", 2)]
    assert kinds(server.process(rel(LOCK, 2, X), 6)) == [("GRANT", 3), ("GRANT", 1)]


def test_move_in_freezes_waits_for_holders_and_hands_over_the_queue():
    server = LockServer()
    server.process(acq(LOCK, 1, X), 0)
    server.begin_move_in(LOCK)
    assert server.process(acq(LOCK, 2, S), 0) == []
    assert server.process(acq(LOCK, 3, S, 2), 0) == []
    assert not server.ready_to_move_in(LOCK)
    with pytest.raises(ValueError, match="holders"):
        server.hand_over(LOCK, [0, 1], 3)
    assert server.process(rel(LOCK, 1, X), 0) == [], "frozen: nothing granted"
    assert server.ready_to_move_in(LOCK)
    assert server.hand_over(LOCK, [0, 1], 3) == {0: 1, 1: 1}
    assert [(r.txn_id, r.priority) for r in server.buffered(LOCK, 1)] == [(3, 1)]
    assert server.process(acq(LOCK, 4, X), 0) == [], "resident now: buffered"
    assert [r.txn_id for r in server.buffered(LOCK, 0)] == [2, 4]


def test_expiry_and_failure():
    server = LockServer()
    server.process(acq(LOCK, 1, X), 0)
    server.process(acq(LOCK, 2, X), 10)
    assert server.expire(50, 100) == []
    assert kinds(server.expire(100, 100)) == [("GRANT", 2)] and server.expired_total == 1
    server.fail()
    assert not server.served_locks()
