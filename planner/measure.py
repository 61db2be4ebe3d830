"""Measure r_i and c_i per lock from a trace, vectorised (numba kernels, no per-row Python).

An *item* is a (lock, priority) pair: each priority has its own switch queue. For every
request j of item i, its *arrival concurrency* k_j is the number of requests of item i
whose ``[t_request, t_release)`` intervals contain ``t_request_j`` (itself included,
at least 1): the queue depth the request finds, counting itself. Then

- r_i = requests of item i / D, with D = max(t_release) - min(t_request) (docs/formats.md);
- c_i (``max``) = max_j k_j, the most overlapping requests on the item;
- c_i (``pNN``) = the NN-th percentile of k_j (nearest rank), a robust alternative;
- a queue of s slots would send the requests with k_j > s to the lock servers.

Requests are grouped per item with a counting sort, then each item's request and release
times are sorted and merged in one sweep, O(N log(N / items)).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from numba import njit

from netlock.trace import Trace

_DENSE_KEYS_PER_ROW = 8


@dataclass(frozen=True, eq=False)
class LockStats:
    """Per-item measurements, items sorted by (lock_id, priority). Rates in rps."""

    lock_id: np.ndarray
    priority: np.ndarray
    requests: np.ndarray
    rate_rps: np.ndarray
    contention: np.ndarray
    contention_max: np.ndarray
    duration_s: float
    statistic: str
    arrivals: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.lock_id)

    @property
    def total_requests(self) -> int:
        return int(self.offsets[-1])

    def requests_above(self, slots: np.ndarray) -> np.ndarray:
        """Per item, requests whose arrival concurrency exceeds ``slots`` (int64)."""
        slots = np.broadcast_to(np.asarray(slots, dtype=np.int64), self.lock_id.shape)
        return _count_above(self.arrivals, self.offsets, np.ascontiguousarray(slots))


def parse_statistic(name: str) -> float | None:
    """``max`` -> None; ``p99`` -> 0.99, ``p999`` -> 0.999, ``p99.5`` -> 0.995, ``p50`` -> 0.5."""
    if name == "max":
        return None
    match = re.fullmatch(r"p(\d+(?:\.\d+)?)", name)
    if not match:
        raise ValueError(f"--contention: expected max or a percentile such as p99, got {name!r}")
    digits = match.group(1)
    if "." not in digits and len(digits) >= 3 and not digits.startswith("9"):
        raise ValueError(f"--contention: {name!r} is ambiguous; write p99.9 style or max")
    percent = float(digits) if "." in digits or len(digits) <= 2 else \
        float(f"{digits[:2]}.{digits[2:]}")
    if not 0 < percent < 100:
        raise ValueError(f"--contention: percentile must be in (0, 100), got {name!r}")
    return percent / 100.0


def measure(trace: Trace, statistic: str = "max", priorities: int = 1,
            coarse_group: int = 1) -> LockStats:
    """r_i and c_i of every item of ``trace``.

    ``priorities`` is the switch's priority count: trace priorities at or beyond it share
    the lowest class. ``coarse_group`` > 1 merges locks ``g * K .. g * K + K - 1`` into
    coarse lock ``g`` (items then carry the coarse lock id).
    """
    quantile = parse_statistic(statistic)
    locks = trace.lock_id if coarse_group == 1 else trace.lock_id // coarse_group
    combined = priorities > 1 and trace.priority is not None
    if combined:
        if int(locks.max()) >= np.iinfo(np.int64).max // priorities:
            raise ValueError("lock ids too large to combine with priorities")
        key = locks * priorities + np.minimum(trace.priority, priorities - 1)
    else:
        key = locks
    item_keys, group = _dense_groups(key)
    offsets, starts, ends = _group_times(group, trace.t_request, trace.t_release,
                                         len(item_keys))
    arrivals, cmax = _arrival_concurrency(offsets, starts, ends)
    contention = cmax if quantile is None else _percentile(arrivals, offsets, cmax, quantile)
    duration = trace.duration_s
    requests = np.diff(offsets)
    with np.errstate(divide="ignore"):
        rate = requests / duration if duration > 0 else np.full(len(requests), np.inf)
    p = priorities if combined else 1
    return LockStats(
        lock_id=item_keys // p, priority=item_keys % p,
        requests=requests, rate_rps=rate, contention=contention, contention_max=cmax,
        duration_s=duration, statistic=statistic, arrivals=arrivals, offsets=offsets)


def _dense_groups(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys, and each row's index into them (int32: 4 bytes per row)."""
    top = int(key.max())
    if top < _DENSE_KEYS_PER_ROW * len(key) + (1 << 20):
        present = np.bincount(key, minlength=top + 1) > 0
        remap = (np.cumsum(present) - 1).astype(np.int32)
        return np.flatnonzero(present).astype(np.int64), remap[key]
    uniq, inverse = np.unique(key, return_inverse=True)
    return uniq.astype(np.int64), inverse.reshape(-1).astype(np.int32)


@njit(cache=True)
def _group_times(group, t_request, t_release, n_groups):
    counts = np.zeros(n_groups + 1, np.int64)
    for g in group:
        counts[g + 1] += 1
    offsets = np.cumsum(counts)
    pos = offsets[:-1].copy()
    starts = np.empty(len(group), np.float64)
    ends = np.empty(len(group), np.float64)
    for i in range(len(group)):
        g = group[i]
        p = pos[g]
        starts[p] = t_request[i]
        ends[p] = t_release[i]
        pos[g] = p + 1
    return offsets, starts, ends


@njit(cache=True)
def _arrival_concurrency(offsets, starts, ends):
    """Per request k_j (int32, grouped by item); per item max k_j. Sorts in place."""
    n_groups = len(offsets) - 1
    arrivals = np.empty(len(starts), np.int32)
    cmax = np.ones(n_groups, np.int64)
    for g in range(n_groups):
        lo, hi = offsets[g], offsets[g + 1]
        n = hi - lo
        s = starts[lo:hi]
        for j in range(1, n):
            if s[j] < s[j - 1]:
                s.sort()
                break
        e = ends[lo:hi]
        e.sort()
        released = 0
        best = 1
        for j in range(n):
            while released < n and e[released] <= s[j]:
                released += 1
            k = j + 1 - released
            if k < 1:
                k = 1
            arrivals[lo + j] = k
            if k > best:
                best = k
        cmax[g] = best
    return arrivals, cmax


@njit(cache=True)
def _percentile(arrivals, offsets, cmax, quantile):
    """Nearest-rank percentile of k_j per item, by counting (k_j <= the item's max)."""
    n_groups = len(offsets) - 1
    out = np.ones(n_groups, np.int64)
    histogram = np.zeros(cmax.max() + 2, np.int64)
    for g in range(n_groups):
        lo, hi = offsets[g], offsets[g + 1]
        top = cmax[g]
        histogram[: top + 1] = 0
        for j in range(lo, hi):
            histogram[arrivals[j]] += 1
        rank = max(math.ceil(quantile * (hi - lo) - 1e-9), 1)
        seen = 0
        for k in range(1, top + 1):
            seen += histogram[k]
            if seen >= rank:
                out[g] = k
                break
    return out


@njit(cache=True)
def _count_above(arrivals, offsets, slots):
    n_groups = len(offsets) - 1
    out = np.zeros(n_groups, np.int64)
    for g in range(n_groups):
        limit = slots[g]
        count = 0
        for j in range(offsets[g], offsets[g + 1]):
            if arrivals[j] > limit:
                count += 1
        out[g] = count
    return out
