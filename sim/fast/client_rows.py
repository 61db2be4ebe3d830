"""Client machines' transaction contexts, compiled: :mod:`sim.clients`' behaviour step for step.

Split by job: :mod:`sim.fast.client_sends` puts a client's packets on the network,
:mod:`sim.fast.client_txns` runs its transactions between grants (attempts, commits,
give-ups, timers and the records of uses and transactions); this module takes the grants
(arrivals, folded arrivals, stale grants), requests deferred over quota, and a run's end.

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

from netlock.client import HAND_BACK, NOT_HELD, USE
from netlock.txn_context import (
    COMMIT_NOW,
    FOLD_NOW,
    LEASE_OVER,
    MORE,
    SETTLE_NOW,
    TAKE_NOW,
    grant_action,
    hands_back,
    is_current,
    on_arrival,
    take_grant,
)
from sim.fast import heap
from sim.fast._fast_jit import fast_jit, fast_jit_inline, inlined
from sim.fast.client_sends import send_burst, send_burst_inline, send_copy
from sim.fast.client_txns import (
    abort,
    commit,
    next_txn_inline,
    record_txn,
    record_use,
)
from sim.fast.records import fault, free_request, reliable_path
from sim.fast.state import (
    CF_DOWN_LAST,
    CF_HOLD,
    CI_ATTEMPT,
    CI_FOLD_KEY,
    CI_FOLD_SEQ,
    CI_GRANT_EVENTS,
    CI_NHELD,
    CI_NLOCKS,
    E_COMMIT,
    E_GRANT,
    E_RESEND,
    I_FAST,
    I_FAULTY,
    I_FETCH_HOPS,
    I_INSTANT,
    I_OPEN_LIMIT,
    I_TIMED,
    K_FOLDED,
    K_HANDBACKS,
    K_IGNORED,
    K_REORDERED,
    K_RETRIES,
    K_STALE,
    P_LEASE_CLIENT,
    P_QUOTA_WINDOW,
    P_RX,
    P_THINK,
    RELEASE,
    RF_GRANT,
    RF_LEASE_END,
    RI_ATTEMPT,
    RI_CLIENT,
    RI_LOCK,
    RI_OP,
    RI_SLOT,
    RI_TXN,
    RackArrays,
)

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
