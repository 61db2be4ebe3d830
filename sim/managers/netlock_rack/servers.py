"""Lock servers in the rack: CPU-bound queues around :class:`netlock.lockserver.LockServer`.

A server has ``cores`` cores; RSS sends every packet of a lock to the same core (a
multiplicative hash of the lock id, independent of how locks are split over servers), so
one lock's packets are handled in arrival order. Each packet
(acquire, release, overflow to buffer, switch notification) costs its core
``servers.packet_us`` (:class:`netlock.config.schema.Servers`): a core completes
``rate_rps / rate_cores`` lock requests per second, so capacity grows with ``cores``. A core is a
busy-until time, not a simpy resource: the lock server's state changes when the packet
arrives (per-lock order is what matters) and its answers leave when the core is done.

Every grant and push-back a core sends waits in the core's TX buffer until its burst fills
or the core's drain timer fires (``servers.tx_burst``, ``servers.tx_drain_us``; the rule is
:mod:`netlock.lockserver.txburst`); what the server's control logic sends (lease sweep, grace
end, a lock mapped) leaves at once.

After adopting locks someone else granted (a failed server's partition, or a failed
switch's locks), the server waits one lease before granting them but keeps serving its own:
the rule is :class:`netlock.failover.Grace` (:meth:`ServerNode.adopt`,
:meth:`ServerNode.adopt_switch_locks`, :meth:`ServerNode.end_grace`).
"""

from __future__ import annotations

from typing import Any, Protocol

from netlock.failover import Grace
from netlock.lockserver import LockServer
from netlock.lockserver.rss import rss_core
from netlock.lockserver.rxring import ring_full
from netlock.packets import Action, LockRequest
from sim.core.allocation import Partition
from sim.engine import Engine
from sim.network import Link
from sim.tx_bursts import TxBursts

_rss_core = getattr(rss_core, "py_func", rss_core)
_ring_full = getattr(ring_full, "py_func", ring_full)
"""Called per packet from Python: the rules' Python bodies, not compiled calls."""

class ServerHost(Protocol):
    """What a lock server needs from the rack that holds it (the NetLock manager): the
    clock, the lock partition, and where its actions go."""

    engine: Engine
    partition: Partition

    def server_actions(self, server: ServerNode, actions: list[Action],
                       delay: float, core: int = -1) -> None: ...

    def server_send(self, server: ServerNode, packet: Any, depart: float) -> None: ...

    def server_rx_drop(self, lreq: LockRequest) -> None: ...


class ServerNode:
    """One lock server: its NetLock state and its cores' busy-until times (us)."""

    def __init__(self, manager: ServerHost, index: int, cores: int,
                 packet_us: float, tx_burst: int = 1, tx_drain_us: float = 0.0,
                 rx_ring: int = 0) -> None:
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
        self.grace = Grace(manager.partition.owner)
        self.bursts = TxBursts(cores, tx_burst, tx_drain_us, manager.engine.call_at,
                               self._depart)
        self.rx_ring = rx_ring
        self.rx_drops = 0

    def _serve(self, core: int) -> float:
        """Queue one packet on ``core``; the delay until the core finishes it (us)."""
        now = self.env.now
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
        core = _rss_core(lreq.lock_id, self.cores)
        now = self.env.now
        if _ring_full(self.core_free[core], now, self.service_us, self.rx_ring):
            self.rx_drops += 1
            self.m.server_rx_drop(lreq)
            return
        delay = self._serve(core)
        if self.grace.hold(lreq):
            return
        self.m.server_actions(self, self.state.process(lreq, int(now)), delay, core)

    def adopt(self, parts: set[int], until_us: float) -> None:
        """Grant none of the adopted partitions ``parts`` before ``until_us``."""
        self.grace.adopt(until_us, parts=parts)

    def adopt_switch_locks(self, locks: frozenset[int], until_us: float) -> None:
        """The switch failed: serve its ``locks`` from ``until_us``. Their overflow buffered
        here goes first (oldest first), as plain acquires."""
        self.grace.adopt(until_us, locks=locks, queued=self.state.surrender(locks))

    def end_grace(self, now_us: float) -> None:
        """Graces over by ``now_us`` end: handle the acquires they held, in arrival order."""
        if not self.alive:
            self.grace.clear()
            return
        self.control(self.grace.end(self.state, now_us))

    def on_notify(self, lock_id: int, priority: int, count: int) -> None:
        """The switch says the queue of (lock, priority) drained: push back up to ``count``."""
        if not self.alive:
            return
        core = _rss_core(lock_id, self.cores)
        delay = self._serve(core)
        self.m.server_actions(self, self.state.notified(lock_id, priority, count), delay,
                              core)

    def send(self, core: int, packet: Any, t: float) -> None:
        """Core ``core`` sends ``packet`` when done with its cause at ``t`` (us): into its TX
        burst, which leaves by :mod:`netlock.lockserver.txburst`'s rule (``core`` < 0:
        at once)."""
        if core < 0:
            self.m.server_send(self, packet, t)
            return
        self.bursts.add(core, packet, t)

    def _depart(self, packets: list[Any], depart: float) -> None:
        for packet in packets:
            self.m.server_send(self, packet, depart)

    def control(self, actions: list[Action]) -> None:
        """Send actions the server's control logic produced (lease sweep, grace end) now."""
        if self.alive and actions:
            self.m.server_actions(self, actions, 0.0)

    def fail(self) -> None:
        self.alive = False
        self.bursts.drop()
        self.state.fail()
        self.grace.clear()
