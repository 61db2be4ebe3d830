"""The plan's closed-loop prediction beside the simulation of that plan (issue 30's grid),
and ``netlock capacity`` end to end at small scale."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.config import load_config, override_config
from planner.closedloop import SERVER_GAIN
from sim.plan_check import demand_trace, plan_for, relative_error, simulate_plan
from tests.sim.helpers import CONFIGS

TOLERANCE = 0.15
WORKLOADS = ("micro-exclusive", "micro-shared", "micro-contended", "tpcc-low", "tpcc-high",
             "tpcc-low+sketch", "tpcc-high+sketch")
"""A ``+sketch`` workload is the config with ``workload.generator: sketch`` (the configs'
own generator is DSLR's)."""
THINK_US = (0, 10, 100)
SLOTS = (1000, 3000, 10_000, 100_000)
SAMPLE = [("micro-exclusive", 10, 10_000), ("micro-contended", 0, 100_000),
          ("micro-shared", 10, 1000), ("tpcc-low", 100, 100_000), ("tpcc-high", 0, 3000)]
"""The points ``make test`` runs; the slow tier runs the whole grid."""
GRID = [(w, t, s) for w in WORKLOADS for t in THINK_US for s in SLOTS]


def _window(workload: str) -> dict[str, float]:
    """The measured window: TPC-C's contexts all start at once and queue together on the
    hot rows (at tpcc-high's think 100 us long enough to reach the 2 ms attempt timeout and
    back off up to 9 x 150 us), so the steady state is measured after 5 ms; the one-lock
    microbenchmarks have no attempt timeout and settle within their first ms."""
    if workload.startswith("tpcc"):
        return {"sim.duration_s": 0.02, "sim.warmup_s": 0.005}
    return {"sim.duration_s": 0.003, "sim.warmup_s": 0.001}


def _check(workload: str, think_us: float, slots: int) -> None:
    name, _, generator = workload.partition("+")
    cfg = override_config(load_config(CONFIGS / f"{name}.yaml"), {
        "workload.think_time_us": think_us, **_window(workload), "sim.engine": "fast",
        **({"workload.generator": generator} if generator else {})})
    report = plan_for(cfg, demand_trace(cfg, 100_000), slots)
    assert report.plan.summary.rates.startswith("closed-loop")
    got = simulate_plan(cfg, report, max(report.plan.summary.servers_needed, 1))
    assert got.violations == 0 and got.stalled == 0
    total = relative_error(got.predicted_total_rps, got.simulated_total_rps)
    switch = relative_error(got.predicted_switch_rps, got.simulated_switch_rps)
    assert total <= TOLERANCE, (f"total: predicted {got.predicted_total_rps:,.0f} simulated "
                                f"{got.simulated_total_rps:,.0f}")
    assert switch <= TOLERANCE, (f"switch: predicted {got.predicted_switch_rps:,.0f} "
                                 f"simulated {got.simulated_switch_rps:,.0f}")


@pytest.mark.parametrize(("workload", "think_us", "slots"), SAMPLE)
def test_the_plan_predicts_what_the_simulation_of_it_carries(workload, think_us, slots):
    _check(workload, think_us, slots)


@pytest.mark.slow
@pytest.mark.parametrize(("workload", "think_us", "slots"), [
    p for p in GRID if p not in SAMPLE])
def test_the_whole_grid_within_tolerance(workload, think_us, slots):
    _check(workload, think_us, slots)


def _confirmed_by_simulation(cfg, report) -> None:
    """Issue 30's rule on both sides of the model's k: k - 1 servers fall short of it (k
    carry at least 5 % more than k - 1) and k meet it (k + 1 carry less than 5 % more)."""
    k = report.plan.summary.servers_needed
    runs = {n: simulate_plan(cfg, report, n) for n in (k - 1, k, k + 1)}
    for got in runs.values():
        assert got.violations == 0 and got.stalled == 0
    rate = {n: got.simulated_total_rps for n, got in runs.items()}
    assert rate[k] >= (1 + SERVER_GAIN) * rate[k - 1], rate
    assert rate[k + 1] < (1 + SERVER_GAIN) * rate[k], rate


def test_servers_needed_is_the_count_the_simulation_confirms():
    """Issue 30's rule checked by simulation: with one core per lock server (0.44 us of CPU
    per request) DSLR's TPC-C at think 0 and 1K slots sends most requests to the servers,
    and the model asks for k >= 2 servers (measured, 10 ms: 1 -> 2 servers +23 %, 2 -> 3 not
    more)."""
    cfg = override_config(load_config(CONFIGS / "tpcc-low.yaml"), {
        "workload.think_time_us": 0, "servers.cores": 1, "sim.duration_s": 0.01,
        "sim.warmup_s": 0.005, "sim.engine": "fast"})
    report = plan_for(cfg, demand_trace(cfg, 100_000), 1000)
    assert report.plan.summary.servers_needed >= 2  # the model finds one server's CPU binding
    _confirmed_by_simulation(cfg, report)


def test_one_lock_servers_needed_by_the_same_rule():
    """The one-lock model's ``servers_needed`` by issue 30's rule, checked by simulation on
    a switch with no slots and one core per lock server (2.25 M requests/s each), the lock
    ids partitioned over the servers: the model asks for k = 3 (measured, 3 ms: 2 -> 3
    servers +32 %, 3 -> 4 +1.8 %; with the drain ticks' phase left out of the server path,
    planner/serverpath.py, it asked for 4)."""
    cfg = override_config(load_config(CONFIGS / "micro-exclusive.yaml"), {
        "servers.cores": 1, "sim.duration_s": 0.003, "sim.warmup_s": 0.001,
        "sim.engine": "fast"})
    report = plan_for(cfg, demand_trace(cfg, 100_000), 0)
    assert report.plan.summary.servers_needed >= 2 and report.plan.summary.switch_rps == 0
    _confirmed_by_simulation(cfg, report)


@pytest.mark.slow
def test_servers_needed_on_the_sketch_generator_is_confirmed_by_simulation():
    """The sketch generator's NewOrders send 51-131 acquires, about three quarters of them to
    the lock servers; the model asks for k = 4 at tpcc-low, think 10 us, 3K slots
    (measured, 20 ms after 5 ms: 3 -> 4 servers +8.4 %, 4 -> 5 +2.1 %). The transaction
    model it replaced asked for 2 there, where 3 carried 37 % more."""
    cfg = override_config(load_config(CONFIGS / "tpcc-low.yaml"), {
        "workload.generator": "sketch", "workload.think_time_us": 10,
        **_window("tpcc-low"), "sim.engine": "fast"})
    report = plan_for(cfg, demand_trace(cfg, 100_000), 3000)
    assert report.plan.summary.servers_needed >= 2
    _confirmed_by_simulation(cfg, report)


SMALL = ["--requests", "20000", "--duration-s", "0.001", "--max-slots", "3000",
         "--max-servers", "2", "--workers", "1"]


def test_capacity_finds_a_rack_for_a_reachable_tpcc_target(tmp_path):
    png = tmp_path / "frontier.png"
    out = CliRunner().invoke(app, ["capacity", str(CONFIGS / "tpcc-high.yaml"), "--tps",
                                   "30000", *SMALL, "--plot", str(png), "--json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    chosen = result["chosen"]
    assert chosen["sim_tps"] >= 30_000 and chosen["meets"]
    assert chosen["violations"] == 0 and chosen["stalled"] == 0
    assert all(row["pred_tps"] > 0 for row in result["frontier"])
    smaller = [r for r in result["frontier"] if (r["slots"], r["servers"])
               < (chosen["slots"], chosen["servers"])]
    assert not any(r["meets"] for r in smaller)  # the smallest verified rack that meets it
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_capacity_names_what_binds_when_no_rack_meets_the_target():
    out = CliRunner().invoke(app, ["capacity", str(CONFIGS / "tpcc-high.yaml"), "--tps",
                                   "5e6", *SMALL, "--json"])
    assert out.exit_code == 1
    assert json.loads(out.stdout)["binds"] == "clients"
    assert "clients binds" in out.stderr


@pytest.mark.parametrize("flag", [["--tps", "-5"], ["--tps", "0"], ["--rps", "nan"],
                                  ["--tps", "1", "--rps", "1"], ["--tps", "1e5",
                                                                 "--p99-us", "-1"]])
def test_a_bad_target_is_one_line_and_exit_2(flag):
    out = CliRunner().invoke(app, ["capacity", str(CONFIGS / "tpcc-high.yaml"), *flag])
    assert out.exit_code == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("netlock: error: --")
