"""``netlock trace gen`` and ``netlock plan`` end to end through the command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.plan_io import load_plan
from netlock.trace import read_trace
from tests.planner.traces import trace_frame, write_frame

SUMMARY_KEYS = ["policy", "slots_total", "slots_used", "locks_total", "locks_in_switch",
                "total_rps", "switch_rps", "server_rps", "servers_needed", "server_rate",
                "rates", "rate_scale"]


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def zipf_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("trace") / "zipf.parquet"
    result = run("trace", "gen", "micro", "--out", path, "--requests", "20000", "--seed", "3",
                 "--set", "workload.locks=2000", "--set", "workload.zipf=0.99",
                 "--set", "workload.clients=8", "--json")
    assert result.exit_code == 0, result.output
    return path


def test_trace_gen_then_plan_then_load(zipf_trace: Path, tmp_path: Path) -> None:
    trace = read_trace(zipf_trace)
    assert len(trace) == 20_000 and (np.diff(trace.t_request) >= 0).all()
    out = tmp_path / "plan.yaml"
    result = run("plan", zipf_trace, "--slots", "300", "--out", out, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert list(summary) == SUMMARY_KEYS
    plan = load_plan(out)
    assert plan.summary.to_dict() == summary
    assert summary["slots_used"] <= 300 and summary["policy"] == "knapsack"
    assert plan.inputs.trace_digest.startswith("sha256:")
    assert plan.entries.problem(plan.geometry) is None


def test_trace_gen_json_and_tpcc_csv(tmp_path: Path) -> None:
    out = tmp_path / "tpcc.csv"
    result = run("trace", "gen", "tpcc", "--out", out, "--requests", "3000",
                 "--set", "workload.warehouses=1", "--set", "clients.machines=2",
                 "--set", "workload.clients=4", "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["requests"] == 3000 and info["clients"] == 4 and info["kind"] == "tpcc"
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["lock_id", "mode", "t_request", "t_release", "client_id",
                                   "txn_id"]
    assert set(frame["mode"]) == {"S", "X"}


def test_trace_gen_tpcc_dslr_generator(tmp_path: Path) -> None:
    """``--generator dslr``: ids ``warehouse * 700000 + index + 1`` over the shared
    warehouses, about 6.8 locks per transaction (tests/workloads/test_tpcc_dslr.py)."""
    out = tmp_path / "dslr.csv"
    result = run("trace", "gen", "tpcc", "--generator", "dslr", "--out", out, "--requests",
                 "6000", "--set", "workload.warehouses=2", "--json")
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert set(frame["lock_id"] // 700_000) == {0, 1}
    assert (frame["lock_id"] % 700_000).between(6, 620_021).all()
    per_txn = frame.groupby("txn_id").size()
    assert per_txn.mode()[0] == 9 and per_txn.isin([3, 4, 5, 6, 9]).mean() > 0.9
    assert run("trace", "gen", "tpcc", "--generator", "nope", "--out", out).exit_code == 2


def test_plain_output_plot_and_random_policy(zipf_trace: Path, tmp_path: Path) -> None:
    png = tmp_path / "plan.png"
    result = run("plan", zipf_trace, "--slots", "200", "--policy", "random", "--out",
                 tmp_path / "p.yaml", "--plot", png, "--contention", "p99")
    assert result.exit_code == 0, result.output
    assert "lock servers needed" in result.stdout and "Hottest" in result.stdout
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert load_plan(tmp_path / "p.yaml").inputs.contention == "p99"


def test_plan_figure_shows_the_used_slots_and_the_server_capacity(zipf_trace: Path) -> None:
    """2,000 used slots of 100,000 are not a sliver; the capacity line is on the axis."""
    from netlock import plotstyle
    from netlock.geometry import RegisterArray, SwitchGeometry
    from planner.planning import PlanOptions, make_plan
    from planner.plot import plan_figure

    geometry = SwitchGeometry(tuple(RegisterArray(stage, 25_000) for stage in range(4)))
    report = make_plan(read_trace(zipf_trace), geometry, PlanOptions(slots=300))
    with plotstyle.styled():
        layout, curve, load = plan_figure(report).axes[:3]
    used = report.plan.summary.slots_used
    assert used <= layout.get_xlim()[1] <= 1.1 * used
    assert layout.get_title(loc="left") == f"Shared-queue layout: {used:,} of 100,000 slots used"
    capacity = report.plan.summary.servers_needed * report.plan.summary.server_rate
    assert load.get_xlim()[0] == 0 and load.get_xlim()[1] > capacity
    assert "M req/s" in load.get_xlabel() and curve.get_ylim()[0] == 0


def test_live_plan_prints_the_migration(zipf_trace: Path, tmp_path: Path) -> None:
    first = tmp_path / "a.yaml"
    assert run("plan", zipf_trace, "--slots", "300", "--out", first).exit_code == 0
    result = run("plan", zipf_trace, "--slots", "200", "--out", tmp_path / "b.yaml",
                 "--live", first, "--json")
    assert result.exit_code == 0, result.output
    assert list(json.loads(result.stdout)) == SUMMARY_KEYS
    assert "Migration from the live plan" in result.stderr


def test_config_supplies_geometry_and_rates(zipf_trace: Path, tmp_path: Path) -> None:
    result = run("plan", zipf_trace, "--out", tmp_path / "p.yaml", "--json",
                 "--set", "switch.slots=1000", "--set", "servers.rate_rps=1e5")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["slots_total"] == 1000 and summary["server_rate"] == 1e5
    plan = load_plan(tmp_path / "p.yaml")
    assert plan.geometry.total_slots == 100_000 and plan.inputs.hold_time_us == 5.0


def test_coarse_auto_on_a_uniform_trace(tmp_path: Path) -> None:
    trace = tmp_path / "uniform.parquet"
    assert run("trace", "gen", "micro", "--out", trace, "--requests", "20000",
               "--set", "workload.locks=20000", "--set", "workload.clients=4").exit_code == 0
    result = run("plan", trace, "--slots", "500", "--coarse", "auto", "--out",
                 tmp_path / "p.yaml", "--json")
    assert result.exit_code == 0, result.output
    assert "Coarse-grained locks" in result.stderr
    assert "coarse locks: lock ids in this plan" in result.stderr
    fine = json.loads(run("plan", trace, "--slots", "500", "--out", tmp_path / "f.yaml",
                          "--json").stdout)
    assert json.loads(result.stdout)["switch_rps"] > fine["switch_rps"]


@pytest.mark.parametrize(("edit", "message"), [
    (lambda f: f.drop(columns="txn_id"), "column 'txn_id': missing"),
    (lambda f: f.assign(lock_id=[0, 1, -2, 0, 1, 2]), "row 2: lock_id: must be >= 0"),
    (lambda f: f.assign(mode=["S", "X", "S", "Y", "S", "X"]), "row 3: mode: unknown mode"),
    (lambda f: f.assign(t_release=[1, 1, 1, 1, 0.0001, 1.0]),
     "row 4: t_release: 0.0001 is before t_request 0.004"),
])
def test_bad_trace_exits_2_and_leaves_output_alone(tmp_path: Path, edit, message: str) -> None:
    trace = write_frame(edit(trace_frame(6)), tmp_path / "bad.csv")
    out = tmp_path / "plan.yaml"
    out.write_text("previous plan\n")
    result = run("plan", trace, "--slots", "10", "--out", out, "--plot", tmp_path / "x.png")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert f"{trace}: " in result.stderr and message in result.stderr
    assert out.read_text() == "previous plan\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "plan.yaml"]


@pytest.mark.parametrize(("args", "message"), [
    (["--slots", "200000", "--set", "switch.slots=5"], "--slots: must be in 0..100000"),
    (["--policy", "best"], "--policy"),
    (["--coarse", "lots"], "--coarse"),
    (["--set", "switch.nope=1"], "switch.nope"),
    (["--live", "missing.yaml"], "missing.yaml"),
])
def test_bad_flags_exit_2(zipf_trace: Path, tmp_path: Path, args: list[str],
                          message: str) -> None:
    result = run("plan", zipf_trace, "--out", tmp_path / "p.yaml", *args)
    assert result.exit_code == 2 and message in result.stderr, result.output
    assert not (tmp_path / "p.yaml").exists()


def test_trace_gen_rejects_unknown_extension(tmp_path: Path) -> None:
    result = run("trace", "gen", "micro", "--out", tmp_path / "t.txt")
    assert result.exit_code == 2 and "unknown trace format" in result.stderr


def test_help_shows_examples() -> None:
    for args in (["plan", "--help"], ["trace", "gen", "--help"]):
        result = run(*args)
        assert result.exit_code == 0 and "Example" in result.stdout and "netlock" in \
            result.stdout


def test_tenants_priorities_and_large_plan_side_file(tmp_path: Path) -> None:
    trace = tmp_path / "tenants.parquet"
    result = run("trace", "gen", "micro", "--out", trace, "--requests", "20000",
                 "--set", "workload.clients=4", "--set", "workload.locks=3000",
                 "--set", "switch.priorities=2",
                 "--set", "tenants=[{id: 0, clients: 2, priority: 1}, "
                 "{id: 1, clients: 2, priority: 0, start_s: 0.001}]")
    assert result.exit_code == 0, result.output
    frame = pd.read_parquet(trace)
    assert dict(frame.groupby("tenant")["priority"].first()) == {0: 1, 1: 0}
    assert frame.loc[frame.tenant == 1, "t_request"].min() >= 0.001
    out = tmp_path / "p.yaml"
    result = run("plan", trace, "--priorities", "2", "--out", out, "--json")
    assert result.exit_code == 0, result.output
    plan = load_plan(out)
    assert (tmp_path / "p.yaml.entries.parquet").exists() and len(plan.entries) > 1000
    assert set(plan.entries.priority.tolist()) == {0, 1}
    assert plan.problem() is None


def test_a_live_replan_can_be_pushed_and_prints_what_push_does(zipf_trace: Path,
                                                                 tmp_path: Path) -> None:
    """plan a -> push a -> plan b --live a -> push b: the live partition is kept (no lock
    range changes server, so the push needs no --servers-idle) and the push migrates exactly
    the locks plan --live listed."""
    other = tmp_path / "other.parquet"
    made = run("trace", "gen", "micro", "--out", other, "--requests", "20000", "--seed", "4",
               "--set", "workload.locks=2000", "--set", "workload.zipf=0.99",
               "--set", "workload.clients=8", "--json")
    assert made.exit_code == 0, made.output
    a, b, state = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "switch.json"
    rate = ["--server-rate", "150000"]
    assert run("plan", zipf_trace, "--slots", "300", *rate, "--out", a).exit_code == 0
    assert load_plan(a).summary.servers_needed > 1
    assert run("push", a, "--state", state).exit_code == 0
    replan = run("plan", other, "--slots", "300", *rate, "--live", a, "--out", b, "--json")
    assert replan.exit_code == 0, replan.output
    assert load_plan(b).partition == load_plan(a).partition
    title = re.search(r"(\d+) locks stay, (\d+) move, (\d+) leave, (\d+) enter; (\d+) lock "
                      r"ranges change server", " ".join(replan.stderr.split()))
    assert title, replan.stderr
    stay, move, leave, enter, ranges = map(int, title.groups())
    assert ranges == 0 and move + leave + enter > 0
    assert stay + move + enter == load_plan(b).summary.locks_in_switch
    pushed = run("push", b, "--state", state, "--json")
    assert pushed.exit_code == 0, pushed.output
    assert json.loads(pushed.stdout)["migrated_locks"] == move + leave + enter
