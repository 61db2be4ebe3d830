"""Switch state and plan files that cannot lie (issue 34): one writer at a time, damaged or
inflated state files refused, plans as one unit, no paths taken from file contents, outputs
that never overwrite inputs."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from hwrunner.emulator_state import load_state, save_state
from hwrunner.profile import load_profile
from hwrunner.readback import check_layout, read_live
from hwrunner.statelock import exclusive
from hwrunner.targets import push_plan
from netlock.cli.app import app
from netlock.errors import PlanError, TargetError
from netlock.plan_io import INLINE_ROWS, load_plan, save_plan
from tests.hwrunner.plans import make_plan

NETLOCK = str(Path(sys.executable).parent / "netlock")


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def big_plan(first: int, locks: int = 20000, seed: int = 0):
    rng = np.random.default_rng(seed)
    return make_plan([(first + i, int(s)) for i, s in enumerate(rng.integers(1, 3, locks))],
                     total_slots=2 * 30000)


def test_a_second_push_to_a_state_file_in_use_is_refused_naming_the_holder(tmp_path: Path):
    """Two pushes of different plans to one state file: the one that starts while the other
    runs is refused (exit 2, naming it); with --wait it runs afterwards. Never both verified
    over each other (on main both exited 0 and the file held one plan)."""
    a, b = big_plan(0), big_plan(10000, seed=1)
    a_file, b_file, state = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "s.json"
    save_plan(a, a_file)
    save_plan(b, b_file)
    push_plan(a, state=state)
    journal = Path(f"{state}.journal")
    first = subprocess.Popen([NETLOCK, "push", str(b_file), "--state", str(state)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not journal.exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    assert first.poll() is None, "the first push must still be running"
    second = run("push", a_file, "--state", state)
    assert first.wait(timeout=300) == 0, first.stderr.read()
    assert second.exit_code == 2, second.output
    line = second.stderr.strip()
    assert "\n" not in line and f"pid {first.pid} (netlock push" in line and "--wait" in line
    assert holds(state, b)

    third = subprocess.Popen([NETLOCK, "push", str(a_file), "--state", str(state)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not journal.exists() and third.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    waited = run("push", b_file, "--state", state, "--wait", "--json")
    assert third.wait(timeout=300) == 0
    assert waited.exit_code == 0 and json.loads(waited.stdout)["verified"], waited.output
    assert holds(state, b)


def holds(state: Path, plan) -> bool:
    """The saved switch holds exactly ``plan``'s locks and reads back as it says."""
    profile = load_profile()
    switch = load_state(state, profile)
    live = read_live(switch, profile).layout
    return (sorted(live.lock_id.tolist()) == sorted(plan.entries.lock_id.tolist())
            and check_layout(switch, profile, live) == [])


@pytest.mark.parametrize("args", [
    ("traffic", "TRACE", "--state", "STATE"),
    ("stats", "--state", "STATE", "--reset"),
    ("push", "PLAN", "--state", "STATE"),
    ("push", "--resume", "--state", "STATE"),
    ("autopilot", "PLAN", "--state", "STATE", "--interval", "0.001", "--max-rounds", "1"),
])
def test_every_writer_of_a_state_file_refuses_while_another_holds_it(tmp_path: Path, args):
    """(On main a traffic replay during a push was lost, and concurrent traffic runs lost one
    run's counters.)"""
    plan, state, trace = tmp_path / "p.yaml", tmp_path / "s.json", tmp_path / "t.csv"
    save_plan(make_plan([(0, 2), (1, 1)]), plan)
    trace.write_text("lock_id,mode,t_request,t_release,client_id,txn_id\n0,X,0,0.001,0,0\n")
    assert run("push", plan, "--state", state).exit_code == 0
    before = state.read_bytes()
    real = {"TRACE": trace, "STATE": state, "PLAN": plan}
    with exclusive(state, "netlock push elsewhere.yaml"):
        result = run(*(real.get(a, a) for a in args))
    assert result.exit_code == 2, result.output
    assert "in use by pid" in result.stderr and "(netlock push elsewhere.yaml)" in result.stderr
    assert state.read_bytes() == before
    assert run("stats", "--state", state).exit_code == 0, "readers do not need the lock"


def _state_doc(state: Path) -> dict:
    return json.loads(state.read_text())


def _encode(arr: np.ndarray) -> dict:
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    return {"shape": list(arr.shape),
            "zlib": base64.b64encode(zlib.compress(arr.tobytes())).decode()}


