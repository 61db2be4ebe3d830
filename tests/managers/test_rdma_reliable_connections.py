"""The RDMA designs ride reliable connections (issue 35, docs/config.md "Faults and RDMA"):
packet duplication and reordering never reach them. On main, dslr ended in a KeyError
traceback at network.duplicate=0.1 and rdma-cas reported 90-92 safety violations."""

from __future__ import annotations

import pytest

from sim.simulate_simpy import simulate
from tests.sim.helpers import config


@pytest.mark.parametrize("kind", ["dslr", "drtm", "rdma-cas"])
def test_duplicates_and_reordering_do_not_reach_rdma_designs(kind):
    faulty = simulate(config("micro-contended", manager__kind=kind, network__duplicate=0.1,
                             network__reorder=0.1, sim__warmup_s=0.0002,
                             sim__duration_s=0.0005)).summary
    clean = simulate(config("micro-contended", manager__kind=kind, sim__warmup_s=0.0002,
                            sim__duration_s=0.0005)).summary
    assert faulty["violations"] == 0 and faulty["stalled"] == 0
    assert faulty["granted"] == clean["granted"]
