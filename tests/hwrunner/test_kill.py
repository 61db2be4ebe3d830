"""Killing real ``netlock push`` processes during a large live migration on the emulated switch
(SIGKILL, or SIGINT: Ctrl-C) at random moments; ``--resume`` or a plain push then ends in a
verified switch every time.

The default run kills a push of a 7,500-lock migration and interrupts another; with
``RUN_SLOW=1`` twenty pushes of a 45,000-lock one are killed or interrupted (``NETLOCK_KILLS``
changes the count).
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

from hwrunner.compile import compile_migration
from hwrunner.emulator_state import load_state
from hwrunner.profile import load_profile
from hwrunner.readback import check_layout
from hwrunner.switch_contents import diff, layout_for
from netlock.plan import Plan
from netlock.plan_io import save_plan
from tests.hwrunner.kills import signal_at_step
from tests.hwrunner.plans import make_plan

NETLOCK = str(Path(sys.executable).parent / "netlock")


def plans(locks: int, seed: int) -> tuple[Plan, Plan]:
    """A with ``locks`` locks; B keeps half of them (most at new regions), evicts the other
    half and adds as many."""
    rng = np.random.default_rng(seed)
    slots = 2 * locks
    a = make_plan([(i, int(s)) for i, s in zip(range(locks), rng.integers(1, 3, locks),
                                                strict=True)], total_slots=slots)
    b = make_plan([(i, int(s)) for i, s in zip(range(locks // 2, locks // 2 + locks),
                                                rng.integers(1, 3, locks), strict=True)],
                  total_slots=slots)
    return a, b


def netlock(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([NETLOCK, *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def kill_during_push(plan: Path, state: Path, step: int, delay_s: float, sig: int,
                     cwd: Path) -> int:
    """Start ``netlock push PLAN --state STATE``, wait until its journal reaches ``step``, then
    ``delay_s`` more, and send ``sig``; returns the exit status."""
    proc = subprocess.Popen([NETLOCK, "push", str(plan), "--state", str(state)], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return signal_at_step(proc, Path(f"{state}.journal"), step, sig, delay_s, 120)


def kills(tmp_path: Path, locks: int, runs: list[tuple[str, int, float]]) -> list[str]:
    """Each run: push A, start pushing B and send a signal (name) when the push reaches the
    step of the given phase (or, for a number, that step), after a delay; then finish with
    --resume or a plain push and check the switch."""
    a, b = plans(locks, seed=locks)
    a_file, b_file = tmp_path / "a.yaml", tmp_path / "b.yaml"
    save_plan(a, a_file)
    save_plan(b, b_file)
    profile = load_profile()
    live = layout_for(a, profile)
    goal = layout_for(b, profile, live)
    phases = [s.phase for s in compile_migration(profile, diff(live, goal)).steps]
    outcomes = []
    for n, (sig_name, step, delay_s) in enumerate(runs):
        state = tmp_path / f"switch{n}.json"
        assert netlock("push", a_file, "--state", state, cwd=tmp_path).returncode == 0
        sig = signal.Signals[sig_name]
        code = kill_during_push(b_file, state, step, delay_s, sig, tmp_path)
        journal = Path(f"{state}.journal")
        how = ("push", "--resume") if n % 2 == 0 and journal.exists() else ("push", b_file)
        after = netlock(*how, "--state", state, "--json", cwd=tmp_path)
        assert after.returncode == 0, (sig_name, phases[step], code, after.stderr)
        assert json.loads(after.stdout)["verified"] is True
        assert not journal.exists()
        assert check_layout(load_state(state, profile), profile, goal) == []
        outcomes.append(f"{sig_name} at step {step + 1} ({phases[step]}) + {delay_s:.2f} s: "
                        f"exit {code}; {' '.join(map(str, how))}: {after.stderr.strip()[-70:]}")
    return outcomes


def test_killed_pushes_end_verified(tmp_path: Path):
    unmap, install = 2, 5
    outcomes = kills(tmp_path, locks=5000, runs=[("SIGKILL", install, 0.0),
                                                ("SIGINT", unmap, 0.0)])
    assert "(install)" in outcomes[0] and "(unmap)" in outcomes[1], outcomes


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("RUN_SLOW"), reason="set RUN_SLOW=1 for 20 kills of a "
                    "45,000-lock migration (about 4 minutes)")
def test_many_killed_large_migrations_end_verified(tmp_path: Path):
    count = int(os.environ.get("NETLOCK_KILLS", "20"))
    rng = np.random.default_rng(count)
    runs = [("SIGKILL" if n % 2 == 0 else "SIGINT", int(rng.integers(0, 8)),
             float(rng.uniform(0, 0.3))) for n in range(count)]
    outcomes = kills(tmp_path, locks=30000, runs=runs)
    print("\n".join(outcomes))
    assert len(outcomes) == count
