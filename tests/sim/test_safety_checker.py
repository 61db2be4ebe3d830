"""The one safety checker (both engines' results use it) against a brute-force reference,
and on hand-made cases."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.core.safety import count_violations, uses_by_lock_and_start


def active_at_start_of(j: int, i: int, start, end) -> bool:
    """Use j holds the lock when use i begins (simultaneous starts: the earlier row first)."""
    if start[j] < start[i]:
        return start[i] < end[j]
    return start[j] == start[i] and j < i


def reference(lock, mode, start, end) -> int:
    """Per use: is an incompatible use of the same lock active when it begins? O(n^2)."""
    return sum(
        any(j != i and lock[j] == lock[i] and (mode[i] or mode[j])
            and active_at_start_of(j, i, start, end) for j in range(len(lock)))
        for i in range(len(lock)))


uses = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1), st.integers(0, 20),
                          st.integers(0, 6)), max_size=40)
"""Use intervals with many ties and zero-length uses."""


@settings(max_examples=300, deadline=None)
@given(uses)
def test_matches_the_brute_force_reference(rows):
    lock = np.array([r[0] for r in rows], dtype=np.int64)
    mode = np.array([r[1] for r in rows], dtype=np.int8)
    start = np.array([r[2] for r in rows], dtype=np.float64)
    end = start + np.array([r[3] for r in rows], dtype=np.float64)
    assert count_violations(lock, mode, start, end) == reference(lock, mode, start, end)


def test_cases():
    x, s = 1, 0
    assert count_violations([1, 1], [x, x], [0, 5], [5, 9]) == 0
    assert count_violations([1, 1], [x, x], [0, 4], [5, 9]) == 1
    assert count_violations([1, 1], [s, s], [0, 4], [5, 9]) == 0
    assert count_violations([1, 1], [s, x], [0, 4], [5, 9]) == 1
    assert count_violations([1, 2], [x, x], [0, 4], [5, 9]) == 0
    assert count_violations([1, 1], [x, x], [0, 3], [5, 3]) == 1
    assert count_violations([1, 1], [x, x], [0, 5], [5, 5]) == 0
    assert count_violations([1, 1], [s, x], [0, 0], [1, 0]) == 1


def test_more_cases():
    def count(*uses):
        lock, mode, start, end = (np.array(x) for x in zip(*uses, strict=True))
        return count_violations(lock, mode, start.astype(float), end.astype(float))

    assert count((0, 0, 0, 5), (0, 0, 1, 9), (0, 1, 9, 9)) == 0
    assert count((0, 0, 0, 5), (0, 1, 3, 3)) == 1
    assert count((0, 1, 2, 2), (0, 1, 2, 2)) == 1
    assert count((0, 1, 0, 5), (1, 1, 0, 5)) == 0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 1), st.integers(0, 8),
                          st.integers(0, 3)), min_size=1, max_size=150),
       st.sampled_from([1, 10**9, 2**45, -1, -(2**61)]))
def test_use_order_is_lexsorts(rows, spread):
    """The bucket and radix passes (ids of 1 to 63 bits, negative ones, spreads past 62 bits)
    and the ordering by start (insertion, and merging past 32 uses of a lock) give the order
    ``np.lexsort((start, lock))`` gives, ties in record order, each use's fields with it."""
    lock = np.array([r[0] for r in rows], dtype=np.int64) * spread
    mode = np.array([r[1] for r in rows], dtype=np.int8)
    start = np.array([r[2] for r in rows], dtype=np.float64)
    end = start + np.array([r[3] for r in rows], dtype=np.float64) - 1
    order = np.lexsort((start, lock))
    key, at, until = uses_by_lock_and_start(lock, mode, start, end)
    rank = np.unique(lock, return_inverse=True)[1]
    assert np.array_equal(np.unique(key >> 1, return_inverse=True)[1], rank[order])
    assert np.array_equal(key & 1, mode[order])
    assert np.array_equal(at, start[order])
    assert np.array_equal(until, np.maximum(end, start)[order])


def test_long_runs_out_of_order_are_merged():
    """A lock's uses far from start order (the merge sort past 32 uses), with ties."""
    rng = np.random.default_rng(7)
    n = 1000
    lock = rng.integers(0, 3, n)
    start = rng.integers(0, 50, n).astype(np.float64)
    end = start + rng.integers(0, 5, n)
    mode = rng.integers(0, 2, n)
    order = np.lexsort((start, lock))
    key, at, until = uses_by_lock_and_start(lock, mode, start, end)
    assert np.array_equal(key, 2 * lock[order] + mode[order])
    assert np.array_equal(at, start[order])
    assert np.array_equal(until, end[order])
    assert count_violations(lock, mode, start, end) == reference(lock, mode, start, end)
