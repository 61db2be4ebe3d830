"""Bad input gets one line naming the file, row or key and what is wrong, exit 2, no
traceback and nothing written: sizes beyond this machine's memory, a huge CSV field, values
that would overflow, a plan the switch cannot hold, impossible flags."""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.errors import ConfigError
from netlock.memory import Need, available_bytes, check_fits
from netlock.plan_io import save_plan
from sim.footprint import fast_client_bytes, run_needs
from tests.hwrunner.plans import make_plan

ROOT = Path(__file__).resolve().parents[2]
CONFIG = str(ROOT / "configs" / "micro-exclusive.yaml")
HEADER = "lock_id,mode,t_request,t_release,client_id,txn_id"


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_error_line(result, *parts: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("netlock: error: "), result.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "t.csv"
    path.write_text(HEADER + "\n" + "".join(f"{i % 5},X,{i}e-3,{i}.5e-3,0,{i}\n"
                                              for i in range(50)))
    return path


def test_config_check_refuses_clients_beyond_memory():
    result = run("config", "check", CONFIG, "--set", f"workload.clients={10**9}")
    line = one_error_line(result, "workload.clients=1000000000 needs ~", "GB for client state",
                          "GB available")
    assert "this machine has" in line


def test_sim_refuses_before_allocating(tmp_path):
    result = run("sim", CONFIG, "--engine", "fast", "--set", f"workload.clients={10**9}",
                 "--out", tmp_path / "out")
    one_error_line(result, "workload.clients=1000000000", "fast engine")
    assert not (tmp_path / "out").exists()


def test_trace_gen_refuses_a_zipf_over_too_many_locks(tmp_path):
    out = tmp_path / "t.parquet"
    result = run("trace", "gen", "micro", "--out", out, "--requests", "100",
                 "--set", f"workload.locks={10**12}", "--set", "workload.zipf=0.99")
    one_error_line(result, "workload.locks=1000000000000", "Zipf sampler")
    assert not out.exists()


def test_plan_refuses_slots_beyond_memory(trace, tmp_path):
    out = tmp_path / "p.yaml"
    one_error_line(run("plan", trace, "--slots", 10**12, "--out", out), "--slots=1000000000000")
    assert not out.exists()


def test_plan_refuses_zero_priorities(trace, tmp_path):
    out = tmp_path / "p.yaml"
    one_error_line(run("plan", trace, "--slots", 10, "--priorities", 0, "--out", out),
                   "--priorities", "must be >= 1, got 0")
    assert not out.exists()


def test_a_csv_header_field_beyond_the_csv_limit(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text(HEADER + "x" * 140_000 + "\n1,S,0,1,0,0\n")
    one_error_line(run("plan", path, "--slots", 10, "--out", tmp_path / "p.yaml"),
                   str(path), "CSV header", "field larger than field limit")


def test_a_huge_lock_id_is_an_error_without_a_numeric_warning(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text(HEADER + "\n1e30,S,0,1,0,0\n")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = run("plan", path, "--slots", 10, "--out", tmp_path / "p.yaml")
    one_error_line(result, "row 0: lock_id: too large for a 64-bit integer")
    assert [str(w.message) for w in seen if w.category is RuntimeWarning] == []


def test_push_refuses_a_plan_for_more_priorities_and_writes_nothing(tmp_path):
    plan = make_plan([(1, 2)])
    two = replace(plan, geometry=replace(plan.geometry, priorities=2))
    path, state = tmp_path / "plan.yaml", tmp_path / "switch.json"
    save_plan(two, path)
    one_error_line(run("push", path, "--state", state), "geometry.priorities",
                   "2 priority classes", "one queue per lock")
    written = sorted(p.name for p in tmp_path.iterdir() if p.suffix != ".lock")
    assert written == ["plan.yaml"]


def test_check_fits_names_the_largest_need_and_the_total():
    have = available_bytes()
    assert have is not None and have > 0
    needs = [Need("a=1", "small", have / 4), Need("b=2", "big", have)]
    with pytest.raises(ConfigError, match=r"^b=2 needs ~.* for big \(~.* in all\), this "
                                          r"machine has .* available$"):
        check_fits(needs)
    check_fits([Need("a=1", "small", have / 4)])


def test_the_fast_engine_estimate_matches_its_arrays():
    """The per-client estimate is the fast engine's per-client arrays: compare it with the
    arrays of two built racks that differ only in their client count."""
    from netlock.config import load_config
    from sim.fast.simulate_fast import build

    def rack_bytes(clients: int) -> int:
        cfg = load_config(CONFIG, {"workload.clients": str(clients)})
        rack = build(cfg).rack
        return sum(_nbytes(part) for part in rack)

    measured = (rack_bytes(400) - rack_bytes(200)) / 200
    estimate = fast_client_bytes(1, 1)
    assert 0.8 * measured <= estimate <= 1.25 * measured, (estimate, measured)
    cfg = load_config(CONFIG, {"workload.clients": "200", "sim.engine": "fast"})
    assert run_needs(cfg)[0].bytes == 200 * estimate


def _nbytes(part: object) -> int:
    if hasattr(part, "nbytes"):
        return int(part.nbytes)
    return sum(_nbytes(p) for p in part) if isinstance(part, tuple) else 0
