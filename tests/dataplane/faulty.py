"""Clients of one switch + lock server over a faulty network, checked against the oracle.

The system under test is :class:`tests.dataplane.harness.System`. Locks 0-3 have queue
regions reserved in every class (capacities 1-4, so queues overflow) and move between
switch and server; lock 4 always lives at the server. The system's grants must be, one by
one, the oracle's next grant. The system may lag behind the oracle only for requests it
cannot see yet: those buffered at the server (q2) and everything behind them, and locks
whose move into the switch is in progress.

Faults between clients and the rack: a release may be lost (its lock stays held until its
lease runs out: a ghost holder), duplicated, or delayed past other packets and past its
lease (the copies arrive later, in any order); a lost grant is a ghost holder too. Leases
expire by time, so a sweep may take some holders and not others. Every copy that arrives
late must be dropped without changing anything.

Failures (paper section 4.5): the switch fails and comes back (restarted, or a backup)
with empty registers; the lock server fails and a new one, its heir, takes its partition
over. Requests the failed node queued are lost (their clients give them up); holders it
granted keep their locks until their leases end (orphans: the rack no longer knows them,
so only time frees them, and their late releases must be dropped). Whoever takes over
grants none of the failed node's locks before a lease has passed: the rules are
:mod:`netlock.failover`, and a grant that comes too early is one the oracle refuses while
an orphan still holds. The control plane moves no lock while a failover is in its grace.

Both the Hypothesis state machine (``test_stateful.py``) and the long seeded runs
(``test_fault_runs.py``) drive this class; each step's checks are :meth:`check`.
"""

from __future__ import annotations

from netlock.dataplane.registers import L_EXCLUSIVE, L_SHARED, R_COUNT, R_GRANTED, R_SERVER_HELD
from netlock.failover import Grace, SwitchTakeover, grace_end_us
from netlock.lockserver import LockServer
from netlock.packets import Action, ActionKind, DropReason, LockRequest, Mode, Op

from .harness import System, assert_one_access_per_pass, region_layout, small_geometry
from .oracle import Oracle

LEASE_US = 1_000
MOVABLE = range(4)
LOCKS = range(5)
MODE = {Mode.SHARED: "S", Mode.EXCLUSIVE: "X"}
CONTROL_OPS = ("pause", "resume", "move_out", "begin_move_in", "finish_move_in")


class GracefulServer(LockServer):
    """A lock server whose requests pass its :class:`netlock.failover.Grace` first, as in
    the simulator's server node; the rack has one server, so one partition (0)."""

    def __init__(self, priorities: int) -> None:
        super().__init__(priorities)
        self.grace = Grace(lambda lock_id: 0)

    def handle(self, action: Action, now_us: int) -> list[Action]:
        if action.kind != ActionKind.NOTIFY_SERVER and self.grace.hold(action.request):
            return []
        return super().handle(action, now_us)


