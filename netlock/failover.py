"""Taking over the locks of a failed switch or lock server (paper section 4.5).

A failed node's holders do not learn of the failure: each may use its lock until its lease
runs out. So whoever takes the failed node's locks over grants none of them until every
lease the failed node granted is over, :func:`grace_end_us`. Meanwhile:

- a switch taking over (restarted with empty registers, or a backup) has its locks
  installed but paused (:class:`SwitchTakeover`): their acquires overflow to the lock
  servers, in arrival order behind what the servers buffered before the failure, and are
  pushed back once the grace is over;
- a lock server adopting a failed server's partition, or a failed switch's locks, holds
  their acquires aside in arrival order (:class:`Grace`) and keeps serving its own locks.

A lock server's failure loses the overflow it buffered for switch-resident locks; the
switch forgets that backlog (:meth:`SwitchDataPlane.forget_server_backlog`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from netlock.dataplane import SwitchDataPlane
from netlock.lockserver import LockServer
from netlock.packets import Action, ActionKind, LockRequest, Op


def grace_end_us(failed_at_us: float, lease_us: float) -> float:
    """The first time (us) at which a node taking over locks from a node that failed at
    ``failed_at_us`` may grant them: a lease (``lease_us``) after the failure, plus 1 us so
    that a lease granted at the very instant of the failure is over too."""
    return failed_at_us + lease_us + 1


class SwitchTakeover:
    """A switch serving the locks of a failed switch: installed paused, resumed by
    :meth:`resume_due` at :func:`grace_end_us` of the failure or later."""

    def __init__(self, switch: SwitchDataPlane, failed_at_us: float, lease_us: float) -> None:
        self.switch = switch
        self.until_us = grace_end_us(failed_at_us, lease_us)
        self.paused: set[int] = set()

    def install(self, lock_id: int, regions: Iterable[tuple[int, int, int]],
                server_held: Callable[[int, int], int] = lambda lock, priority: 0) -> None:
        """Install ``lock_id``'s regions ``(priority, left, right)`` paused, each with the
        count of its requests the lock servers buffered (``server_held(lock, priority)``)."""
        for priority, left, right in regions:
            self.switch.install(lock_id, priority, left, right,
                                server_held=server_held(lock_id, priority), paused=True)
        self.paused.add(lock_id)

    @property
    def pending(self) -> bool:
        return bool(self.paused)

    def resume_due(self, now_us: float) -> list[Action]:
        """Resume every lock once the grace is over (NOTIFY_SERVER for their backlog)."""
        if now_us < self.until_us:
            return []
        actions: list[Action] = []
        for lock_id in sorted(self.paused):
            actions += self.switch.resume(lock_id)
        self.paused.clear()
        return actions


class Grace:
    """Locks a lock server adopted from a failed node, each granted only after its grace:
    acquires reaching the server for them are held aside in arrival order (overflow and
    push-backs of switch-resident locks are never granted at the server, so they pass).

    ``part_of(lock_id)`` names a lock's partition; a partition or a lock is adopted until
    a time (us)."""

    def __init__(self, part_of: Callable[[int], int]) -> None:
        self.part_of = part_of
        self.parts: dict[int, float] = {}
        self.locks: dict[int, float] = {}
        self.held: list[LockRequest] = []

    def adopt(self, until_us: float, parts: Iterable[int] = (), locks: Iterable[int] = (),
              queued: Iterable[LockRequest] = ()) -> None:
        """Grant none of ``parts``' and ``locks``' requests before ``until_us``; ``queued``
        (requests the failed node had queued and this server now owns) go first."""
        for part in parts:
            self.parts[part] = until_us
        for lock_id in locks:
            self.locks[lock_id] = until_us
        self.held += queued

    @property
    def active(self) -> bool:
        return bool(self.parts or self.locks)

    def covers(self, lock_id: int) -> bool:
        """``lock_id`` is adopted and in its grace."""
        return lock_id in self.locks or self.part_of(lock_id) in self.parts

    def hold(self, req: LockRequest) -> bool:
        """Hold ``req`` aside if the server must not queue it yet; True if held."""
        if (not (self.parts or self.locks) or req.op != Op.ACQUIRE or req.overflow
                or req.push_back or not self.covers(req.lock_id)):
            return False
        self.held.append(req)
        return True

    def end(self, server: LockServer, now_us: float) -> list[Action]:
        """End the graces over by ``now_us`` and hand the server the acquires they held:
        highest priority class first, in arrival order within a class, as if they had all
        been queued when the grace ends (the first one handed over must not be granted
        ahead of a higher-class request held behind it). One whose lock has moved into the
        switch meanwhile is re-sent to the switch as a new acquire (a PUSH_BACK not marked
        push-back, like :meth:`LockServer.mapped`)."""
        self.parts = {p: t for p, t in self.parts.items() if t > now_us}
        self.locks = {lock: t for lock, t in self.locks.items() if t > now_us}
        kept = [req for req in self.held if self.covers(req.lock_id)]
        ready = sorted((req for req in self.held if not self.covers(req.lock_id)),
                       key=lambda req: req.priority)
        actions: list[Action] = []
        for req in ready:
            if server.is_resident(req.lock_id):
                actions.append(Action(ActionKind.PUSH_BACK, req))
            else:
                actions += server.process(req, int(now_us))
        self.held = kept
        return actions

    def clear(self) -> None:
        """The server failed: its graces and held requests are gone."""
        self.parts.clear()
        self.locks.clear()
        self.held.clear()
