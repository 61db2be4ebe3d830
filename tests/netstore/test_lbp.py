"""Least bottlenecked path against Algorithm 1 written out literally (section 3.1)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.netstore.lbp import choose_path, least_bottlenecked


def algorithm_1(path, capacity, data):
    least = float("inf")
    for link in path:
        factor = capacity[link] / (data[link] + 1)
        if factor < least:
            least = factor
    return least


@st.composite
def fabrics(draw):
    links = draw(st.integers(2, 10))
    capacity = draw(st.lists(st.sampled_from([1e9, 1e10, 4e10]), min_size=links,
                             max_size=links))
    data = draw(st.lists(st.integers(0, 50_000), min_size=links, max_size=links))
    length = draw(st.integers(1, links))
    paths = draw(st.lists(st.lists(st.integers(0, links - 1), min_size=length,
                                   max_size=length, unique=True), min_size=1, max_size=6))
    return np.array(paths), np.array(capacity), np.array(data, dtype=float)


@settings(max_examples=300, deadline=None)
@given(fabrics(), st.integers(0, 2**32 - 1))
def test_lbp_picks_exactly_the_argmax_of_the_bottleneck_factor(fabric, seed):
    paths, capacity, data = fabric
    factors = [algorithm_1(p, capacity, data) for p in paths]
    best = {i for i, f in enumerate(factors) if f == max(factors)}
    assert set(least_bottlenecked(paths, capacity, data).tolist()) == best
    assert choose_path("lbp", paths, capacity, data, np.random.default_rng(seed)) in best


def test_lbp_avoids_the_path_with_the_busy_link_and_ecmp_does_not():
    paths = np.array([[0, 1], [2, 3]])
    capacity = np.full(4, 1e9)
    data = np.array([0.0, 8e6, 0.0, 6000.0])
    rng = np.random.default_rng(0)
    assert {choose_path("lbp", paths, capacity, data, rng) for _ in range(50)} == {1}
    assert {choose_path("ecmp", paths, capacity, data, rng) for _ in range(50)} == {0, 1}


def test_ties_are_broken_uniformly_on_an_idle_fabric():
    paths = np.array([[0], [1], [2], [3]])
    rng = np.random.default_rng(0)
    picks = [choose_path("lbp", paths, np.full(4, 1e9), np.zeros(4), rng) for _ in range(4000)]
    assert np.bincount(picks).min() > 900