def _write(state: Path, doc: dict, checksum: bool) -> None:
    """``checksum``: a matching one (as a bug in the saver would write); else the stale one."""
    if checksum:
        doc = {k: v for k, v in doc.items() if k != "sha256"}
        text = json.dumps(doc, separators=(",", ":"), sort_keys=True)
        doc["sha256"] = hashlib.sha256(text.encode()).hexdigest()
    state.write_text(json.dumps(doc))


@pytest.fixture
def pushed(tmp_path: Path) -> Path:
    state = tmp_path / "s.json"
    plan = tmp_path / "p.yaml"
    save_plan(make_plan([(i, 2) for i in range(20)]), plan)
    assert run("push", plan, "--state", state).exit_code == 0
    return state


def test_a_damaged_data_plane_lock_table_is_not_verified(pushed: Path):
    """The data plane's lock table wiped (the switch would grant nothing): refused on load
    with one line, with or without a matching checksum. On main stats and push passed it and
    push said "unchanged, verified"."""
    doc = _state_doc(pushed)
    locks = load_state(pushed, load_profile()).dataplane.snapshot()["locks"]
    locks[:, 0] = -1
    doc["dataplane"]["locks"] = _encode(locks)
    for checksum, says in ((False, "do not match its sha256"),
                           (True, "the data plane and the lock table disagree")):
        _write(pushed, doc, checksum)
        for args in (("stats", "--state", pushed),
                     ("push", pushed.with_name("p.yaml"), "--state", pushed)):
            result = run(*args)
            assert result.exit_code == 2, result.output
            assert says in result.stderr and result.stderr.count("\n") == 1, result.stderr


def test_verification_reads_the_lock_table_the_data_plane_serves(pushed: Path):
    profile = load_profile()
    switch = load_state(pushed, profile)
    layout = read_live(switch, profile).layout
    assert check_layout(switch, profile, layout) == []
    row = switch.dataplane.lock_index(3)
    switch.dataplane.locks[row, 0] = 999
    switch.dataplane.restore(switch.dataplane.snapshot())
    problems = check_layout(switch, profile, layout)
    assert problems and "missing [3]" in problems[0], problems
    assert switch.dataplane_problems()


def test_an_inflated_register_is_refused_without_inflating_it(pushed: Path):
    doc = _state_doc(pushed)
    fields = next(iter(doc["registers"].values()))
    field = next(iter(fields))
    shape = fields[field]["shape"]
    bomb = zlib.compressobj()
    chunks = [bomb.compress(bytes(1 << 20)) for _ in range(64)] + [bomb.flush()]
    fields[field] = {"shape": shape, "zlib": base64.b64encode(b"".join(chunks)).decode()}
    _write(pushed, doc, checksum=True)
    result = run("stats", "--state", pushed)
    assert result.exit_code == 2 and "does not inflate to its shape" in result.stderr
    fields[field] = {"shape": [1 << 40], "zlib": fields[field]["zlib"]}
    _write(pushed, doc, checksum=True)
    result = run("stats", "--state", pushed)
    assert result.exit_code == 2 and "more than the" in result.stderr, result.stderr


@pytest.mark.parametrize("name", ["/dev/zero", "../../../../dev/zero", "/etc/shadow",
                                  "FIFO"])
