"""``netlock netstore``: one JSON object with the results, one line and exit 2 on bad input."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from sim.netstore import cli
from tests.sim.helpers import CONFIGS

SHORT = ["--set", "sim.duration_s=0.5", "--set", "sim.warmup_s=0.2", "--set", "sim.drain_s=1"]


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    found = typer.Typer()
    cli.register(found)
    found.command("noop")(lambda: None)
    return found


def invoke(app, *args):
    return CliRunner().invoke(app, ["netstore", *[str(a) for a in args]])


@pytest.mark.parametrize("name", ["netstore-lbp", "netstore-ecmp", "netstore-lbp-nac"])
def test_json_is_one_object_with_the_results(app, name):
    result = invoke(app, CONFIGS / f"{name}.yaml", *SHORT, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["routing"] == name.split("-")[1]
    assert summary["nac"] == name.endswith("-nac")
    assert (summary["cache"]["local_hits"] > 0) == summary["nac"]
    assert summary["transactions"] > 300
    assert summary["violations"] == 0 and summary["stalled"] == 0
    assert 0.04 < summary["txn_completion_ms"]["p50"] < 1.0
    assert summary["utilisation"]["agg_core"] > 0


def test_the_table_names_the_routing(app):
    result = invoke(app, CONFIGS / "netstore-ecmp.yaml", *SHORT)
    assert result.exit_code == 0, result.output
    assert "ecmp" in result.stdout and "completion" in result.stdout


@pytest.mark.parametrize(("sets", "says"), [
    (["--set", "netstore.routing=random"], "netstore.routing: must be one of lbp, ecmp"),
    (["--set", "fabric.podz=2"], "--set fabric.podz: unknown key 'podz'"),
    (["--set", "background.max_kb=0.5"], "background.max_kb: must be >= background.min_kb"),
    (["--set", "fabric.pods=1"], "background.cross_pod: needs fabric.pods >= 2"),
])
def test_bad_input_is_one_line_and_exit_2(app, sets, says):
    result = invoke(app, CONFIGS / "netstore-lbp.yaml", *sets, "--json")
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "netstore-lbp.yaml" in lines[0]
