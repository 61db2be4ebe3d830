"""The microbenchmark's closed loop in C (``closed_loop.c``), compiled at bench time.

The upper reference for the engines' speed: the plain simpy model's rules (:mod:`sim.baseline`)
on a binary heap, three events a request, nothing else (no leases, loss, jitter, switch or
recording). It is compiled with the machine's C compiler (``$CC``, else ``cc`` or ``gcc``,
``-O2``) into a temporary directory; without a compiler the reference is skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "closed_loop.c"


@dataclass(frozen=True)
class NativeRun:
    """One run: granted requests, events handled, and the loop's wall-clock seconds."""

    granted: int
    events: int
    loop_s: float

    @property
    def rate(self) -> float:
        """Granted requests per wall-clock second of the loop."""
        return self.granted / self.loop_s


def compiler() -> str | None:
    """The C compiler to use, or None when the machine has none."""
    for name in (os.environ.get("CC"), "cc", "gcc"):
        if name and shutil.which(name):
            return name
    return None


class NativeLoop:
    """The compiled reference, in a temporary directory removed by :meth:`close`."""

    def __init__(self, cc: str) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="netlock-native-")
        self.binary = Path(self._dir.name) / "closed_loop"
        subprocess.run([cc, "-O2", "-o", str(self.binary), str(SOURCE)], check=True,
                       capture_output=True)

    def run(self, clients: int, locks: int, rtt_us: float, duration_us: float,
            seed: int = 1) -> NativeRun:
        out = subprocess.run([str(self.binary), str(clients), str(locks), repr(rtt_us),
                              repr(duration_us), str(seed)], check=True, capture_output=True,
                             text=True).stdout.split()
        return NativeRun(granted=int(out[0]), events=int(out[1]), loop_s=float(out[2]))

    def close(self) -> None:
        self._dir.cleanup()
