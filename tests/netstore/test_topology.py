"""The section 4.1 fat-tree: 64 hosts, shortest paths per pair, oversubscription 4 and 2."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sim.fabric.topology import FatTree
from sim.netstore.config import NetStoreConfig
from sim.netstore.netstore_run import build_fabric


@pytest.fixture(scope="module")
def tree() -> FatTree:
    return build_fabric(NetStoreConfig())


def test_the_seed_fabric_has_64_hosts_and_8_to_1_oversubscription(tree):
    assert tree.hosts == 64
    name = {i: pair for pair, i in tree._index.items()}
    tor_down = sum(1 for a, b in name.values() if a.startswith("t") and b.startswith("h"))
    tor_up = sum(1 for a, b in name.values() if a.startswith("t") and b.startswith("a"))
    agg_down = sum(1 for a, b in name.values() if a.startswith("a") and b.startswith("t"))
    agg_up = sum(1 for a, b in name.values() if a.startswith("a") and b.startswith("c"))
    assert tor_down / tor_up == 4
    assert agg_down / agg_up == 2
    assert (tree.link_layer == 2).sum() == 2 * agg_up


@pytest.mark.parametrize(("src", "dst", "count", "length"), [
    (0, 0, 1, 0), (0, 7, 1, 2), (0, 8, 2, 4), (0, 32, 4, 6), (63, 1, 4, 6)])
def test_shortest_paths_are_distinct_chains_from_src_to_dst(tree, src, dst, count, length):
    paths = tree.paths(src, dst)
    assert paths.shape == (count, length)
    assert len({tuple(p) for p in paths}) == count
    name = {i: pair for pair, i in tree._index.items()}
    for path in paths:
        hops = [name[int(link)] for link in path]
        if hops:
            assert hops[0][0] == f"h{src}" and hops[-1][1] == f"h{dst}"
        assert all(a[1] == b[0] for a, b in itertools.pairwise(hops))


def test_every_link_has_the_configured_capacity(tree):
    assert np.all(tree.capacity_bps == 1e9)
