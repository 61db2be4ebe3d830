"""Lay allocated queues out on the shared queue: one contiguous region per (lock, priority).

Each priority class owns a contiguous range of global slot indices (its stages, see
:attr:`netlock.geometry.SwitchGeometry.priority_ranges`); a region must lie inside its
class's range. A fresh layout packs each class's regions from the start of its range in
lock-id order, leaving no holes. When a live layout is given, regions stay where they are
whenever possible (fewer moves during migration):

1. a lock that keeps its class and does not grow stays at its ``left`` (shrinking in place);
2. a lock that grows keeps its ``left`` if the slots after it are free;
3. the rest (new locks, growers that could not grow) go best-fit into the free gaps,
   largest first;
4. if they do not fit, the class is compacted: regions are packed from the start of the
   range in their old order, new ones after.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from netlock.geometry import SwitchGeometry
from netlock.plan import SwitchEntries


@dataclass(frozen=True)
class Fragmentation:
    """How scattered the free slots are. ``ratio`` = 1 - largest gap / free slots."""

    free_slots: int
    free_gaps: int
    largest_gap: int
    regions_spanning_arrays: int

    @property
    def ratio(self) -> float:
        return 0.0 if self.free_slots == 0 else 1.0 - self.largest_gap / self.free_slots


def layout(lock_id: np.ndarray, priority: np.ndarray, slots: np.ndarray,
           geometry: SwitchGeometry, live: SwitchEntries | None = None) -> np.ndarray:
    """``left`` of every region (int64); ``right = left + slots - 1``. Slots must be >= 1."""
    left = np.full(len(lock_id), -1, dtype=np.int64)
    for cls, (first, last) in enumerate(geometry.priority_ranges):
        idx = np.flatnonzero(priority == cls)
        if len(idx) == 0:
            continue
        if int(slots[idx].sum()) > last - first + 1:
            raise ValueError(f"priority {cls}: {int(slots[idx].sum())} slots allocated but "
                             f"its stages hold {last - first + 1}")
        if live is None or len(live) == 0:
            left[idx] = _pack(first, slots[idx])
        else:
            old_left, old_slots = _old_regions(live, lock_id[idx], cls)
            left[idx] = _keep_then_place(first, last, slots[idx], old_left, old_slots)
    return left


def _pack(first: int, slots: np.ndarray) -> np.ndarray:
    return first + np.cumsum(slots) - slots


def _old_regions(live: SwitchEntries, lock_id: np.ndarray,
                 cls: int) -> tuple[np.ndarray, np.ndarray]:
    """Each lock's live ``left`` and ``slots`` in class ``cls`` (-1 / 0 when absent)."""
    mine = live.priority == cls
    keys, lefts, sizes = live.lock_id[mine], live.left[mine], live.slots[mine]
    if len(keys) == 0:
        return np.full(len(lock_id), -1, dtype=np.int64), np.zeros(len(lock_id), np.int64)
    order = np.argsort(keys)
    keys, lefts, sizes = keys[order], lefts[order], sizes[order]
    pos = np.minimum(np.searchsorted(keys, lock_id), len(keys) - 1)
    found = keys[pos] == lock_id
    return np.where(found, lefts[pos], -1), np.where(found, sizes[pos], 0)


def _keep_then_place(first: int, last: int, slots: np.ndarray, old_left: np.ndarray,
                     old_slots: np.ndarray) -> np.ndarray:
    n_slots = last - first + 1
    left = np.full(len(slots), -1, dtype=np.int64)
    stay = (old_left >= 0) & (slots <= old_slots)
    left[stay] = old_left[stay]
    used = np.zeros(n_slots + 1, dtype=np.int64)
    np.add.at(used, left[stay] - first, 1)
    np.add.at(used, left[stay] - first + slots[stay], -1)
    used = np.cumsum(used[:-1]) > 0

    growers = np.flatnonzero((old_left >= 0) & ~stay)
    for i in growers[np.argsort(old_left[growers], kind="stable")]:
        lo = int(old_left[i]) - first
        hi = lo + int(slots[i])
        if hi <= n_slots and not used[lo:hi].any():
            used[lo:hi] = True
            left[i] = old_left[i]

    rest = np.flatnonzero(left < 0)
    gaps = _free_gaps(used)
    for i in rest[np.argsort(-slots[rest], kind="stable")]:
        start = _take_best_fit(gaps, int(slots[i]))
        if start is None:
            return _compact(first, slots, old_left)
        left[i] = first + start
    return left


def _free_gaps(used: np.ndarray) -> list[tuple[int, int]]:
    """Free runs of ``used`` as a sorted list of (size, start)."""
    edges = np.diff(np.concatenate([[0], (~used).astype(np.int8), [0]]))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return sorted(zip((ends - starts).tolist(), starts.tolist(), strict=True))


def _take_best_fit(gaps: list[tuple[int, int]], size: int) -> int | None:
    """Start of the smallest gap holding ``size`` slots; the gap shrinks from its start."""
    pos = bisect.bisect_left(gaps, (size, -1))
    if pos == len(gaps):
        return None
    gap_size, start = gaps.pop(pos)
    if gap_size > size:
        bisect.insort(gaps, (gap_size - size, start + size))
    return start


def _compact(first: int, slots: np.ndarray, old_left: np.ndarray) -> np.ndarray:
    """Pack all regions from ``first``: live ones in their old order, then new ones."""
    order = np.lexsort((np.arange(len(slots)), np.where(old_left >= 0, old_left,
                                                          np.iinfo(np.int64).max)))
    left = np.empty(len(slots), dtype=np.int64)
    left[order] = _pack(first, slots[order])
    return left


SLOT_BYTES = 25
"""Planning's memory per switch slot: :func:`fragmentation`'s slot counts (8 bytes) and their
running sum (8), the occupancy mask (1), and the geometry's slot-to-array map (8)."""


def fragmentation(entries: SwitchEntries, geometry: SwitchGeometry) -> Fragmentation:
    """Free space report of ``entries`` over the priority ranges of ``geometry``."""
    used = np.zeros(geometry.total_slots + 1, dtype=np.int64)
    np.add.at(used, entries.left, 1)
    np.add.at(used, entries.right + 1, -1)
    used = np.cumsum(used[:-1]) > 0
    sizes = []
    for first, last in geometry.priority_ranges:
        sizes += [size for size, _ in _free_gaps(used[first:last + 1])]
    arrays = geometry.slot_array
    spanning = int(np.count_nonzero(arrays[entries.left] != arrays[entries.right])) \
        if len(entries) else 0
    return Fragmentation(free_slots=int(sum(sizes)), free_gaps=len(sizes),
                         largest_gap=max(sizes, default=0), regions_spanning_arrays=spanning)
