"""A client's transactions, compiled: :mod:`netlock.txn_context`'s steps on a context's
rows ``r.ci[c]``, ``r.cf[c]`` for what happens between grants (:mod:`sim.fast.client_rows`
handles the grants): an attempt's acquires and deadline, the data read and commit that
release every lock and start the next transaction, the give-up and back-off of an attempt
not fully granted in time, its timer, and the records of each use and committed
transaction.
"""

from __future__ import annotations

import math

from netlock.client import attempt_timeout_us
from netlock.txn_context import (
    BEGIN_LATER,
    GIVE_UP,
    TIMER_ABORT,
    TIMER_REARM,
    end_txn,
    is_current,
    lease_runs,
    start_attempt,
    timer_fires,
)
from netlock.txn_context import give_up as give_up_attempt
from sim.fast import heap
from sim.fast._fast_jit import fast_jit, fast_jit_inline, inlined
from sim.fast.client_sends import send_burst, send_burst_inline
from sim.fast.prefetch import warm_txns
from sim.fast.records import free_request, new_request
from sim.fast.state import (
    CF_HOLD,
    CF_TIMER_AT,
    CF_TXN_START,
    CI_ATTEMPT,
    CI_NEED,
    CI_NHELD,
    CI_NLOCKS,
    CI_TENANT,
    CI_TX_N,
    CI_TX_NEXT,
    CI_TX_OFF,
    E_BEGIN,
    E_RETRY,
    E_TIMER,
    I_BACKOFF_SLOTS,
    I_SEED,
    I_TIMED,
    K_NEED_TXN,
    K_RETRIES,
    K_TXNS,
    K_USES,
    P_BACKOFF_SLOT,
    P_GAP_PER_LOCK,
    P_LEASE_CLIENT,
    P_THINK,
    P_TIMEOUT,
    RELEASE,
    RF_CREATED,
    RF_GRANT,
    RF_LEASE_END,
    RI_CLIENT,
    RI_LOCK,
    RI_MODE,
    RI_OP,
    RI_SOURCE,
    RackArrays,
)

INF = math.inf


# --- records -------------------------------------------------------------------------------

@fast_jit_inline
def record_use(r: RackArrays, h: int, start: float, end: float) -> None:
    """A granted request's row: grant arrival, latency, tenant, source, lock, mode, end."""
    n = r.cnt[K_USES]
    r.cnt[K_USES] = n + 1
    c = r.ri[h, RI_CLIENT]
    u = r.uses[n]
    u.t_us = start
    u.latency_us = start - r.rf[h, RF_CREATED]
    u.tenant = r.ci[c, CI_TENANT]
    u.source = r.ri[h, RI_SOURCE]
    u.lock = r.ri[h, RI_LOCK]
    u.mode = r.ri[h, RI_MODE]
    u.end_us = end
    u.client = c
    u.asked_us = r.cf[c, CF_TXN_START]


@fast_jit_inline
def record_txn(r: RackArrays, c: int, now: float) -> None:
    n = r.cnt[K_TXNS]
    r.cnt[K_TXNS] = n + 1
    x = r.txns[n]
    x.t_us = now
    x.latency_us = now - r.cf[c, CF_TXN_START]
    x.tenant = r.ci[c, CI_TENANT]
    x.locks = r.ci[c, CI_NLOCKS]
    x.client = c


# --- transactions --------------------------------------------------------------------------

@fast_jit_inline
def new_attempt(r: RackArrays, c: int, now: float, count: int, new_txn: bool) -> int:
    """A fresh attempt at the current transaction (a new one: ``new_txn``;
    :func:`netlock.txn_context.start_attempt`): all its acquires, appended to ``r.burst``
    after ``count`` packets (the new count is returned), and its deadline."""
    n = r.ci[c, CI_NLOCKS]
    arm = start_attempt(r.ci[c], r.cf[c], now, attempt_timeout_us(
        n, r.pf[P_TIMEOUT], r.pf[P_THINK], r.pf[P_LEASE_CLIENT]), n if new_txn else -1,
        r.pf[P_GAP_PER_LOCK])
    attempt = r.ci[c, CI_ATTEMPT]
    for k in range(n):
        r.burst[count + k] = new_request(r, c, attempt, r.cur_lock[c, k], r.cur_mode[c, k],
                                         now)
    if arm:
        heap.push(r.heap, r.cf[c, CF_TIMER_AT], E_TIMER, c, 0)
    return count + n


