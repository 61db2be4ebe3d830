"""workload_from_config builds the generator a config names."""

from __future__ import annotations

import pytest

from netlock.config import config_from_dict
from netlock.errors import ConfigError
from sim.workloads import MicroWorkload, TpccNewOrder, workload_from_config


def test_micro_from_config() -> None:
    cfg = config_from_dict({"workload": {"kind": "micro", "locks": 77, "zipf": 0.5,
                                         "mode": "mixed", "shared_fraction": 0.25,
                                         "locks_per_txn": 3}})
    wl = workload_from_config(cfg)
    assert wl == MicroWorkload(77, "mixed", 0.25, 0.5, 3)
    assert workload_from_config(cfg.workload) == wl


def test_tpcc_uses_client_machines_as_nodes() -> None:
    cfg = config_from_dict({"workload": {"kind": "tpcc", "warehouses": 2, "clients": 8},
                            "clients": {"machines": 4}})
    wl = workload_from_config(cfg)
    assert isinstance(wl, TpccNewOrder) and wl.nodes == 4 and wl.warehouses == 8
    assert workload_from_config(cfg.workload).nodes == 8


def test_trace_kind_has_no_generator() -> None:
    cfg = config_from_dict({"workload": {"kind": "trace", "trace": "x.csv"}})
    with pytest.raises(ConfigError, match=r"workload\.kind"):
        workload_from_config(cfg)
