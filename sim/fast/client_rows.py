"""Client machines' transaction contexts, compiled: :mod:`sim.clients`' behaviour step for step.

The rules are :mod:`netlock.client`'s, applied by :mod:`netlock.txn_context`'s steps on each
context's rows ``r.ci[c]``, ``r.cf[c]``; this module keeps the requests, held locks, records,
sends and events around them: an attempt sends all its acquires back to back; with
every grant in, the client reads its data (``fetch_hops`` reliable hops), thinks, then
releases everything and starts the next transaction, at most one acquire per
``gap_per_lock_us`` when the offered load is capped. An attempt not fully granted by its
deadline releases what it holds and is sent again after a back-off. Leases run from the
grant's switch/server time; a client never uses a lock past its lease; grants for attempts
given up are released at once if still leased. A timed trace replay (``I_TIMED``) starts
each transaction no earlier than its ``tx_start`` and holds it ``tx_hold`` instead of the
think time; a client with no transaction left stops. Each client sends through its own NIC share
(one acquire per ``CF_GAP`` us, releases ride free) and FIFO links; packets leaving within
``P_BURST`` us, and an attempt's acquires however many (:func:`netlock.client.starts_burst`),
travel as one burst with one delay draw (each still lost on its own).
As in :meth:`sim.clients.Client.receive`, a grant that completes a one-lock attempt with
nothing in between is handled at the moment the lock manager sends it, for its arrival time.
On a network that duplicates or reorders (``I_FAULTY``) packets are sent and grants
received as :meth:`sim.clients.Client.send_faulty` and
:meth:`sim.clients.Client.receive_faulty` do, drawing in the same order, and every grant is
an event judged by :func:`netlock.client.grant_verdict`.
"""

from __future__ import annotations

import math

import numpy as np

