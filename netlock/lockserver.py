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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

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


class LockServer:
    """One lock server's state and request handling (deterministic, plain Python)."""

    def __init__(self) -> None:
        self.served: dict[int, ServedLock] = {}
        self.buffers: dict[tuple[int, int], deque[LockRequest]] = {}
        self.resident: set[int] = set()
        self.grace_until_us = 0
        self.expired_total = 0

    def fail(self) -> None:
        """Lose all state (the lock's partition is reassigned to another server)."""
        self.served.clear()
        self.buffers.clear()
        self.resident.clear()
        self.grace_until_us = 0

    # --- requests ----------------------------------------------------------------------------

    def process(self, req: LockRequest, now_us: int) -> list[Action]:
        """Handle a request forwarded by the switch (TO_SERVER, OVERFLOW or a bounce)."""
        if req.op == Op.RELEASE:
            return self._release(req, now_us)
        if req.overflow or req.lock_id in self.resident:
            self._buffer(req)
            return []
        lock = self.served.setdefault(req.lock_id, ServedLock())
        lock.waiting.setdefault(req.priority, deque()).append(req)
        return self._grant(req.lock_id, now_us)

    def notified(self, lock_id: int, priority: int, count: int) -> list[Action]:
        """The switch queue of (lock, priority) drained: push back up to ``count`` requests."""
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
        return self._grant(lock_id, now_us)

    def begin_move_in(self, lock_id: int) -> None:
        """Stop granting ``lock_id``: it is about to move into the switch."""
        self.served.setdefault(lock_id, ServedLock()).frozen = True

    def ready_to_move_in(self, lock_id: int) -> bool:
        lock = self.served.get(lock_id)
        return lock is None or not lock.holders

    def hand_over(self, lock_id: int, classes: Iterable[int], priorities: int) -> dict[int, int]:
        """Keep ``lock_id``'s waiting requests as ``q2`` for the switch; q2 length per class.

        ``classes`` are the priority classes the switch gives the lock (of ``priorities``);
        requests of other classes go to the class the switch would use for them.
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
        return {c: len(self.buffers.get((lock_id, c), ())) for c in classes}

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

    def _grant(self, lock_id: int, now_us: int) -> list[Action]:
        """Grant in FIFO order, highest class first, stopping at the first request that must
        wait (it blocks everything behind it)."""
        lock = self.served[lock_id]
        actions: list[Action] = []
        if not lock.frozen and now_us >= self.grace_until_us:
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
