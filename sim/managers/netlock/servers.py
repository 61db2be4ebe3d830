"""Lock servers in the rack: CPU-bound queues around :class:`netlock.lockserver.LockServer`.

A server has ``cores`` cores; RSS sends every packet of a lock to the same core (a
multiplicative hash of the lock id, independent of how locks are split over servers), so
one lock's packets are handled in arrival order. Each packet
(acquire, release, overflow to buffer, switch notification) costs its core
``servers.packet_us`` (:class:`netlock.config.schema.Servers`): a core completes
``rate_rps / rate_cores`` lock requests per second, so capacity grows with ``cores``. A core is a
busy-until time, not a simpy resource: the lock server's state changes when the packet
arrives (per-lock order is what matters) and its answers leave when the core is done.

After adopting locks someone else granted (a failed server's partition, or a failed
switch's locks), the server waits one lease before granting them (their old holders' leases
run out first; paper section 4.5) but keeps serving its own: acquires of adopted locks are
held aside in arrival order (:meth:`ServerNode.adopt`, :meth:`ServerNode.adopt_switch_locks`)
and handled when their grace ends (:meth:`ServerNode.end_grace`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from netlock.lockserver import LockServer
from netlock.packets import Action, ActionKind, LockRequest, Op
from sim.network import Link

RSS_MULTIPLIER = 0x9E3779B1

if TYPE_CHECKING:
    from sim.managers.netlock.manager import NetLockManager


class ServerNode:
    """One lock server: its NetLock state and its cores' busy-until times (us)."""

    def __init__(self, manager: NetLockManager, index: int, cores: int,
                 packet_us: float) -> None:
        self.m = manager
        self.env = manager.engine.env
        self.index = index
        self.cores = cores
        self.service_us = packet_us
        self.core_free = [0.0] * cores
        self.state = LockServer()
        self.alive = True
        self.up = Link()
        self.down = Link()
        self.packets = 0
        self.busy_us = 0.0
        self.adopting: set[int] = set()
        """Adopted partitions (original owners) whose locks are in their lease grace."""
        self.adopted_locks: set[int] = set()
        """Adopted switch locks in their lease grace."""
        self.held: list[LockRequest] = []

    def _serve(self, lock_id: int) -> float:
        """Queue one packet on its core; the delay until the core finishes it (us)."""
        now = self.env._now
        core = ((lock_id * RSS_MULTIPLIER) >> 16) % self.cores
        t = self.core_free[core]
        if t < now:
            t = now
        done = t + self.service_us
        self.core_free[core] = done
        self.packets += 1
        self.busy_us += self.service_us
        return done - now

    def on_request(self, lreq: LockRequest) -> None:
        """A request forwarded by the switch (served, overflow or release) arrives."""
        if not self.alive:
            return
        delay = self._serve(lreq.lock_id)
        if (self.adopting or self.adopted_locks) and self._in_grace(lreq):
            self.held.append(lreq)
            return
        self.m.server_actions(self, self.state.process(lreq, int(self.env._now)), delay)

    def _in_grace(self, lreq: LockRequest) -> bool:
        """An acquire the server must not queue yet: its lock is adopted and in its grace
        (overflow and push-backs of switch-resident locks are not granted here anyway)."""
        return (lreq.op == Op.ACQUIRE and not lreq.overflow and not lreq.push_back
                and (lreq.lock_id in self.adopted_locks
                     or self.m.partition.owner(lreq.lock_id) in self.adopting))

    def adopt(self, parts: set[int]) -> None:
        """Start the grace of adopted partitions ``parts``: hold their acquires aside."""
        self.adopting |= parts

    def adopt_switch_locks(self, locks: set[int]) -> None:
        """The switch failed: serve its ``locks`` after a grace. Their overflow buffered here
        becomes the head of the held requests (oldest first), as plain acquires."""
        self.adopted_locks |= locks
        self.held += self.state.surrender(locks)

    def end_grace(self, parts: set[int], locks: frozenset[int] = frozenset()) -> None:
        """The grace of partitions ``parts`` and switch ``locks`` is over: handle their held
        acquires in arrival order.

        A held acquire whose lock moved into the switch meanwhile is re-sent to the switch
        as a new acquire, like the requests :meth:`LockServer.mapped` returns.
        """
        self.adopting -= parts
        self.adopted_locks -= locks
        if not self.alive:
            self.held.clear()
            return
        now = int(self.env._now)
        kept: list[LockRequest] = []
        actions: list[Action] = []
        for lreq in self.held:
            if self._in_grace(lreq):
                kept.append(lreq)
            elif self.state.is_resident(lreq.lock_id):
                actions.append(Action(ActionKind.PUSH_BACK, lreq))
            else:
                actions += self.state.process(lreq, now)
        self.held = kept
        self.control(actions)

    def on_notify(self, lock_id: int, priority: int, count: int) -> None:
        """The switch says the queue of (lock, priority) drained: push back up to ``count``."""
        if not self.alive:
            return
        delay = self._serve(lock_id)
        self.m.server_actions(self, self.state.notified(lock_id, priority, count), delay)

    def control(self, actions: list[Action]) -> None:
        """Send actions the server's control logic produced (lease sweep, grace end) now."""
        if self.alive and actions:
            self.m.server_actions(self, actions, 0.0)

    def fail(self) -> None:
        self.alive = False
        self.state.fail()
        self.adopting.clear()
        self.adopted_locks.clear()
        self.held.clear()
