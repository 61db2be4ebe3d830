"""``netlock traffic`` and ``autopilot --traffic``: workloads replayed into the emulated switch
as NetLock packets, so that its counters hold real r_i / c_i and the closed loop acts on them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from hwrunner import packet_replay as replay_module
from hwrunner.emulator import EmulatedSwitch
from hwrunner.packet_replay import Replay, Requests
from hwrunner.profile import load_profile
from hwrunner.push import push
from hwrunner.stats import read_stats
from netlock.cli.app import app
from netlock.plan_io import save_plan
from tests.hwrunner.plans import make_plan


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_json(result) -> dict:
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, result.stdout
    return json.loads(lines[0])


def zipf_requests(n: int, locks: int, seed: int, shift: int = 0) -> Requests:
    rng = np.random.default_rng(seed)
    lock = (np.minimum(rng.zipf(1.3, n) - 1, locks - 1) + shift) % locks
    t = np.sort(rng.uniform(0, 0.01, n))
    return Requests.of(lock, rng.integers(0, 2, n), t, t + rng.uniform(0, 2e-4, n))


def test_every_request_is_granted_and_released_and_counted_where_it_was_served(monkeypatch):
    profile = load_profile("netlock-stats")
    plan = make_plan([(0, 4), (1, 3), (2, 2), (3, 1)])
    switch = EmulatedSwitch(profile, plan.geometry)
    assert push(switch, profile, plan).verified
    decoded = []
    real = replay_module.decode_request
    monkeypatch.setattr(replay_module, "decode_request",
                        lambda data: decoded.append(len(data)) or real(data))
    reqs = zipf_requests(3000, 50, seed=1)
    replay = Replay(switch, reqs, servers=2)
    replay.run_until(reqs.span_us)
    replay.finish()
    c = replay.counts
    assert c.acquires == c.released == 3000 and c.dropped == 0 and replay.waiting == 0
    assert c.granted_by_switch + c.granted_by_servers == 3000 and c.granted_by_switch > 0
    assert len(decoded) == c.packets >= 6000 and set(decoded) == {40}, "wire format headers"
    stats = read_stats(switch, profile)
    expected = np.bincount(reqs.lock_id, minlength=50)
    assert stats["requests"].tolist() == expected[stats["lock_id"]].tolist()
    assert (stats["contention"] >= 1).all() and stats["occupancy"].sum() == 0
    served = replay.server_counters()
    assert not np.isin(served["lock_id"], [0, 1, 2, 3]).any()
    assert served["requests"].sum() + stats["requests"].sum() == 3000


def test_traffic_then_stats_then_autopilot_on_a_moved_hot_set(tmp_path: Path):
    trace = tmp_path / "trace.csv"
    reqs = zipf_requests(6000, 400, seed=2)
    t = reqs.t_us / 1e6
    trace.write_text("lock_id,mode,t_request,t_release,client_id,txn_id\n" + "".join(
        f"{lk},{'X' if m else 'S'},{a:.6f},{a + h / 1e6:.6f},{i % 16},{i}\n"
        for i, (lk, m, a, h) in enumerate(zip(reqs.lock_id, reqs.mode, t, reqs.hold_us,
                                              strict=True))))
    plan, state = tmp_path / "plan.yaml", tmp_path / "switch.json"
    assert run("plan", trace, "--slots", "40", "--out", plan).exit_code == 0
    assert run("push", plan, "--state", state, "--profile", "netlock-stats").exit_code == 0
    replayed = run("traffic", trace, "--state", state, "--json")
    assert replayed.exit_code == 0, replayed.output
    done = one_json(replayed)
    assert done["acquires"] == done["released"] == 6000 and done["dropped"] == 0
    stats = run("stats", "--state", state, "--json")
    assert stats.exit_code == 0, stats.output
    seen = one_json(stats)
    assert seen["window_s"] == done["window_s"], "the window traffic replayed"
    assert seen["requests"] > 0 and seen["total_rps"] == pytest.approx(
        seen["requests"] / done["window_s"]) and seen["max_contention"] >= 1
    pilot = run("autopilot", plan, "--state", state, "--traffic", trace, "--shift-locks", "200",
                "--interval", "0.003", "--max-rounds", "3", "--json")
    assert pilot.exit_code == 0, pilot.output
    doc = one_json(pilot)
    assert doc["migrations"] == 1 and doc["verified"], pilot.stderr
    assert [r["migrated"] for r in doc["history"]].count(True) == 1


def test_autopilot_takes_the_profile_the_switch_was_saved_with(tmp_path: Path):
    plan, state = tmp_path / "plan.yaml", tmp_path / "switch.json"
    save_plan(make_plan([(1, 2)]), plan)
    assert run("push", plan, "--state", state, "--profile", "netlock-public").exit_code == 0
    refused = run("autopilot", plan, "--state", state, "--interval", "0.001", "--max-rounds",
                  "1")
    assert refused.exit_code == 2
    assert "profile netlock-public: the program keeps no per-lock request" in refused.stderr
    assert run("push", plan, "--state", tmp_path / "s2.json", "--profile",
               "netlock-stats").exit_code == 0
    fine = run("autopilot", plan, "--state", tmp_path / "s2.json", "--interval", "0.001",
               "--max-rounds", "1", "--json")
    assert fine.exit_code == 0, fine.output


@pytest.mark.parametrize(("args", "message"), [
    (("traffic", "TRACE", "--state", "nowhere.json"), "no emulated switch there"),
    (("traffic", "missing.csv", "--state", "STATE"), "missing.csv"),
    (("autopilot", "PLAN", "--target", "grpc://127.0.0.1:1", "--traffic", "TRACE"),
     "--traffic: only the emulator target"),
])
def test_traffic_errors_are_one_line(tmp_path: Path, args, message):
    plan, state, trace = tmp_path / "plan.yaml", tmp_path / "switch.json", tmp_path / "t.csv"
    save_plan(make_plan([(1, 2)]), plan)
    assert run("push", plan, "--state", state).exit_code == 0
    trace.write_text("lock_id,mode,t_request,t_release,client_id,txn_id\n1,X,0,0.001,0,0\n")
    names = {"PLAN": plan, "STATE": state, "TRACE": trace}
    result = run(*(names.get(a, a) for a in args))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and result.stdout == ""
