"""Ctrl-C at any moment of a real ``netlock`` process: exit 130 within seconds, one line on
stderr, no traceback, no worker process left behind.

The terminal sends SIGINT to the whole foreground process group, so the tests start each
command in its own group and signal the group.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = str(ROOT / "configs" / "micro-exclusive.yaml")
EXIT_WITHIN_S = 5.0


def _netlock() -> list[str]:
    script = Path(sys.executable).parent / "netlock"
    return [str(script)] if script.exists() else [shutil.which("netlock") or "netlock"]


def _interrupt(args: list[str], after_s: float, cwd: Path,
               workers: int = 0) -> tuple[int, str, float, list[int]]:
    """Run ``netlock args``, wait ``after_s`` and until it has ``workers`` child processes,
    send SIGINT to its process group; its exit code, stderr, seconds to exit after the signal,
    and its descendants still alive afterwards."""
    proc = subprocess.Popen([*_netlock(), *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        time.sleep(after_s)
        children = psutil.Process(proc.pid).children(recursive=True)
        while len(children) < workers and time.monotonic() < deadline:
            time.sleep(0.2)
            children = psutil.Process(proc.pid).children(recursive=True)
        assert len(children) >= workers, "the workers never started"
        time.sleep(0.5 if workers else 0.0)
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    alive = []
    for child in children:
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.append(child.pid)
                child.kill()
        except psutil.NoSuchProcess:
            pass
    return proc.returncode, err.decode(errors="replace"), took, alive


def _assert_clean_interrupt(code: int, err: str, took: float, alive: list[int]) -> None:
    assert "Traceback" not in err, err
    assert code == 130, err
    assert [line for line in err.splitlines() if line.strip()] == ["netlock: interrupted"], err
    assert took < EXIT_WITHIN_S, f"{took:.1f} s to exit"
    assert alive == []


def _interrupt_check(after_s: float, cwd: Path) -> tuple[int, str, float, list[int]]:
    """:func:`_interrupt` of ``config check``; a run that finished before the signal (exit
    0: the shared machine was faster than when ``check_s`` was measured) says nothing
    about interrupts, so it is retried with half the delay."""
    for _ in range(4):
        outcome = _interrupt(["config", "check", CONFIG], after_s, cwd)
        if outcome[0] != 0:
            return outcome
        after_s /= 2
    return outcome


@pytest.fixture(scope="module")
def check_s() -> float:
    """How long an uninterrupted ``netlock config check`` takes on this machine (s)."""
    runs = []
    for _ in range(3):
        start = time.monotonic()
        subprocess.run([*_netlock(), "config", "check", CONFIG], capture_output=True,
                       check=True)
        runs.append(time.monotonic() - start)
    return min(runs)


@pytest.fixture(scope="module")
def start_s() -> float:
    """How long the interpreter takes to start and import the console script's module (s):
    a Ctrl-C before then is Python's own (a KeyboardInterrupt traceback), before any code
    of the project runs."""
    runs = []
    for _ in range(3):
        start = time.monotonic()
        subprocess.run([sys.executable, "-c", "import netlock.cli"], check=True)
        runs.append(time.monotonic() - start)
    return min(runs)


def _at(share: float, start_s: float, check_s: float) -> float:
    """The moment ``share`` of the way through the command's own part of ``config check``."""
    return start_s + share * max(check_s - start_s, 0.0)


@pytest.mark.parametrize("share", [0.25, 0.35, 0.45])
def test_interrupt_while_importing(tmp_path, start_s, check_s, share):
    """Most of ``config check``'s time is imports; machines differ 4-6x, so the interrupt
    lands at a share of this machine's own run."""
    _assert_clean_interrupt(*_interrupt_check(_at(share, start_s, check_s), tmp_path))


