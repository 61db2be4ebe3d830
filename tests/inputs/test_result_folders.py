"""Folders the toolkit wrote and a user (or a crash, or a bug) changed since (issue 35): a
sweep point whose result holds text, a run folder missing a column the figures read. One
line naming the file and the field, exit 2, no traceback, nothing written. On main the
first was a pyarrow ArrowInvalid traceback, the second a KeyError traceback."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from tests.config.config_helpers import CONFIGS

MICRO = str(CONFIGS / "micro-exclusive.yaml")
SWEEP = ["sweep", MICRO, "--grid", "workload.think_time_us=0,10", "--set",
         "sim.duration_s=0.001", "--engine", "simpy", "--workers", "1"]


def one_line(result) -> str:
    assert result.exit_code == 2, (result.output, result.exception)
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in result.output, result.output
    return line


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "sw"
    assert CliRunner().invoke(app, [*SWEEP, "--out", str(out)]).exit_code == 0
    return out


def test_the_sweep_table_says_how_long_each_point_measured_and_why_it_ended(swept):
    table = pd.read_parquet(swept / "results.parquet")
    assert list(table["ended"]) == ["duration", "duration"]
    assert table["measured_s"].tolist() == pytest.approx([0.001, 0.001])


@pytest.mark.parametrize(("field", "value", "said"), [
    ("throughput_rps", "lots", "'lots' is not a number"),
    ("throughput_rps", None, "'None' is not a number"),
    ("throughput_rps", "missing", "missing"),
    ("ended", "later", "'later' is not one of duration, trace")])
def test_a_point_file_with_a_result_that_is_not_a_number_is_one_line(swept, tmp_path, field,
                                                                       value, said):
    out = tmp_path / "sw"
    shutil.copytree(swept, out)
    (out / "results.csv").unlink()
    (out / "results.parquet").unlink()
    path = sorted((out / "points").iterdir())[0]
    doc = json.loads(path.read_text())
    if value == "missing":
        del doc["result"][field]
    else:
        doc["result"][field] = value
    path.write_text(json.dumps(doc))
    line = one_line(CliRunner().invoke(app, [*SWEEP, "--out", str(out), "--resume"]))
    assert line.startswith(f"netlock: error: --resume: {path}: result.{field}: {said}")
    assert not (out / "results.csv").exists() and not (out / "results.parquet").exists()


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "r"
    result = CliRunner().invoke(app, ["sim", MICRO, "--engine", "simpy", "--set",
                                      "sim.duration_s=0.002", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize(("table", "column"), [("requests", "t_us"),
                                               ("requests", "latency_us"),
                                               ("requests", "source"),
                                               ("timeseries", "t_s"),
                                               ("timeseries", "tenant"),
                                               ("timeseries", "granted_rps"),
                                               ("timeseries", "tps")])
@pytest.mark.parametrize("damage", ["missing", "text"])
def test_plot_names_a_missing_or_unreadable_column(run_folder, tmp_path, table, column, damage):
    folder = tmp_path / "r"
    shutil.copytree(run_folder, folder)
    path = folder / f"{table}.parquet"
    frame = pd.read_parquet(path)
    if damage == "missing":
        frame = frame.drop(columns=[column])
    else:
        frame[column] = frame[column].astype(str) + "?"
    frame.to_parquet(path)
    line = one_line(CliRunner().invoke(app, ["plot", str(folder)]))
    assert line.startswith(f"netlock: error: {path}: column {column!r}: "), line
    assert not list(folder.glob("*.png"))


@pytest.mark.parametrize(("file", "key", "value", "said"), [
    ("summary.json", "sim_time_s", "x", "sim_time_s: missing or not a number"),
    ("summary.json", "latency_us", None, "latency_us: not {p50, p99, p999} numbers"),
    ("config.json", "sim.warmup_s", None, "sim.warmup_s: 'None' is not a number >= 0"),
    ("config.json", "sim.timeseries_bin_s", 1e-15, "more than 10,000,000 bins"),
])
def test_plot_names_a_broken_key(run_folder, tmp_path, file, key, value, said):
    folder = tmp_path / "r"
    shutil.copytree(run_folder, folder)
    doc = json.loads((folder / file).read_text())
    node = doc
    *parents, last = key.split(".")
    for part in parents:
        node = node[part]
    node[last] = value
    (folder / file).write_text(json.dumps(doc))
    line = one_line(CliRunner().invoke(app, ["plot", str(folder)]))
    assert line.startswith(f"netlock: error: {folder / file}: ") and said in line, line
    assert not list(folder.glob("*.png"))
