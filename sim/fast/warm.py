"""``python -m sim.fast.warm``: compile the fast engine into numba's cache, once.

The first run of the fast engine on a machine compiles it (minutes; later processes load
the cache in about a second). ``make test`` runs this before starting parallel test
workers so that they load one cache instead of each compiling the engine.
"""

from __future__ import annotations

import time

from netlock.config import config_from_dict
from sim.fast.simulate import simulate_fast


def warm() -> float:
    """Run a tiny rack on the fast engine (compiling it if needed); the seconds it took."""
    t0 = time.perf_counter()
    simulate_fast(config_from_dict({
        "workload": {"kind": "micro", "clients": 4, "locks": 50, "mode": "X",
                     "think_time_us": 0.0, "locks_per_txn": 1},
        "sim": {"duration_s": 0.0002, "warmup_s": 0.0},
    }))
    return time.perf_counter() - t0


if __name__ == "__main__":
    print(f"fast engine ready in {warm():.1f} s")
