"""Lock servers in the rack: :mod:`netlock.lockserver.request_path`'s steps around a
:class:`netlock.lockserver.LockServer`.

A server has ``cores`` cores; RSS sends every packet of a lock to the same core, which takes
``servers.packet_us`` per packet (:class:`netlock.config.schema.Servers`): a core completes
``rate_rps / rate_cores`` lock requests per second, so capacity grows with ``cores``. A core
is a busy-until time in its row, not a simpy resource: the lock server's state changes when
the packet arrives (per-lock order is what matters) and its answers leave when the core is
done, through the core's TX burst (:class:`sim.tx_bursts.TxBursts`); what the server's control
logic sends (lease sweep, grace end, a lock mapped) leaves at once. The steps are
:mod:`netlock.lockserver.request_path`'s, on this server's rows (Python lists); the fast
engine calls the same steps on its arrays (:mod:`sim.fast.rack_arrays`).

After adopting locks someone else granted (a failed server's partition, or a failed
switch's locks), the server waits one lease before granting them but keeps serving its own:
the rule is :class:`netlock.failover.Grace` (:meth:`ServerNode.adopt`,
:meth:`ServerNode.adopt_switch_locks`, :meth:`ServerNode.end_grace`).
"""

from __future__ import annotations

from typing import Any, Protocol

from netlock.failover import Grace
from netlock.lockserver import LockServer
from netlock.lockserver.request_path import (
    SV_BUSY_US,
    SV_PACKETS,
    SV_RX_DROPS,
    admit,
    new_server,
    serve,
)
from netlock.lockserver.rss import rss_core
from netlock.lockserver.server_state import (
    A_FLAGS,
    A_KIND,
    A_REASON,
    A_TXN,
    FLAG_OVERFLOW,
    FLAG_PUSH_BACK,
)
from netlock.packets import Action, LockRequest, Mode, Op
from sim.core.allocation import Partition
from sim.engine import Engine, Req
from sim.network import Link
from sim.tx_bursts import TxBursts

_rss_core = getattr(rss_core, "py_func", rss_core)
"""Called per packet from Python: the rule's Python body, not a compiled call."""
OPS = (Op.ACQUIRE, Op.RELEASE)
MODES = (Mode.SHARED, Mode.EXCLUSIVE)


class ServerHost(Protocol):
    """What a lock server needs from the rack that holds it (the NetLock manager): the
    clock, the lock partition, and where its answers go."""

    engine: Engine
    partition: Partition

    def server_answer(self, server: ServerNode, kind: int, reason: int, txn: int,
                      push_back: int, t: float, core: int) -> None: ...

    def server_send(self, server: ServerNode, packet: Any, depart: float) -> None: ...

    def server_rx_drop(self, req: Req, op: int) -> None: ...


class ServerNode:
    """One lock server: its NetLock state and its request path's rows (``sv``, one row per
    core)."""

    def __init__(self, manager: ServerHost, index: int, cores: int,
                 packet_us: float, tx_burst: int = 1, tx_drain_us: float = 0.0,
                 rx_ring: int = 0) -> None:
        self.m = manager
        self.env = manager.engine.env
        self.index = index
        self.cores = cores
        self.service_us = packet_us
        self.sv, self.core_rows = new_server(cores)
        self.state = LockServer()
        self.alive = True
        self.up = Link()
        self.down = Link()
        self.grace = Grace(manager.partition.owner)
        self.bursts = TxBursts(self.core_rows, tx_burst, tx_drain_us, manager.engine.call_at,
                               self._depart)
        self.rx_ring = rx_ring

    @property
    def packets(self) -> int:
        """Packets this server's cores took."""
        return int(self.sv[SV_PACKETS])

    @property
    def busy_us(self) -> float:
        """The time its cores spent on them (us)."""
        return self.sv[SV_BUSY_US]

    @property
    def rx_drops(self) -> int:
        """Requests its RX rings dropped (:mod:`netlock.lockserver.rxring`)."""
        return int(self.sv[SV_RX_DROPS])

    def on_request(self, req: Req, op: int, overflow: bool, priority: int, ts: int) -> None:
        """A request forwarded by the switch at ``ts`` (us) arrives: ``req`` under op ``op``
        (as it was sent), to serve or (``overflow``) to buffer, in class ``priority``."""
        if not self.alive:
            return
        core = _rss_core(req.lock, self.cores)
        now = self.env.now
        delay = admit(self.sv, self.core_rows[core], now, self.service_us, self.rx_ring)
        if delay < 0:
            self.m.server_rx_drop(req, op)
            return
        if self.grace.active and self.grace.hold(LockRequest(
                OPS[op], MODES[req.mode], req.lock, req.rid, req.client.cid, req.tenant,
                priority, ts, overflow=overflow)):
            return
        n = self.state.process_rows(int(now), op, req.lock, req.mode, req.rid,
                                    req.client.cid, req.tenant, priority, ts,
                                    FLAG_OVERFLOW if overflow else 0)
        self._answer(n, now + delay, core)

    def on_notify(self, lock_id: int, priority: int, count: int) -> None:
        """The switch says the queue of (lock, priority) drained: push back up to ``count``."""
        if not self.alive:
            return
        core = _rss_core(lock_id, self.cores)
        now = self.env.now
        delay = serve(self.sv, self.core_rows[core], now, self.service_us)
        self._answer(self.state.notified_rows(lock_id, priority, count), now + delay, core)

    def _answer(self, n: int, t: float, core: int) -> None:
        """The ``n`` action rows the kernels just wrote, sent by ``core`` when done at ``t``."""
        act = self.state.state.act
        answer = self.m.server_answer
        for row in range(n):
            answer(self, act.item(row, A_KIND), act.item(row, A_REASON), act.item(row, A_TXN),
                   1 if act.item(row, A_FLAGS) & FLAG_PUSH_BACK else 0, t, core)

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
        if not (self.alive and actions):
            return
        now = self.env.now
        for action in actions:
            self.m.server_answer(self, action.kind, action.reason, action.request.txn_id,
                                 int(action.request.push_back), now, -1)

    def fail(self) -> None:
        self.alive = False
        self.bursts.drop()
        self.state.fail()
        self.grace.clear()
