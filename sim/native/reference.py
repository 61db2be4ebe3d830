"""The microbenchmark's closed loop in C (``closed_loop.c``), compiled at bench time.

The reference for the engines' speed: the plain simpy model's rules (:mod:`sim.baseline`)
with the fast engine's hop delays (half the round trip plus clipped normal jitter, FIFO links
per client), three events a request, nothing else (no leases, loss, switch or recording), on
one of two event queues: a binary heap or a calendar queue. Both order events by (time,
sequence), so a run's results (grants, events, the sum of latencies and a checksum of every
grant's client and time) are identical on both; only the loop's CPU time differs. With zero
jitter the loop is the plain simpy model exactly. It is compiled with the machine's C
compiler (``$CC``, else ``cc`` or ``gcc``, ``-O2``) into a temporary directory; without a
compiler the reference is skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "closed_loop.c"


QUEUES = ("heap", "calendar")


@dataclass(frozen=True)
class NativeRun:
    """One run: granted requests, events handled, the loop's CPU seconds, the sum of the
    requests' latencies (us, acquire sent to grant received) and a checksum of every grant's
    client and arrival time in order."""

    granted: int
    events: int
    loop_s: float
    latency_sum_us: float = 0.0
    checksum: int = 0

    @property
    def outcome(self) -> tuple[int, int, float, int]:
        """What the run computed, without its timing: equal for the two queues."""
        return self.granted, self.events, self.latency_sum_us, self.checksum

    @property
    def rate(self) -> float:
        """Granted requests per CPU second of the loop."""
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
        subprocess.run([cc, "-O2", "-o", str(self.binary), str(SOURCE), "-lm"], check=True,
                       capture_output=True)

    def run(self, clients: int, locks: int, rtt_us: float, duration_us: float,
            seed: int = 1, jitter_us: float = 0.0, queue: str = "heap") -> NativeRun:
        """One run of ``duration_us`` simulated us on ``queue`` (one of :data:`QUEUES`)."""
        if queue not in QUEUES:
            raise ValueError(f"queue must be one of {QUEUES}, not {queue!r}")
        out = subprocess.run([str(self.binary), str(clients), str(locks), repr(rtt_us),
                              repr(jitter_us), repr(duration_us), str(seed), queue],
                             check=True, capture_output=True, text=True).stdout.split()
        return NativeRun(granted=int(out[0]), events=int(out[1]), loop_s=float(out[2]),
                         latency_sum_us=float(out[3]), checksum=int(out[4]))

    def close(self) -> None:
        self._dir.cleanup()
