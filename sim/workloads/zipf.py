"""Exact Zipf sampling over a finite set of ranks, vectorised.

Rank ``k`` (0-based) has probability ``(k + 1) ** -s / H(N, s)``. The cumulative
distribution is precomputed once (8 bytes per rank) and samples are drawn by inverting
it with a binary search, so any exponent ``s >= 0`` is exact over a finite ``N``
(``numpy.random.Generator.zipf`` needs ``s > 1`` and an infinite support).
"""

from __future__ import annotations

import numpy as np


class ZipfSampler:
    """Draw ranks ``0 .. n - 1`` with Zipf exponent ``exponent`` (0 = uniform)."""

    def __init__(self, n: int, exponent: float) -> None:
        if n < 1:
            raise ValueError(f"zipf: need at least one rank, got n={n}")
        if exponent < 0 or not np.isfinite(exponent):
            raise ValueError(f"zipf: exponent must be a finite number >= 0, got {exponent}")
        self.n = int(n)
        self.exponent = float(exponent)
        self._cdf: np.ndarray | None = None
        if self.exponent > 0:
            weights = np.arange(1, self.n + 1, dtype=np.float64) ** -self.exponent
            cdf = np.cumsum(weights)
            cdf /= cdf[-1]
            cdf[-1] = 1.0
            self._cdf = cdf

    def pmf(self) -> np.ndarray:
        """Probability of every rank (float64, sums to 1)."""
        if self._cdf is None:
            return np.full(self.n, 1.0 / self.n)
        return np.diff(self._cdf, prepend=0.0)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
        """Ranks as int64 of shape ``size``."""
        if self._cdf is None:
            return rng.integers(0, self.n, size=size, dtype=np.int64)
        u = rng.random(size=size)
        return np.minimum(np.searchsorted(self._cdf, u, side="right"), self.n - 1).astype(
            np.int64)
