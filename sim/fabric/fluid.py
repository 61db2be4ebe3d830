"""Flows in flight on a fabric over simulated time, each at its max-min fair rate.

Rates change only when a flow starts or ends; in between every flow drains its remaining
bytes at a constant rate, so the next event on the fabric is the earliest ``remaining /
rate``. Rates are recomputed lazily, once per instant at which the set of flows changed.
Times in seconds, sizes in bytes, capacities in bits/s.
"""

from __future__ import annotations

import math

import numpy as np

from sim.fabric.maxmin import max_min_rates

_DONE_BYTES = 1e-3
"""Bytes left below which a flow counts as delivered (rounding of the drain times)."""


class FluidNetwork:
    """The flows on a set of directed links and their max-min fair rates."""

    def __init__(self, capacity_bps: np.ndarray) -> None:
        self.capacity_bps = np.asarray(capacity_bps, dtype=np.float64)
        self.now = 0.0
        self.recomputes = 0
        self._ids: list[int] = []
        self._paths: list[np.ndarray] = []
        self._left = np.zeros(0)
        self._rate = np.zeros(0)
        self._dirty = False

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, flow_id: int, path: np.ndarray, nbytes: float) -> None:
        """Start a flow of ``nbytes`` on ``path`` (directed link indices, not empty) now."""
        if len(path) == 0:
            raise ValueError("a flow on the fabric crosses at least one link")
        self._ids.append(flow_id)
        self._paths.append(np.asarray(path, dtype=np.int64))
        self._left = np.append(self._left, float(nbytes))
        self._rate = np.append(self._rate, 0.0)
        self._dirty = True

    def advance(self, t: float) -> None:
        """Drain every flow at its current rate up to time ``t`` (s)."""
        if t < self.now:
            raise ValueError(f"time runs forward: {t} < {self.now}")
        if self._ids:
            self._refresh()
            self._left -= self._rate / 8.0 * (t - self.now)
        self.now = t

    def next_finish(self) -> float:
        """When the first flow in flight ends at the current rates (s; inf if none)."""
        if not self._ids:
            return math.inf
        self._refresh()
        return self.now + float(np.min(np.maximum(self._left, 0.0) * 8.0 / self._rate))

    def pop_finished(self) -> list[int]:
        """Remove and return the flows whose bytes are all delivered by now."""
        if not self._ids:
            return []
        self._refresh()
        done = self._left <= _DONE_BYTES
        if not done.any():
            return []
        finished = [self._ids[i] for i in np.flatnonzero(done)]
        keep = np.flatnonzero(~done)
        self._ids = [self._ids[i] for i in keep]
        self._paths = [self._paths[i] for i in keep]
        self._left = self._left[keep]
        self._rate = self._rate[keep]
        self._dirty = True
        return finished

    def rate_bps(self, flow_id: int) -> float:
        """The current rate of a flow in flight (bits/s)."""
        self._refresh()
        return float(self._rate[self._ids.index(flow_id)])

    def _refresh(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        if not self._ids:
            return
        lengths = [len(p) for p in self._paths]
        flow_of = np.repeat(np.arange(len(self._ids)), lengths)
        link_of = np.concatenate(self._paths)
        self._rate = max_min_rates(flow_of, link_of, len(self._ids), self.capacity_bps)
        self.recomputes += 1
