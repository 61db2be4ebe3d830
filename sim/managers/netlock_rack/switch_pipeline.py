"""The lock switch in the rack: pipeline timing around the data-plane kernels.

The packet rules are :mod:`netlock.dataplane.kernels`, called directly on the arrays of a
:class:`netlock.dataplane.SwitchDataPlane` (no per-packet objects). This module adds only
time: a packet's passes occupy the pipeline for ``passes / rate_pps`` and take
``passes * pass_us`` to come out, so packets are processed in arrival order, state changes
apply at arrival, and what a packet causes leaves the switch when its last pass ends.
Where the actions go (clients, lock servers) is the manager's routing; grants to clients,
by far the most frequent action, are sent from here.
"""

from __future__ import annotations

from functools import partial
from typing import Protocol

import numpy as np

from netlock.dataplane import SwitchDataPlane, kernels
from netlock.dataplane.kernels import DEFER, DROP, GRANT, NOTIFY_SERVER, OVERFLOW, TO_SERVER
from netlock.dataplane.registers import (
    C_EXPIRED,
    C_PASSES,
    N_OUT_COLS,
    O_COUNT,
    O_KIND,
    O_LOCK,
    O_PRIORITY,
    O_REASON,
    O_SELF,
    O_SLOT,
    O_TXN,
)
from sim.engine import Engine, Req
from sim.managers.netlock_rack.fused import entry_point, release_then_acquire
from sim.managers.netlock_rack.inflight import ByRid
from sim.network import Network

SWITCH = 0


class SwitchHost(Protocol):
    """What a switch needs from the rack that holds it (the NetLock manager): the clock, the
    network, and where the actions it does not send itself go."""

    engine: Engine
    network: Network
    grant_extra_hops: int

    def to_server(self, req: Req, overflow: bool, delay: float, priority: int) -> None: ...

    def notify_server(self, lock: int, priority: int, count: int, delay: float) -> None: ...

    def defer(self, req: Req, delay: float) -> None: ...


class SwitchProbe:
    """Counters attached to a switch on demand: pipeline passes, and arrivals into and
    departures from its queues with the time spent there (for Little's law)."""

    def __init__(self) -> None:
        self.passes = 0
        self.packets = 0
        self.enqueued = 0
        self.dequeued = 0
        self.sojourn_us = 0.0

    def entered(self, req: Req, now: float) -> None:
        req.t_enq = now
        self.enqueued += 1

    def left(self, req: Req, now: float) -> None:
        self.dequeued += 1
        self.sojourn_us += now - req.t_enq

    def to_dict(self) -> dict[str, float]:
        return {"switch_packets": self.packets, "switch_passes": self.passes,
                "switch_enqueued": self.enqueued, "switch_dequeued": self.dequeued,
                "switch_sojourn_us": self.sojourn_us}


