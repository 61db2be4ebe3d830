"""``python -m sim.fast.warm``: compile the fast engine into numba's cache, once.

The first run of the fast engine on a machine compiles it (minutes; later processes load
the cache in about a second). ``make test`` and ``make demo`` run this before anything
else so that later runs load one cache instead of each compiling the engine; it says what
it is doing and how long it has been at it, on stderr.
"""

from __future__ import annotations

import time

from netlock.config import config_from_dict


def warm() -> float:
    """Run a tiny rack on the fast engine (compiling it if needed); the seconds it took."""
    from sim.fast.simulate_fast import simulate_fast

    t0 = time.perf_counter()
    simulate_fast(config_from_dict({
        "workload": {"kind": "micro", "clients": 4, "locks": 50, "mode": "X",
                     "think_time_us": 0.0, "locks_per_txn": 1},
        "sim": {"duration_s": 0.0002, "warmup_s": 0.0},
    }))
    return time.perf_counter() - t0


def main() -> None:
    """Warm the cache with a spinner and the elapsed time on stderr (a terminal), else one
    line before and one after."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from netlock.cli.console import console
    from sim.fast._fast_jit import cache_is_cold

    log = console()
    cold = cache_is_cold()
    what = ("compiling the fast engine into numba's cache (once per machine: several CPU "
            "minutes)" if cold else "loading the fast engine from numba's cache")
    if not log.is_terminal:
        log.print(f"{what} ...")
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=log, transient=True, disable=not log.is_terminal) as bar:
        bar.add_task(what, total=None)
        seconds = warm()
    log.print(f"fast engine ready in {seconds:.1f} s")


if __name__ == "__main__":
    main()
