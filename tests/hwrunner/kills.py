"""Killing a running ``netlock push`` or ``autopilot`` at a chosen point of its push
journal, for the crash-safety tests."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def signal_at_step(proc: subprocess.Popen, journal: Path, step: int | None, sig: int,
                   delay_s: float, timeout_s: float,
                   reached: Callable[[], bool] = lambda: False) -> int:
    """Wait until ``journal`` records ``step`` (None: only ``reached()``), ``reached()``
    says so, ``proc`` ends or ``timeout_s`` passes; then ``delay_s`` more, send ``sig`` if
    ``proc`` still runs, and return its exit status."""
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None and time.monotonic() < deadline and not reached():
        if step is not None:
            try:
                if json.loads(journal.read_text())["step"] >= step:
                    break
            except (OSError, ValueError, KeyError):
                pass
        time.sleep(0.001)
    time.sleep(delay_s)
    if proc.poll() is None:
        proc.send_signal(sig)
    return proc.wait(timeout=timeout_s)
