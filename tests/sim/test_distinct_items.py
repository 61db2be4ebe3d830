"""``sim.core.allocation.distinct_items``: the pairs' items as numpy's unique over columns
gives them, by the one-key path and by the fallback (large ids)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sim.core.allocation import distinct_items


def _oracle(item: np.ndarray, clients: np.ndarray) -> np.ndarray:
    if len(item) == 0:
        return item
    return np.unique(np.stack([item, clients]), axis=1)[0]


@given(st.integers(0, 300).flatmap(lambda n: st.tuples(
    arrays(np.int64, n, elements=st.sampled_from([0, 1, 2, 7, 4999, 2**40, 2**62, 2**63 - 1])),
    arrays(np.int64, n, elements=st.integers(0, 3000)))))
def test_it_is_the_unique_pairs_items(pair):
    item, clients = pair
    assert np.array_equal(distinct_items(item, clients), _oracle(item, clients))


def test_a_client_asking_twice_counts_once():
    item = np.array([5, 5, 5, 3, 9], dtype=np.int64)
    clients = np.array([1, 1, 2, 1, 0], dtype=np.int64)
    assert distinct_items(item, clients).tolist() == [3, 5, 5, 9]