class FaultyClients:
    """The clients' view of one rack; ``operations`` counts packets clients sent and copies
    the network delivered."""

    def __init__(self, priorities: int, trace_capacity: int = 200_000) -> None:
        self.priorities = priorities
        geometry = small_geometry(priorities)
        self.layout = region_layout(geometry)
        self.sys = System(geometry, trace_capacity=trace_capacity)
        self.traced = trace_capacity > 0
        self._use_server(GracefulServer(priorities))
        self.oracle = Oracle()
        self.held: dict[int, LockRequest] = {}
        self.ghosts: dict[int, LockRequest] = {}
        """Granted, but the client does not hold it (grant or release lost): the lock is
        the request's until its lease runs out."""
        self.granted_at: dict[int, int] = {}
        self.in_flight: list[LockRequest] = []
        """Copies of releases still in the network (duplicated, or sent after the lease)."""
        self.sent: set[int] = set()
        self.ever_granted: set[int] = set()
        self.moving: set[int] = set()
        self.paused: set[int] = set()
        self.orphans: set[int] = set()
        """Holders (in ``held`` or ``ghosts``) granted by a node that has failed since."""
        self.takeover: SwitchTakeover | None = None
        self.failures = 0
        self.next_txn = 1
        self.operations = 0
        for lock in range(3):
            self._install(lock, [0] * priorities)

    # --- helpers ------------------------------------------------------------------------------

    def _use_server(self, server: GracefulServer) -> None:
        self.sys.server = self.sys.rack.servers[0] = server

    @property
    def recovering(self) -> bool:
        """A failover is in its grace: the switch's locks paused, or the server's adopted."""
        return bool(self.takeover and self.takeover.pending) or self.sys.server.grace.active

    def _in_grace(self, lock: int) -> bool:
        return (bool(self.takeover and lock in self.takeover.paused)
                or self.sys.server.grace.covers(lock))

    def _send(self, req: LockRequest) -> list:
        self.operations += 1
        return self.sys.send(req)

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
            self.granted_at[key] = self.sys.now
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

    # --- what clients and the network do --------------------------------------------------------

    def acquire(self, lock: int, exclusive: bool, priority: int) -> None:
        txn = self._txn()
        mode = Mode.EXCLUSIVE if exclusive else Mode.SHARED
        self.oracle.arrive(txn, lock, MODE[mode], priority)
        self.sent.add(txn)
        self._apply(self._send(LockRequest(Op.ACQUIRE, mode, lock, txn, txn,
                                           priority=priority, timestamp_us=self.sys.now)))

    def release(self, key: int) -> None:
        req = self.held.pop(key)
        self.oracle.release(key)
        if key in self.orphans:
            self.orphans.discard(key)
            self.in_flight.append(req.release())
            self.deliver(len(self.in_flight) - 1)
            return
        self._apply(self._send(req.release()))

    def release_duplicated(self, key: int, later: bool) -> None:
        """The network delivers a release twice: at once, or the copy after other packets."""
        req = self.held[key]
        self.release(key)
        self.in_flight.append(req.release())
        if not later:
            self.deliver(len(self.in_flight) - 1)

    def lose(self, key: int) -> None:
        """A grant or a release is lost: the client goes on without the lock, which stays
        held until its lease runs out."""
        self.ghosts[key] = self.held.pop(key)

    def deliver(self, index: int) -> None:
        """A copy still in the network arrives: it must change nothing."""
        before = self._fingerprint()
        seen = self._send(self.in_flight.pop(index))
        assert [a.kind for a in seen] == [ActionKind.DROP], seen
        assert seen[0].reason in (DropReason.STALE_RELEASE, DropReason.NOT_HELD)
        assert self._fingerprint() == before

    def stale_release(self, lock: int, exclusive: bool, priority: int) -> None:
        """A release by a transaction that holds nothing: dropped, nothing changes."""
        shared_held = any(r.lock_id == lock and r.priority == priority and r.mode == Mode.SHARED
                          for r in self.held.values())
        mode = Mode.EXCLUSIVE if exclusive or shared_held else Mode.SHARED
        before = self._fingerprint()
        txn = self._txn()
        seen = self._send(LockRequest(Op.RELEASE, mode, lock, txn, txn, priority=priority))
        assert [a.kind for a in seen] == [ActionKind.DROP]
        assert seen[0].reason in (DropReason.STALE_RELEASE, DropReason.NOT_HELD)
        assert self._fingerprint() == before

    def tick(self, dt: int) -> None:
        self.sys.now += dt
        self.poll()

    def expire(self, now: int) -> None:
        """The lease sweep at time ``now``: holders granted a lease ago or more expire; their
        clients release afterwards (too late: the copies travel on)."""
        self.sys.now = now
        due = self._leases_over()
        before = self.sys.server.expired_total
        for key in due:
            self.oracle.release(key)
        seen = self.sys.expire(LEASE_US)
        expired = self.sys.switch.last_expired + self.sys.server.expired_total - before
        assert expired == len([k for k in due if k not in self.orphans])
        self._forget(due)
        self._apply(seen)
        self.poll()

    def _leases_over(self) -> list[int]:
        return sorted(k for k in [*self.held, *self.ghosts]
                      if self.sys.now - self.granted_at[k] >= LEASE_US)

    def _forget(self, keys: list[int]) -> None:
        """Holders whose lease is over: their clients' releases travel on, too late."""
        for key in keys:
            if key in self.held:
                self.in_flight.append(self.held.pop(key).release())
            else:
                del self.ghosts[key]
            self.orphans.discard(key)

    # --- failures -------------------------------------------------------------------------------

    def _lose_requests(self, keys: set[int]) -> None:
        for key in sorted(keys):
            self.oracle.withdraw(key)
            self.sent.discard(key)

    def _orphan(self, locks: set[int]) -> None:
        self.orphans |= {k for k, r in [*self.held.items(), *self.ghosts.items()]
                         if r.lock_id in locks}

    def fail_switch(self) -> None:
        """The switch fails and comes back with empty registers and its lock table: each
        lock's backlog is what the server buffered for it (paper section 4.5)."""
        switch, server = self.sys.switch, self.sys.server
        resident = set(switch.resident_locks)
        buffered = {r.txn_id for lock, c in server.buffer_keys() for r in server.buffered(lock, c)}
        self._lose_requests({k for lock in resident for k, _ in self.oracle.waiting(lock)}
                            - buffered)
        self._orphan(resident)
        switch.fail()
        self.paused -= resident
        self.takeover = SwitchTakeover(switch, self.sys.now, LEASE_US)
        for lock in sorted(resident):
            self.takeover.install(lock, [(c, left, right)
                                         for c, (left, right) in enumerate(self.layout[lock])],
                                  lambda lock, c: len(server.buffered(lock, c)))
        self.failures += 1

    def fail_server(self) -> None:
        """The lock server fails; its heir takes the partition over with nothing queued."""
        old, switch = self.sys.server, self.sys.switch
        resident = set(switch.resident_locks)
        lost = {r.txn_id for lock, c in old.buffer_keys() for r in old.buffered(lock, c)}
        lost |= {r.txn_id for lock in old.served_locks()
                 for reqs in old.waiting(lock).values() for r in reqs}
        lost |= {r.txn_id for r in old.grace.held}
        self._lose_requests(lost)
        self._orphan(set(LOCKS) - resident)
        heir = GracefulServer(self.priorities)
        heir.grace.adopt(grace_end_us(self.sys.now, LEASE_US), parts=[0])
        self._use_server(heir)
        self.moving.clear()
        for lock in sorted(resident):
            self._apply(self.sys.route(switch.forget_server_backlog(lock, self.sys.now)))
        self.failures += 1

    def poll(self) -> None:
        """The control plane's poll: orphans whose lease is over are gone; a failover whose
        grace is over serves its locks."""
        over = [k for k in self._leases_over() if k in self.orphans]
        for key in over:
            self.oracle.release(key)
        self._forget(over)
        actions: list[Action] = []
        if self.takeover is not None:
            actions += self.takeover.resume_due(self.sys.now)
        actions += self.sys.server.grace.end(self.sys.server, self.sys.now)
        self._apply(self.sys.route(actions))

    # --- the control plane moving locks between switch and server -------------------------------

    def control(self, op: str, lock: int) -> None:
        """A control-plane step of moving a lock between switch and server."""
        if not self.recovering:
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

    # --- checks ------------------------------------------------------------------------------

    def check(self) -> None:
        """Every check below, as after each step."""
        self.holders_are_safe()
        self.nothing_grantable_is_left_waiting()
        self.server_backlog_matches_switch()
        if self.traced:
            self.passes_touch_each_array_once()
        else:
            self.sys.passes.clear()

    def holders_are_safe(self) -> None:
        for lock in LOCKS:
            modes = [r.mode for r in self.held.values() if r.lock_id == lock]
            if Mode.EXCLUSIVE in modes:
                assert len(modes) == 1, f"lock {lock}: exclusive holder shares with {modes}"
            assert sorted(self.oracle.holders(lock)) == sorted(
                k for k, r in [*self.held.items(), *self.ghosts.items()] if r.lock_id == lock)

    def nothing_grantable_is_left_waiting(self) -> None:
        for lock in LOCKS:
            waiting = self.oracle.waiting(lock)
            if lock in self.moving or self._in_grace(lock):
                continue
            q2 = {c: [r.txn_id for r in self.sys.server.buffered(lock, c)]
                  for c in range(self.priorities)}
            lagging = {k for keys in q2.values() for k in keys}
            blocked = [c for c, keys in q2.items() if keys]
            if blocked:
                lagging |= {k for k, c in waiting if c > min(blocked)}
            late = set(self.oracle.grantable(lock)) - lagging
            assert not late, f"lock {lock}: {sorted(late)} should have been granted"

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
                if held and lock not in self.paused and not self._in_grace(lock):
                    assert switch.regions[c, i, R_COUNT] > 0, "q2 waits but nothing will notify"

    def passes_touch_each_array_once(self) -> None:
        assert_one_access_per_pass(self.sys.switch.access_trace())
        self.sys.switch.clear_trace()
        assert all(p >= 1 for p in self.sys.passes)
        self.sys.passes.clear()

    def drain(self) -> None:
        """Recover every ghost, deliver every copy, release every holder: then every request
        must have been granted and the rack must be empty."""
        ends = [self.sys.server.grace.parts.get(0, 0), *self.sys.server.grace.locks.values()]
        if self.takeover is not None and self.takeover.pending:
            ends.append(self.takeover.until_us)
        self.expire(max(self.sys.now, int(max(ends)) + 1))
        assert not self.recovering
        for lock in sorted(self.paused):
            self._resume(lock)
        if self.ghosts:
            self.expire(max(self.granted_at[k] for k in self.ghosts) + LEASE_US)
        while self.in_flight:
            self.deliver(0)
        for _ in range(4 * len(self.sent) + 4):
            for lock in sorted(self.moving):
                self._finish_move_in(lock)
            if not self.held:
                break
            for key in sorted(self.held):
                if key in self.held:
                    self.release(key)
        assert not self.held and not self.moving
        assert self.ever_granted == self.sent, f"never granted: {self.sent - self.ever_granted}"
        assert all(not self.oracle.waiting(lock) for lock in LOCKS)
        switch = self.sys.switch
        assert not switch.regions[:, :, [R_COUNT, R_GRANTED, R_SERVER_HELD]].any()
        assert not switch.locks[:, [L_SHARED, L_EXCLUSIVE]].any()
        assert not switch.slots[:, :6].any(), "a dequeued slot kept its request"
        assert not self.sys.server.served_locks() and not self.sys.server.buffer_keys()
