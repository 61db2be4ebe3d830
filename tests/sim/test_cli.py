"""``netlock sim`` and ``netlock sweep``: contract output, files, resume, clear errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.sim.helpers import CONFIGS, SHORT


def test_sim_json_prints_one_contract_object(run, tmp_path):
    result = run("sim", CONFIGS / "micro-exclusive.yaml", *SHORT, "--json", "--out", tmp_path,
                 "--engine", "simpy")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["engine"] == "simpy"
    assert doc["granted"] > 0 and doc["violations"] == 0
    assert set(doc["latency_us"]) == {"mean", "p50", "p99", "p999"}
    assert (tmp_path / "requests.parquet").exists()
    assert json.loads((tmp_path / "summary.json").read_text())["granted"] == doc["granted"]


def test_sim_prints_a_table_without_json(run):
    result = run("sim", CONFIGS / "micro-exclusive.yaml", *SHORT, "--engine", "simpy")
    assert result.exit_code == 0, result.output
    assert "throughput" in result.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "switch.slotz=3"], "switch.slotz"),
    (["--set", "workload.think_time_us=-1"], "workload.think_time_us"),
    (["--set", "lease.us=5"], "lease.us"),
    (["--set", "sim.engine=warp"], "sim.engine"),
    (["--format", "xml"], "--format"),
])
def test_bad_configs_are_one_line_and_exit_2(run, args, message):
    result = run("sim", CONFIGS / "micro-exclusive.yaml", *args)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert "Traceback" not in result.output


def test_a_missing_config_file_is_exit_2(run, tmp_path):
    result = run("sim", tmp_path / "nope.yaml")
    assert result.exit_code == 2
    assert "nope.yaml" in result.stderr


def test_the_default_engine_is_the_fast_one_where_it_models_the_config(run):
    fast = run("sim", CONFIGS / "micro-exclusive.yaml", *SHORT, "--json")
    assert fast.exit_code == 0, fast.output
    assert json.loads(fast.stdout)["engine"] == "fast"
    assert "engine: fast (auto" in fast.stderr
    failing = run("sim", CONFIGS / "micro-exclusive.yaml", *SHORT, "--json", "--set",
                  "failures.switch_fail_s=0.0005")
    assert failing.exit_code == 0, failing.output
    assert json.loads(failing.stdout)["engine"] == "simpy"
    assert "engine: simpy (auto: the fast engine does not model" in failing.stderr


def test_an_unknown_engine_is_refused(run):
    assert run("sim", CONFIGS / "micro-exclusive.yaml", "--engine", "warp").exit_code == 2


def test_help_shows_an_example(run):
    for command in ("sim", "sweep"):
        result = run(command, "--help")
        assert result.exit_code == 0
        assert "Example" in result.stdout and f"netlock {command}" in result.stdout


def test_sweep_writes_table_plots_and_points_then_resumes(run, tmp_path):
    out = tmp_path / "sweep"
    args = ["sweep", CONFIGS / "micro-exclusive.yaml", *SHORT,
            "--grid", "switch.slots=0,100000", "--grid", "workload.think_time_us=0,5",
            "--out", out, "--workers", "2", "--json"]
    first = run(*args)
    assert first.exit_code == 0, first.output
    doc = json.loads(first.stdout)
    assert doc["points"] == 4
    table = pd.read_parquet(out / "results.parquet")
    assert len(table) == 4 and {"switch.slots", "workload.think_time_us",
                                "throughput_rps", "seed"} <= set(table.columns)
    assert (out / "results.csv").exists()
    assert (out / "throughput_rps.png").stat().st_size > 1000
    assert len(list((out / "points").glob("*.json"))) == 4
    by_slots = table.groupby("switch.slots")["switch_share"].mean()
    assert by_slots[0] == 0 and by_slots[100000] > 0.99
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "points").glob("*.json")}
    again = run(*args[:-1], "--resume", "--json")
    assert again.exit_code == 0, again.output
    assert {p.name: p.stat().st_mtime_ns for p in (out / "points").glob("*.json")} == stamps
    pd.testing.assert_frame_equal(pd.read_parquet(out / "results.parquet"), table)
    refused = run(*args)
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr.strip() == (f"netlock: error: --out {out}: holds an earlier sweep "
                                      f"(points, results.parquet, results.csv); add --resume "
                                      f"to continue it or --force to replace it")
    assert {p.name: p.stat().st_mtime_ns for p in (out / "points").glob("*.json")} == stamps
    smaller = [a if a != "switch.slots=0,100000" else "switch.slots=0" for a in args]
    replaced = run(*smaller, "--force")
    assert replaced.exit_code == 0, replaced.output
    assert len(list((out / "points").glob("*.json"))) == 2, "the old points are gone"
    assert len(pd.read_parquet(out / "results.parquet")) == 2


@pytest.mark.parametrize(("grid", "message"), [
    ("switch.slots", "--grid"),
    ("switch.slots=", "--grid"),
    ("switch.slotz=1,2", "slotz"),
    ("switch.slots=-5", "switch.slots"),
])
def test_bad_grids_are_one_line_and_exit_2(run, tmp_path, grid, message):
    result = run("sweep", CONFIGS / "micro-exclusive.yaml", "--grid", grid, "--out", tmp_path)
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_on_a_terminal_the_run_shows_progress_on_stderr_only(tmp_path):
    """TTY_COMPATIBLE=1 makes rich treat the pipes as a terminal: the progress bar over
    simulated time goes to stderr, stdout holds only the JSON object."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    netlock = Path(sys.executable).parent / "netlock"
    done = subprocess.run([str(netlock), "sim", str(CONFIGS / "micro-exclusive.yaml"), *SHORT,
                           "--json"], env={**os.environ, "TTY_COMPATIBLE": "1"},
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "simulating (fast engine)" in done.stderr and "ms" in done.stderr
    assert isinstance(json.loads(done.stdout), dict)
    assert "simulating" not in done.stdout
