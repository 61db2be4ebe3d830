"""The model's p99 of transaction latency (planner/latency.py) beside the simulation of the
same plan, where it holds, and ``netlock capacity``'s use of it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.config import load_config, override_config
from planner.capacity import _slots_per_lock
from planner.closedloop import TxnSample, solve
from planner.settings import plan_geometry, plan_options
from sim.plan_check import demand_trace, plan_for, relative_error, simulate_plan
from tests.sim.helpers import CONFIGS

TOLERANCE = 0.15


@pytest.mark.parametrize(("workload", "slots"), [
    ("micro-exclusive", 1000), ("micro-exclusive", 10_000), ("micro-shared", 1000),
    ("micro-shared", 10_000)])
def test_the_predicted_p99_is_within_15_percent_at_think_100_us(workload, slots):
    """At think 100 us the waits are residuals of fixed holds (measured: -2 % to -13 %);
    at think 0 the network's jitter and the drain ticks' spread, which the model takes at
    their means, are most of the tail (micro-exclusive, 10K slots: 10 us predicted, 17 us
    simulated), on Zipf's hot lock (micro-contended) it errs 40-45 % low, and on DSLR's
    TPC-C at think 0 5-27 % high (planner/latency.py)."""
    cfg = override_config(load_config(CONFIGS / f"{workload}.yaml"), {
        "workload.think_time_us": 100, "sim.duration_s": 0.003, "sim.warmup_s": 0.001,
        "sim.engine": "fast"})
    trace = demand_trace(cfg, 100_000)
    report = plan_for(cfg, trace, slots)
    options = plan_options(cfg, plan_geometry(cfg, None, None), slots=slots)
    sample = TxnSample.of(trace.lock_id, trace.mode, trace.txn)
    servers = max(report.plan.summary.servers_needed, 1)
    assert options.rack is not None
    predicted = solve(sample, options.rack, _slots_per_lock(sample, report), servers).p99_us
    got = simulate_plan(cfg, report, servers)
    assert got.violations == 0 and got.stalled == 0
    assert np.isfinite(predicted) and predicted > 100  # at least the think time
    assert relative_error(predicted, got.simulated_p99_us) <= TOLERANCE, (
        predicted, got.simulated_p99_us)


SMALL = ["--requests", "20000", "--duration-s", "0.002", "--max-slots", "3000",
         "--max-servers", "2", "--workers", "1", "--json"]


def test_capacity_reports_the_predicted_p99_beside_the_simulated():
    out = CliRunner().invoke(app, ["capacity", str(CONFIGS / "micro-exclusive.yaml"),
                                   "--rps", "1e6", *SMALL])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)["frontier"]
    assert rows and all(r["pred_p99_us"] > 0 and r["sim_p99_us"] > 0 for r in rows)


def test_a_p99_target_the_model_puts_below_every_rack_binds_latency():
    """Every rack's predicted p99 is at least its round trip (5 us): a 1 us target leaves no
    candidate, while the rate alone would be met."""
    out = CliRunner().invoke(app, ["capacity", str(CONFIGS / "micro-exclusive.yaml"),
                                   "--rps", "1e6", "--p99-us", "1", *SMALL])
    assert out.exit_code == 1, out.output
    assert json.loads(out.stdout)["binds"] == "latency"
    assert "latency binds" in out.stderr
