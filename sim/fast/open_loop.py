"""Open-loop microbenchmark contexts, compiled: :mod:`sim.open_loop`'s behaviour step for step.

A context's send slot (``E_OPEN``) sends the next trace request that
:func:`netlock.client.open_loop_skips` does not skip, and schedules the next slot by
:func:`netlock.client.open_loop_send_at`; each grant (``E_GRANT``) is recorded and released
at once. A slot that runs out of drawn transactions while skipping continues at the same
time after the Python side refills them (``b`` carries the skips so far). The context
never holds a transaction (``CI_NLOCKS`` stays 0), so :func:`sim.fast.clients.close`
records no open waits for it, as the simpy engine.
"""

from __future__ import annotations

from netlock.client import SKIP_LIMIT, open_loop_send_at, open_loop_skips
from sim.fast import heap
from sim.fast._jit import fast_jit
from sim.fast.clients import draw_txn, send_burst
from sim.fast.records import free_request, new_request
from sim.fast.state import (
    CF_GAP,
    CF_WINDOW,
    CI_NEED,
    CI_NLOCKS,
    CI_SENT,
    CI_TENANT,
    E_OPEN,
    I_OPEN_LIMIT,
    I_SKIP_HELD,
    K_TXNS,
    K_USES,
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
    """Schedule context ``c``'s next send slot, ready at ``ready`` (us)."""
    t, window, sent = open_loop_send_at(ready, r.cf[c, CF_WINDOW], r.ci[c, CI_SENT],
                                        r.pi[I_OPEN_LIMIT])
    r.cf[c, CF_WINDOW] = window
    r.ci[c, CI_SENT] = sent
    heap.push(r.heap, t, E_OPEN, c, 0)


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
        break
    schedule(r, c, now + r.cf[c, CF_GAP])


@fast_jit
def granted(r: RackArrays, h: int, now: float) -> None:
    """A grant reaches its open-loop context (:meth:`sim.open_loop.OpenLoopClient.on_grant`):
    recorded, and released at once unless its lease already ended."""
    if r.ri[h, RI_OP] != 0:
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
    if now < lease_end:
        r.ri[h, RI_OP] = RELEASE
        r.burst[0] = h
        send_burst(r, c, 1, now)
    else:
        free_request(r, h)
