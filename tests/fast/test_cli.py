"""``netlock sim --engine fast`` and ``netlock sweep --engine fast [--scheduler ...]``."""

from __future__ import annotations

import json

import pandas as pd
from dask.distributed import LocalCluster

from tests.sim.helpers import CONFIGS, SHORT


def test_sim_engine_fast_prints_the_contract_object(run):
    fast = run("sim", CONFIGS / "micro-exclusive.yaml", *SHORT, "--engine", "fast", "--json")
    assert fast.exit_code == 0, fast.output
    doc = json.loads(fast.stdout)
    assert doc["engine"] == "fast"
    for key in ("sim_time_s", "granted", "throughput_rps", "tps", "switch_share", "latency_us",
                "retries", "violations", "wall_s", "events"):
        assert key in doc
    slow = json.loads(run("sim", CONFIGS / "micro-exclusive.yaml", *SHORT, "--json").stdout)
    assert doc["granted"] == slow["granted"] and doc["violations"] == 0


def test_sim_engine_fast_refuses_failures_in_one_line(run):
    result = run("sim", CONFIGS / "switch-failure.yaml", "--engine", "fast")
    assert result.exit_code == 2
    assert "fast engine does not model" in result.output
    assert "Traceback" not in result.output


def test_sweep_on_a_dask_scheduler(run, tmp_path):
    with LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                      dashboard_address=None) as cluster:
        result = run("sweep", CONFIGS / "micro-exclusive.yaml", *SHORT, "--engine", "fast",
                     "--grid", "workload.locks=100,1000", "--out", tmp_path, "--scheduler",
                     cluster.scheduler_address, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["points"] == 2
    table = pd.read_parquet(tmp_path / "results.parquet")
    assert len(table) == 2 and (table["violations"] == 0).all()


def test_sweep_rejects_a_scheduler_that_is_not_an_address(run, tmp_path):
    result = run("sweep", CONFIGS / "micro-exclusive.yaml", "--grid", "workload.locks=100",
                 "--out", tmp_path, "--scheduler", "localhost")
    assert result.exit_code == 2
    assert "tcp://HOST:PORT" in result.output
