"""Concordia as a lock manager (sim.managers.concordia) and its experiments
(sim.experiments.concordia): the seed's section 7.2.1 trends at small scale, loss handling,
fail-and-retry, ownership migration, the sharing workload and the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sim.experiments import concordia as experiments
from sim.simulate_simpy import simulate
from sim.workloads.sharing import SharingWorkload
from tests.sim.helpers import CONFIGS, SHORT, config

SMALL = dict(sim__warmup_s=0.003, sim__duration_s=0.004, workload__shared_locks=200,
             workload__locks=4000, manager__concordia__epoch_us=1000)


def run(name: str = "concordia-sharing", **overrides: object) -> dict:
    return simulate(config(name, **{**SMALL, **overrides})).summary


def test_sharing_sweep_concordia_degrades_far_less_and_spares_the_home_agents():
    """Section 7.2.1 (Figures 9 and 10), as the experiment's checks state it."""
    table = experiments.run("concordia-sharing", "small")
    checks = experiments.sharing_checks(table)
    assert all(c.holds for c in checks), [c.to_dict() for c in checks if not c.holds]
    hot = table[(table["workload.sharing_ratio"] == 1.0)].set_index("design")
    assert hot.loc["Concordia", "switch_share"] > 0.5
    assert hot.loc["Concordia-base", "switch_share"] == 0.0


def test_hot_blocks_migrate_into_the_switch_and_base_keeps_them_home():
    moved = run(workload__sharing_ratio=0.8)
    base = run(workload__sharing_ratio=0.8, manager__concordia__switch_blocks=0)
    assert moved["manager"]["migrated_in"] > 0 and moved["switch_share"] > 0.5
    assert base["manager"]["migrated_in"] == 0 and base["switch_share"] == 0.0
    assert moved["manager"]["home_messages_per_grant"] < (
        base["manager"]["home_messages_per_grant"] / 2)


def test_private_blocks_never_get_hot_so_they_stay_with_their_home_agent():
    """Hotness is the multicast fan-out: a block only its own node touches has none."""
    private = run(workload__sharing_ratio=0.0)
    assert private["manager"]["migrated_in"] == 0 and private["switch_share"] == 0.0


def test_a_switch_too_small_for_the_hot_set_holds_only_as_many_blocks():
    small = run(workload__sharing_ratio=1.0, manager__concordia__switch_blocks=50)
    assert small["manager"]["blocks_in_switch"] <= 50
    assert 0.0 < small["switch_share"] < run(workload__sharing_ratio=1.0)["switch_share"]


def test_lost_packets_are_sent_again_and_idempotent_locks_stay_safe_and_live():
    """Section 5.3: request timeout 6 RTT, unlock timeout 3 RTT, idempotent lock/unlock."""
    lossy = run(workload__sharing_ratio=0.8, network__loss=0.01)
    m = lossy["manager"]
    assert lossy["violations"] == 0 and lossy["stalled"] == 0
    assert m["retransmits"] > 0 and m["unlock_retransmits"] > 0
    assert lossy["switch_share"] > 0.5 and lossy["throughput_rps"] > 0


def test_a_taken_lock_is_a_failed_ack_and_the_request_retries_without_a_queue():
    one = simulate(config("micro-exclusive", manager__kind="concordia", workload__locks=1,
                          workload__clients=8, sim__duration_s=0.002,
                          sim__warmup_s=0.0005)).summary
    assert one["manager"]["failed_acks"] > 0 and one["retries"] > 0
    assert one["violations"] == 0 and one["stalled"] == 0 and one["throughput_rps"] > 0


def test_migration_against_knapsack_on_one_skewed_workload():
    table = experiments.run("concordia-migration", "small")
    checks = experiments.migration_checks(table)
    assert all(c.holds for c in checks), [c.to_dict() for c in checks if not c.holds]
    by = table.set_index("manager.kind")
    assert by.loc["concordia", "switch_share"] > 0.2 and by.loc["netlock", "switch_share"] > 0.2
    # Zipf 0.99 contends on the hot head: NetLock queues, Concordia fails and retries.
    assert by.loc["concordia", "failed_acks"] > 0
    assert by.loc["netlock", "throughput_rps"] > by.loc["concordia", "throughput_rps"]


def test_sharing_workload_splits_shared_and_node_private_blocks():
    wl = SharingWorkload(shared_locks=100, private_locks=50, machines=4, sharing_ratio=0.3)
    rng = np.random.default_rng(1)
    clients = np.arange(4000) % 12
    batch = wl.sample_txns(4000, rng, clients)
    shared = batch.lock_ids < 100
    assert abs(shared.mean() - 0.3) < 0.03
    node = (batch.lock_ids[~shared] - 100) // 50
    assert np.array_equal(node, clients[~shared] % 4)
    assert batch.lock_ids.max() < wl.n_locks
    assert abs((batch.modes == 0).mean() - 0.5) < 0.03


def test_the_cli_runs_the_concordia_configs_safely(run_cli):
    for name in ("concordia-sharing", "concordia-skew"):
        done = run_cli("sim", CONFIGS / f"{name}.yaml", *SHORT, "--json")
        assert done.exit_code == 0, done.output
        summary = json.loads(done.stdout)
        assert summary["violations"] == 0 and summary["stalled"] == 0
        assert summary["granted"] > 0 and summary["manager"]["home_messages"] > 0


def test_the_fast_engine_refuses_concordia_in_one_line(run_cli):
    done = run_cli("sim", CONFIGS / "concordia-sharing.yaml", "--engine", "fast")
    assert done.exit_code == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "manager.kind" in lines[0] and "concordia" in lines[0]


@pytest.fixture
def run_cli(run):
    return run
