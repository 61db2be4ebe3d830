"""Lock servers in the rack: CPU-bound queues around :class:`netlock.lockserver.LockServer`.

A server has ``cores`` cores; RSS sends every packet of a lock to the same core (a
multiplicative hash of the lock id, independent of how locks are split over servers), so
one lock's packets are handled in arrival order. Each packet
(acquire, release, overflow to buffer, switch notification) costs one core
``cores / (2 * rate_rps)`` seconds: a lock request is an acquire and its release, and one
server completes ``rate_rps`` of them per second with all cores busy. A core is a
busy-until time, not a simpy resource: the lock server's state changes when the packet
arrives (per-lock order is what matters) and its answers leave when the core is done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from netlock.lockserver import LockServer
from netlock.packets import Action, LockRequest
from sim.network import Link

RSS_MULTIPLIER = 0x9E3779B1

if TYPE_CHECKING:
    from sim.managers.netlock.manager import NetLockManager


class ServerNode:
    """One lock server: its NetLock state and its cores' busy-until times (us)."""

    def __init__(self, manager: NetLockManager, index: int, cores: int,
                 rate_rps: float) -> None:
        self.m = manager
        self.env = manager.engine.env
        self.index = index
        self.cores = cores
        self.service_us = cores * 1e6 / (2.0 * rate_rps)
        self.core_free = [0.0] * cores
        self.state = LockServer()
        self.alive = True
        self.up = Link()
        self.down = Link()
        self.packets = 0
        self.busy_us = 0.0

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
        self.m.server_actions(self, self.state.process(lreq, int(self.env._now)), delay)

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
