"""--max-wall-s (issue 35): a run that is still going after its wall-clock budget stops;
``netlock sim`` reports and writes what it measured up to there, marked ``incomplete``,
and exits 3; a sweep or a paper figure keeps whole runs only (exit 3, one line, no table).
On main a run had no bound but its simulated duration (up to an hour: days of wall time)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.config import load_config, override_config
from sim.core.budget import WallBudget, stop_boundary_us
from sim.run_engine import run_engine
from tests.config.config_helpers import CONFIGS

MICRO = str(CONFIGS / "micro-exclusive.yaml")
LONG = ["--set", "sim.warmup_s=0", "--set", "sim.duration_s=60", "--set", "workload.clients=4"]


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_sim_stops_at_its_budget_and_writes_the_run_marked_incomplete(tmp_path):
    out = tmp_path / "run"
    result = invoke("sim", MICRO, "--engine", "simpy", *LONG, "--max-wall-s", "0.5",
                    "--json", "--out", str(out))
    assert result.exit_code == 3, (result.output, result.exception)
    assert "Traceback" not in result.output
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("netlock: stopped by --max-wall-s 0.5 after "), last
    assert "marked incomplete" in last
    summary = json.loads(result.stdout)
    stop = summary["incomplete"]
    assert stop["reason"] == "max_wall_s" and stop["planned_s"] == 60
    assert 0 < stop["reached_s"] < 60 and summary["sim_time_s"] == stop["reached_s"]
    assert summary["measured_s"] == pytest.approx(stop["reached_s"])
    assert summary["granted"] > 0 and summary["violations"] == 0
    assert summary["throughput_rps"] == pytest.approx(summary["granted"] / summary["measured_s"])
    written = json.loads((out / "summary.json").read_text())
    assert written["incomplete"] == stop
    assert json.loads((out / "config.json").read_text())["sim"]["duration_s"] == 60
    assert {p.name for p in out.iterdir()} >= {"requests.parquet", "txns.parquet",
                                               "timeseries.parquet"}


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_a_stopped_run_is_the_shorter_run_it_reached(engine):
    """Stopping changes no event before the stop: the stopped run's measurements are those
    of a run planned to end where it stopped."""
    cfg = override_config(load_config(MICRO), {"sim.warmup_s": 0.0, "sim.duration_s": 60.0,
                                               "workload.clients": 4})
    stopped = run_engine(cfg, engine, max_wall_s=0.3).summary
    reached = stopped["incomplete"]["reached_s"]
    whole = run_engine(override_config(cfg, {"sim.duration_s": reached}), engine).summary
    assert whole["incomplete"] is None
    for key in ("granted", "tps", "retries", "violations", "stalled", "events"):
        assert stopped[key] == whole[key], key


def test_a_run_within_its_budget_is_whole():
    result = invoke("sim", MICRO, "--engine", "simpy", "--set", "sim.duration_s=0.001",
                    "--max-wall-s", "600", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["incomplete"] is None


def test_a_run_stopped_in_its_warm_up_writes_nothing(tmp_path):
    out = tmp_path / "run"
    result = invoke("sim", MICRO, "--engine", "simpy", "--set", "sim.warmup_s=60",
                    "--max-wall-s", "0.2", "--out", str(out))
    assert result.exit_code == 3, result.output
    line = result.stderr.strip()
    assert "\n" not in line and "nothing was measured, nothing written" in line, line
    assert not out.exists()


def test_a_sweep_point_past_its_budget_ends_the_sweep_without_a_table(tmp_path):
    out = tmp_path / "sweep"
    result = invoke("sweep", MICRO, "--grid", "workload.think_time_us=0,10", *LONG,
                    "--engine", "simpy", "--workers", "1", "--max-wall-s", "0.3",
                    "--out", str(out))
    assert result.exit_code == 3, result.output
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("netlock: error: grid point {'workload.think_time_us': 0}: "
                           "--max-wall-s 0.3: a run stopped at "), line
    assert "Traceback" not in result.output
    assert not (out / "results.csv").exists() and not (out / "results.parquet").exists()


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
@pytest.mark.parametrize("command", [["sim", MICRO], ["paper", "fig14b"],
                                     ["sweep", MICRO, "--grid", "switch.slots=0", "--out",
                                      "unused"]])
def test_a_budget_that_is_not_seconds_is_refused(command, value):
    result = invoke(*command, "--max-wall-s", value)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (f"netlock: error: --max-wall-s: must be a number of "
                                     f"seconds > 0, got {float(value)}")


class _StopAt(WallBudget):
    """A budget spent once the run's progress has reached ``at_us`` (deterministic, unlike
    the wall clock)."""

    def __init__(self, at_us: float) -> None:
        super().__init__(max_wall_s=1e9)
        object.__setattr__(self, "at_us", at_us)
        object.__setattr__(self, "reached", False)

    def progress(self, now_us: float, end_us: float) -> None:
        if now_us >= self.at_us - 1.0:
            object.__setattr__(self, "reached", True)

    def spent(self) -> bool:
        return self.reached


@pytest.mark.parametrize(("engine", "at_us"), [("simpy", 7_900.0), ("fast", 2_007_000.0)])
def test_a_stop_on_a_drain_tick_is_the_shorter_run_it_reached(engine, at_us):
    """Stops at boundaries whose seconds form does not map back to the same float
    (7.9 ms as the simpy engine's 100 us steps add up, 2.007 s of the fast engine's 1 ms
    steps) and fall on the lock servers' 10 us drain ticks: the events due there are on
    the same side in the stopped run and in the run planned to end where it stopped."""
    from sim.fast.simulate_fast import simulate_fast
    from sim.simulate_simpy import simulate

    cfg = override_config(load_config(MICRO), {"sim.warmup_s": 0.0, "sim.duration_s": 60.0,
                                               "workload.clients": 4, "sim.engine": engine})
    budget = _StopAt(at_us)
    if engine == "fast":
        stopped = simulate_fast(cfg, progress=budget.progress, budget=budget).summary
    else:
        stopped = simulate(cfg, budget.progress, budget).summary
    reached = stopped["incomplete"]["reached_s"]
    assert reached * 1e6 == pytest.approx(at_us)
    whole = run_engine(override_config(cfg, {"sim.duration_s": reached}), engine).summary
    for key in ("granted", "tps", "retries", "violations", "stalled", "events"):
        assert stopped[key] == whole[key], key


@given(st.floats(min_value=0.0, max_value=3.6e9, allow_nan=False))
def test_a_stop_boundary_maps_back_from_its_seconds(t_us):
    b = stop_boundary_us(t_us)
    assert (b / 1e6) * 1e6 == b
    assert b == pytest.approx(t_us, rel=1e-12, abs=1e-9)