from netlock.client import HAND_BACK, NOT_HELD, USE, attempt_timeout_us, starts_burst
from netlock.txn_context import (
    BEGIN_LATER,
    COMMIT_NOW,
    FOLD_NOW,
    GIVE_UP,
    LEASE_OVER,
    MORE,
    SETTLE_NOW,
    TAKE_NOW,
    TIMER_ABORT,
    TIMER_REARM,
    end_txn,
    grant_action,
    hands_back,
    is_current,
    lease_runs,
    on_arrival,
    start_attempt,
    take_grant,
    timer_fires,
)
from netlock.txn_context import give_up as give_up_attempt
from sim.fast import heap
from sim.fast._fast_jit import fast_jit, fast_jit_inline, inlined
from sim.fast.prefetch import warm_switch_rows, warm_txns
from sim.fast.records import copy_request, fault, free_request, hop, new_request, reliable_path
from sim.fast.state import (
    CF_DOWN_LAST,
    CF_FREE_AT,
    CF_GAP,
    CF_HOLD,
    CF_TIMER_AT,
    CF_TXN_START,
    CF_UP_LAST,
    CI_ATTEMPT,
    CI_FOLD_KEY,
    CI_FOLD_SEQ,
    CI_GRANT_EVENTS,
    CI_NEED,
    CI_NHELD,
    CI_NLOCKS,
    CI_TENANT,
    CI_TX_N,
    CI_TX_NEXT,
    CI_TX_OFF,
    E_BEGIN,
    E_BURST,
    E_COMMIT,
    E_GRANT,
    E_RESEND,
    E_RETRY,
    E_TIMER,
    I_BACKOFF_SLOTS,
    I_FAST,
    I_FAULTY,
    I_FETCH_HOPS,
    I_INSTANT,
    I_LOSSY,
    I_OPEN_LIMIT,
    I_SEED,
    I_TIMED,
    K_COPIES,
    K_FOLDED,
    K_HANDBACKS,
    K_IGNORED,
    K_NEED_TXN,
    K_REORDERED,
    K_RETRIES,
    K_STALE,
    K_TXNS,
    K_USES,
    P_BACKOFF_SLOT,
    P_BURST,
    P_GAP_PER_LOCK,
    P_LEASE_CLIENT,
    P_QUOTA_WINDOW,
    P_RX,
    P_THINK,
    P_TIMEOUT,
    P_TX,
    RELEASE,
    RF_CREATED,
    RF_GRANT,
    RF_LEASE_END,
    RI_ATTEMPT,
    RI_CLIENT,
    RI_FOLLOW,
    RI_LOCK,
    RI_MODE,
    RI_OP,
    RI_SLOT,
    RI_SOURCE,
    RI_TXN,
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


# --- sending -------------------------------------------------------------------------------

@fast_jit_inline
def _deliver(r: RackArrays, c: int, first: int, at: float) -> None:
    """The burst led by ``first`` reaches the switch at ``at`` over the client's FIFO link."""
    if at < r.cf[c, CF_UP_LAST]:
        at = r.cf[c, CF_UP_LAST]
    else:
        r.cf[c, CF_UP_LAST] = at
    heap.push_inline(r.heap, at, E_BURST, first, 0)


@fast_jit_inline
def _acquires(r: RackArrays, count: int) -> int:
    """Acquires among ``r.burst[:count]`` (one attempt's)."""
    n = 0
    for j in range(count):
        if r.ri[r.burst[j], RI_OP] == 0:
            n += 1
    return n


@fast_jit
def send_copy(r: RackArrays, h: int, after: float, kind: int) -> None:
    """The network's copy of row ``h`` (whose own arrival is ``after``) as event ``kind``,
    one more hop delay later, outside the link's order
    (:meth:`sim.clients.Client.send_copy`)."""
    d = hop(r)
    if d < 0:
        return
    _, extra = fault(r)
    r.cnt[K_COPIES] += 1
    if extra > 0:
        r.cnt[K_REORDERED] += 1
    heap.push(r.heap, after + d + extra, kind, copy_request(r, h), 0)


@fast_jit
def send_faulty(r: RackArrays, c: int, count: int, now: float) -> None:
    """:func:`send_burst` over a duplicating or reordering network
    (:meth:`sim.clients.Client.send_faulty`)."""
    gap = r.cf[c, CF_GAP]
    t = r.cf[c, CF_FREE_AT]
    if t < now + r.pf[P_TX]:
        t = now + r.pf[P_TX]
    burst_us = r.pf[P_BURST]
    first = -1
    prev = -1
    start = 0.0
    last = 0.0
    delay = 0.0
    run = (_acquires(r, count) - 1) * gap
    sent = 0
    for j in range(count):
        h = r.burst[j]
        acquire = r.ri[h, RI_OP] == 0
        if first >= 0 and starts_burst(start, t, acquire, sent, run, burst_us):
            _deliver(r, c, first, last + delay)
            first = -1
        d = hop(r)
        if d >= 0:
            copy, extra = fault(r)
            if copy:
                send_copy(r, h, t + d, E_BURST)
            r.ri[h, RI_FOLLOW] = -1
            if extra > 0:
                r.cnt[K_REORDERED] += 1
                heap.push(r.heap, t + d + extra, E_BURST, h, 0)
            else:
                if first < 0:
                    first = h
                    start = t
                    delay = d
                else:
                    r.ri[prev, RI_FOLLOW] = h
                prev = h
                last = t
        else:
            free_request(r, h)
        if acquire:
            t += gap
            sent += 1
    r.cf[c, CF_FREE_AT] = t
    if first >= 0:
        _deliver(r, c, first, last + delay)


@fast_jit
def send_burst(r: RackArrays, c: int, count: int, now: float) -> None:
    """Send ``r.burst[:count]`` back to back from client ``c`` at client time ``now``."""
    if r.pi[I_FAULTY]:
        send_faulty(r, c, count, now)
        return
    gap = r.cf[c, CF_GAP]
    t = r.cf[c, CF_FREE_AT]
    if t < now + r.pf[P_TX]:
        t = now + r.pf[P_TX]
    lossy = r.pi[I_LOSSY] != 0
    burst_us = r.pf[P_BURST]
    first = -1
    prev = -1
    start = 0.0
    last = 0.0
    delay = 0.0
    run = (_acquires(r, count) - 1) * gap
    sent = 0
    for j in range(count):
        h = r.burst[j]
        acquire = r.ri[h, RI_OP] == 0
        if first >= 0 and starts_burst(start, t, acquire, sent, run, burst_us):
            _deliver(r, c, first, last + delay)
            first = -1
        d = hop(r) if lossy or first < 0 else delay
        if d >= 0:
            warm_switch_rows(r, h)
            r.ri[h, RI_FOLLOW] = -1
            if first < 0:
                first = h
                start = t
                delay = d
            else:
                r.ri[prev, RI_FOLLOW] = h
            prev = h
            last = t
        else:
            free_request(r, h)
        if acquire:
            t += gap
            sent += 1
    r.cf[c, CF_FREE_AT] = t
    if first >= 0:
        _deliver(r, c, first, last + delay)


send_burst_inline = inlined(send_burst)
"""The same, inlined into its caller (for the per-request path)."""


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


# --- grants --------------------------------------------------------------------------------

@fast_jit
def granted(r: RackArrays, h: int, now: float) -> None:
    """A grant of the current attempt arrives at client time ``now``."""
    c = r.ri[h, RI_CLIENT]
    k = r.ci[c, CI_NHELD]
    action = take_grant(r.ci[c], r.cf[c], now, r.rf[h, RF_LEASE_END], r.pi[I_INSTANT] != 0)
    if action == LEASE_OVER:
        abort(r, c, now)
        free_request(r, h)
        return
    r.rf[h, RF_GRANT] = now
    r.held[c, k] = h
    r.held_txn[c, k] = r.ri[h, RI_TXN]
    if action == MORE:
        return
    if action == COMMIT_NOW:
        commit(r, c, r.ci[c, CI_ATTEMPT], now)
        return
    wait = r.cf[c, CF_HOLD] if r.pi[I_TIMED] else r.pf[P_THINK]
    fetch = r.pi[I_FETCH_HOPS]
    if fetch:
        wait += reliable_path(r, fetch)
    heap.push(r.heap, now + wait, E_COMMIT, c, r.ci[c, CI_ATTEMPT])


granted_inline = inlined(granted)
"""The same, inlined into its caller (for the per-request path)."""


@fast_jit
def stale_grant(r: RackArrays, h: int, now: float) -> None:
    """A grant for an attempt already given up: hand the lock back if still leased."""
    r.cnt[K_STALE] += 1
    n = r.cnt[K_HANDBACKS]
    r.cnt[K_HANDBACKS] = n + 1
    row = r.handbacks[n]
    row.t_us = now
    row.lock = r.ri[h, RI_LOCK]
    acquire = r.ri[h, RI_OP] == 0
    if hands_back(acquire, now, r.rf[h, RF_LEASE_END]):
        r.ri[h, RI_OP] = RELEASE
        r.burst[0] = h
        send_burst(r, r.ri[h, RI_CLIENT], 1, now)
    elif acquire:
        free_request(r, h)


@fast_jit_inline
def _verdict(r: RackArrays, h: int, c: int) -> int:
    """What client ``c`` does with the grant of request ``h`` now: use, ignore or hand it
    back (:func:`netlock.txn_context.grant_action`)."""
    held_slot = NOT_HELD
    txn = r.ri[h, RI_TXN]
    held_txn = r.held_txn[c]
    for k in range(r.ci[c, CI_NHELD]):
        if held_txn[k] == txn:
            held_slot = r.ri[r.held[c, k], RI_SLOT]
            break
    return grant_action(r.ci[c], r.ri[h, RI_ATTEMPT], r.ri[h, RI_OP] == 0, held_slot,
                        r.ri[h, RI_SLOT])


@fast_jit
def on_grant(r: RackArrays, h: int, now: float) -> None:
    """A grant arrived (an event): use it, ignore it or hand it back
    (:func:`netlock.client.grant_verdict`)."""
    c = r.ri[h, RI_CLIENT]
    if not r.pi[I_FAULTY]:
        r.ci[c, CI_GRANT_EVENTS] -= 1
    verdict = _verdict(r, h, c)
    if verdict == USE:
        granted_inline(r, h, now)
    elif verdict == HAND_BACK:
        stale_grant(r, h, now)
    else:
        r.cnt[K_IGNORED] += 1
        free_request(r, h)


on_grant_inline = inlined(on_grant)
"""The same, inlined into the event loop (a grant event per request)."""


@fast_jit
def receive_faulty(r: RackArrays, h: int, t: float) -> None:
    """A grant that would reach its client at ``t`` crosses a faulty down link
    (:meth:`sim.clients.Client.receive_faulty`)."""
    c = r.ri[h, RI_CLIENT]
    copy, extra = fault(r)
    if copy:
        send_copy(r, h, t, E_GRANT)
    if extra > 0:
        r.cnt[K_REORDERED] += 1
        heap.push(r.heap, t + extra, E_GRANT, h, 0)
        return
    if t < r.cf[c, CF_DOWN_LAST]:
        t = r.cf[c, CF_DOWN_LAST]
    else:
        r.cf[c, CF_DOWN_LAST] = t
    heap.push(r.heap, t, E_GRANT, h, 0)


@fast_jit
def receive(r: RackArrays, h: int, t: float, granted_at: float) -> None:
    """A grant made at ``granted_at`` reaches its client at ``t`` over its FIFO down link
    (:meth:`sim.clients.Client.receive`, including its inline one-lock commit). A grant
    before the attempt's last is folded (:data:`netlock.txn_context.FOLD_NOW`): held from
    ``t`` without an event, the sequence number its arrival would have had taken, so that
    the last grant is handled at once only where it would have been with every arrival
    scheduled (and a run's ``events`` stays the count of the model's events)."""
    c = r.ri[h, RI_CLIENT]
    lease_end = math.floor(granted_at) + r.pf[P_LEASE_CLIENT]
    r.rf[h, RF_LEASE_END] = lease_end
    t += r.pf[P_RX]
    if r.pi[I_FAULTY]:
        receive_faulty(r, h, t)
        return
    if t < r.cf[c, CF_DOWN_LAST]:
        t = r.cf[c, CF_DOWN_LAST]
    else:
        r.cf[c, CF_DOWN_LAST] = t
    if r.pi[I_OPEN_LIMIT]:
        heap.push(r.heap, t, E_GRANT, h, 0)
        return
    action = on_arrival(r.ci[c], r.cf[c], r.ri[h, RI_ATTEMPT], r.ri[h, RI_OP] == 0, t,
                        lease_end, r.pi[I_INSTANT] != 0, r.pi[I_FAST] != 0)
    if action != SETTLE_NOW:
        ci = r.ci[c]
        if action == FOLD_NOW:
            if ci[CI_GRANT_EVENTS] == 0 and _verdict(r, h, c) == USE:
                ci[CI_FOLD_SEQ] = heap.take_seq(r.heap)
                ci[CI_FOLD_KEY] = np.float64(t).view(np.int64)
                r.cnt[K_FOLDED] += 1
                granted_inline(r, h, t)
                return
        elif action == TAKE_NOW and heap.runs_before_now(r.heap, ci[CI_FOLD_KEY],
                                                         ci[CI_FOLD_SEQ]):
            granted(r, h, t)
            return
        ci[CI_GRANT_EVENTS] += 1
        heap.push(r.heap, t, E_GRANT, h, 0)
        return
    record_use(r, h, t, t)
    record_txn(r, c, t)
    r.ri[h, RI_OP] = RELEASE
    r.burst[0] = h
    send_burst_inline(r, c, next_txn_inline(r, c, t, 1), t)


receive_inline = inlined(receive)
"""The same, inlined into its caller (for the per-request path)."""


# --- deferred requests (over quota) ----------------------------------------------------------

@fast_jit
def on_defer(r: RackArrays, h: int, now: float) -> None:
    c = r.ri[h, RI_CLIENT]
    if is_current(r.ci[c], r.ri[h, RI_ATTEMPT]):
        r.cnt[K_RETRIES] += 1
        heap.push(r.heap, now + r.pf[P_QUOTA_WINDOW], E_RESEND, h, 0)
    else:
        free_request(r, h)


@fast_jit
def resend(r: RackArrays, h: int, now: float) -> None:
    c = r.ri[h, RI_CLIENT]
    if is_current(r.ci[c], r.ri[h, RI_ATTEMPT]):
        r.burst[0] = h
        send_burst(r, c, 1, now)
    else:
        free_request(r, h)


@fast_jit
def close(r: RackArrays, now: float, waiting: np.ndarray) -> int:
    """At the end of a run: record the uses still in progress as ending ``now``, and write
    ``(client, lock)`` of each lock a transaction still waits for into ``waiting`` (as
    :meth:`sim.clients.Client.close`); their count."""
    n = 0
    for c in range(r.ci.shape[0]):
        for k in range(r.ci[c, CI_NLOCKS]):
            lock = r.cur_lock[c, k]
            using = False
            for j in range(r.ci[c, CI_NHELD]):
                h = r.held[c, j]
                if r.ri[h, RI_LOCK] == lock and r.rf[h, RF_GRANT] < now:
                    using = True
            if not using:
                waiting[n, 0] = c
                waiting[n, 1] = lock
                n += 1
        for k in range(r.ci[c, CI_NHELD]):
            h = r.held[c, k]
            if r.rf[h, RF_GRANT] < now:
                record_use(r, h, r.rf[h, RF_GRANT], min(now, r.rf[h, RF_LEASE_END]))
        r.ci[c, CI_NHELD] = 0
    return n


def uses_per_event(clients: int, max_locks: int) -> int:
    """Most recorder rows one event can add (every client committing at once)."""
    return clients * (max_locks + 1)