class SwitchNode:
    """One NetLock switch: a data plane, its lock table as a list, and pipeline timing."""

    def __init__(self, manager: SwitchHost, dataplane: SwitchDataPlane, pass_us: float,
                 rate_pps: float) -> None:
        self.m = manager
        self.env = manager.engine.env
        self.network = manager.network
        self.hops = manager.network.block
        self.dp = dataplane
        self.pass_us = pass_us
        self.pass_gap_us = 1e6 / rate_pps
        (self.locks, self.regions, self.slots, self.tenants, self.ctl, self.trace,
         self.out) = dataplane.arrays()
        self.res = np.zeros(4, dtype=np.int64)
        self.out_mv = memoryview(self.out.reshape(-1))
        self.ctl_mv = memoryview(self.ctl)
        self.res_mv = memoryview(self.res)
        arrays = dataplane.arrays()
        self._acquire = partial(entry_point(kernels.acquire, *arrays, -1, 0, 0, 0, 0, -1, 0,
                                            0, 0), *arrays)
        release_arrays = (self.locks, self.regions, self.slots, self.ctl, self.trace, self.out)
        self._release = partial(entry_point(kernels.release, *release_arrays, -1, 0, 0, 0, 0,
                                            -1, 0, -1, 0), *release_arrays)
        self._pair = partial(entry_point(release_then_acquire, *arrays, self.res,
                                         0, -1, 0, -1, 0, 0, 0, -1, -1, 0, 0, 0, 0),
                             *arrays, self.res)
        self.free_at = 0.0
        self.waiting = ByRid()
        self.drops = [0] * 8
        self.probe: SwitchProbe | None = None
        self.table: dict[int, int] = {}
        self.refresh_table()

    def refresh_table(self) -> None:
        """Re-read the lock table (after the control plane changed it)."""
        self.table = self.dp.lock_indices_by_id()

    def index(self, lock: int) -> int:
        return self.table.get(lock, -1)

    def _occupy(self, now: float, passes: int) -> float:
        """Put ``passes`` passes through the pipeline; the delay until they end (us)."""
        if self.probe is not None:
            self.probe.passes += passes
            self.probe.packets += 1
        t = self.free_at if self.free_at > now else now
        self.free_at = t + passes * self.pass_gap_us
        return t - now + passes * self.pass_us

    # --- packets ------------------------------------------------------------------------------

    def on_packets(self, req: Req) -> None:
        """Packets that arrived together (``req`` and those chained on ``follow``)."""
        nxt = req.follow
        if nxt is not None and req.op and not nxt.op and nxt.follow is None:
            req.follow = None
            self.release_then_acquire(req, nxt)
            return
        while req is not None:
            nxt = req.follow
            req.follow = None
            if req.op:
                self.release(req)
            else:
                self.acquire(req)
            req = nxt

    def acquire(self, req: Req, push_back: int = 0) -> None:
        """An acquire (or a server's push-back of one) enters the pipeline now."""
        now = self.env.now
        i = self.index(req.lock)
        n = self._acquire(i, req.lock, req.mode, req.rid, req.client.cid, req.tenant,
                          req.priority, push_back, int(now))
        self._after_acquire(req, i, n, self.out_mv, self._occupy(now, self.ctl_mv[C_PASSES]))

    def release(self, req: Req) -> None:
        """A release enters the pipeline now."""
        now = self.env.now
        i = self.index(req.lock)
        n = self._release(i, req.lock, req.mode, req.rid, req.client.cid, req.tenant,
                          req.priority, req.slot, int(now))
        self._after_release(req, i, n, self.out_mv, self._occupy(now, self.ctl_mv[C_PASSES]))

    def release_then_acquire(self, rel: Req, acq: Req) -> None:
        """A release and an acquire of one client that arrived together, in one compiled
        call.

        The common outcome (one pass each, the release frees its lock and the acquire is
        granted at once) is handled inline; anything else goes through the general path.
        The compiled entry point takes the time as an int64 and truncates it (times are
        >= 0), which saves converting it here. Times are computed operation for operation
        as two :meth:`_occupy` calls compute them (release, then acquire), so that both
        engines get the same doubles.
        """
        now = self.env.now
        get = self.table.get
        lock1, lock2 = rel.lock, acq.lock
        i1 = get(lock1, -1)
        i2 = get(lock2, -1)
        common = self._pair(rel.client.cid, rel.tenant, rel.priority, i1, lock1, rel.mode,
                            rel.rid, rel.slot, i2, lock2, acq.mode, acq.rid, now)
        t = self.free_at
        if t < now:
            t = now
        gap = self.pass_gap_us
        if common and not self.m.grant_extra_hops:
            t2 = t + gap
            self.free_at = t2 + gap
            probe = self.probe
            if probe is not None:
                probe.passes += 2
                probe.packets += 2
                probe.left(rel, now)
                probe.entered(acq, now)
            acq.source = SWITCH
            acq.slot = self.out_mv[O_SLOT]
            rel.client.spare = rel
            block = self.hops
            hop = block.pop() if block else self.network.hop()
            if hop >= 0:
                acq.client.receive(acq, now + (t2 - now + self.pass_us) + hop, now)
            else:
                self.network.lost += 1
            return
        n1, passes1, n2, passes2 = self.res_mv
        t2 = t + passes1 * gap
        self.free_at = t2 + passes2 * gap
        delay1 = t - now + passes1 * self.pass_us
        delay2 = t2 - now + passes2 * self.pass_us
        out = self.out_mv
        if self.probe is not None:
            self.probe.passes += passes1 + passes2
            self.probe.packets += 2
        self._after_release(rel, i1, n1, out, delay1)
        self._after_acquire(acq, i2, n2, out[n1 * N_OUT_COLS:], delay2)

    def _after_acquire(self, req: Req, i: int, n: int, out: memoryview, delay: float) -> None:
        if n == 0:
            self.waiting.put(req)
            if self.probe is not None:
                self.probe.entered(req, self.env.now)
            return
        if i >= 0 and out[O_KIND] == GRANT:
            if self.probe is not None:
                self.probe.entered(req, self.env.now)
            if n == 1:
                req.slot = out[O_SLOT]
                self.grant(req, delay)
                return
        self.dispatch(out, n, req, delay)

    def _after_release(self, req: Req, i: int, n: int, out: memoryview, delay: float) -> None:
        if (self.probe is not None and i >= 0
                and not (n and out[O_KIND] == DROP and out[O_SELF])):
            self.probe.left(req, self.env.now)
        if n:
            self.dispatch(out, n, req, delay)

    def grant(self, req: Req, delay: float) -> None:
        """Send a grant to its client: one hop, plus the database server's two in one-RTT."""
        req.source = SWITCH
        hop = self.network.hop()
        if hop < 0:
            return
        extra = self.m.grant_extra_hops
        if extra:
            more = self.network.path(extra)
            if more < 0:
                return
            hop += more
        now = self.env.now
        req.client.receive(req, now + delay + hop, now)

    def dispatch(self, out: memoryview, n: int, req: Req | None, delay: float) -> None:
        """Route the ``n`` action rows in ``out`` (``req`` = the packet that caused them)."""
        m = self.m
        for row in range(n):
            base = row * N_OUT_COLS
            kind = out[base + O_KIND]
            if kind == GRANT:
                granted = req if out[base + O_SELF] else self.waiting.take(out[base + O_TXN])
                if granted is not None:
                    granted.slot = out[base + O_SLOT]
                    self.grant(granted, delay)
            elif kind in (TO_SERVER, OVERFLOW):
                m.to_server(req, kind == OVERFLOW, delay, out[base + O_PRIORITY])
            elif kind == NOTIFY_SERVER:
                m.notify_server(out[base + O_LOCK], out[base + O_PRIORITY],
                                out[base + O_COUNT], delay)
            elif kind == DEFER:
                m.defer(req, delay)
            else:
                self.drops[out[base + O_REASON]] += 1

    # --- control plane ------------------------------------------------------------------------

    def forget_server_backlog(self, lock: int) -> None:
        """The lock server buffering ``lock``'s overflow failed: forget that backlog and
        grant what waited behind it."""
        n = kernels.forget_backlog(self.locks, self.regions, self.slots, self.ctl, self.trace,
                                   self.out, self.dp.lock_index(lock), int(self.env.now))
        if n:
            self.dispatch(self.out_mv, n, None, self._occupy(self.env.now,
                                                             self.ctl_mv[C_PASSES]))

    def expire(self, now_us: int, lease_us: int) -> int:
        """The control plane's lease sweep; returns the holders it expired."""
        n = kernels.expire(self.locks, self.regions, self.slots, self.ctl, self.trace, self.out,
                           now_us, lease_us)
        delay = self._occupy(self.env.now, self.ctl_mv[C_PASSES])
        if n:
            self.dispatch(self.out_mv, n, None, delay)
        expired = int(self.ctl[C_EXPIRED])
        self.dp.expired_total += expired
        return expired