def test_a_state_file_names_a_profile_never_a_path(pushed: Path, name: str):
    """On main the saved "profile" was opened as a path: /dev/zero read without end, a FIFO
    hung, /etc/shadow was read."""
    if name == "FIFO":
        fifo = pushed.with_name("fifo.yaml")
        os.mkfifo(fifo)
        name = str(fifo)
    doc = _state_doc(pushed)
    doc["profile"] = name
    _write(pushed, doc, checksum=True)
    result = subprocess.run([NETLOCK, "stats", "--state", str(pushed)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert "not a shipped profile" in result.stderr and result.stderr.count("\n") == 1


def test_a_custom_profile_name_is_kept_but_not_followed(tmp_path: Path):
    custom = tmp_path / "mine.yaml"
    text = (Path(load_profile().source).read_text()
            .replace("name: netlock-stats", "name: ../../x"))
    custom.write_text(text)
    plan, state = tmp_path / "p.yaml", tmp_path / "s.json"
    save_plan(make_plan([(0, 1)]), plan)
    assert run("push", plan, "--state", state, "--profile", custom).exit_code == 0
    refused = run("stats", "--state", state)
    assert refused.exit_code == 2 and "name its file with --profile" in refused.stderr
    assert run("stats", "--state", state, "--profile", custom).exit_code == 0


def _large(first: int):
    return make_plan([(first + i, 1) for i in range(INLINE_ROWS + 5)],
                     total_slots=2 * INLINE_ROWS + 10)


def test_plans_with_one_stem_do_not_share_a_side_file(tmp_path: Path):
    """On main p.yaml and p.yml shared p.entries.parquet: saving p.yml changed p.yaml."""
    a, b = _large(0), _large(5000)
    save_plan(a, tmp_path / "p.yaml")
    save_plan(b, tmp_path / "p.yml")
    assert (tmp_path / "p.yaml.entries.parquet").exists()
    assert load_plan(tmp_path / "p.yaml").entries.lock_id.tolist() == a.entries.lock_id.tolist()
    assert load_plan(tmp_path / "p.yml").entries.lock_id.tolist() == b.entries.lock_id.tolist()


def test_a_side_file_replaced_since_is_refused(tmp_path: Path):
    save_plan(_large(0), tmp_path / "p.yaml")
    save_plan(_large(5000), tmp_path / "q.yaml")
    (tmp_path / "q.yaml.entries.parquet").replace(tmp_path / "p.yaml.entries.parquet")
    with pytest.raises(PlanError, match="not the side file this plan was saved with"):
        load_plan(tmp_path / "p.yaml")


@pytest.mark.parametrize("name", ["/etc/x.parquet", "../x.parquet", "sub/x.parquet", ".."])
def test_entries_file_is_a_name_beside_the_plan(tmp_path: Path, name: str):
    plan = tmp_path / "in" / "p.yaml"
    save_plan(_large(0), plan)
    outside = tmp_path / "x.parquet"
    pd.DataFrame({"lock_id": [1], "slots": [1], "left": [0], "right": [0]}).to_parquet(outside)
    doc = plan.read_text().splitlines()
    doc = [f"entries_file: '{name}'" if line.startswith("entries_file") else line
           for line in doc if not line.startswith("entries_sha256")]
    plan.write_text("\n".join(doc))
    with pytest.raises(PlanError, match="not a file name beside the plan"):
        load_plan(plan)


def test_a_plan_saved_before_the_hash_still_loads(tmp_path: Path):
    plan = tmp_path / "old.yaml"
    save_plan(_large(0), plan)
    (tmp_path / "old.yaml.entries.parquet").rename(tmp_path / "old.entries.parquet")
    plan.write_text("\n".join("entries_file: old.entries.parquet"
                              if line.startswith("entries_file") else line
                              for line in plan.read_text().splitlines()
                              if not line.startswith("entries_sha256")))
    assert len(load_plan(plan).entries) == INLINE_ROWS + 5


@pytest.mark.parametrize("args", [
    ("plan", "T", "--slots", "4", "--out", "T"),
    ("plan", "T", "--slots", "4", "--out", "P", "--plot", "T"),
    ("autopilot", "P", "--state", "S", "--save-plan", "P", "--max-rounds", "1"),
    ("push", "P", "--state", "P"),
])
def test_no_output_path_equals_an_input(tmp_path: Path, args):
    """On main `netlock plan good.csv --out good.csv` exited 0 and overwrote its trace."""
    trace, plan, state = tmp_path / "good.csv", tmp_path / "p.yaml", tmp_path / "s.json"
    trace.write_text("lock_id,mode,t_request,t_release,client_id,txn_id\n0,X,0,0.001,0,0\n")
    save_plan(make_plan([(0, 1)]), plan)
    before = {p: p.read_bytes() for p in (trace, plan)}
    names = {"T": trace, "P": plan, "S": state}
    result = run(*(names.get(a, a) for a in args))
    assert result.exit_code == 2, result.output
    assert "is the input" in result.stderr and result.stderr.count("\n") == 1
    assert {p: p.read_bytes() for p in (trace, plan)} == before


def test_a_state_file_saved_and_loaded_round_trips(pushed: Path):
    profile = load_profile()
    switch = load_state(pushed, profile)
    save_state(switch, pushed)
    assert "sha256" in _state_doc(pushed)
    assert check_layout(load_state(pushed, profile), profile,
                        read_live(switch, profile).layout) == []
    with pytest.raises(TargetError, match="sha256"):
        doc = _state_doc(pushed)
        doc["window_s"] = 12.5
        pushed.write_text(json.dumps(doc))
        load_state(pushed, profile)
