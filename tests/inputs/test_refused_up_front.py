"""Issue 35's cases, each refused before any work: one line, exit 2, no traceback, nothing
written. Each of these printed a traceback, ran without bound or was killed on main."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from tests.config.config_helpers import CONFIGS

TPCC = str(CONFIGS / "tpcc-low.yaml")
MICRO = str(CONFIGS / "micro-exclusive.yaml")


def refused(*args: str, out: Path | None = None) -> str:
    """Run ``netlock args``; assert one line on stderr, exit 2, no traceback, no ``out``."""
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.output
    assert len(lines) == 1 or lines[0].startswith("Usage:"), result.stderr
    if out is not None:
        assert not out.exists()
    return result.stderr


@pytest.mark.parametrize(("setting", "said"), [
    ("sim.duration_s=1e308", "sim.duration_s: must be <= 3600"),
    ("sim.warmup_s=1e300", "sim.warmup_s: must be <= 3600"),
    ("sim.seed=9223372036854775808", "sim.seed: must be <= 9223372036854775807"),
    ("sim.timeseries_bin_s=1e-12", "sim.timeseries_bin_s=1e-12 needs ~"),
    ("servers.count=100000000", "servers.count=100000000 needs ~"),
    ("servers.cores=1000000000", "servers.cores=1000000000 needs ~"),
])
def test_absurd_settings_are_refused_naming_the_key(tmp_path, setting, said):
    out = tmp_path / "run"
    assert said in refused("sim", TPCC, "--set", setting, "--out", str(out), out=out)
    assert said in refused("config", "check", TPCC, "--set", setting)


def test_a_negative_seed_is_refused(tmp_path):
    out = tmp_path / "t.csv"
    assert "--seed" in refused("trace", "gen", "micro", "--config", MICRO, "--out", str(out),
                               "--seed", "-1", out=out)
    state = tmp_path / "switch.json"
    state.write_text("{}")
    assert "--seed" in refused("traffic", MICRO, "--state", str(state), "--seed", "-1")


def test_traffic_refuses_requests_that_cannot_fit(tmp_path):
    state = tmp_path / "switch.json"
    state.write_text("{}")
    said = refused("traffic", MICRO, "--state", str(state), "--requests", str(10**12))
    assert "--requests=1000000000000 needs ~" in said


@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
def test_inputs_must_be_regular_files(tmp_path, kind):
    if kind == "device":
        path = Path("/dev/zero")
    elif kind == "fifo":
        path = tmp_path / "config.yaml"
        os.mkfifo(path)
    else:
        path = tmp_path / "config.yaml"
        path.mkdir()
    said = refused("config", "check", str(path))
    assert said.startswith(f"netlock: error: {path}: cannot read config file")
    trace = tmp_path / ("t.csv" if kind != "device" else "unused.csv")
    if kind == "fifo":
        os.mkfifo(trace)
    elif kind == "directory":
        trace.mkdir()
    else:
        trace = Path("/dev/null.csv") if Path("/dev/null.csv").exists() else None
    if trace is not None:
        out = tmp_path / "plan.yaml"
        assert str(trace) in refused("plan", str(trace), "--out", str(out), out=out)


def test_a_text_input_past_the_bound_is_refused(tmp_path, monkeypatch):
    import netlock.inputs
    monkeypatch.setattr(netlock.inputs, "TEXT_MAX_BYTES", 100)
    path = tmp_path / "big.yaml"
    path.write_text("# " + "x" * 200 + "\n")
    assert "more than the 100 a config file may have" in refused("config", "check", str(path))


@pytest.fixture
def trace_csv(tmp_path) -> Path:
    path = tmp_path / "t.csv"
    result = CliRunner().invoke(app, ["trace", "gen", "micro", "--config", MICRO, "--out",
                                      str(path), "--requests", "500"])
    assert result.exit_code == 0, result.output
    return path


def test_trace_with_a_repeated_column_is_refused_by_every_reader(tmp_path, trace_csv):
    frame = pd.read_csv(trace_csv)
    table = pa.Table.from_arrays([pa.array(frame[c]) for c in frame.columns]
                                 + [pa.array(frame["lock_id"])],
                                 names=[*frame.columns, "lock_id"])
    dup = tmp_path / "dup.parquet"
    pq.write_table(table, dup)
    out = tmp_path / "plan.yaml"
    said = refused("plan", str(dup), "--out", str(out), out=out)
    assert "column 'lock_id': appears 2 times" in said
    run = tmp_path / "run"
    refused("sim", MICRO, "--set", "workload.kind=trace", "--set", f"workload.trace={dup}",
            "--out", str(run), out=run)


@pytest.mark.parametrize(("column", "value", "said"), [
    ("txn_id", "abc", "not a number (got 'abc')"),
    ("client_id", str(10**17), f"must be a whole number in [0, 2^53], got {10**17}"),
    ("txn_id", "-3", "must be >= 0 (got -3)"),
    ("client_id", "1.5", "not an integer (got 1.5)")])
def test_replayed_trace_ids_are_validated_by_row_and_field(tmp_path, trace_csv, column,
                                                           value, said):
    frame = pd.read_csv(trace_csv).astype({column: object})
    frame.loc[4, column] = value
    bad = tmp_path / "bad.csv"
    frame.to_csv(bad, index=False)
    refused_line = refused("sim", MICRO, "--set", "workload.kind=trace", "--set",
                           f"workload.trace={bad}", "--set", "sim.duration_s=0.0001")
    assert f"{bad}: row 4: {column}: {said}" in refused_line


@pytest.mark.parametrize(("old", "new", "said"), [
    ("  rate_rps: ", "  rate_rps: fast #", "row 0: entries.rate_rps: not a finite number >= 0"),
    ("server_rate_rps: ", "server_rate_rps: lots #",
     "inputs.server_rate_rps: must be a finite number, got 'lots'"),
    ("slots_used: ", "slots_used: 1.5 #", "summary.slots_used: must be an integer"),
])
def test_plan_fields_of_the_wrong_type_are_named(tmp_path, trace_csv, old, new, said):
    plan = tmp_path / "plan.yaml"
    result = CliRunner().invoke(app, ["plan", str(trace_csv), "--out", str(plan), "--slots",
                                      "100"])
    assert result.exit_code == 0, result.output
    plan.write_text(plan.read_text().replace(old, new, 1))
    state = tmp_path / "switch.json"
    assert said in refused("push", str(plan), "--state", str(state), out=state)
    assert said in refused("sim", MICRO, "--set", f"policy.plan={plan}",
                           "--set", "sim.duration_s=0.0001")


@pytest.mark.parametrize("t_request", ["-1e308", "-1e303"])
def test_a_trace_whose_times_overflow_in_microseconds_is_refused(tmp_path, t_request):
    """Found by the CLI fuzzer: one t_request of -1e308 made plan's hold time in us infinite
    (an OverflowError traceback on main)."""
    trace = tmp_path / "t.csv"
    trace.write_text("lock_id,mode,t_request,t_release,client_id,txn_id\n"
                     f"1,X,{t_request},0.001,0,0\n2,X,0.0,0.002,1,1\n")
    out = tmp_path / "p.yaml"
    said = refused("plan", str(trace), "--config", MICRO, "--slots", "10", "--out", str(out),
                   out=out)
    assert f"{trace}: t_request, t_release: the trace spans" in said
