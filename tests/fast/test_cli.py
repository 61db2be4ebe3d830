"""``netlock sim --engine fast`` and ``netlock sweep --engine fast [--scheduler ...]``."""

from __future__ import annotations

import json

import pandas as pd
import pytest
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


def test_the_measured_duration_follows_the_warm_up_on_both_engines(run, tmp_path):
    """``sim.duration_s`` is measured after ``sim.warmup_s``, even when it is the shorter:
    the run lasts both, and rates divide by the measured duration only."""
    sets = ["--set", "sim.duration_s=0.0003", "--set", "sim.warmup_s=0.0005"]
    docs = {}
    for engine in ("simpy", "fast"):
        out = tmp_path / engine
        done = run("sim", CONFIGS / "micro-exclusive.yaml", *sets, "--engine", engine,
                   "--json", "--out", out)
        assert done.exit_code == 0, done.output
        doc = docs[engine] = json.loads(done.stdout)
        assert doc["measured_s"] == 0.0003
        assert doc["sim_time_s"] == pytest.approx(0.0008)
        assert doc["throughput_rps"] == doc["granted"] / 0.0003
        granted_at = pd.read_parquet(out / "requests.parquet")["t_us"]
        assert granted_at.max() > 700
        assert doc["granted"] == int(((granted_at >= 500) & (granted_at < 800)).sum())
    assert docs["simpy"]["granted"] == docs["fast"]["granted"] > 0


def test_a_cold_fast_engine_says_it_compiles_once_on_stderr(run, monkeypatch):
    monkeypatch.setattr("sim.fast._fast_jit.cache_is_cold", lambda: True)
    done = run("sim", CONFIGS / "micro-exclusive.yaml", *SHORT, "--engine", "fast", "--json")
    assert done.exit_code == 0, done.output
    assert "compiling the fast engine into numba's cache: once per machine" in done.stderr
    assert "fast engine compiled in" in done.stderr
    assert json.loads(done.stdout)["engine"] == "fast"
    monkeypatch.setattr("sim.fast._fast_jit.cache_is_cold", lambda: False)
    warm = run("sim", CONFIGS / "micro-exclusive.yaml", *SHORT, "--engine", "fast", "--json")
    assert "compiling" not in warm.stderr
