"""c_i's floor, the distinct clients that asked for each item (:func:`distinct_askers`),
against the pairwise ``np.unique`` it replaced."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sim.core.allocation import distinct_askers


def oracle(item: np.ndarray, clients: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if len(item) == 0:
        return item, np.zeros(0, dtype=np.int64)
    pairs = np.unique(np.stack([item, clients]), axis=1)
    return np.unique(pairs[0], return_counts=True)


@given(st.integers(0, 60).flatmap(lambda n: st.tuples(
    hnp.arrays(np.int64, n, elements=st.one_of(st.integers(0, 20),
                                               st.integers(-2**63, 2**63 - 1))),
    hnp.arrays(np.int64, n, elements=st.integers(0, 5)))))
def test_distinct_askers_match_the_pairwise_unique(arrays):
    item, clients = arrays
    keys, askers = distinct_askers(item, clients)
    want_keys, want_askers = oracle(item, clients)
    assert keys.tolist() == want_keys.tolist()
    assert askers.tolist() == want_askers.tolist()
