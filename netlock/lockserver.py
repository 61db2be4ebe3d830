"""The NetLock lock server: serves the locks the switch does not own, buffers its overflow.

A server plays two roles (paper section 4.3):

- for locks **not in the switch** it queues and grants requests itself, FIFO per priority
  class, highest class first, with the same compatibility rule as the switch
  (:mod:`netlock.dataplane.rules`); its memory is unbounded;
- for **switch-resident** locks it only buffers overflowed requests in ``q2`` per
  (lock, priority) and never grants them; a NOTIFY_SERVER(count) from the switch gets up
  to ``count`` PUSH_BACK actions from the head of ``q2``.

Moving a lock keeps one FIFO order across switch and server. Out of the switch: the switch
pauses and drains the lock, removes it, and :meth:`LockServer.take_over` turns ``q2`` into
the lock's served queue. Into the switch: :meth:`LockServer.begin_move_in` stops granting,
:meth:`LockServer.ready_to_move_in` says when the holders are gone, and
:meth:`LockServer.hand_over` keeps the waiting requests as ``q2`` and returns their counts,
which the switch installs as ``server_held``. Times are integer microseconds (us).

On a real switch the lock-table entry is added some time after :meth:`LockServer.hand_over`,
and requests the switch forwards meanwhile (not marked overflow) reach the server uncounted by
``server_held``. ``hand_over(..., until_mapped=True)`` holds them aside, and
:meth:`LockServer.mapped` returns them once the entry exists, as PUSH_BACK actions whose request
is *not* marked push-back: the switch takes each as a new acquire and counts it (it is charged
to its tenant's quota a second time).

Moving a range of lock ids to another server (a new partition) follows the same pattern:
the old server stops granting the range (:meth:`LockServer.begin_move_out`) until its holders
are gone (:meth:`LockServer.holders_in`), the new one queues without granting
(:meth:`LockServer.begin_arrival`, deferring NOTIFY_SERVER), the partition changes, and
:meth:`LockServer.hand_off` / :meth:`LockServer.adopt` move queues, buffers and resident
locks, the old server's requests first. The old server must get nothing for the range after
``hand_off``: the control plane waits longer than a switch-to-server delivery before it.

For the planner's r_i / c_i a server counts, per lock it serves, the acquires it receives
and the peak of holders plus waiting requests (:meth:`LockServer.counters`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import numpy as np

from netlock.dataplane.rules import EXCLUSIVE, compatible, effective_class
from netlock.packets import Action, ActionKind, DropReason, LockRequest, Op

HolderKey = tuple[int, int]
"""A holder is identified by ``(txn_id, client_id)``."""


@dataclass
class ServedLock:
    """A lock this server queues and grants itself."""

    waiting: dict[int, deque[LockRequest]] = field(default_factory=dict)
    holders: dict[HolderKey, tuple[LockRequest, int]] = field(default_factory=dict)
    shared: int = 0
    exclusive: int = 0
    frozen: bool = False
    """Moving into the switch: new requests queue but are not granted."""

    def idle(self) -> bool:
        return not self.holders and not any(self.waiting.values()) and not self.frozen


@dataclass
class Handoff:
    """A server's state for a range of lock ids, on its way to the range's new server."""

    waiting: dict[int, dict[int, deque[LockRequest]]] = field(default_factory=dict)
    buffers: dict[tuple[int, int], deque[LockRequest]] = field(default_factory=dict)
    resident: set[int] = field(default_factory=set)
    late: dict[int, list[LockRequest]] = field(default_factory=dict)


Range = tuple[int, int]


def _within(ranges: list[Range], lock_id: int) -> bool:
    return any(lo <= lock_id <= hi for lo, hi in ranges)


class LockServer:
    """One lock server's state and request handling (deterministic, plain Python)."""

    def __init__(self) -> None:
        self.served: dict[int, ServedLock] = {}
        self.buffers: dict[tuple[int, int], deque[LockRequest]] = {}
        self.resident: set[int] = set()
        self.grace_until_us = 0
        self.expired_total = 0
        self.late: dict[int, list[LockRequest]] = {}
        """Handed over with ``until_mapped``: requests held aside until :meth:`mapped`."""
        self.leaving: list[Range] = []
        self.arriving: list[Range] = []
        self.deferred: dict[tuple[int, int], int] = {}
        """NOTIFY_SERVER counts for arriving locks, answered by :meth:`adopt`."""
        self.requests: dict[int, int] = {}
        self.peak: dict[int, int] = {}
        self.resent_total = 0

    def fail(self) -> None:
        """Lose all state (the lock's partition is reassigned to another server)."""
        self.served.clear()
        self.buffers.clear()
        self.resident.clear()
        self.late.clear()
        self.leaving.clear()
        self.arriving.clear()
        self.deferred.clear()
        self.grace_until_us = 0

    # --- requests ----------------------------------------------------------------------------

    def process(self, req: LockRequest, now_us: int) -> list[Action]:
        """Handle a request forwarded by the switch (TO_SERVER, OVERFLOW or a bounce)."""
        if req.op == Op.RELEASE:
            return self._release(req, now_us)
        if req.lock_id in self.late and not req.overflow and not req.push_back:
            self.late[req.lock_id].append(req)
            return []
        if req.overflow or req.lock_id in self.resident:
            self._buffer(req)
            return []
        lock = self.served.setdefault(req.lock_id, ServedLock())
        lock.waiting.setdefault(req.priority, deque()).append(req)
        self.requests[req.lock_id] = self.requests.get(req.lock_id, 0) + 1
        occupancy = len(lock.holders) + sum(len(q) for q in lock.waiting.values())
        if occupancy > self.peak.get(req.lock_id, 0):
            self.peak[req.lock_id] = occupancy
        return self._grant(req.lock_id, now_us)

    def notified(self, lock_id: int, priority: int, count: int) -> list[Action]:
        """The switch queue of (lock, priority) drained: push back up to ``count`` requests."""
        if self.arriving and _within(self.arriving, lock_id):
            self.deferred[(lock_id, priority)] = count
            return []
        buf = self.buffers.get((lock_id, priority))
        actions = []
        while buf and len(actions) < count:
            req = buf.popleft()
            actions.append(Action(ActionKind.PUSH_BACK, replace(req, overflow=False,
                                                                 push_back=True)))
        if buf is not None and not buf:
            del self.buffers[(lock_id, priority)]
        return actions

    def handle(self, action: Action, now_us: int) -> list[Action]:
        """Dispatch a switch action addressed to this server."""
        if action.kind == ActionKind.NOTIFY_SERVER:
            return self.notified(action.request.lock_id, action.request.priority, action.count)
        if action.kind in (ActionKind.TO_SERVER, ActionKind.OVERFLOW):
            return self.process(action.request, now_us)
        raise ValueError(f"action {action.kind.name} is not addressed to a lock server")

    def expire(self, now_us: int, lease_us: int) -> list[Action]:
        """Drop holders whose lease (``lease_us``) is over and grant what follows."""
        actions: list[Action] = []
        for lock_id in list(self.served):
            lock = self.served[lock_id]
            stale = [key for key, (_, since) in lock.holders.items()
                     if now_us - since >= lease_us]
            for key in stale:
                self._drop_holder(lock, key)
            self.expired_total += len(stale)
            actions += self._grant(lock_id, now_us)
        return actions

    # --- moving locks --------------------------------------------------------------------------

    def take_over(self, lock_id: int, now_us: int) -> list[Action]:
        """The switch gave ``lock_id`` up (drained and removed): serve its buffered requests."""
        self.resident.discard(lock_id)
        lock = self.served.setdefault(lock_id, ServedLock())
        for (lid, priority) in sorted(k for k in self.buffers if k[0] == lock_id):
            lock.waiting.setdefault(priority, deque()).extend(self.buffers.pop((lid, priority)))
        for req in self.late.pop(lock_id, []):
            lock.waiting.setdefault(req.priority, deque()).append(req)
        return self._grant(lock_id, now_us)

    def begin_move_in(self, lock_id: int) -> None:
        """Stop granting ``lock_id``: it is about to move into the switch."""
        self.served.setdefault(lock_id, ServedLock()).frozen = True

    def ready_to_move_in(self, lock_id: int) -> bool:
        lock = self.served.get(lock_id)
        return lock is None or not lock.holders

    def hand_over(self, lock_id: int, classes: Iterable[int], priorities: int, *,
                  until_mapped: bool = False) -> dict[int, int]:
        """Keep ``lock_id``'s waiting requests as ``q2`` for the switch; q2 length per class.

        ``classes`` are the priority classes the switch gives the lock (of ``priorities``);
        requests of other classes go to the class the switch would use for them.
        ``until_mapped``: the switch's table entry comes later; hold aside what arrives
        meanwhile (see the module docstring) until :meth:`mapped`.
        """
        lock = self.served.get(lock_id)
        if lock is not None and lock.holders:
            raise ValueError(f"lock {lock_id}: cannot hand over while it has holders")
        mask = sum(1 << c for c in classes)
        if mask == 0:
            raise ValueError(f"lock {lock_id}: hand_over needs at least one class")
        self.served.pop(lock_id, None)
        self.resident.add(lock_id)
        for priority in sorted(lock.waiting if lock else ()):
            target = effective_class(mask, priority, priorities)
            for req in lock.waiting[priority]:
                self._buffer(replace(req, overflow=True, priority=target))
        if until_mapped:
            self.late.setdefault(lock_id, [])
        return {c: len(self.buffers.get((lock_id, c), ())) for c in classes}

    def mapped(self, lock_id: int) -> list[Action]:
        """The switch's table entry for ``lock_id`` exists: re-send what was held aside."""
        late = self.late.pop(lock_id, [])
        self.resent_total += len(late)
        return [Action(ActionKind.PUSH_BACK, req) for req in late]

    # --- moving lock ranges between servers ---------------------------------------------------

    def begin_move_out(self, lo: int, hi: int) -> None:
        """Stop granting locks ``lo..hi``: they are moving to another server."""
        if (lo, hi) not in self.leaving:
            self.leaving.append((lo, hi))

    def holders_in(self, lo: int, hi: int) -> int:
        """Holders of locks ``lo..hi`` at this server."""
        return sum(len(lock.holders) for x, lock in self.served.items() if lo <= x <= hi)

    def cancel_move_out(self, lo: int, hi: int, now_us: int) -> list[Action]:
        """The move of ``lo..hi`` is called off: grant them again."""
        if (lo, hi) in self.leaving:
            self.leaving.remove((lo, hi))
        return self._grant_range(lo, hi, now_us)

    def hand_off(self, lo: int, hi: int) -> Handoff:
        """Give up locks ``lo..hi`` (no holders left): their state, to :meth:`adopt`."""
        out = Handoff()
        for lock_id in [x for x in self.served if lo <= x <= hi]:
            lock = self.served.pop(lock_id)
            if lock.holders:
                self.served[lock_id] = lock
                raise ValueError(f"lock {lock_id}: cannot hand off while it has holders")
            out.waiting[lock_id] = lock.waiting
        for key in [k for k in self.buffers if lo <= k[0] <= hi]:
            out.buffers[key] = self.buffers.pop(key)
        out.resident = {x for x in self.resident if lo <= x <= hi}
        self.resident -= out.resident
        for lock_id in [x for x in self.late if lo <= x <= hi]:
            out.late[lock_id] = self.late.pop(lock_id)
        if (lo, hi) in self.leaving:
            self.leaving.remove((lo, hi))
        return out

    def begin_arrival(self, lo: int, hi: int) -> None:
        """Locks ``lo..hi`` are moving here: queue their requests, grant nothing, defer
        NOTIFY_SERVER, until :meth:`adopt` brings the old server's state."""
        if (lo, hi) not in self.arriving:
            self.arriving.append((lo, hi))

    def adopt(self, handoff: Handoff, lo: int, hi: int, now_us: int) -> list[Action]:
        """Take over locks ``lo..hi`` with the old server's ``handoff`` ahead of what arrived
        here meanwhile; grant and answer deferred NOTIFY_SERVER."""
        for lock_id, queues in handoff.waiting.items():
            lock = self.served.setdefault(lock_id, ServedLock())
            for priority, queue in queues.items():
                queue.extend(lock.waiting.get(priority, ()))
                lock.waiting[priority] = queue
        for key, buf in handoff.buffers.items():
            buf.extend(self.buffers.get(key, ()))
            self.buffers[key] = buf
        self.resident |= handoff.resident
        for lock_id, late in handoff.late.items():
            self.late[lock_id] = late + self.late.get(lock_id, [])
        return self.cancel_arrival(lo, hi, now_us)

    def cancel_arrival(self, lo: int, hi: int, now_us: int) -> list[Action]:
        """Stop holding back locks ``lo..hi`` (adopted, or the move was called off)."""
        if (lo, hi) in self.arriving:
            self.arriving.remove((lo, hi))
        actions: list[Action] = []
        for key in [k for k in self.deferred if lo <= k[0] <= hi]:
            actions += self.notified(*key, self.deferred.pop(key))
        return actions + self._grant_range(lo, hi, now_us)

    # --- failure recovery ----------------------------------------------------------------------

    def start_grace(self, until_us: int) -> None:
        """Grant nothing before ``until_us`` (after adopting a failed server's partition,
        so that leases granted by the old server run out first)."""
        self.grace_until_us = until_us

    def tick(self, now_us: int) -> list[Action]:
        """Grant what the grace period held back."""
        actions: list[Action] = []
        for lock_id in list(self.served):
            actions += self._grant(lock_id, now_us)
        return actions

    # --- inspection ----------------------------------------------------------------------------

    def buffered(self, lock_id: int, priority: int) -> list[LockRequest]:
        """``q2`` of (lock, priority), head first."""
        return list(self.buffers.get((lock_id, priority), ()))

    def holders(self, lock_id: int) -> list[LockRequest]:
        lock = self.served.get(lock_id)
        return [req for req, _ in lock.holders.values()] if lock else []

    def counters(self) -> dict[str, np.ndarray]:
        """Per lock served here (sorted by id): acquires received, peak holders + waiting."""
        ids = np.array(sorted(self.requests), dtype=np.int64)
        return {"lock_id": ids,
                "requests": np.array([self.requests[x] for x in ids.tolist()], dtype=np.int64),
                "peak_occupancy": np.array([self.peak.get(x, 0) for x in ids.tolist()],
                                           dtype=np.int64)}

    def reset_counters(self) -> None:
        """Start a new measurement window (peaks restart from the current occupancy)."""
        self.requests.clear()
        self.peak = {x: len(lock.holders) + sum(len(q) for q in lock.waiting.values())
                     for x, lock in self.served.items()}

    # --- internals -----------------------------------------------------------------------------

    def _buffer(self, req: LockRequest) -> None:
        buf = self.buffers.setdefault((req.lock_id, req.priority), deque())
        if req.push_back:
            buf.appendleft(replace(req, push_back=False))
        else:
            buf.append(req)

    def _release(self, req: LockRequest, now_us: int) -> list[Action]:
        lock = self.served.get(req.lock_id)
        if lock is None:
            return [Action(ActionKind.DROP, req, reason=DropReason.NOT_HELD)]
        key = (req.txn_id, req.client_id)
        held = lock.holders.get(key)
        if held is None or held[0].mode != req.mode:
            return [Action(ActionKind.DROP, req, reason=DropReason.STALE_RELEASE)]
        self._drop_holder(lock, key)
        return self._grant(req.lock_id, now_us)

    def _drop_holder(self, lock: ServedLock, key: HolderKey) -> None:
        req, _ = lock.holders.pop(key)
        if req.mode == EXCLUSIVE:
            lock.exclusive -= 1
        else:
            lock.shared -= 1

    def _grant_range(self, lo: int, hi: int, now_us: int) -> list[Action]:
        actions: list[Action] = []
        for lock_id in [x for x in self.served if lo <= x <= hi]:
            actions += self._grant(lock_id, now_us)
        return actions

    def _held_back(self, lock_id: int) -> bool:
        return bool(self.leaving or self.arriving) and (
            _within(self.leaving, lock_id) or _within(self.arriving, lock_id))

    def _grant(self, lock_id: int, now_us: int) -> list[Action]:
        """Grant in FIFO order, highest class first, stopping at the first request that must
        wait (it blocks everything behind it)."""
        lock = self.served[lock_id]
        actions: list[Action] = []
        if not lock.frozen and now_us >= self.grace_until_us and not self._held_back(lock_id):
            for priority in sorted(lock.waiting):
                queue = lock.waiting[priority]
                while queue and compatible(int(queue[0].mode), lock.shared, lock.exclusive):
                    req = queue.popleft()
                    lock.holders[(req.txn_id, req.client_id)] = (req, now_us)
                    if req.mode == EXCLUSIVE:
                        lock.exclusive += 1
                    else:
                        lock.shared += 1
                    actions.append(Action(ActionKind.GRANT,
                                          replace(req, overflow=False, push_back=False)))
                if queue:
                    break
        if lock.idle():
            del self.served[lock_id]
        return actions
