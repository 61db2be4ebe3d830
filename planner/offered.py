"""The request rate a rack of closed-loop clients sustains on a workload (the offered load).

Why this exists: a trace written by ``netlock trace gen`` records *demand*: every request is
granted one round trip after it is sent and never waits for its lock (``tracegen.py``), so
its r_i are the rates of clients that never meet a conflict. In the rack a client sends its
next request only when its current one is done, and an exclusive lock has one holder at a
time, so under skew the hottest exclusive locks queue most clients and cap the whole closed
loop: lock 0 of a Zipf(0.99) workload over 20,000 locks draws 9.1 % of requests and hands
over once per ~5.6 us, so the rack carries at most 1 / (0.091 x 5.6 us) ~ 2 M rps however
fast its 120 clients would otherwise go (24 M rps without conflicts). A plan sized on the
trace's rates would predict 12x what the rack does.

The model: a closed queueing network solved by mean-value analysis (Reiser and Lavenberg,
1980). ``tokens`` requests circulate (the requests the clients keep held or waiting, by
Little's law); each picks exclusive lock i with probability x_i and holds it for the
hand-over time T (the hold, plus :data:`HANDOVER_PASSES` switch passes), queueing FCFS
behind earlier exclusive requests; a shared request holds its lock for T without queueing
(shared holders do not exclude one another; that a shared request also waits behind an
exclusive holder is left out, so for locks taken in both modes the rate errs high). A hold
in the rack is fixed (round trip, think time, passes) up to per-packet jitter (0.5 us on 5.6
us in the paper's testbed: a squared coefficient of variation under 2 %), so a request that
finds the lock held waits half a hold for the holder, not a whole one as for exponential
holds (the residual-service correction of MVA for FCFS stations with non-exponential
service). Per token count n = 1..tokens, with D_i = T x_i and U_i = X(n - 1) D_i:

    R_i(n) = D_i (1 + Q_i(n - 1) - U_i / 2)
    X(n) = min(n / (T s + sum_i R_i(n)), 1 / max_i D_i),   Q_i(n) = X(n) R_i(n)

with s the shared share; 1 / max_i D_i is exact: no lock hands over faster than once per T.
X(tokens) is the sustained rate; without conflicts it is tokens / T, and as exclusive
contention grows it tends to 1 / (T max_i x_i). For one-lock transactions it is within a
few per cent of the simulator (tests/sim/test_plan_predicted.py). For transactions of
several locks it treats each held request as its own token, which ignores that a
transaction holds its locks together: there it is an approximation that errs high as
contention grows.

The lock servers' path. A lock the plan gives no switch slots is the lock servers': its
request takes E more per round trip (the servers' round trip, a packet's service, queueing
over their cores and the TX burst's drain wait), and the lock is held that much longer,
since its grant and its release each cross that path. With q_i = 1 for such a lock (0 for a
lock with slots: a request that overflows its full slots waits at a server for the switch
queue to drain, which lengthens its wait but not the switch's hand-overs), lock i's
hand-over time is T + q_i E, so the recursion above runs on D_i = x_i (T + q_i E) and the
delay station's demand sum_(shared i) y_i (T + q_i E) (y_i the shared requests' shares), and
the servers' CPU bounds the rate at C / sum_i (x_i + y_i) q_i (C the requests per second
their cores serve; exact). x_i and y_i are the sample's shares regressed to the mean (a plan
gives slots to the locks a sample saw most, and by chance: the locks a sample never drew go
to the servers). E is the one-lock server path (:mod:`planner.serverpath`: the round trip to
the server, its core's service and M/D/1 queue, and the wait for the core's TX drain tick,
whose phase a closed-loop client's next request keeps from its last grant), solved together
with the rate since it grows with the servers' load. Measured against the fast engine
(tests/sim/test_capacity.py): at 1K slots of micro-exclusive / micro-shared (80 % of
requests through one server) +6 % total, +9 % switch at think 0, within 5 % at think 10-100
us; with no slots and one core per server its ``servers_needed`` is the count the simulation
confirms. The contention part stays the exact MVA above (the transaction model's Schweitzer
correction errs 40 % low on a Zipf(0.99) hot lock, where this recursion is within 6 %).
"""

from __future__ import annotations

import numpy as np
from numba import njit

