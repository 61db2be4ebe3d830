"""Open-loop microbenchmark contexts (``clients.send_limit_per_ms`` > 0), simpy engine.

A context sends its next one-lock request on :func:`netlock.txn_context.next_send`'s
schedule without waiting for grants, skipping a lock it already waits for when
``clients.skip_held`` (:func:`netlock.client.open_loop_skips`); each grant is released when
it arrives (no think time), and a lost request is never sent again (the authors' client:
see :mod:`netlock.client`). It is a :class:`sim.clients.Client` for everything it shares
with the closed loop (NIC, links, sending), so the two send packets the same way.

Requests still unanswered at the end of a run are not waits of a transaction (the open
loop sends whatever the lock manager's capacity): they are not recorded as open waits.
Instead each context counts its requests sent before
:func:`sim.core.run_spec.unanswered_cutoff_us` (``sent_old``), and the run's result counts
those neither granted nor dropped by a lock server's RX rings as stalled
(:func:`sim.core.result.unanswered`).

Each grant's release leaves through a receiving core's TX burst, as the lock server's grants
do (:mod:`netlock.lockserver.txburst`, ``clients.tx_burst`` / ``tx_drain_us``; the
receiving cores are :func:`sim.core.parts.rx_cores_per_client`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from netlock.client import SEND_WINDOW_US, SKIP_LIMIT, open_loop_skips
from netlock.txn_context import OPEN_IGNORE, OPEN_RELEASE, XF_WINDOW, next_send, open_grant
from sim.client_inputs import ClientParams, SimpyRack, TxnSource
from sim.clients import Client
from sim.engine import RELEASE, Req
from sim.network import Machine
from sim.tx_bursts import TxBursts
from sim.workloads.base import WorkloadGenerator


class OpenLoopClient(Client):
    """One open-loop context: its send schedule and the locks it waits for."""

    __slots__ = ("busy", "cutoff", "limit", "rx_bursts", "rx_cores", "sent_old", "skip_held")

    def __init__(self, cid: int, rack: SimpyRack, machine: Machine, txns: TxnSource,
                 params: ClientParams, tenant: int, priority: int, limit: int,
                 skip_held: bool, rx: tuple[int, int, float] = (1, 1, 0.0),
                 window_us: float = -SEND_WINDOW_US, cutoff_us: float = -math.inf) -> None:
        super().__init__(cid, rack, machine, txns, params, tenant, priority)
        self.rx_cores, burst, drain_us = rx
        self.rx_bursts = TxBursts(self.rx_cores, burst, drain_us, self.at, self.send_burst)
        self.limit = limit
        self.skip_held = skip_held
        self.busy: dict[int, int] = {}
        self.cf[XF_WINDOW] = window_us
        self.cutoff = cutoff_us
        self.sent_old = 0

    def start(self, at_us: float) -> None:
        self._schedule(at_us)

    def _schedule(self, ready_us: float) -> None:
        self.at(next_send(self.ci, self.cf, ready_us, self.limit), self.send_next)

    def send_next(self) -> None:
        """A send slot: the next trace request not skipped goes out; the next slot is
        scheduled one NIC gap later (or in the next window)."""
        now = self.env.now
        source, busy = self.txns, self.busy
        for _ in range(SKIP_LIMIT):
            locks, modes = source.next()
            lock = locks[0]
            if open_loop_skips(self.skip_held, busy.get(lock, 0)):
                continue
            rack = self.rack
            rid = rack.next_rid
            rack.next_rid = rid + 1
            req = Req(rid, self, 0, lock, modes[0], self.tenant, self.priority, now)
            if self.skip_held:
                busy[lock] = 1
            self.send_burst([req], now)
            if now < self.cutoff:
                self.sent_old += 1
            break
        self._schedule(now + self.machine.gap_us)

    def receive(self, req: Req, t: float, granted_at: float,
                lease_us: float | None = None) -> None:
        """A grant made at ``granted_at`` reaches the context at ``t`` (as
        :meth:`Client.receive`); it is handled as an event at its arrival."""
        lease = self.lease_us
        if lease_us is not None and lease_us < lease:
            lease = lease_us
        req.lease_end = (granted_at // 1.0) + lease
        t += self.rx_us
        down = self.machine.down
        if t < down.last:
            t = down.last
        else:
            down.last = t
        self.deliver_at(req, self.grant_handlers, t)

    def on_grant(self, req: Req) -> None:
        """A grant arrived: record its use and release it at once (no think time); a grant
        whose lease already ended is not released (the lock manager clears it)."""
        now = self.env.now
        action = open_grant(req.op == 0, now, req.lease_end)
        if action == OPEN_IGNORE:
            return
        if self.skip_held:
            self.busy.pop(req.lock, None)
        asked = req.t_created
        end = min(now, req.lease_end)
        self.add_use((now, now - asked, self.tenant, req.source, req.lock, req.mode, end,
                      self.cid, asked))
        self.add_txn((now, now - asked, self.tenant, 1, self.cid))
        if action == OPEN_RELEASE:
            req.op = RELEASE
            self.release(req, now)

    def release(self, req: Req, now: float) -> None:
        """The receiving core of ``req`` (chosen: its lock id modulo the context's cores)
        sends its release through its TX burst (``client.c`` lines 915-918 and 837-840:
        ``enqueue_pkt``, drained every 10 us; :mod:`netlock.lockserver.txburst`)."""
        self.rx_bursts.add(req.lock % self.rx_cores, req, now)

    def on_denied(self, req: Req) -> None:
        """No lock manager an open loop runs against refuses requests."""

    def on_defer(self, req: Req, wait_us: float) -> None:
        """Open-loop runs have no quotas (config rule): nothing is deferred."""

    def close(self, now: float) -> None:
        """Nothing is held past a grant; unanswered requests are not open waits."""


def make_open_loop_clients(rack: SimpyRack, workload: WorkloadGenerator,
                           params: ClientParams, machines: list[Machine], tenants: list[int],
                           priorities: list[int], seeds: Any, limit: int,
                           skip_held: bool, rx: tuple[int, int, float],
                           phases: list[float], cutoff_us: float) -> list[Client]:
    """One :class:`OpenLoopClient` per entry of ``machines`` (as
    :func:`sim.clients.make_clients`); ``phases``: where each one's first send window
    starts (us, in ``0 .. SEND_WINDOW_US``); ``cutoff_us``: requests sent before it are
    counted (:func:`sim.core.run_spec.unanswered_cutoff_us`)."""
    return [OpenLoopClient(cid, rack, machine,
                           TxnSource(workload, cid, np.random.default_rng(seed)), params,
                           tenants[cid], priorities[cid], limit, skip_held, rx,
                           phases[cid] - SEND_WINDOW_US, cutoff_us)
            for cid, (machine, seed) in enumerate(zip(machines, seeds, strict=True))]
