"""With no --profile, the running program decides the profile: the real SDE client over real
gRPC against an in-memory BFRuntime server (see conformance.py) serving the public P4_14
program, the program with the per-lock counters, and programs that match neither."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.plan_io import save_plan
from tests.hwrunner.bfrt_program import SMALL, Sizes, netlock_bfrt
from tests.hwrunner.conformance import target
from tests.hwrunner.plans import make_plan

PLAN = make_plan([(10, 2), (11, 3), (12, 1), (13, 4)])


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    path = tmp_path / "a.yaml"
    save_plan(PLAN, path)
    return path


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def push(server, plan: Path, tmp_path: Path, *extra: str):
    return run("push", plan, "--target", target(server), "--json", "--journal",
               tmp_path / "push.journal", *extra)


def one_line(result) -> str:
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def table(doc: dict, name: str) -> dict:
    (hit,) = [t for t in doc["tables"] if t["name"].endswith(f".{name}")]
    return hit


def test_the_public_p4_14_program_needs_no_profile(serve, plan, tmp_path):
    """The public program at its own sizes (NUM_LOCKS 55000, LENGTH_ARRAY 130000): chosen,
    pushed, verified; re-pushed with nothing sent; its stats read without per-lock counters."""
    server = serve(sizes=Sizes())
    first = push(server, plan, tmp_path)
    assert first.exit_code == 0, first.output
    doc = json.loads(first.stdout)
    assert doc["profile"] == "netlock-public" and doc["verified"] and doc["operations"] == 33
    assert (f"netlock: {target(server)}: profile netlock-public chosen: the program has all "
            f"17 tables it names, with their fields and widths (54999 lock indices, 129999 "
            f"queue slots); netlock-stats does not fit: no table "
            f"'lock_acq_counter_register'\n") in first.stderr
    assert [server.register("left_bound_register")[p][1] for p in range(4)] == [1] * 4
    again = push(server, plan, tmp_path)
    assert again.exit_code == 0 and json.loads(again.stdout)["operations"] == 0
    for pipe, count in enumerate((5, 0, 2, 0)):
        server.register("tenant_acq_counter_register", "lo")[pipe][3] = count
    stats = run("stats", "--target", target(server), "--json")
    assert stats.exit_code == 0, stats.output
    summary = json.loads(stats.stdout)
    assert summary["profile"] == "netlock-public" and summary["locks"] == 4
    assert summary["requests"] is None and summary["occupancy"] == 0
    assert summary["tenant_requests"] == {"3": 7}
    text = run("stats", "--target", target(server)).stdout
    assert "requests: not counted (profile netlock-public: the program has no per-lock " \
           "request counter, such as table lock_acq_counter_register (profile netlock-stats))" \
        in text and "tenant_requests: tenant 3: 7" in text


def test_a_program_with_the_counters_takes_the_counting_profile(serve, plan, tmp_path):
    server = serve(stats=True)
    done = push(server, plan, tmp_path)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["profile"] == "netlock-stats"
    assert "profile netlock-stats chosen: the program has all 19 tables it names, with their " \
           "fields and widths (63 lock indices, 128 queue slots); netlock-public fits with " \
           "fewer tables" in done.stderr
    for pipe in range(4):
        server.register("lock_acq_counter_register")[pipe][1] = 3
    stats = run("stats", "--target", target(server), "--window-s", "2", "--json")
    assert stats.exit_code == 0, stats.output
    summary = json.loads(stats.stdout)
    assert summary["requests"] == 12 and summary["total_rps"] == 6.0
    named = push(server, plan, tmp_path, "--profile", "netlock-public")
    assert named.exit_code == 0 and json.loads(named.stdout)["profile"] == "netlock-public"
    assert "chosen" not in named.stderr


def _narrow(doc: dict) -> str:
    table(doc, "left_bound_register")["data"][0]["singleton"]["type"]["width"] = 16
    return "left_bound_register.f1: 16 bits, but profile says 32"


def _renamed(doc: dict) -> str:
    table(doc, "head_register")["data"][0]["singleton"]["name"] = "head_register.value"
    return "pipe.head_register: data field 'head_register.f1': not found"


def _missing(doc: dict) -> str:
    doc["tables"].remove(table(doc, "tail_register"))
    return "no table 'tail_register'"


def _tiny(doc: dict) -> str:
    for name in ("left_bound_register", "right_bound_register"):
        table(doc, name)["size"] = 1
    return "lock_index_base: 1 leaves no lock index in registers of 1 entries"


@pytest.mark.parametrize("change", [_narrow, _renamed, _missing, _tiny],
                         ids=["width", "field", "table", "size"])
def test_a_program_that_matches_no_profile_is_refused(serve, plan, tmp_path, change):
    doc = netlock_bfrt(sizes=SMALL)
    differs = change(doc)
    server = serve(doc=doc)
    line = one_line(push(server, plan, tmp_path))
    assert line.startswith(f"netlock: error: {target(server)}: program netlock matches no "
                           f"shipped switch profile (netlock-public"), line
    assert line.count(differs) == 1, "each difference once"
    if change is _missing:
        assert "(netlock-public, netlock-stats: no table 'tail_register')" in line
    assert "netlock-stats" in line and line.endswith("; give --profile FILE for this program\n")
    assert server.writes == 0


def test_a_named_profile_that_does_not_fit_says_what_differs_once(serve, plan, tmp_path):
    server = serve()
    line = one_line(push(server, plan, tmp_path, "--profile", "netlock-stats"))
    assert line == (f"netlock: error: {target(server)}: program netlock: no table "
                    f"'lock_acq_counter_register' (profile netlock-stats); the program matches "
                    f"the shipped profile netlock-public (omit --profile to choose it)\n")
    assert server.writes == 0


def test_autopilot_on_the_public_program_names_the_missing_tables(serve, plan):
    server = serve()
    line = one_line(run("autopilot", plan, "--target", target(server), "--interval", "0.01",
                        "--max-rounds", "1"))
    assert ("profile netlock-public: the program keeps no per-lock request and "
            "peak-occupancy counters, which netlock autopilot reads (tables "
            "lock_acq_counter_register, occupancy_peak_register (profile netlock-stats))") \
        in line
    assert server.writes == 0
