"""Max-min fair sharing: hand-computed allocations, and random instances checked against the
defining property (feasible, and every flow has a saturated link on which no flow gets
more), which has exactly one solution."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.fabric.fluid import FluidNetwork
from sim.fabric.maxmin import max_min_rates


def rates(paths: list[list[int]], capacity: list[float]) -> np.ndarray:
    flow_of = np.repeat(np.arange(len(paths)), [len(p) for p in paths])
    link_of = np.concatenate([np.asarray(p, dtype=np.int64) for p in paths])
    return max_min_rates(flow_of, link_of, len(paths), np.asarray(capacity, dtype=float))


def test_a_chain_of_two_links():
    # link 0 (capacity 10): flows A, B; link 1 (capacity 4): flows B, C.
    # Link 1 is the bottleneck: B = C = 2; A gets what is left of link 0: 8.
    assert rates([[0], [0, 1], [1]], [10.0, 4.0]).tolist() == [8.0, 2.0, 2.0]


def test_the_classic_parking_lot():
    # Three unit links in a row; one long flow over all, one short flow on each link:
    # every link is shared by two flows, so all get 1/2.
    assert rates([[0, 1, 2], [0], [1], [2]], [1.0, 1.0, 1.0]).tolist() == [0.5] * 4


def test_unequal_bottlenecks_fill_in_rounds():
    # link 0 (capacity 3): A, B, C; link 1 (capacity 1): C, D.
    # Round 1: link 1 gives C = D = 0.5; round 2: link 0 has 2.5 left for A, B: 1.25 each.
    assert rates([[0], [0], [0, 1], [1]], [3.0, 1.0]).tolist() == [1.25, 1.25, 0.5, 0.5]


@st.composite
def instances(draw):
    links = draw(st.integers(1, 6))
    capacity = draw(st.lists(st.integers(1, 20).map(float), min_size=links, max_size=links))
    paths = draw(st.lists(st.lists(st.integers(0, links - 1), min_size=1, max_size=links,
                                   unique=True), min_size=1, max_size=8))
    return paths, capacity


@settings(max_examples=300, deadline=None)
@given(instances())
def test_every_flow_is_bottlenecked_on_a_saturated_link(instance):
    paths, capacity = instance
    got = rates(paths, capacity)
    load = np.zeros(len(capacity))
    for path, rate in zip(paths, got, strict=True):
        load[path] += rate
    assert (load <= np.asarray(capacity) * (1 + 1e-9)).all()
    for i, path in enumerate(paths):
        on = {link: [got[j] for j, p in enumerate(paths) if link in p] for link in path}
        assert any(abs(load[link] - capacity[link]) <= 1e-9 * capacity[link]
                   and got[i] >= max(on[link]) * (1 - 1e-9) for link in path), (i, got)


def test_flows_drain_at_their_shares_and_speed_up_when_one_ends():
    # One 8,000 bit/s link. Flows of 1,000 and 3,000 bytes share it at 4,000 bit/s each: the
    # first ends at 2 s with 2,000 bytes of the second left, which then runs alone at
    # 8,000 bit/s and ends 2 s later.
    net = FluidNetwork(np.array([8000.0]))
    net.add(1, np.array([0]), 1000)
    net.add(2, np.array([0]), 3000)
    assert net.rate_bps(1) == net.rate_bps(2) == 4000.0
    t = net.next_finish()
    assert t == 2.0
    net.advance(t)
    assert net.pop_finished() == [1]
    assert net.rate_bps(2) == 8000.0
    assert net.next_finish() == 4.0