@fast_jit_inline
def draw_txn(r: RackArrays, c: int) -> None:
    """Take the client's next transaction from its batch; flag the batch when used up."""
    t = r.ci[c, CI_TX_NEXT]
    off = r.ci[c, CI_TX_OFF]
    warm_txns(r, c, t, off)
    size = r.tx_size[c, t]
    for k in range(size):
        r.cur_lock[c, k] = r.tx_lock[c, off + k]
        r.cur_mode[c, k] = r.tx_mode[c, off + k]
    r.ci[c, CI_NLOCKS] = size
    if r.pi[I_TIMED]:
        r.cf[c, CF_HOLD] = r.tx_hold[c, t]
    r.ci[c, CI_TX_NEXT] = t + 1
    r.ci[c, CI_TX_OFF] = off + size
    if t + 1 >= r.ci[c, CI_TX_N]:
        r.ci[c, CI_NEED] = 1
        r.cnt[K_NEED_TXN] += 1


@fast_jit
def next_txn(r: RackArrays, c: int, now: float, count: int) -> int:
    """Draw the next transaction and append its first attempt's acquires to ``r.burst``
    after ``count`` packets; the new count."""
    draw_txn(r, c)
    return new_attempt(r, c, now, count, True)


next_txn_inline = inlined(next_txn)
"""The same, inlined into its caller (for the per-request path)."""


@fast_jit
def begin_txn(r: RackArrays, c: int, now: float) -> None:
    if r.pi[I_TIMED]:
        ready = r.tx_start[c, r.ci[c, CI_TX_NEXT]]
        if ready > now:
            if ready < INF:
                heap.push(r.heap, ready, E_BEGIN, c, 0)
            return
    send_burst(r, c, next_txn(r, c, now, 0), now)


@fast_jit_inline
def end_uses(r: RackArrays, c: int, now: float) -> tuple[int, bool]:
    """Record every held lock's use; the releases go to ``r.burst`` (their count is
    returned) and whether every lock was still leased."""
    count = 0
    valid = True
    for k in range(r.ci[c, CI_NHELD]):
        h = r.held[c, k]
        lease_end = r.rf[h, RF_LEASE_END]
        if lease_runs(now, lease_end):
            record_use(r, h, r.rf[h, RF_GRANT], now)
            r.ri[h, RI_OP] = RELEASE
            r.burst[count] = h
            count += 1
        else:
            record_use(r, h, r.rf[h, RF_GRANT], lease_end)
            free_request(r, h)
            valid = False
    return count, valid


@fast_jit
def commit(r: RackArrays, c: int, attempt: int, now: float) -> None:
    """Commit at client time ``now`` (:func:`netlock.txn_context.end_txn`): releases and the
    next transaction in one burst."""
    if not is_current(r.ci[c], attempt):
        return
    count, valid = end_uses(r, c, now)
    if valid:
        record_txn(r, c, now)
    ready = r.tx_start[c, r.ci[c, CI_TX_NEXT]] if r.pi[I_TIMED] else -INF
    action, at = end_txn(r.ci[c], r.cf[c], valid, now, ready)
    if action == GIVE_UP:
        give_up(r, c, count, now)
        return
    if action == BEGIN_LATER:
        if at < INF:
            heap.push(r.heap, at, E_BEGIN, c, 0)
    else:
        count = next_txn_inline(r, c, now, count)
    send_burst_inline(r, c, count, now)


commit_inline = inlined(commit)
"""The same, inlined into the event loop (a commit after the data read or think time)."""


@fast_jit
def abort(r: RackArrays, c: int, now: float) -> None:
    """Give up the current attempt: release what is held, then retry the transaction."""
    count, _ = end_uses(r, c, now)
    give_up(r, c, count, now)


@fast_jit
def give_up(r: RackArrays, c: int, count: int, now: float) -> None:
    """Send the ``count`` releases in ``r.burst`` of an attempt given up; send the
    transaction again after a back-off (:func:`netlock.txn_context.give_up`)."""
    retries, wait = give_up_attempt(r.ci[c], r.cf[c], now, r.pi[I_SEED], c,
                                    r.pi[I_BACKOFF_SLOTS], r.pf[P_BACKOFF_SLOT], -1.0)
    r.cnt[K_RETRIES] += retries
    if count:
        send_burst(r, c, count, now)
    heap.push(r.heap, now + wait, E_RETRY, c, r.ci[c, CI_ATTEMPT])


@fast_jit
def retry(r: RackArrays, c: int, attempt: int, now: float) -> None:
    """The back-off of the attempt before ``attempt`` is over: try again."""
    if is_current(r.ci[c], attempt):
        send_burst(r, c, new_attempt(r, c, now, 0, False), now)


@fast_jit
def on_timer(r: RackArrays, c: int, now: float) -> None:
    action = timer_fires(r.ci[c], r.cf[c], now)
    if action == TIMER_ABORT:
        abort(r, c, now)
    elif action == TIMER_REARM:
        heap.push(r.heap, r.cf[c, CF_TIMER_AT], E_TIMER, c, 0)
