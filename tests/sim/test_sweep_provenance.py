"""``netlock sweep``: every point records its settings; a resume with other settings is
refused (one line, exit 2) and leaves the table alone; ``--seeds`` gives confidence
intervals; the table has ``stalled``."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from netlock.config import override_config
from netlock.errors import ConfigError
from sim.sweep_grid import grid_points, parse_grid
from sim.sweep_table import summarise_runs
from tests.sim.helpers import CONFIGS, SHORT, config

GRID = ["--grid", "switch.slots=0,100000"]


def _sweep(run, out, *extra, name="micro-exclusive"):
    return run("sweep", CONFIGS / f"{name}.yaml", *SHORT, *GRID, "--out", out, "--workers",
               "1", "--engine", "simpy", "--json", *extra)


def test_points_and_table_record_config_and_provenance(run, tmp_path):
    out = tmp_path / "s"
    done = _sweep(run, out)
    assert done.exit_code == 0, done.output
    table = pd.read_csv(out / "results.csv")
    assert set(table["engine"]) == {"simpy"} and set(table["duration_s"]) == {0.001}
    assert table["config_sha256"].str.len().eq(64).all()
    assert "sim.duration_s=0.001" in table["overrides"].iloc[0]
    assert "stalled" in table.columns and (table["stalled"] >= 0).all()
    doc = json.loads(next((out / "points").glob("*.json")).read_text())
    assert doc["config"]["sim"]["engine"] == "simpy"
    assert doc["provenance"]["config_file"].endswith("micro-exclusive.yaml")


def test_a_resume_with_other_settings_is_refused_and_changes_nothing(run, tmp_path):
    out = tmp_path / "s"
    assert _sweep(run, out).exit_code == 0
    before = (out / "results.csv").read_bytes()
    for changed in (["--set", "sim.duration_s=0.002"],
                    ["--set", "workload.think_time_us=3"]):
        refused = _sweep(run, out, "--resume", *changed)
        assert refused.exit_code == 2, refused.output
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and "--resume" in lines[0] and "other settings" in lines[0]
        assert (out / "results.csv").read_bytes() == before
    other = _sweep(run, out, "--resume", name="micro-shared")
    assert other.exit_code == 2 and "other settings" in other.stderr
    assert (out / "results.csv").read_bytes() == before
    same = _sweep(run, out, "--resume")
    assert same.exit_code == 0, same.output


def test_a_resume_on_another_engine_is_refused(tmp_path):
    from sim.sweep_folder import load_finished, save_point
    from sim.sweep_row import ROW_COLUMNS

    points = grid_points(config("micro-exclusive"), parse_grid(["switch.slots=0"]))
    row = {**dict.fromkeys(ROW_COLUMNS, 1.0), "ended": "duration"}
    save_point(tmp_path, points[0], row)
    fast = override_config(points[0].config, {"sim.engine": "fast"})
    moved = points[0].__class__(points[0].pid, points[0].values, points[0].seed, fast)
    with pytest.raises(ConfigError, match=r"sim\.engine 'simpy' -> 'fast'"):
        load_finished(tmp_path, moved)
    assert load_finished(tmp_path, points[0]) == row


def test_seeds_give_a_mean_and_a_confidence_interval(run, tmp_path):
    out = tmp_path / "s"
    done = _sweep(run, out, "--seeds", "3")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["runs"] == 6
    table = pd.read_csv(out / "results.csv")
    runs = pd.read_csv(out / "runs.csv")
    assert len(table) == 2 and len(runs) == 6 and set(table["seeds"]) == {3}
    assert runs["seed"].nunique() == 6
    served = table.set_index("switch.slots")
    mean = runs[runs["switch.slots"] == 0]["throughput_rps"].mean()
    assert abs(served.loc[0, "throughput_rps"] - mean) < 1e-6 * mean
    assert (served["throughput_rps_ci95"] > 0).all()


def test_a_point_without_latency_stays_missing_in_the_means():
    runs = pd.DataFrame({"point": ["a", "a"], "k": [1, 1], "run": [0, 1], "seed": [1, 2],
                         "throughput_rps": [10.0, 20.0], "latency_p99_us": [None, 4.0]})
    row = summarise_runs(runs, ["k"]).iloc[0]
    assert row["throughput_rps"] == 15.0 and row["latency_p99_us"] == 4.0
    assert pd.isna(row["latency_p99_us_ci95"]) and row["throughput_rps_ci95"] > 0


def test_a_serial_sweep_follows_the_running_point(tmp_path):
    from sim.sweep import run_sweep

    base = config("micro-exclusive", sim__duration_s=0.0005, sim__warmup_s=0.0001)
    points = grid_points(base, parse_grid(["switch.slots=0,1000"]))
    seen: list[tuple[str, float, float]] = []
    run_sweep(points, tmp_path, point_progress=lambda p, now, end: seen.append(
        (p.pid, now, end)))
    assert {pid for pid, _, _ in seen} == {p.pid for p in points}
    assert all(0 <= now <= end for _, now, end in seen)
    assert max(now for _, now, _ in seen) >= 0.9 * seen[0][2]


def test_a_parallel_sweep_follows_every_running_point(tmp_path):
    """With worker processes each running point reports how far it has come (issue 36: the
    bar stayed at 0/N with no per-point progress), and is reported done once it is."""
    from sim.sweep import run_sweep

    base = config("micro-exclusive", sim__duration_s=0.0005, sim__warmup_s=0.0001)
    points = grid_points(base, parse_grid(["switch.slots=0,1000"]))
    seen: list[tuple[str, float, float]] = []
    run_sweep(points, tmp_path, workers=2, point_progress=lambda p, now, end: seen.append(
        (p.pid, now, end)))
    end = base.sim.end_s * 1e6
    for point in points:
        mine = [(now, until) for pid, now, until in seen if pid == point.pid]
        assert any(now < until for now, until in mine), "no report from the worker"
        assert (end, end) in mine and all(0 <= now <= until == end for now, until in mine)
