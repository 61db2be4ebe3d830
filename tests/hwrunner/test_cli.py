"""``netlock push`` and ``netlock stats`` against the emulated switch, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from hwrunner.emulator_state import load_state, save_state
from hwrunner.profile import load_profile
from hwrunner.push import push
from hwrunner.readback import read_live
from netlock.cli.app import app
from netlock.errors import TargetError
from netlock.plan import PartitionRange
from netlock.plan_io import save_plan
from tests.hwrunner.flaky import Flaky, table_is
from tests.hwrunner.plans import make_plan

PUSH_KEYS = {"target", "profile", "operations", "verified", "migrated_locks", "wall_s"}


@pytest.fixture
def plans(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    save_plan(make_plan([(10, 2), (11, 3), (12, 1)]), a)
    save_plan(make_plan({10: (0, 1), 12: (2, 5), 13: (6, 6)}), b)
    return a, b


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_json(result) -> dict:
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, result.stdout
    return json.loads(lines[0])


def test_push_then_push_again_sends_nothing(plans, tmp_path: Path):
    a, b = plans
    state = tmp_path / "switch.json"
    first = run("push", a, "--target", "emulator", "--state", state, "--profile",
                "netlock-public", "--json")
    assert first.exit_code == 0, first.output
    doc = one_json(first)
    assert set(doc) == PUSH_KEYS
    assert doc["target"] == "emulator" and doc["verified"] is True
    assert doc["operations"] == 25 and doc["migrated_locks"] == 3
    assert "installed" in first.stderr
    moved = one_json(run("push", b, "--state", state, "--json"))
    assert moved["migrated_locks"] == 3 and moved["verified"]
    same = one_json(run("push", b, "--state", state, "--json"))
    assert same["operations"] == 0 and same["migrated_locks"] == 0 and same["verified"]
    public = load_profile("netlock-public")
    layout = read_live(load_state(state, public), public).layout
    assert layout.lock_id.tolist() == [10, 12, 13]


def test_dry_run_prints_and_sends_nothing(plans, tmp_path: Path):
    a, _ = plans
    state = tmp_path / "switch.json"
    result = run("push", a, "--state", state, "--dry-run", "--rows", "1", "--profile",
                 "netlock-public")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "step 3 install: 21 operations in 7 batches (3 locks)" in text
    assert "add check_lock_exist_table[nlk_hdr.lock=10] check_lock_exist_action(index=1)" in text
    assert "dry run: nothing sent" in text
    assert not state.exists()
    doc = one_json(run("push", a, "--dry-run", "--json", "--profile", "netlock-public"))
    assert doc["dry_run"] is True and doc["operations"] == 25


def test_stats_reads_counters_back(plans, tmp_path: Path):
    a, _ = plans
    state = tmp_path / "switch.json"
    assert run("push", a, "--state", state, "--profile", "netlock-stats").exit_code == 0
    out = tmp_path / "stats.parquet"
    result = run("stats", "--state", state, "--profile", "netlock-stats", "--json",
                 "--window-s", "2", "--out", out)
    assert result.exit_code == 0, result.output
    doc = one_json(result)
    assert doc["locks"] == 3 and doc["requests"] == 0 and doc["total_rps"] == 0.0
    frame = pd.read_parquet(out)
    assert frame["lock_id"].tolist() == [10, 11, 12]
    assert frame["slots"].tolist() == [2, 3, 1]
    frame.to_csv(tmp_path / "stats.csv", index=False)
    for table in (out, tmp_path / "stats.csv"):
        planned = run("plan", table, "--slots", "10", "--out", tmp_path / "p.yaml")
        assert planned.exit_code == 2, planned.output
        assert f"{table}: a per-lock counter table (netlock stats --out), not a trace" \
            in planned.stderr and "autopilot re-plans" in planned.stderr
        assert len(planned.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "p.yaml").exists()


@pytest.mark.parametrize("how", ["resume", "plain push"])
def test_resume_after_a_crash(plans, tmp_path: Path, how):
    a, b = plans
    state = tmp_path / "switch.json"
    assert run("push", a, "--state", state).exit_code == 0
    profile = load_profile()
    switch = load_state(state, profile)
    from netlock.plan_io import load_plan

    flaky = Flaky(switch, fail=table_is("left_bound_register"), times=9)
    with pytest.raises(TargetError, match="--resume"):
        push(flaky, profile, load_plan(b), journal_path=Path(f"{state}.journal"))
    save_state(switch, state)
    if how == "resume":
        resumed = run("push", "--resume", "--state", state, "--json")
        assert "finished forward" in resumed.stderr
    else:
        resumed = run("push", b, "--state", state, "--json")
        assert "finished the interrupted push" in resumed.stderr
    assert resumed.exit_code == 0, resumed.output
    assert one_json(resumed)["verified"]
    assert not Path(f"{state}.journal").exists()


@pytest.mark.parametrize(("args", "message"), [
    (("push", "missing.yaml"), "missing.yaml: cannot read"),
    (("push", "--resume"), "nothing to resume"),
    (("push",), "give a PLAN, or --resume"),
    (("push", "PLAN", "--target", "grpc://127.0.0.1:50052"), "bfrt_grpc"),
    (("push", "PLAN", "--target", "tofino"), "expected 'emulator' or grpc://HOST:PORT"),
    (("push", "PLAN", "--profile", "nope"), "cannot read switch profile"),
    (("stats", "--out", "x.txt"), "expected a .parquet or .csv file"),
])
def test_errors_are_one_line_and_exit_2(plans, monkeypatch, args, message):
    import sys

    monkeypatch.setitem(sys.modules, "bfrt_grpc", None)
    monkeypatch.delenv("SDE_INSTALL", raising=False)
    args = tuple(str(plans[0]) if x == "PLAN" else x for x in args)
    result = run(*args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("netlock: error: ")
    assert result.stdout == ""


def test_state_from_another_profile_is_refused(plans, tmp_path: Path):
    state = tmp_path / "switch.json"
    assert run("push", plans[0], "--state", state, "--profile", "netlock-public").exit_code == 0
    result = run("stats", "--state", state, "--profile", "netlock-stats")
    assert result.exit_code == 2
    assert "saved with switch profile 'netlock-public', not 'netlock-stats'" in result.stderr


def test_one_default_profile_counts_requests_and_a_program_without_counters_says_so(
        plans, tmp_path: Path):
    """push, stats and autopilot share one default profile (with the counters); stats of a
    program without them says what is missing and how to get it, and writes no sentinel."""
    counting, plain = tmp_path / "counting.json", tmp_path / "plain.json"
    assert run("push", plans[0], "--state", counting).exit_code == 0
    doc = one_json(run("stats", "--state", counting, "--window-s", "1", "--json"))
    assert doc["requests"] == 0 and doc["total_rps"] == 0.0
    assert run("autopilot", plans[0], "--state", counting, "--interval", "0.001",
               "--max-rounds", "1").exit_code == 0
    assert run("push", plans[0], "--state", plain, "--profile", "netlock-public").exit_code == 0
    doc = one_json(run("stats", "--state", plain, "--window-s", "1", "--json"))
    assert doc["requests"] is None and doc["total_rps"] is None
    text = run("stats", "--state", plain, "--window-s", "1").stdout
    assert "None" not in text
    assert "requests: not counted (profile netlock-public: the program has no per-lock " \
           "request counter, such as table lock_acq_counter_register (profile netlock-stats))" \
        in text
    assert doc["profile"] == "netlock-public" and doc["tenant_requests"] == {}
    out = tmp_path / "stats.csv"
    assert run("stats", "--state", plain, "--out", out).exit_code == 0
    frame = pd.read_csv(out)
    assert len(frame) == 3 and frame["requests"].isna().all()


def test_a_plan_for_another_geometry_is_refused(plans, tmp_path: Path):
    state = tmp_path / "switch.json"
    assert run("push", plans[0], "--state", state).exit_code == 0
    other = tmp_path / "other.yaml"
    save_plan(make_plan([(1, 1)], total_slots=32), other)
    result = run("push", other, "--state", state)
    assert result.exit_code == 2 and "the plan was made for" in result.stderr


@pytest.mark.parametrize("command", ["push", "stats", "traffic", "autopilot"])
def test_help_has_examples(command):
    result = run(command, "--help")
    assert result.exit_code == 0
    assert "Examples" in result.stdout and f"netlock {command} " in result.stdout


def test_autopilot_keeps_a_quiet_switch_and_admits_what_the_servers_report(plans, tmp_path):
    a, _ = plans
    state = tmp_path / "switch.json"
    assert run("push", a, "--state", state, "--profile", "netlock-stats").exit_code == 0
    quiet = run("autopilot", a, "--state", state, "--interval", "0.001", "--max-rounds", "2",
                "--json")
    assert quiet.exit_code == 0, quiet.output
    doc = one_json(quiet)
    assert doc["rounds"] == 2 and doc["migrations"] == 0 and doc["verified"]
    assert [r["migrated"] for r in doc["history"]] == [False, False]
    counters = tmp_path / "servers.csv"
    counters.write_text("lock_id,requests,peak_occupancy\n50,100,2\n")
    saved = tmp_path / "current.yaml"
    busy = run("autopilot", a, "--state", state, "--interval", "0.001", "--max-rounds", "3",
               "--server-counters", counters, "--save-plan", saved, "--json")
    assert busy.exit_code == 0, busy.output
    doc = one_json(busy)
    assert [r["migrated"] for r in doc["history"]] == [False, True, False], \
        "a candidate is pushed once the next round's counters confirm it"
    assert "round 2:" in busy.stderr and "migrated 1 locks" in busy.stderr
    profile = load_profile("netlock-stats")
    assert 50 in read_live(load_state(state, profile), profile).layout.lock_id.tolist()
    from netlock.plan_io import load_plan

    assert 50 in load_plan(saved).entries.lock_id.tolist()


@pytest.mark.parametrize(("args", "message"), [
    (("--profile", "netlock-public"), "keeps no per-lock request and peak-occupancy counters"),
    (("--interval", "0"), "--interval: must be > 0 s, got 0.0"),
    (("--server-counters", "COUNTERS"), "column peak_occupancy: missing"),
])
def test_autopilot_errors_are_one_line(plans, tmp_path, args, message):
    counters = tmp_path / "servers.csv"
    counters.write_text("lock_id,requests\n1,2\n")
    args = tuple(str(counters) if x == "COUNTERS" else x for x in args)
    state = tmp_path / "switch.json"
    result = run("autopilot", plans[0], "--state", state, "--interval", "0.001",
                 "--max-rounds", "1", *args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_a_new_partition_needs_servers_idle(tmp_path):
    a, c = tmp_path / "a.yaml", tmp_path / "c.yaml"
    save_plan(make_plan([(10, 2)]), a)
    save_plan(make_plan([(10, 2)], partition=(PartitionRange(0, 99, 0),
                                              PartitionRange(100, 999, 1))), c)
    state = tmp_path / "switch.json"
    assert run("push", a, "--state", state).exit_code == 0
    refused = run("push", c, "--state", state)
    assert refused.exit_code == 2
    assert "moves locks 100..4294967295 from lock server 0 to 1" in refused.stderr
    assert run("push", c, "--state", state, "--servers-idle").exit_code == 0


def test_an_emulated_bfrt_program_says_which_profile_it_matches(plans, tmp_path: Path):
    """The emulator keeps its default profile; a --bfrt program without the counters is
    refused in one line naming the missing table once and the shipped profile that fits."""
    from tests.hwrunner.bfrt_program import SMALL, netlock_bfrt

    bfrt = tmp_path / "public.json"
    bfrt.write_text(json.dumps(netlock_bfrt(sizes=SMALL)))
    refused = run("push", plans[0], "--bfrt", bfrt, "--dry-run")
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == (f"netlock: error: {bfrt}: table 'lock_acq_counter_register': not "
                              f"found (profile netlock-stats); the program matches the shipped "
                              f"profile netlock-public (give --profile netlock-public)\n")
    named = run("push", plans[0], "--bfrt", bfrt, "--profile", "netlock-public", "--dry-run",
                "--json")
    assert named.exit_code == 0 and one_json(named)["profile"] == "netlock-public"
