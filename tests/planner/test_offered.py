"""The closed-loop model of the offered load (planner/offered.py) and plans that use it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.config import load_config
from netlock.trace import write_trace
from planner.offered import (
    HANDOVER_PASSES,
    closed_loop_paths_rps,
    closed_loop_rps,
    exclusive_shares,
)
from planner.planning import PlanOptions, make_plan
from planner.settings import plan_options
from sim.workloads.tracegen import trace_from_config
from tests.planner.traces import make_trace
from tests.sim.helpers import CONFIGS


def test_without_exclusive_requests_every_token_cycles_freely():
    assert closed_loop_rps(np.zeros(0), 120, 5.0) == pytest.approx(120 / 5e-6)


def test_one_exclusive_lock_hands_over_once_per_handover():
    for tokens in (1, 2, 50):
        assert closed_loop_rps(np.array([1.0]), tokens, 4.0) == pytest.approx(1 / 4e-6)


def test_the_hottest_exclusive_lock_bounds_a_skewed_closed_loop():
    weights = np.arange(1, 20_001, dtype=float) ** -0.99
    share = weights / weights.sum()
    rate = closed_loop_rps(share, 120, 5.6)
    assert rate <= 1 / (share[0] * 5.6e-6) * (1 + 1e-9)
    assert rate == pytest.approx(1 / (share[0] * 5.6e-6), rel=0.05)
    assert rate < 120 / 5.6e-6 / 10  # an order of magnitude below conflict-free demand


def test_without_the_servers_path_the_paths_model_is_the_one_lock_model():
    weights = np.arange(1, 501, dtype=float) ** -0.99
    x = 0.7 * weights / weights.sum()
    y = 0.3 * weights / weights.sum()
    assert closed_loop_paths_rps(x, y, np.zeros(500), 120, 5.6, 9.0, 1e6) == pytest.approx(
        closed_loop_rps(x, 120, 5.6))


def test_shared_requests_through_the_servers_cycle_their_longer_round_trip():
    """No exclusive requests: every token cycles freely, a share q of them E us slower, so
    tokens / (T + q E) exactly; and no faster than the servers' cores serve them."""
    y, q = np.full(4, 0.25), np.array([1.0, 1.0, 0.0, 0.0])
    assert closed_loop_paths_rps(np.zeros(4), y, q, 100, 5.0, 10.0, 1e12) == pytest.approx(
        100 / ((5.0 + 0.5 * 10.0) * 1e-6))
    assert closed_loop_paths_rps(np.zeros(4), y, q, 100, 5.0, 10.0, 2e6) == pytest.approx(
        2e6 / 0.5)


def _exact_mva(demand, delay, tokens):
    """Textbook MVA with the residual correction, one station per lock (no grouping)."""
    queue = np.zeros(len(demand))
    rate = 0.0
    for n in range(1, tokens + 1):
        residence = demand * (1 + queue - 0.5 * rate * demand)
        rate = min(n / (delay + residence.sum()), 1 / demand.max())
        queue = rate * residence
    return rate


def test_a_lock_the_servers_hold_hands_over_slower_by_their_path():
    rng = np.random.default_rng(3)
    x = rng.dirichlet(np.ones(30)) * 0.8
    y = rng.dirichlet(np.ones(30)) * 0.2
    q = rng.choice([0.0, 0.5, 1.0], size=30)
    hold = 6.0 + q * 8.0
    want = _exact_mva(x * hold, float(np.sum(y * hold)), 40) * 1e6
    assert closed_loop_paths_rps(x, y, q, 40, 6.0, 8.0, 1e12) == pytest.approx(want)


def test_many_equally_popular_locks_barely_conflict():
    rate = closed_loop_rps(np.full(100_000, 1e-5), 120, 5.0)
    assert rate == pytest.approx(120 / 5e-6, rel=0.01)


def test_exclusive_shares_count_only_exclusive_requests_over_all_requests():
    shares = exclusive_shares(np.array([0, 0, 1, 2]), np.array([1, 1, 0, 1]))
    assert sorted(shares.tolist()) == [0.25, 0.5]


def _zipf_demand_trace(clients: int = 120, rounds: int = 200, hold_s: float = 5e-6):
    """Conflict-free demand, as `netlock trace gen` writes it: one exclusive lock per
    transaction, every client back to back, Zipf(0.99) over 20,000 locks."""
    rng = np.random.default_rng(1)
    weights = np.arange(1, 20_001, dtype=float) ** -0.99
    locks = rng.choice(20_000, size=clients * rounds, p=weights / weights.sum())
    start = np.tile(np.arange(rounds) * hold_s, clients)
    return make_trace(locks, start, start + hold_s, mode=np.ones(len(locks)))


def test_a_plan_told_the_config_scales_r_i_to_the_closed_loop_rate():
    trace = _zipf_demand_trace()
    cfg = load_config(CONFIGS / "micro-exclusive.yaml", {})
    options = plan_options(cfg, cfg.geometry, slots=2000)
    assert options.handover_us == HANDOVER_PASSES * cfg.switch.pass_us
    report = make_plan(trace, cfg.geometry, options)
    summary = report.plan.summary
    demand = len(trace) / trace.duration_s
    assert summary.rates == "closed-loop"
    assert summary.total_rps == pytest.approx(demand * summary.rate_scale)
    assert summary.total_rps < demand / 8
    assert any("scaled" in w for w in report.warnings)


def test_a_plan_without_the_config_keeps_trace_rates_and_states_their_bound():
    trace = _zipf_demand_trace()
    report = make_plan(trace, load_config(CONFIGS / "micro-exclusive.yaml", {}).geometry,
                       PlanOptions(slots=2000))
    assert report.plan.summary.rates == "trace"
    assert report.plan.summary.rate_scale == 1.0
    assert any("upper bound" in w for w in report.warnings)


def test_plan_cli_scales_with_config_unless_told_to_keep_trace_rates(tmp_path):
    cfg_path = CONFIGS / "micro-exclusive.yaml"
    sets = ["--set", "workload.locks=2000", "--set", "workload.zipf=0.99"]
    cfg = load_config(cfg_path, {"workload.locks": "2000", "workload.zipf": "0.99"})
    trace = tmp_path / "zipf.parquet"
    write_trace(trace_from_config(cfg, 20_000), trace)
    summaries = {}
    for extra in ([], ["--trace-rates"]):
        out = CliRunner().invoke(app, ["plan", str(trace), "--config", str(cfg_path), *sets,
                                       "--slots", "300", "--out", str(tmp_path / "p.yaml"),
                                       "--json", *extra])
        assert out.exit_code == 0, out.output
        summaries[bool(extra)] = json.loads(out.stdout)
    assert summaries[False]["rates"] == "closed-loop"
    assert summaries[True]["rates"] == "trace" and summaries[True]["rate_scale"] == 1.0
    assert summaries[False]["total_rps"] < summaries[True]["total_rps"] / 4
