"""`netlock demo` end to end, at small scale, through the CLI."""

import json

from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.plan_io import load_plan


def test_demo_plans_replays_and_pushes(tmp_path):
    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--requests", "3000", "--out", str(out), "--json",
                                      "--set", "sim.duration_s=0.002"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["push"]["verified"] is True
    assert doc["replay"]["requests"] == 3000
    assert doc["replay"]["ungranted"] == 0
    assert doc["replay"]["granted_by_switch"] > 0
    assert doc["sim"]["violations"] == 0 and doc["sim"]["granted"] > 0
    assert 0 < doc["sim"]["switch_share"] < 1
    plan = load_plan(out / "plan.yaml")
    assert plan.summary.locks_in_switch == doc["plan"]["locks_in_switch"] > 0
    assert (out / "switch.json").exists() and (out / "trace.parquet").exists()


def test_demo_rejects_a_bad_override(tmp_path):
    result = CliRunner().invoke(app, ["demo", "--set", "switch.slots=-1",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "switch.slots" in result.output
    assert "Traceback" not in result.output
    assert not any(tmp_path.iterdir())
