"""configs/netstore-*.yaml load, round-trip, and hold the seed's section 4.1 setup."""

from __future__ import annotations

import pytest

from sim.netstore.config import load_netstore_config, netstore_config_from_dict
from sim.netstore.netstore_run import build_fabric
from tests.config.config_helpers import NETSTORE


def test_there_are_the_three_variants():
    assert [p.stem for p in NETSTORE] == ["netstore-ecmp", "netstore-lbp-nac", "netstore-lbp"]


@pytest.mark.parametrize("path", NETSTORE, ids=lambda p: p.name)
def test_config_round_trips_and_describes_section_4_1(path):
    cfg = load_netstore_config(path)
    assert netstore_config_from_dict(cfg.to_dict()) == cfg
    assert build_fabric(cfg).hosts == 64
    assert cfg.fabric.link_gbps == 1.0
    assert cfg.fabric.hosts_per_tor / cfg.fabric.aggs_per_pod == 4
    assert cfg.fabric.tors_per_pod / cfg.fabric.core_uplinks_per_agg == 2
    w, b = cfg.workload, cfg.background
    assert (w.txn_interarrival_ms, w.op_bytes, w.keys, w.zipf, w.write_fraction) == (
        50.0, 6000, 2_000_000, 0.99, 0.01)
    assert (b.interarrival_ms, b.min_kb, b.max_kb, b.cross_pod) == (1000.0, 1.0, 8000.0, True)
    assert (cfg.netstore.controller_cache_entries, cfg.netstore.server_cache_entries) == (
        20_000, 20_000)
