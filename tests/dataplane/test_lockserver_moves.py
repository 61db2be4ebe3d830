"""The lock server's part in the hardware runner's moves: requests that arrive between a
hand-over and the switch's table entry, moving lock-id ranges between servers, and the
counters the closed loop reads."""

from __future__ import annotations

from dataclasses import replace

from netlock.lockserver import LockServer
from netlock.packets import ActionKind, LockRequest, Mode
from tests.dataplane.harness import acq, kinds, rel

S, X = Mode.SHARED, Mode.EXCLUSIVE
LOCK = 11


def overflow(req: LockRequest) -> LockRequest:
    return replace(req, overflow=True)


def test_until_mapped_holds_stragglers_aside_and_re_sends_them_unmarked():
    server = LockServer()
    server.begin_move_in(LOCK)
    server.process(acq(LOCK, 1, X), 0)
    assert server.hand_over(LOCK, [0], 1, until_mapped=True) == {0: 1}
    assert server.process(acq(LOCK, 2, S), 0) == [], "forwarded before the entry existed"
    assert server.process(overflow(acq(LOCK, 3, S)), 0) == [], "counted by the switch"
    assert [r.txn_id for r in server.buffered(LOCK, 0)] == [1, 3]
    out = server.mapped(LOCK)
    assert kinds(out) == [("PUSH_BACK", 2)]
    assert not out[0].request.push_back and not out[0].request.overflow, "a new acquire"
    assert server.mapped(LOCK) == [] and server.resent_total == 1
    assert server.process(acq(LOCK, 4, S), 0) == []
    assert [r.txn_id for r in server.buffered(LOCK, 0)] == [1, 3, 4], "plain resident again"


def test_without_until_mapped_hand_over_is_unchanged():
    server = LockServer()
    server.hand_over(LOCK, [0], 1)
    server.process(acq(LOCK, 2, S), 0)
    assert [r.txn_id for r in server.buffered(LOCK, 0)] == [2] and server.mapped(LOCK) == []


def test_take_over_keeps_stragglers_of_an_unfinished_move_in():
    server = LockServer()
    server.hand_over(LOCK, [0], 1, until_mapped=True)
    server.process(acq(LOCK, 2, X), 0)
    assert kinds(server.take_over(LOCK, 0)) == [("GRANT", 2)]


def test_a_range_moves_between_servers_old_requests_first():
    old, new = LockServer(), LockServer()
    old.process(acq(LOCK, 1, X), 0)
    old.process(acq(LOCK, 2, X), 0)
    old.process(overflow(acq(LOCK + 1, 3, S)), 0)
    old.hand_over(LOCK + 1, [0], 1)
    new.begin_arrival(10, 19)
    old.begin_move_out(10, 19)
    assert old.holders_in(10, 19) == 1 and old.holders_in(0, 9) == 0
    assert old.process(rel(LOCK, 1, X), 0) == [], "leaving: nothing granted"
    assert old.holders_in(10, 19) == 0
    assert new.process(acq(LOCK, 4, X), 0) == [], "arriving: queued, not granted"
    assert new.process(overflow(acq(LOCK + 1, 5, S)), 0) == []
    assert new.notified(LOCK + 1, 0, 4) == [], "NOTIFY deferred until adopt"
    handoff = old.hand_off(10, 19)
    assert not old.served_locks() and not old.buffer_keys() and not old.resident
    assert not old.leaving
    out = new.adopt(handoff, 10, 19, 5)
    assert sorted(kinds(out)) == [("GRANT", 2), ("PUSH_BACK", 3), ("PUSH_BACK", 5)]
    assert [a.request.txn_id for a in out if a.kind == ActionKind.PUSH_BACK] == [3, 5]
    assert new.resident == {LOCK + 1} and not new.arriving
    assert kinds(new.process(rel(LOCK, 2, X), 6)) == [("GRANT", 4)]


def test_a_called_off_move_grants_again():
    old, new = LockServer(), LockServer()
    old.process(acq(LOCK, 1, X), 0)
    old.begin_move_out(0, 99)
    new.begin_arrival(0, 99)
    old.process(acq(LOCK, 2, X), 0)
    assert old.process(rel(LOCK, 1, X), 0) == []
    assert kinds(old.cancel_move_out(0, 99, 1)) == [("GRANT", 2)]
    assert new.cancel_arrival(0, 99, 1) == [] and not new.arriving and not old.leaving


def test_counters_count_served_acquires_and_peak_occupancy():
    server = LockServer()
    for txn in (1, 2, 3):
        server.process(acq(LOCK, txn, X), 0)
    server.process(overflow(acq(LOCK + 1, 4, X)), 0)
    got = server.counters()
    assert got["lock_id"].tolist() == [LOCK] and got["requests"].tolist() == [3]
    assert got["peak_occupancy"].tolist() == [3]
    server.process(rel(LOCK, 1, X), 0)
    server.reset_counters()
    assert server.counters()["lock_id"].tolist() == []
    server.process(acq(LOCK, 5, X), 0)
    assert server.counters()["peak_occupancy"].tolist() == [3], "2 left + the new one"
