"""The 99th percentile of transaction latency (us) from the closed-loop model's equilibrium:
``netlock capacity``'s pred_p99_us beside the simulator's.

A transaction's latency (its first send to its commit, as the simulator records it) is its
attempt, data read and think time: the fixed part f_j (NIC gaps, round trips, passes, the
lock servers' path and queue at their means, read, think: the model's cycle without its
waits) plus the longest of its requests' lock waits. The model
(:func:`planner.closedloop.solve`) gives each request k a probability p_k of finding its lock
taken, a mean wait w_k, so a wait of mean d_k = w_k / p_k when it waits, and the mean
residual r_k of the hold it finds (the lock's residual hold and hand-over). Holds in the rack
are fixed up to the network's jitter, so the residual is uniform on [0, 2 r_k]; the rest of
the wait, d_k - r_k, is whole holds of the waiters ahead, whose number a closed queue draws
about geometrically: taken as exponential of that mean. So a waiting request waits
U + V, U uniform on [0, a], a = 2 r_k, V exponential of mean m = d_k - r_k (>= 0), with

    P(U + V <= t) = (min(t, a) - m e^(-t/m) (e^(min(t, a)/m) - 1)) / a,

and, the requests' waits taken independent (as the model takes them),

    P(L_j <= t) = prod_k (1 - p_k + p_k P(U_k + V_k <= t - f_j))   for t >= f_j;

the p99 solves mean_j P(L_j <= t) = 0.99 over the sampled transactions (bisection).

Where it errs: the lock servers' TX drain wait (0 to ``tx_drain_us``) and the network's
jitter are taken at their means, so where waits are rare the p99 errs low by about their
spread (micro-exclusive at think 0: 10 us against 17 us); retries after the attempt timeout
are left out as the model leaves them (on DSLR's TPC-C no attempt times out at think 0 since
a transaction's acquires travel in one burst, :func:`netlock.client.starts_burst`: ten
warehouses, 1K-100K slots, 312-326 us predicted against 255-301 us simulated, 5-27 % high,
the README's capacity run; one warehouse at think 100 us still times out); where the rates
err the latency errs with them. tests/sim/test_capacity_latency.py bounds the error where it
holds.
"""

from __future__ import annotations

import numpy as np

QUANTILE = 0.99
BISECTIONS = 60


def txn_quantile_us(fixed: np.ndarray, wait_us: np.ndarray, wait_p: np.ndarray,
                    residual_us: np.ndarray, offsets: np.ndarray,
                    quantile: float = QUANTILE) -> float:
    """The ``quantile`` of latency over transactions j with fixed parts ``fixed[j]`` (us)
    and requests ``offsets[j]:offsets[j + 1]`` waiting ``wait_us`` on average, of which
    ``wait_p`` is the chance they wait at all, finding a hold of mean residual
    ``residual_us`` (module doc)."""
    p = np.clip(np.asarray(wait_p, dtype=np.float64), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(p > 0, np.asarray(wait_us) / np.maximum(p, 1e-300), 0.0)
    spread = 2.0 * np.minimum(np.asarray(residual_us, dtype=np.float64), mean)
    tail = np.maximum(mean - spread / 2.0, 0.0)
    starts = offsets[:-1]
    txn_of = np.repeat(np.arange(len(fixed)), np.diff(offsets))

    def below(t: float) -> float:
        room = np.maximum(t - fixed[txn_of], 0.0)
        waited = np.where(p > 0, _uniform_plus_exponential(room, spread, tail), 1.0)
        each = np.where(t >= fixed[txn_of], 1.0 - p + p * waited, 0.0)
        return float(np.exp(np.add.reduceat(np.log(np.maximum(each, 1e-300)), starts)).mean())

    low = float(fixed.min())
    high = float(fixed.max() + (spread.max() + 50 * tail.max() if len(spread) else 0.0)) + 1e-9
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        if below(middle) >= quantile:
            high = middle
        else:
            low = middle
    return high


def _uniform_plus_exponential(t: np.ndarray, width: np.ndarray, mean: np.ndarray
                              ) -> np.ndarray:
    """P(U + V <= t), U uniform on [0, ``width``], V exponential of ``mean`` (either may be
    0: a point mass)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        upto = np.minimum(t, width)
        m = np.maximum(mean, 1e-300)
        both = (upto - m * (np.exp(-(t - upto) / m) - np.exp(-t / m))) / np.maximum(width, 1e-300)
        only_exp = 1.0 - np.exp(-t / m)
        only_uniform = np.clip(t / np.maximum(width, 1e-300), 0.0, 1.0)
    out = np.where(width > 0, np.where(mean > 0, both, only_uniform),
                   np.where(mean > 0, only_exp, 1.0))
    return np.clip(np.nan_to_num(out, nan=1.0), 0.0, 1.0)
