"""The simulator runs a plan made by `netlock plan` (policy.plan) instead of planning itself."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.errors import ConfigError
from netlock.plan_io import load_plan
from sim.simulate_simpy import simulate
from tests.sim.helpers import CONFIGS, config

CFG = CONFIGS / "micro-exclusive.yaml"
SHORT = ["--set", "sim.duration_s=0.001", "--set", "sim.warmup_s=0.0002"]


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plan")
    runner = CliRunner()
    trace = tmp / "t.parquet"
    out = runner.invoke(app, ["trace", "gen", "micro", "--config", str(CFG), "--out", str(trace),
                              "--requests", "20000"])
    assert out.exit_code == 0, out.output
    plan = tmp / "plan.yaml"
    out = runner.invoke(app, ["plan", str(trace), "--config", str(CFG), "--slots", "600",
                              "--out", str(plan)])
    assert out.exit_code == 0, out.output
    return plan


def test_the_switch_holds_exactly_the_planned_locks(plan_file):
    plan = load_plan(plan_file)
    result = simulate(config("micro-exclusive", policy__plan=plan_file,
                             sim__duration_s=0.001, sim__warmup_s=0.0002))
    assert result.summary["plan"] == plan.summary.to_dict()
    assert result.summary["violations"] == 0
    share = result.summary["switch_share"]
    assert 0.0 < share < 1.0  # 600 slots cannot hold all 5000 contended locks
    in_switch = set(plan.entries.lock_id.tolist())
    by_switch = result.requests[result.requests["source"] == 0]["lock"]
    assert set(by_switch.unique()) <= in_switch


def test_sim_cli_accepts_policy_plan(plan_file):
    out = CliRunner().invoke(app, ["sim", str(CFG), *SHORT, "--set",
                                   f"policy.plan={plan_file}", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["plan"]["slots_used"] == load_plan(plan_file).summary.slots_used


def test_a_plan_for_another_switch_is_refused(plan_file):
    with pytest.raises(ConfigError, match="geometry"):
        simulate(config("micro-exclusive", policy__plan=plan_file, switch__priorities=2,
                        sim__duration_s=0.001, sim__warmup_s=0.0002))
