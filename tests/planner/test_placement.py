"""Layout: contiguous, non-overlapping regions inside their priority's slots; live regions kept."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.geometry import RegisterArray, SwitchGeometry
from netlock.plan import SwitchEntries
from planner.placement import fragmentation, layout


def entries_of(lock_id, priority, slots, left) -> SwitchEntries:
    lock_id, slots, left = (np.asarray(x, np.int64) for x in (lock_id, slots, left))
    return SwitchEntries(lock_id=lock_id, slots=slots, left=left, right=left + slots - 1,
                         priority=np.asarray(priority, np.int64))


GEOMETRY = SwitchGeometry((RegisterArray(2, 30), RegisterArray(3, 20), RegisterArray(4, 25),
                           RegisterArray(5, 25)), stages=12, priorities=2)


@st.composite
def allocations(draw: st.DrawFn, geometry: SwitchGeometry = GEOMETRY):
    """Distinct (lock, priority) items with slot counts that fit each class."""
    items = []
    for cls in range(geometry.priorities):
        room = geometry.priority_capacity(cls)
        locks = draw(st.lists(st.integers(0, 60), unique=True, max_size=15))
        for lock in locks:
            size = draw(st.integers(1, 8))
            if size <= room:
                room -= size
                items.append((lock, cls, size))
    items.sort()
    return (np.array([i[0] for i in items], np.int64), np.array([i[1] for i in items], np.int64),
            np.array([i[2] for i in items], np.int64))


def assert_valid(entries: SwitchEntries, geometry: SwitchGeometry) -> None:
    assert entries.problem(geometry) is None
    for lo, hi, p in zip(entries.left, entries.right, entries.priority, strict=True):
        first, last = geometry.priority_ranges[p]
        assert first <= lo <= hi <= last


@settings(max_examples=150, deadline=None)
@given(allocations())
def test_fresh_layout_packs_each_class_from_its_start(alloc) -> None:
    lock_id, priority, slots = alloc
    left = layout(lock_id, priority, slots, GEOMETRY)
    entries = entries_of(lock_id, priority, slots, left)
    assert_valid(entries, GEOMETRY)
    frag = fragmentation(entries, GEOMETRY)
    assert frag.free_slots == GEOMETRY.total_slots - slots.sum()
    assert frag.free_gaps == sum(1 for p in range(2) if GEOMETRY.priority_capacity(p) >
                                 slots[priority == p].sum())
    assert frag.ratio == 0.0 or frag.free_gaps > 1


@settings(max_examples=150, deadline=None)
@given(allocations(), allocations())
def test_relayout_keeps_live_regions_that_still_fit(old_alloc, new_alloc) -> None:
    old_left = layout(*old_alloc, GEOMETRY)
    live = entries_of(*old_alloc, old_left)
    lock_id, priority, slots = new_alloc
    left = layout(lock_id, priority, slots, GEOMETRY, live)
    entries = entries_of(lock_id, priority, slots, left)
    assert_valid(entries, GEOMETRY)
    again = layout(*old_alloc, GEOMETRY, live)
    assert np.array_equal(again, old_left)


def test_shrinking_and_new_locks_reuse_space_without_moving_others() -> None:
    geometry = SwitchGeometry.uniform(20, arrays=2)
    live = entries_of([1, 2, 3], [0, 0, 0], [5, 5, 5], [0, 5, 10])
    left = layout(np.array([1, 3, 4]), np.zeros(3, np.int64), np.array([3, 5, 4]), geometry,
                  live)
    assert list(left[:2]) == [0, 10]
    new = entries_of([1, 3, 4], [0, 0, 0], [3, 5, 4], left)
    assert_valid(new, geometry)
    assert left[2] == 15


def test_compaction_when_gaps_are_too_small() -> None:
    geometry = SwitchGeometry.uniform(10, arrays=1)
    live = entries_of([1, 2, 3], [0, 0, 0], [2, 2, 2], [0, 4, 8])
    left = layout(np.array([1, 2, 3, 9]), np.zeros(4, np.int64), np.array([2, 2, 2, 4]),
                  geometry, live)
    assert list(left) == [0, 2, 4, 6]


def test_fragmentation_and_spanning_regions() -> None:
    geometry = SwitchGeometry.uniform(20, arrays=2)
    entries = entries_of([1, 2], [0, 0], [4, 4], [2, 8])
    frag = fragmentation(entries, geometry)
    assert (frag.free_slots, frag.free_gaps, frag.largest_gap) == (12, 3, 8)
    assert frag.regions_spanning_arrays == 1
    assert frag.ratio == pytest.approx(1 - 8 / 12)


def test_overfull_class_is_refused() -> None:
    with pytest.raises(ValueError, match="priority 0"):
        layout(np.array([1]), np.array([0]), np.array([60]), GEOMETRY)
