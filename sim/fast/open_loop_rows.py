"""Open-loop microbenchmark contexts, compiled: :mod:`sim.open_loop`'s behaviour step for step.

A context's send slot (``E_OPEN``) sends the next trace request that
:func:`netlock.client.open_loop_skips` does not skip, and schedules the next slot by
:func:`netlock.txn_context.next_send`; each grant (``E_GRANT``) is recorded and released
at once (:func:`netlock.txn_context.open_grant`). A slot that runs out of drawn
transactions while skipping continues at the same time after the Python side refills them
(``b`` carries the skips so far). The context never holds a transaction (``CI_NLOCKS``
stays 0), so :func:`sim.fast.client_rows.close` records no open waits for it, as the simpy
engine; it counts its acquires sent before ``P_OL_CUTOFF`` (``K_OL_SENT``) instead.
Releases leave through the context's receiving cores' TX bursts (``cl_tx``,
``E_CL_DRAIN``; :mod:`netlock.lockserver.txburst`).
"""

from __future__ import annotations

from netlock.client import SKIP_LIMIT, open_loop_skips
from netlock.lockserver import txburst
from netlock.txn_context import OPEN_IGNORE, OPEN_RELEASE, next_send, open_grant
from sim.fast import heap
from sim.fast._fast_jit import fast_jit
from sim.fast.client_sends import send_burst
from sim.fast.client_txns import draw_txn
from sim.fast.records import free_request, new_request
from sim.fast.state import (
    CF_GAP,
    CI_NEED,
    CI_NLOCKS,
    CI_TENANT,
    E_CL_DRAIN,
    E_OPEN,
    I_CL_BURST,
    I_CL_CORES,
    I_OPEN_LIMIT,
    I_SKIP_HELD,
    K_OL_SENT,
    K_TXNS,
    K_USES,
    P_CL_DRAIN,
    P_OL_CUTOFF,
    RELEASE,
    RF_CREATED,
    RF_LEASE_END,
    RI_CLIENT,
    RI_LOCK,
    RI_MODE,
    RI_OP,
    RI_SOURCE,
    RackArrays,
)


@fast_jit
def schedule(r: RackArrays, c: int, ready: float) -> None:
    """Schedule context ``c``'s next send slot, ready at ``ready`` (us;
    :func:`netlock.txn_context.next_send`)."""
    heap.push(r.heap, next_send(r.ci[c], r.cf[c], ready, r.pi[I_OPEN_LIMIT]), E_OPEN, c, 0)


@fast_jit
def send_next(r: RackArrays, c: int, skips: int, now: float) -> None:
    """Context ``c``'s send slot at ``now`` (:meth:`sim.open_loop.OpenLoopClient.send_next`)."""
    skip_held = r.pi[I_SKIP_HELD] != 0
    while skips < SKIP_LIMIT:
        if r.ci[c, CI_NEED]:
            heap.push(r.heap, now, E_OPEN, c, skips)
            return
        draw_txn(r, c)
        r.ci[c, CI_NLOCKS] = 0
        lock = r.cur_lock[c, 0]
        if open_loop_skips(skip_held, r.busy[c, lock] if skip_held else 0):
            skips += 1
            continue
        h = new_request(r, c, 0, lock, r.cur_mode[c, 0], now)
        if skip_held:
            r.busy[c, lock] = 1
        r.burst[0] = h
        send_burst(r, c, 1, now)
        if now < r.pf[P_OL_CUTOFF]:
            r.cnt[K_OL_SENT] += 1
        break
    schedule(r, c, now + r.cf[c, CF_GAP])


@fast_jit
def granted(r: RackArrays, h: int, now: float) -> None:
    """A grant reaches its open-loop context (:meth:`sim.open_loop.OpenLoopClient.on_grant`):
    recorded, and released at once unless its lease already ended
    (:func:`netlock.txn_context.open_grant`)."""
    action = open_grant(r.ri[h, RI_OP] == 0, now, r.rf[h, RF_LEASE_END])
    if action == OPEN_IGNORE:
        free_request(r, h)
        return
    c = r.ri[h, RI_CLIENT]
    if r.pi[I_SKIP_HELD]:
        r.busy[c, r.ri[h, RI_LOCK]] = 0
    asked = r.rf[h, RF_CREATED]
    lease_end = r.rf[h, RF_LEASE_END]
    n = r.cnt[K_USES]
    r.cnt[K_USES] = n + 1
    u = r.uses[n]
    u.t_us = now
    u.latency_us = now - asked
    u.tenant = r.ci[c, CI_TENANT]
    u.source = r.ri[h, RI_SOURCE]
    u.lock = r.ri[h, RI_LOCK]
    u.mode = r.ri[h, RI_MODE]
    u.end_us = min(now, lease_end)
    u.client = c
    u.asked_us = asked
    m = r.cnt[K_TXNS]
    r.cnt[K_TXNS] = m + 1
    x = r.txns[m]
    x.t_us = now
    x.latency_us = now - asked
    x.tenant = r.ci[c, CI_TENANT]
    x.locks = 1
    x.client = c
    if action == OPEN_RELEASE:
        r.ri[h, RI_OP] = RELEASE
        release(r, c, h, now)
    else:
        free_request(r, h)


@fast_jit
def _flush(r: RackArrays, c: int, core: int, n: int, t: float) -> None:
    """The first ``n`` packets of the receiving core's TX buffer leave at ``t``."""
    for i in range(n):
        r.burst[i] = r.cl_tx_buf[c, core, i]
    send_burst(r, c, n, t)


@fast_jit
def release(r: RackArrays, c: int, h: int, now: float) -> None:
    """The release ``h`` leaves through its receiving core's TX burst
    (:meth:`sim.open_loop.OpenLoopClient.release`; :func:`netlock.lockserver.txburst.send`)."""
    core = r.ri[h, RI_LOCK] % r.pi[I_CL_CORES]
    row = r.cl_tx[c, core]
    late, late_at, slot, outcome = txburst.send(row, now, r.pi[I_CL_BURST], r.pf[P_CL_DRAIN])
    if late:
        _flush(r, c, core, late, late_at)
    r.cl_tx_buf[c, core, slot] = h
    if outcome == txburst.FULL:
        _flush(r, c, core, slot + 1, now)
    elif outcome == txburst.OPENED:
        heap.push(r.heap, row[txburst.TX_DUE], E_CL_DRAIN, c * r.pi[I_CL_CORES] + core,
                  int(row[txburst.TX_SEQ]))


@fast_jit
def drain(r: RackArrays, cc: int, seq: int, now: float) -> None:
    """Context ``cc // cores``'s receiving core ``cc % cores`` drains its burst ``seq``."""
    c = cc // r.pi[I_CL_CORES]
    core = cc % r.pi[I_CL_CORES]
    row = r.cl_tx[c, core]
    n = txburst.drain(row, seq)
    if n:
        _flush(r, c, core, n, row[txburst.TX_DUE])
