"""The fast engine's building blocks: event heap, hash map, safety checker, request pool."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.lockserver import hashmap
from sim.fast import heap as fheap
from sim.fast.safety import count_violations
from sim.safety import count_violations as reference_violations


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.floats(0, 100, allow_nan=False), st.none()), max_size=200))
def test_heap_pops_in_time_then_schedule_order(script):
    """``None`` pops the earliest event; a number schedules one at that time (rounded to
    make ties common). Events come out by time, ties in the order they were scheduled."""
    heap = fheap.new_heap(4)
    model: list[tuple[float, int]] = []
    for seq, item in enumerate(script):
        if item is None:
            if not model:
                continue
            model.sort()
            want = model.pop(0)
            assert (heap.t[0], heap.ev_a[heap.slot[0]]) == want
            fheap.pop(heap)
        else:
            t = float(round(item))
            heap = fheap.grown_heap(heap, 1)
            fheap.push(heap, t, 0, seq, 0)
            model.append((t, seq))
    assert heap.cnt[fheap.Q_SIZE] == len(model)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**12), st.integers(0, 10**6)), max_size=300))
def test_hash_map_agrees_with_a_dict(pairs):
    keys, values = hashmap.new_map(4)
    ref: dict[int, int] = {}
    for key, value in pairs:
        keys, values = hashmap.grown(keys, values, len(ref) + 1)
        hashmap.insert(keys, values, key, value)
        ref[key] = value
    for key, value in ref.items():
        assert hashmap.lookup(keys, values, key) == value
    assert hashmap.lookup(keys, values, 10**12 + 1) == -1
    built_keys, built_values = hashmap.build_map(np.array(list(ref), dtype=np.int64),
                                                 np.array(list(ref.values()), dtype=np.int64))
    assert all(hashmap.lookup(built_keys, built_values, k) == v for k, v in ref.items())


uses = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1), st.integers(0, 20),
                          st.integers(0, 6)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(uses)
def test_safety_checker_counts_what_the_simpy_checker_counts(rows):
    """Two independent checkers, one definition (sim.safety's), on random use intervals
    with many ties and zero-length uses."""
    lock = np.array([r[0] for r in rows], dtype=np.int64)
    mode = np.array([r[1] for r in rows], dtype=np.int64)
    start = np.array([r[2] for r in rows], dtype=np.float64)
    end = start + np.array([r[3] for r in rows], dtype=np.float64)
    assert count_violations(lock, mode, start, end) == reference_violations(lock, mode, start,
                                                                            end)


def test_safety_checker_examples():
    def count(*uses):
        lock, mode, start, end = (np.array(x) for x in zip(*uses, strict=True))
        return count_violations(lock, mode, start.astype(float), end.astype(float))

    assert count((0, 1, 0, 5), (0, 1, 5, 9)) == 0
    assert count((0, 1, 0, 5), (0, 1, 4, 9)) == 1
    assert count((0, 0, 0, 5), (0, 0, 1, 9), (0, 1, 9, 9)) == 0
    assert count((0, 0, 0, 5), (0, 1, 3, 3)) == 1
    assert count((0, 1, 2, 2), (0, 1, 2, 2)) == 1
    assert count((0, 1, 0, 5), (1, 1, 0, 5)) == 0