def test_interrupts_in_the_first_half_second_each_say_so_once(tmp_path, start_s, check_s):
    """Spread over the imports and typer's start: a Ctrl-C outside any command's body is
    turned by typer into a bare exit 130; the console script still says why (before: 130
    and an empty stderr for most interrupts between 0.2 and 0.5 s of a 1.3 s run)."""
    for share in (0.1, 0.15, 0.2, 0.3, 0.4, 0.5):
        _assert_clean_interrupt(*_interrupt_check(_at(share, start_s, check_s), tmp_path))


def test_typers_silent_exit_130_is_reported_once(monkeypatch, capsys):
    from netlock import cli
    from netlock.cli import app, interrupt

    def interrupted_in_typer() -> None:
        interrupt._interrupted.set()
        raise SystemExit(interrupt.EXIT_CODE)

    monkeypatch.setattr(app, "run", interrupted_in_typer)
    monkeypatch.setattr(interrupt, "leave_promptly", lambda: None)
    monkeypatch.setattr(interrupt, "_interrupted", type(interrupt._interrupted)())
    monkeypatch.setattr(interrupt, "_reported", type(interrupt._reported)())
    monkeypatch.setattr(interrupt, "install", lambda: None)
    with pytest.raises(SystemExit) as ended:
        cli.main()
    assert ended.value.code == 130
    interrupt.report()
    assert capsys.readouterr().err == "netlock: interrupted\n"


def test_an_interrupt_after_the_work_is_done_leaves_the_result():
    """A Ctrl-C while the interpreter shuts down, after the result was printed, neither
    kills the process by the signal nor turns its status into a failure."""
    proc = subprocess.Popen([*_netlock(), "config", "check", CONFIG], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, bufsize=0)
    first = proc.stdout.readline()
    for _ in range(20):
        time.sleep(0.005)
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            break
    out, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 130), (proc.returncode, err)
    assert "Traceback" not in err.decode()
    if proc.returncode == 0:
        assert b"workload:" in first + out


def test_interrupt_a_simulation(tmp_path):
    args = ["sim", CONFIG, "--engine", "simpy", "--set", "sim.duration_s=100", "--json"]
    _assert_clean_interrupt(*_interrupt(args, 4.0, tmp_path))


def test_interrupt_a_sweep_ends_its_workers(tmp_path):
    """Points far longer than the test: without ending its workers the sweep would wait for
    them (minutes), and without ignoring Ctrl-C in them they would print tracebacks."""
    args = ["sweep", CONFIG, "--grid", "workload.think_time_us=0,10,20,30", "--set",
            "sim.duration_s=100", "--workers", "2", "--engine", "simpy", "--out", "out",
            "--json"]
    _assert_clean_interrupt(*_interrupt(args, 1.0, tmp_path, workers=2))
    assert not (tmp_path / "out" / "results.csv").exists()


def test_an_error_caused_by_the_interrupt_is_the_interrupt(monkeypatch, capsys):
    """Ctrl-C landing in a C callback (numba's compiler) is reported as ignored and the
    caller fails with its own error: that error must still end as an interrupt, and the
    report of the ignored KeyboardInterrupt must not be printed."""
    import threading

    import typer

    from netlock.cli import interrupt
    from netlock.cli.common import guarded

    monkeypatch.setattr(interrupt, "_interrupted", threading.Event())
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    monkeypatch.setattr(signal, "signal", lambda *_: None)

    @guarded
    def compiles() -> None:
        raise RuntimeError("no compiled object yet")

    with pytest.raises(RuntimeError):
        compiles()
    interrupt.install()
    interrupt._interrupted.set()
    with pytest.raises(typer.Exit) as exit_:
        compiles()
    assert exit_.value.exit_code == interrupt.EXIT_CODE
    sys.unraisablehook(SimpleNamespace(exc_type=KeyboardInterrupt,
                                       exc_value=KeyboardInterrupt(), exc_traceback=None,
                                       err_msg="ctypes callback", object=None))
    assert capsys.readouterr().err.strip() == interrupt.MESSAGE
