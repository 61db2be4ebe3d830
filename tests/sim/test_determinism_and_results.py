"""Same seed, same results; results as DataFrames and files; TPC-C and trace replay run."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from sim.simulate_simpy import simulate
from tests.sim.helpers import config

CONTRACT_KEYS = {"engine", "sim_time_s", "granted", "throughput_rps", "tps", "switch_share",
                 "latency_us", "retries", "violations", "wall_s", "events"}


def small(**overrides):
    return config("micro-exclusive", workload__locks=300, workload__think_time_us=3,
                  network__loss=0.002, lease__us=400, lease__sweep_us=100,
                  sim__duration_s=0.002, sim__warmup_s=0.0005, **overrides)


def test_the_same_seed_gives_identical_results():
    first, second = simulate(small()), simulate(small())
    drop = {"wall_s"}
    assert {k: v for k, v in first.summary.items() if k not in drop} == \
        {k: v for k, v in second.summary.items() if k not in drop}
    pd.testing.assert_frame_equal(first.requests, second.requests)
    pd.testing.assert_frame_equal(first.timeseries, second.timeseries)


def test_another_seed_gives_other_results():
    assert simulate(small()).summary["latency_us"] != \
        simulate(small(sim__seed=7)).summary["latency_us"]


def test_summary_follows_the_contract_and_files_are_written(tmp_path):
    result = simulate(small())
    assert set(result.summary) >= CONTRACT_KEYS
    assert set(result.summary["latency_us"]) == {"mean", "p50", "p99", "p999"}
    json.dumps(result.summary)
    written = result.write(tmp_path / "out", "csv")
    names = {p.name for p in written}
    assert {"summary.json", "config.json", "requests.csv", "txns.csv",
            "timeseries.csv"} <= names
    back = pd.read_csv(tmp_path / "out" / "requests.csv")
    assert len(back) == len(result.requests)
    result.write(tmp_path / "pq")
    assert len(pd.read_parquet(tmp_path / "pq" / "timeseries.parquet")) == \
        len(result.timeseries)


@pytest.mark.parametrize("name", ["tpcc-low", "tpcc-high"])
def test_tpcc_runs_safely_with_switch_and_servers(name):
    summary = simulate(config(name, sim__duration_s=0.004, sim__warmup_s=0.001,
                              switch__slots=5000)).summary
    assert summary["tps"] > 0
    assert 0 < summary["switch_share"] < 1
    assert summary["violations"] == 0


def test_one_rtt_mode_saves_the_data_read_when_lock_servers_hold_the_data():
    """Lock servers double as database servers, so with every lock on a server the one-RTT
    mode removes exactly the separate data read: two round trips per transaction (with few
    enough contexts that the servers' cores do not queue, and no send batching, whose drain
    ticks would round the grants' times)."""
    settings = dict(sim__duration_s=0.004, sim__warmup_s=0.001, switch__slots=0,
                    network__jitter_us=0, workload__clients=2, servers__tx_burst=1)
    basic = simulate(config("tpcc-low", **settings)).summary
    one_rtt = simulate(config("tpcc-low", network__one_rtt="true", **settings)).summary
    saved = basic["txn_latency_us"]["mean"] - one_rtt["txn_latency_us"]["mean"]
    assert saved == pytest.approx(2 * 5.0, rel=0.1)


def test_a_trace_is_replayed(tmp_path):
    rows = [(lock, "X" if lock % 3 else "S", 0.0, 1e-5, client, txn)
            for txn, (client, locks) in enumerate([(0, [1, 2]), (1, [2, 3]), (2, [5])] * 4)
            for lock in locks]
    path = tmp_path / "trace.csv"
    pd.DataFrame(rows, columns=["lock_id", "mode", "t_request", "t_release", "client_id",
                                "txn_id"]).to_csv(path, index=False)
    summary = simulate(config("micro-exclusive", workload__kind="trace",
                              workload__replay="loop", workload__trace=path,
                              workload__clients=3, sim__duration_s=0.002,
                              sim__warmup_s=0.0005)).summary
    assert summary["tps"] > 0
    assert summary["violations"] == 0
