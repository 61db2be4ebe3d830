"""The child process of :mod:`sim.fast_bench_process`: one fast-engine run, timed in phases.

Only the standard library is imported before the first measurement, so that the imports'
phase counts what ``netlock sim`` imports and nothing of the bench's own; the garbage
collector is handled as the console script handles it (:mod:`netlock.cli.collector`).
"""

from __future__ import annotations

import json
import resource
import sys
import time


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    """In a child: ``phases CONFIG DURATION`` or ``loop CONFIG DURATION on|off``; prints one
    JSON object."""
    what, config, duration = sys.argv[1], sys.argv[2], float(sys.argv[3])
    start = _cpu()
    from netlock.cli import collector

    collector.starting()
    import sim.cli  # noqa: F401  (what `netlock sim` imports)
    import sim.fast.fast_model as fast_model
    from netlock.config.load import load_config
    from sim.fast.simulate_fast import build, summarise

    collector.started()
    imported = _cpu()
    if what == "loop":
        fast_model.DRAW_AHEAD = sys.argv[4] == "on"
    cfg = load_config(config, {"sim.duration_s": str(duration)})
    model = build(cfg)
    built = _cpu()
    end_us = cfg.sim.end_s * 1e6
    wall = time.perf_counter()
    model.advance(end_us)
    model.close(end_us)
    summary = summarise(model, 0.0).summary
    print(json.dumps({"python_s": start, "imports_s": imported - start, "setup_s": built - imported,
                      "run_s": _cpu() - built, "run_wall_s": time.perf_counter() - wall,
                      "granted": summary["granted"]}))
    collector.leaving()