HANDOVER_PASSES = 2
"""Switch pipeline passes between an exclusive holder's release reaching the switch and the
next waiter's grant leaving it: one pass dequeues the release, its resubmit grants the next
request (Algorithm 2)."""


def handover_us(pass_us: float) -> float:
    """The switch's time an exclusive hand-over adds to a hold (us): :data:`HANDOVER_PASSES`
    passes of ``pass_us`` each."""
    return HANDOVER_PASSES * pass_us

_DENSE_IDS_PER_REQUEST = 8
"""Count exclusive requests per lock with a table over the ids (8 bytes per id) when there
are at most this many ids per request (plus 1M), else by sorting."""


def closed_loop_rps(exclusive_share: np.ndarray, tokens: int, handover_us: float) -> float:
    """Requests per second ``tokens`` circulating requests sustain (see the module doc).

    ``exclusive_share[i]`` is the probability that a request is an exclusive request for
    lock i (they sum to at most 1; the rest are shared); ``handover_us`` is T, the time a
    request occupies its lock from grant to the next grant, us.
    """
    if tokens < 1 or not handover_us > 0:
        return 0.0
    share = np.asarray(exclusive_share, dtype=np.float64)
    share = share[share > 0]
    # Locks with equal shares have equal queues: solve once per distinct share.
    values, counts = np.unique(share, return_counts=True)
    shared = max(1.0 - float(share.sum()), 0.0)
    per_us = _mva(values * handover_us, counts.astype(np.float64), shared * handover_us,
                  int(tokens))
    return per_us * 1e6


def closed_loop_paths_rps(exclusive_share: np.ndarray, shared_share: np.ndarray,
                          to_servers: np.ndarray, tokens: int, handover_us: float,
                          server_path_us: float, server_capacity_rps: float) -> float:
    """Requests per second ``tokens`` circulating requests sustain when lock i's requests
    (``exclusive_share[i]`` exclusive, ``shared_share[i]`` shared: shares of all requests)
    reach a lock server with probability ``to_servers[i]``, each such request taking
    ``server_path_us`` more (the module doc's server path)."""
    if tokens < 1 or not handover_us > 0:
        return 0.0
    hold = handover_us + np.asarray(to_servers, dtype=np.float64) * server_path_us
    demand = np.asarray(exclusive_share, dtype=np.float64) * hold
    demand = demand[demand > 0]
    values, counts = np.unique(demand, return_counts=True)
    delay = float(np.sum(np.asarray(shared_share, dtype=np.float64) * hold))
    rate = _mva(values, counts.astype(np.float64), delay, int(tokens)) * 1e6
    served = float(np.sum((np.asarray(exclusive_share) + np.asarray(shared_share))
                          * np.asarray(to_servers)))
    if served > 0:
        rate = min(rate, server_capacity_rps / served)
    return rate


@njit(cache=True)
def _mva(demand, multiplicity, delay, tokens):
    """MVA with fixed holds: throughput (per us) of ``tokens`` jobs over FCFS stations with
    service demands ``demand`` (us, each ``multiplicity`` times) and a delay station
    ``delay`` (the module doc's recursion)."""
    queue = np.zeros(len(demand))
    residence = np.zeros(len(demand))
    bound = 1.0 / demand.max() if len(demand) else np.inf
    rate = 0.0
    for n in range(1, tokens + 1):
        cycle = delay
        for j in range(len(demand)):
            residence[j] = demand[j] * (1.0 + queue[j] - 0.5 * rate * demand[j])
            cycle += multiplicity[j] * residence[j]
        rate = min(n / cycle, bound)
        for j in range(len(demand)):
            queue[j] = rate * residence[j]
    return rate


def exclusive_shares(lock_id: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """Per lock, the fraction of all requests that are exclusive requests for it (the
    model needs only the multiset of shares, not which lock has which)."""
    exclusive = lock_id[mode == 1]
    if len(exclusive) == 0:
        return np.zeros(0)
    if int(exclusive.max()) < _DENSE_IDS_PER_REQUEST * len(exclusive) + (1 << 20):
        counts = np.bincount(exclusive)  # linear time; ids are dense enough to count
        counts = counts[counts > 0]
    else:
        _, counts = np.unique(exclusive, return_counts=True)
    return counts / len(lock_id)
