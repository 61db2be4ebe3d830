"""The canonical configs in configs/ load, validate, include the testbed and round-trip."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from netlock.config import config_from_dict, dump_yaml, load_config
from netlock.config.yamlio import read_layers
from tests.config.config_helpers import CANONICAL, CONFIGS

TESTBED = CONFIGS / "testbed" / "paper.yaml"
CONTRACT_FILES = ["testbed/paper.yaml", "micro-shared.yaml", "micro-exclusive.yaml",
                  "tpcc-low.yaml", "tpcc-high.yaml", "micro-contended.yaml",
                  "memory-vs-think-time.yaml"]
CONTRACT_KEYS = ["sim.duration_s", "sim.warmup_s", "sim.seed", "switch.slots",
                 "policy.allocation", "servers.count", "servers.rate_rps", "network.rtt_us",
                 "network.loss", "lease.us", "workload.kind", "workload.clients",
                 "workload.locks", "workload.mode", "workload.think_time_us", "workload.zipf",
                 "workload.trace"]


def test_contract_files_exist():
    for name in CONTRACT_FILES:
        assert (CONFIGS / name).is_file(), name


@pytest.mark.parametrize("path", CANONICAL, ids=lambda p: p.name)
def test_canonical_config_loads_and_round_trips(path, tmp_path):
    cfg = load_config(path)
    assert config_from_dict(cfg.to_dict()) == cfg
    json.dumps(cfg.to_dict())
    dumped = tmp_path / "resolved.yaml"
    dumped.write_text(dump_yaml(cfg))
    assert load_config(dumped) == cfg
    assert cfg.geometry.total_slots >= cfg.switch.slots
    assert sum(cfg.tenant_clients) == cfg.workload.clients


@pytest.mark.parametrize("path", [p for p in CANONICAL if p != TESTBED], ids=lambda p: p.name)
def test_every_experiment_includes_the_testbed(path):
    sources = [os.path.realpath(layer.source) for layer in read_layers(str(path))]
    assert sources[0] == os.path.realpath(TESTBED)


@pytest.mark.parametrize("path", CANONICAL, ids=lambda p: p.name)
def test_simulated_time_stays_short(path):
    """Microsecond-scale systems: tens of milliseconds of simulated time are plenty."""
    sim = load_config(path).sim
    assert 0 <= sim.warmup_s < sim.duration_s <= 0.1


def test_contract_keys_exist():
    doc = load_config(CONFIGS / "tpcc-low.yaml").to_dict()
    for key in CONTRACT_KEYS:
        section, name = key.split(".")
        assert name in doc[section], key


def test_paper_testbed_numbers():
    cfg = load_config(TESTBED)
    assert cfg.switch.slots == 100_000 == cfg.geometry.total_slots
    assert cfg.switch.slots * 20 == 2_000_000  # 20 B per slot: 2 MB
    assert cfg.switch.rate_pps >= 4e9
    assert cfg.servers.cores == 8
    assert cfg.servers.rate_rps == cfg.clients.rate_rps == 18e6
    assert cfg.network.rtt_us < 10


def test_experiment_settings_match_the_paper():
    excl = load_config(CONFIGS / "micro-exclusive.yaml").workload
    assert (excl.kind, excl.clients, excl.locks, excl.mode, excl.think_time_us) == (
        "micro", 120, 5000, "X", 0.0)
    assert load_config(CONFIGS / "micro-shared.yaml").workload.mode == "S"
    low, high = load_config(CONFIGS / "tpcc-low.yaml"), load_config(CONFIGS / "tpcc-high.yaml")
    assert (low.workload.warehouses, high.workload.warehouses) == (10, 1)
    for cfg in (low, high, load_config(CONFIGS / "memory-vs-think-time.yaml")):
        assert cfg.workload.kind == "tpcc"
        assert (cfg.clients.machines, cfg.servers.count) == (10, 2)
        assert cfg.workload.generator == "dslr" and cfg.workload.clients == 40


def test_policy_configs_use_the_features_they_show():
    """Section 6.3: five and five client machines, seven and three; two transaction
    contexts per machine in the microbenchmark, four in TPC-C (console.py client_num)."""
    prio = load_config(CONFIGS / "tenants-priority.yaml")
    per_machine = prio.workload.clients // prio.clients.machines
    assert per_machine == 2
    assert prio.tenant_clients == (5 * per_machine, 5 * per_machine)
    assert sorted(t.priority for t in prio.tenants) == [0, 1]
    quota = load_config(CONFIGS / "tenants-quota.yaml")
    tpcc_per_machine = quota.workload.clients // quota.clients.machines
    assert tpcc_per_machine == 4
    assert quota.tenant_clients == (7 * tpcc_per_machine, 3 * tpcc_per_machine)
    assert all(t.quota_rps > 0 for t in quota.tenants)
    fail = load_config(CONFIGS / "switch-failure.yaml").failures
    assert fail.switch_fail_s < fail.switch_restart_s
    assert fail.switch_mode == "stop"


def test_dump_is_plain_yaml():
    text = dump_yaml(load_config(CONFIGS / "tpcc-low.yaml"))
    assert yaml.safe_load(text)["workload"]["kind"] == "tpcc"
