"""The closed loop's lock waits as a max-plus recursion over the workload's transactions:
what :func:`planner.closedloop.solve` takes a transaction's waits and holds from.

Why: a transaction's acquires reach the switch in one burst, in the order its locks sort
in (:func:`netlock.client.starts_burst`), and every lock's queue is FIFO, so the time a
request is granted depends only on the requests that reached its lock before it. Taking
the transactions in the order they start therefore gives every grant time exactly from
the ones already taken, without an event queue: the waits of one transaction's locks come
out with the correlation they have in the rack (a NewOrder queued behind another on the
warehouse row is queued behind it on the new-order table lock too, and gets both at its
release), which mean-value analysis of independent queues cannot give (it was 23-31 % low
on DSLR's TPC-C at think 0, and three repairs of it, comonotone waits, nested waits and the
last grant as E max(S + D), each moved the error from one workload to another).

The recursion, all times us in the frame of the lock's owner (a grant time g is when the
grant leaves for the client, one way ``o`` = client round trip / 2 before it arrives).
Context c starts transaction j at s (its previous transaction's releases leave then); its
request k (sorted by lock, 0-based) reaches the switch at a_k = s + k gap + o, and is
granted at

    g_k = max(a_k + P + E_k, F_k + h_k),

with P the switch's pass, E_k the lock servers' path when k goes to them (0 otherwise),
h_k the hand-over (two switch passes; for a lock server's lock the release's and the
grant's way through the switch and to and from the server, their two packets and the TX
burst's wait) and F_k the release of what k queues behind: for an exclusive request the
last exclusive holder and every shared one since, for a shared request the last exclusive
holder. The transaction's releases reach its locks at R = max_k g_k + hold (the client's
round trip, its data read and think time), and context c starts its next transaction at
R - o. An attempt whose last grant would come after its timeout T gives up at s + T: the
locks granted by then are released at s + T + o, a later grant is handed back at once
(released 2 o after it), and the same transaction starts again after the mean back-off.

Per lock it keeps two numbers (the last exclusive release and the latest shared release
since), so a run is O(requests). Its outputs, after a warm-up of a fifth of the
transactions: the rate, each lock's occupancy (requests holding or waiting for it,
time-averaged: what overflows its switch slots), the mean wait for locks, the transaction
latencies (first send to commit), the attempts given up and the grants they used before
their timeout.

What it leaves out: the network's jitter and the TX burst's phase are taken at their
means; two transactions' bursts never interleave at the switch (a burst of m acquires
spans (m - 1) gap, under 2 us on TPC-C); a lease's expiry is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

WARMUP_SHARE = 0.2
"""The share of the replayed transactions before the measured window (the contexts all
start at once, as the simulator's do)."""
NEVER = -1e300
ATTEMPTS_PER_TRANSACTION = 20
"""A replay stops after this many attempts given up per transaction it was to take:
where nearly every attempt times out (the lock servers' queue past the timeout), the rate
is what completed by then."""


@dataclass(frozen=True)
class Replayed:
    """One run of the recursion: rate per us, times us."""

    txn_per_us: float
    occupancy: np.ndarray
    """Per dense lock, the mean number of requests holding or waiting for it."""
    wait_us: float
    latency_us: np.ndarray
    """Each measured transaction's first send to its commit."""
    given_up: int
    used_in_vain_per_us: float
    """Grants the attempts given up took before their timeout (and released then), per us:
    the rack grants them as it grants the committed transactions' requests."""


@dataclass(frozen=True)
class Timing:
    """The rack's times the recursion needs (us)."""

    contexts: int
    gap_us: float
    one_way_us: float
    pass_us: float
    hold_us: float
    timeout_us: float
    backoff_us: float


def replay(lock: np.ndarray, exclusive: np.ndarray, offsets: np.ndarray,
           path_us: np.ndarray, handover_us: np.ndarray, grant_noise_us: np.ndarray,
           locks: int, timing: Timing, transactions: int) -> Replayed:
    """Run the recursion for ``transactions`` transactions, taken from the sample
    (``offsets[j]:offsets[j + 1]`` are transaction j's requests, sorted by lock) in its
    order, cyclically. Per request: ``path_us[k]`` is E_k (with the acquire's own
    deviation from its mean way there), ``handover_us[k]`` h_k, and ``grant_noise_us[k]``
    the grant's deviation from its mean way back (added to g_k)."""
    rate, occupancy, wait, latency, given_up, in_vain = _replay(
        lock, exclusive, offsets, path_us, handover_us, grant_noise_us, locks,
        timing.contexts,
        timing.gap_us, timing.one_way_us, timing.pass_us, timing.hold_us, timing.timeout_us,
        timing.backoff_us, transactions, int(transactions * WARMUP_SHARE))
    return Replayed(rate, occupancy, wait, latency, given_up, in_vain)


@njit(cache=True)
def _replay(lock, exclusive, offsets, path, handover, noise, locks, contexts, gap, one_way,
            pass_us, hold, timeout, backoff, transactions, warmup):
    last_x = np.full(locks, NEVER)
    last_s = np.full(locks, NEVER)
    busy = np.zeros(locks)
    start = np.zeros(contexts)
    first = np.zeros(contexts)
    current = np.zeros(contexts, dtype=np.int64)
    retrying = np.zeros(contexts, dtype=np.bool_)
    latency = np.zeros(transactions - warmup)
    grants = np.zeros(offsets[-1])
    samples = len(offsets) - 1
    taken = done = given_up = 0
    began = 0.0
    waited = 0.0
    in_vain = 0
    while done < transactions and given_up < ATTEMPTS_PER_TRANSACTION * transactions:
        c = 0
        for other in range(1, contexts):
            if start[other] < start[c]:
                c = other
        s = start[c]
        if not retrying[c]:
            current[c] = taken % samples
            taken += 1
            first[c] = s
        j = current[c]
        lo, hi = offsets[j], offsets[j + 1]
        last = NEVER
        unhindered = NEVER
        for k in range(lo, hi):
            i = lock[k]
            ready = s + (k - lo) * gap + one_way + pass_us + path[k]
            behind = max(last_x[i], last_s[i]) if exclusive[k] else last_x[i]
            g = max(ready, behind + handover[k]) + noise[k]
            grants[k] = g
            last = max(last, g)
            unhindered = max(unhindered, ready + noise[k])
        release = last + hold
        late = last - s > timeout
        measured = done >= warmup
        for k in range(lo, hi):
            i = lock[k]
            out = release
            if late:
                if grants[k] + one_way > s + timeout:
                    out = grants[k] + 2 * one_way
                else:
                    out = s + timeout + one_way
                    in_vain += measured
            if exclusive[k]:
                last_x[i] = out
                last_s[i] = NEVER
            elif out > last_s[i]:
                last_s[i] = out
            if measured:
                busy[i] += out - (s + (k - lo) * gap + one_way)
        if late:
            given_up += 1
            retrying[c] = True
            start[c] = s + timeout + backoff
            continue
        retrying[c] = False
        start[c] = release - one_way
        if done == warmup:
            began = s
        if measured:
            latency[done - warmup] = release - one_way - first[c]
            waited += last - unhindered
        done += 1
    count = done - warmup
    if count <= 0:
        return done / start.min(), busy * 0.0, np.inf, latency[:0], given_up, 0.0
    span = start.min() - began
    return (count / span, busy / span, waited / count, latency[:count], given_up,
            in_vain / span)
