"""Killing ``netlock autopilot --traffic`` (SIGKILL, or SIGINT: Ctrl-C) at any point: its
pushes are checkpointed and journaled as ``netlock push``'s, so ``push --resume`` (when a
journal is left) and a plain push afterwards end in a verified switch every time, and Ctrl-C
exits 130 (issue 34; on main a kill at journal step 4 left a journal that no push could
finish, a kill after a migration left the old layout in the state file, and Ctrl-C exited 0).

The default run kills one autopilot mid-push and one just after it migrated, and interrupts
one; with ``RUN_SLOW=1`` twenty are killed or interrupted at random points
(``NETLOCK_KILLS`` changes the count).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hwrunner.emulator_state import load_state
from hwrunner.profile import load_profile
from hwrunner.readback import check_layout, read_live
from tests.hwrunner.kills import signal_at_step

NETLOCK = str(Path(sys.executable).parent / "netlock")
SHIFT = 2000


def netlock(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([NETLOCK, *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> Path:
    """A Zipf trace over 4,000 locks, its plan (1,500 slots) pushed to ``base.json``."""
    folder = tmp_path_factory.mktemp("autopilot")
    rng = np.random.default_rng(5)
    n = 15000
    lock = np.minimum(rng.zipf(1.1, n) - 1, 3999)
    t = np.sort(rng.uniform(0, 0.03, n))
    hold = rng.uniform(0, 2e-4, n)
    header = "lock_id,mode,t_request,t_release,client_id,txn_id\n"
    (folder / "trace.csv").write_text(header + "".join(
        f"{k},{'X' if i % 2 else 'S'},{a:.6f},{a + h:.6f},{i % 16},{i}\n"
        for i, (k, a, h) in enumerate(zip(lock, t, hold, strict=True))))
    assert netlock("plan", "trace.csv", "--slots", "1500", "--out", "plan.yaml",
                   cwd=folder).returncode == 0
    assert netlock("push", "plan.yaml", "--state", "base.json", cwd=folder).returncode == 0
    return folder


def autopilot(state: str) -> list[str]:
    return [NETLOCK, "autopilot", "plan.yaml", "--state", state, "--traffic", "trace.csv",
            "--shift-locks", str(SHIFT), "--interval", "0.01", "--max-rounds", "3"]


def layout_ids(state: Path) -> list[int]:
    profile = load_profile()
    return sorted(read_live(load_state(state, profile), profile).layout.lock_id.tolist())


def kill_autopilot(folder: Path, n: int, sig: signal.Signals, when: str | int,
                   delay_s: float) -> tuple[int, str, list[int]]:
    """Start autopilot on a copy of the base switch; send ``sig`` when its push journal
    reaches step ``when`` (an int), or it prints ``migrated`` (``"migrated"``), then
    ``delay_s`` more. Returns its exit status, what it printed on stderr, and the
    switch's lock ids at that moment (read from the state file after the kill)."""
    state = folder / f"s{n}.json"
    state.write_bytes((folder / "base.json").read_bytes())
    journal = Path(f"{state}.journal")
    log = folder / f"s{n}.log"
    with log.open("w") as err:
        proc = subprocess.Popen(autopilot(state.name), cwd=folder, stdout=subprocess.DEVNULL,
                                stderr=err)
    code = signal_at_step(proc, journal, when if isinstance(when, int) else None, sig,
                          delay_s, 300, lambda: when == "migrated" and "migrated" in
                          log.read_text())
    return code, log.read_text(), layout_ids(state)


def finish(folder: Path, n: int) -> str:
    """``push --resume`` when a journal is left, then a plain push of the base plan: both
    verified, and the switch reads back as it says."""
    state = folder / f"s{n}.json"
    how = "none"
    if Path(f"{state}.journal").exists():
        resumed = netlock("push", "--resume", "--state", state.name, "--json", cwd=folder)
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads(resumed.stdout)["verified"] is True
        how = "resume"
    assert not Path(f"{state}.journal").exists()
    profile = load_profile()
    switch = load_state(state, profile)
    assert check_layout(switch, profile, read_live(switch, profile).layout) == []
    again = netlock("push", "plan.yaml", "--state", state.name, "--json", cwd=folder)
    assert again.returncode == 0 and json.loads(again.stdout)["verified"] is True, again.stderr
    return how


def test_autopilot_killed_mid_push_or_after_it_ends_verified(setup: Path):
    base = layout_ids(setup / "base.json")
    code, _, _ = kill_autopilot(setup, 0, signal.SIGKILL, 4, 0.0)
    assert code == -signal.SIGKILL
    assert finish(setup, 0) == "resume"
    code, said, after = kill_autopilot(setup, 1, signal.SIGKILL, "migrated", 0.0)
    assert code == -signal.SIGKILL and "migrated" in said
    assert after != base, "the migration it reported is in the state file"
    finish(setup, 1)


def test_ctrl_c_stops_autopilot_with_130(setup: Path):
    code, said, _ = kill_autopilot(setup, 2, signal.SIGINT, 2, 0.0)
    assert code == 130, said
    finish(setup, 2)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("RUN_SLOW"), reason="set RUN_SLOW=1 for 20 killed "
                    "autopilots (about 10 minutes)")
def test_many_killed_autopilots_end_verified(setup: Path):
    count = int(os.environ.get("NETLOCK_KILLS", "20"))
    rng = np.random.default_rng(count)
    outcomes = []
    for n in range(count):
        sig = signal.SIGKILL if n % 2 == 0 else signal.SIGINT
        when: str | int = "migrated" if n % 5 == 4 else int(rng.integers(0, 11))
        delay = float(rng.uniform(0, 0.2))
        code, said, _ = kill_autopilot(setup, 10 + n, sig, when, delay)
        assert code in (-signal.SIGKILL, 130, 0), (code, said[-500:])
        how = finish(setup, 10 + n)
        outcomes.append(f"{sig.name} at {when} + {delay:.2f} s: exit {code}, then {how}")
    print("\n".join(outcomes))
    assert len(outcomes) == count
