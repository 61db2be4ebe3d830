"""How often a lock the sample saw r times will be asked for again: the planner gives
switch slots to the locks a sample saw most often, and a count drawn high by chance
regresses to the mean, so a plan's switch share is the locks' expected future counts, not
their sampled ones (:meth:`planner.closedloop.TxnSample.repeat_weight`). Counts are per
lock, in requests of a sample as large as the one they came from."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np


def expected_counts(counts: np.ndarray,
                    smoother: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Per lock, its expected count in a future sample as large as this one, given its
    ``counts`` here. By Good-Turing a lock seen r times gets r* = (r + 1) N_(r+1) / N_r
    (N_r: locks seen r times): locks seen once 2 N_2 / N_1 each (at most 1), and locks
    never seen N_1 / N of all requests. For r >= 2 Turing's r* is kept while it differs
    from the smoothed estimate by more than 1.96 standard deviations,
    (r + 1)^2 N_(r+1) / N_r^2 (1 + N_(r+1) / N_r) its variance; from the first r where it
    does not, or N_(r+1) = 0, the smoothed estimate (Gale and Sampson's switching rule,
    "Good-Turing frequency estimation without tears", 1995). The estimates are not
    reconciled: the seen locks' total may exceed 1 - N_1 / N by up to 2 N_2 / N."""
    smooth = smoother(counts)
    n_r = np.bincount(counts.astype(np.int64), minlength=3)
    out = smooth.copy()
    if n_r[1] > 0:
        out[counts == 1] = min(2.0 * n_r[2] / n_r[1], 1.0)
    for r in range(2, len(n_r) - 1):
        if n_r[r] == 0 or n_r[r + 1] == 0:
            break
        turing = (r + 1) * n_r[r + 1] / n_r[r]
        spread = (r + 1) * math.sqrt(n_r[r + 1] / n_r[r] ** 2 * (1 + n_r[r + 1] / n_r[r]))
        at_r = counts == r
        if abs(turing - float(smooth[at_r][0])) <= 1.96 * spread:
            break
        out[at_r] = turing
    return out


def gamma_posterior(counts: np.ndarray) -> np.ndarray:
    """Empirical Bayes: a gamma prior fitted by moments over the locks seen at least
    twice, each lock's posterior mean (r_i + alpha) / (1 + beta). Right when the locks'
    rates are one population (the microbenchmarks); a few hot rows seen thousands of
    times make the variance so large that it shrinks nothing, and a heavy tail is
    shrunk too far."""
    seen = counts[counts >= 2]
    if len(seen) <= 1:
        return counts.copy()
    mean, var = float(seen.mean()), float(seen.var())
    if var <= mean:
        return np.full(len(counts), mean)
    beta = mean / (var - mean)
    return (counts + mean * beta) / (1 + beta)


def log_linear(counts: np.ndarray) -> np.ndarray:
    """Gale and Sampson's smoothing: log Z_r = a + b log r fitted over the counts seen
    (Z_r = N_r / ((t - q) / 2), q and t the nearest smaller and larger r seen), r* =
    r (1 + 1 / r)^(b + 1). Right for a power-law tail (TPC-C's NURand items and
    customers)."""
    n_r = np.bincount(counts.astype(np.int64))
    r = np.flatnonzero(n_r[1:]) + 1
    if len(r) < 2:
        return counts.copy()
    q = np.r_[0, r[:-1]]
    t = np.r_[r[1:], 2 * r[-1] - q[-1]]
    slope = float(np.polyfit(np.log(r), np.log(n_r[r] / (0.5 * (t - q))), 1)[0])
    seen = np.maximum(counts, 1.0)
    return seen * (1 + 1 / seen) ** (slope + 1)


def smoother_for(first: np.ndarray, second: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Of :func:`gamma_posterior` and :func:`log_linear`, the one whose
    :func:`expected_counts` from one half of the sample's transactions (drawn at random,
    seed 0) predicts the other half's per-lock counts better (squared error, both ways).
    Measured on the toolkit's demand traces (100,000 requests): the gamma prior for the
    microbenchmarks, the log-linear fit for the sketch TPC-C generator's, and either
    (within 0.3 %) for DSLR's, whose locks seen 2-4 times Turing's r* takes (one
    warehouse: r = 2, 3, 4 drew 0.40, 0.52, 0.63 per lock in the simulation; r* 0.44,
    0.53, 0.52; the gamma posterior alone 2.0, 3.0, 4.0)."""
    def error(smoother: Callable[[np.ndarray], np.ndarray]) -> float:
        total = 0.0
        for seen, other in ((first, second), (second, first)):
            at = seen >= 1
            total += float(np.sum((expected_counts(seen, smoother)[at] - other[at]) ** 2))
        return total
    return min((gamma_posterior, log_linear), key=error)
