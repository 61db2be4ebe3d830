"""Switch + lock server against the independent oracle, over random interleavings.

Locks 0-3 have queue regions reserved in every class (capacities 1-4, so queues overflow)
and move between switch and server; lock 4 always lives at the server. The system's
grants must be, one by one, the oracle's next grant. The system may lag behind the oracle
only for requests it cannot see yet: those buffered at the server (q2) and everything
behind them, and locks whose move into the switch is in progress.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from netlock.dataplane.layout import L_EXCLUSIVE, L_SHARED, R_COUNT, R_GRANTED, R_SERVER_HELD
from netlock.packets import ActionKind, DropReason, LockRequest, Mode, Op

from .harness import (
    System,
    assert_one_access_per_pass,
    region_layout,
    small_geometry,
)
from .oracle import Oracle

LEASE_US = 1_000
MOVABLE = range(4)
LOCKS = range(5)
MODE = {Mode.SHARED: "S", Mode.EXCLUSIVE: "X"}


class SwitchAndServer(RuleBasedStateMachine):
    priorities = 1

    def __init__(self) -> None:
        super().__init__()
        geometry = small_geometry(self.priorities)
        self.layout = region_layout(geometry)
        self.sys = System(geometry, trace_capacity=200_000)
        self.oracle = Oracle()
        self.held: dict[int, LockRequest] = {}
        self.sent: set[int] = set()
        self.ever_granted: set[int] = set()
        self.moving: set[int] = set()
        self.paused: set[int] = set()
        self.next_txn = 1
        self.classes = st.integers(0, self.priorities - 1)
        for lock in range(3):
            self._install(lock, [0] * self.priorities)

    # --- helpers ------------------------------------------------------------------------------

    def _txn(self) -> int:
        self.next_txn += 1
        return self.next_txn

    def _install(self, lock: int, server_held: list[int]) -> list:
        actions = []
        for c, (left, right) in enumerate(self.layout[lock]):
            actions += self.sys.switch.install(lock, c, left, right, server_held[c])
        return actions

    def _apply(self, seen: list) -> None:
        for action in seen:
            assert action.kind == ActionKind.GRANT, f"unexpected {action}"
            key = action.request.txn_id
            assert key not in self.held and key not in self.ever_granted
            self.oracle.grant(key)
            self.held[key] = action.request
            self.ever_granted.add(key)

    def _resident(self, lock: int) -> bool:
        return self.sys.switch.lock_index(lock) >= 0

    def _fingerprint(self) -> tuple:
        snap = self.sys.switch.snapshot()
        server = self.sys.server
        return (
            tuple(snap[name].tobytes() for name in ("locks", "regions", "slots", "tenants")),
            repr(sorted((lock, server.waiting(lock), server.holders(lock), server.is_frozen(lock))
                        for lock in server.served_locks())),
            repr([(key, server.buffered(*key)) for key in server.buffer_keys()]),
        )

    # --- rules ----------------------------------------------------------------------------------

    def _acquire(self, lock: int, exclusive: bool, priority: int) -> None:
        txn = self._txn()
        mode = Mode.EXCLUSIVE if exclusive else Mode.SHARED
        self.oracle.arrive(txn, lock, MODE[mode], priority)
        self.sent.add(txn)
        self._apply(self.sys.send(LockRequest(Op.ACQUIRE, mode, lock, txn, txn,
                                              priority=priority, timestamp_us=self.sys.now)))

    @rule(lock=st.sampled_from(LOCKS), exclusive=st.booleans(), data=st.data())
    def acquire(self, lock: int, exclusive: bool, data: st.DataObject) -> None:
        self._acquire(lock, exclusive, data.draw(self.classes, label="priority"))

    @rule(lock=st.sampled_from(LOCKS), data=st.data(),
          modes=st.lists(st.booleans(), min_size=2, max_size=6))
    def acquire_burst(self, lock: int, data: st.DataObject, modes: list[bool]) -> None:
        """Several requests for one lock back to back: builds queues and overflow."""
        for exclusive in modes:
            self._acquire(lock, exclusive, data.draw(self.classes, label="priority"))

    @precondition(lambda self: self.held)
    @rule(data=st.data(), count=st.integers(1, 3))
    def release(self, data: st.DataObject, count: int) -> None:
        for _ in range(min(count, len(self.held))):
            key = data.draw(st.sampled_from(sorted(self.held)), label="holder")
            req = self.held.pop(key)
            self.oracle.release(key)
            self._apply(self.sys.send(req.release()))

    @rule(lock=st.sampled_from(LOCKS), exclusive=st.booleans(), data=st.data())
    def stale_release(self, lock: int, exclusive: bool, data: st.DataObject) -> None:
        priority = data.draw(self.classes, label="priority")
        shared_held = any(r.lock_id == lock and r.priority == priority and r.mode == Mode.SHARED
                          for r in self.held.values())
        mode = Mode.EXCLUSIVE if exclusive or shared_held else Mode.SHARED
        before = self._fingerprint()
        txn = self._txn()
        seen = self.sys.send(LockRequest(Op.RELEASE, mode, lock, txn, txn, priority=priority))
        assert [a.kind for a in seen] == [ActionKind.DROP]
        assert seen[0].reason in (DropReason.STALE_RELEASE, DropReason.NOT_HELD)
        assert self._fingerprint() == before

    @rule(dt=st.integers(1, 50))
    def tick(self, dt: int) -> None:
        self.sys.now += dt

    @rule()
    def expire_all(self) -> None:
        self.sys.now += LEASE_US
        before = self.sys.server.expired_total
        assert self.oracle.expire_all() == len(self.held)
        seen = self.sys.expire(LEASE_US)
        expired = self.sys.switch.last_expired + self.sys.server.expired_total - before
        assert expired == len(self.held)
        self.held.clear()
        self._apply(seen)

    @rule(op=st.sampled_from(["pause", "resume", "move_out", "begin_move_in",
                              "finish_move_in"]), lock=st.sampled_from(MOVABLE))
    def control(self, op: str, lock: int) -> None:
        """A control-plane step of moving a lock between switch and server."""
        getattr(self, f"_{op}")(lock)

    def _pause(self, lock: int) -> None:
        if self._resident(lock) and lock not in self.paused:
            self.sys.switch.pause(lock)
            self.paused.add(lock)

    def _resume(self, lock: int) -> None:
        if lock in self.paused:
            self.paused.discard(lock)
            self._apply(self.sys.route(self.sys.switch.resume(lock)))

    def _move_out(self, lock: int) -> None:
        if lock in self.paused and self.sys.switch.is_drained(lock):
            self.sys.switch.remove(lock)
            self.paused.discard(lock)
            self._apply(self.sys.route(self.sys.server.take_over(lock, self.sys.now)))

    def _begin_move_in(self, lock: int) -> None:
        if not self._resident(lock) and lock not in self.moving:
            self.sys.server.begin_move_in(lock)
            self.moving.add(lock)

    def _finish_move_in(self, lock: int) -> None:
        if lock not in self.moving or not self.sys.server.ready_to_move_in(lock):
            return
        counts = self.sys.server.hand_over(lock, range(self.priorities), self.priorities)
        self.moving.discard(lock)
        actions = self._install(lock, [counts[c] for c in range(self.priorities)])
        self._apply(self.sys.route(actions))

    # --- invariants ---------------------------------------------------------------------------

    @invariant()
    def holders_are_safe(self) -> None:
        for lock in LOCKS:
            modes = [r.mode for r in self.held.values() if r.lock_id == lock]
            if Mode.EXCLUSIVE in modes:
                assert len(modes) == 1, f"lock {lock}: exclusive holder shares with {modes}"
            assert sorted(self.oracle.holders(lock)) == sorted(
                k for k, r in self.held.items() if r.lock_id == lock)

    @invariant()
    def nothing_grantable_is_left_waiting(self) -> None:
        for lock in LOCKS:
            waiting = self.oracle.waiting(lock)
            if lock in self.moving:
                continue
            q2 = {c: [r.txn_id for r in self.sys.server.buffered(lock, c)]
                  for c in range(self.priorities)}
            lagging = {k for keys in q2.values() for k in keys}
            blocked = [c for c, keys in q2.items() if keys]
            if blocked:
                lagging |= {k for k, c in waiting if c > min(blocked)}
            late = set(self.oracle.grantable(lock)) - lagging
            assert not late, f"lock {lock}: {sorted(late)} should have been granted"

    @invariant()
    def server_backlog_matches_switch(self) -> None:
        switch, server = self.sys.switch, self.sys.server
        for lock in LOCKS:
            i = switch.lock_index(lock)
            for c in range(self.priorities):
                buffered = len(server.buffered(lock, c))
                if i < 0:
                    assert buffered == 0
                    continue
                held = switch.regions[c, i, R_SERVER_HELD]
                assert held == buffered, f"lock {lock} class {c}: {held} vs {buffered}"
                if held and lock not in self.paused:
                    assert switch.regions[c, i, R_COUNT] > 0, "q2 waits but nothing will notify"

    @invariant()
    def passes_touch_each_array_once(self) -> None:
        assert_one_access_per_pass(self.sys.switch.access_trace())
        self.sys.switch.clear_trace()
        assert all(p >= 1 for p in self.sys.passes)
        self.sys.passes.clear()

    def teardown(self) -> None:
        for lock in sorted(self.paused):
            self._resume(lock)
        for _ in range(4 * len(self.sent) + 4):
            for lock in sorted(self.moving):
                self._finish_move_in(lock)
            if not self.held:
                break
            for key in sorted(self.held):
                if key in self.held:
                    req = self.held.pop(key)
                    self.oracle.release(key)
                    self._apply(self.sys.send(req.release()))
        assert not self.held and not self.moving
        assert self.ever_granted == self.sent, f"never granted: {self.sent - self.ever_granted}"
        assert all(not self.oracle.waiting(lock) for lock in LOCKS)
        switch = self.sys.switch
        assert not switch.regions[:, :, [R_COUNT, R_GRANTED, R_SERVER_HELD]].any()
        assert not switch.locks[:, [L_SHARED, L_EXCLUSIVE]].any()
        assert not switch.slots[:, :6].any(), "a dequeued slot kept its request"
        assert not self.sys.server.served_locks() and not self.sys.server.buffer_keys()


def _machine(priorities: int) -> type[SwitchAndServer]:
    return type(f"SwitchAndServer{priorities}", (SwitchAndServer,), {"priorities": priorities})


SETTINGS = settings(max_examples=80, stateful_step_count=50, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

TestOnePriority = _machine(1).TestCase
TestOnePriority.settings = SETTINGS
TestTwoPriorities = _machine(2).TestCase
TestTwoPriorities.settings = SETTINGS
TestThreePriorities = _machine(3).TestCase
TestThreePriorities.settings = SETTINGS
