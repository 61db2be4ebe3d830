"""Least bottlenecked path (NetStore, section 3.1, Algorithm 1) and its ECMP baseline.

The controller keeps, per directed link, the bytes of the flows it knows to be in transit on
it (operations it granted, background flows that announced themselves). A link's bandwidth
factor is its capacity over those bytes (+ 1, so that an idle link has a finite factor); a
path's is the least over its links; LBP takes the path with the largest.
"""

from __future__ import annotations

import numpy as np


def path_factors(paths: np.ndarray, capacity_bps: np.ndarray,
                 in_flight_bytes: np.ndarray) -> np.ndarray:
    """Algorithm 1 for each row of ``paths`` (directed link indices): the least
    ``capacity / (bytes in flight + 1)`` over the path's links, (bits/s) per byte."""
    return np.min(capacity_bps[paths] / (in_flight_bytes[paths] + 1.0), axis=1)


def least_bottlenecked(paths: np.ndarray, capacity_bps: np.ndarray,
                       in_flight_bytes: np.ndarray) -> np.ndarray:
    """Indices of the rows of ``paths`` with the largest bandwidth factor (argmax_P of
    section 3.1; several when they tie, as on an idle fabric)."""
    factors = path_factors(paths, capacity_bps, in_flight_bytes)
    return np.flatnonzero(factors == factors.max())


def choose_path(routing: str, paths: np.ndarray, capacity_bps: np.ndarray,
                in_flight_bytes: np.ndarray, rng: np.random.Generator) -> int:
    """The row of ``paths`` an operation takes: ``ecmp`` picks one uniformly (the seed's
    baseline, section 4.1), ``lbp`` one of the least bottlenecked, uniformly among ties."""
    if routing == "ecmp":
        return int(rng.integers(len(paths)))
    best = least_bottlenecked(paths, capacity_bps, in_flight_bytes)
    return int(best[0] if len(best) == 1 else best[rng.integers(len(best))])
