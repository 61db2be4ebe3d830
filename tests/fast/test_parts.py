"""The fast engine's building blocks: event heap, hash map, request pool."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.lockserver import hashmap
from sim.fast import heap as fheap


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
