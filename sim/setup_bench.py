"""``netlock bench`` figures of a run's setup -- the warm-up trace, the pilot run, the plan and
the rack (:func:`sim.core.pilot.make_plan`, then the engine's assembly) -- as a share of a
whole default-length run of each canonical config, on each engine that models it (it
compares the engines, so it sits above both).

The canonical configs are ``configs/*.yaml`` that plan on the fly (NetLock, no
``policy.plan``); the others make no plan, so their setup is the rack alone (the
``netstore-*`` configs belong to another simulator). Each config runs at its own
``sim.duration_s`` and ``sim.warmup_s``, timed in phases as :mod:`sim.bench` says (CPU
seconds of every thread), twice per repeat: with its plan made afresh (the plan cache
bypassed, no pilot kept in the process: a first run) and with its plan in the plan cache
(:mod:`sim.core.plan_cache`, here in a temporary folder: a re-run, a sweep's resumed
point, a figure made again). The figure is the cached run's setup over its whole run
(setup, loop and results; median over repeats), with the goal beside it: at most
:data:`TARGET_SHARE`; the baseline is the same share with the plan made afresh, in the
same repeats.
"""

from __future__ import annotations

import statistics

from netlock.bench import BenchResult
from netlock.config import Config
from netlock.config.load import load_config
from netlock.errors import ConfigError
from sim.bench import Phases, timed_phases
from sim.core import plan_cache
from sim.core.pilot import forget_pilots
from sim.paper.experiment_file import CONFIG_DIR

SUITE = "sim-setup"
TARGET_SHARE = 0.10
"""Setup's share of a whole default-length run (the issue's goal)."""


def canonical_configs() -> dict[str, Config]:
    """The canonical configs that plan on the fly, by file stem."""
    found = {}
    for path in sorted(CONFIG_DIR.glob("*.yaml")):
        try:
            cfg = load_config(path)
        except ConfigError:
            continue
        if cfg.manager.kind == "netlock" and not cfg.policy.plan:
            found[path.stem] = cfg
    return found


def engines_for(cfg: Config) -> list[str]:
    """simpy, and fast when it models ``cfg``."""
    from sim.fast.fast_model import check_supported

    try:
        check_supported(cfg)
    except ConfigError:
        return ["simpy"]
    return ["simpy", "fast"]


def timed_run(cfg: Config, engine: str, cached: bool) -> Phases:
    """One run of ``cfg`` on ``engine``, timed in phases; its plan from the plan cache when
    ``cached``, else made afresh."""
    end_us = cfg.sim.end_s * 1e6
    if engine == "fast":
        from sim.fast.simulate_fast import build, summarise

        def loop(model: object) -> None:
            model.advance(end_us)

        def results(model: object) -> dict:
            model.close(end_us)
            return summarise(model, 0.0).summary
    else:
        from sim.simpy_model import build
        from sim.simulate_simpy import summarise

        def loop(model: object) -> None:
            model.run()

        def results(model: object) -> dict:
            return summarise(model, 0.0).summary

    return timed_phases(lambda: build(cfg), loop, results, forget_pilots, cached=cached)


def share(run_: Phases) -> float:
    """Setup's share of the whole run's CPU seconds."""
    return run_.setup_s / (run_.setup_s + run_.loop_s + run_.results_s)


def result(name: str, engine: str, cfg: Config, fresh: list[Phases],
           cached: list[Phases]) -> BenchResult:
    value = statistics.median(share(r) for r in cached)
    base = statistics.median(share(r) for r in fresh)
    setup_fresh = statistics.median(r.setup_s for r in fresh)
    setup_cached = statistics.median(r.setup_s for r in cached)
    loop = statistics.median(r.loop_s for r in cached)
    results = statistics.median(r.results_s for r in cached)
    return BenchResult(
        suite=SUITE, name=f"{name}, {engine} engine: setup share, plan cached", value=value,
        unit="share of the run", repeats=len(cached),
        baseline_name="setup share, plan made afresh", baseline_value=base,
        target=TARGET_SHARE, higher_is_better=False, ok=value <= TARGET_SHARE,
        note=f"needs <= {TARGET_SHARE:.0%}; {cfg.sim.end_s * 1e3:g} ms simulated; setup "
             f"{setup_cached * 1e3:.0f} ms with the plan cached (a re-run: the rack alone), "
             f"{setup_fresh * 1e3:.0f} ms made afresh (a first run: warm-up trace, pilot, "
             f"plan, rack); beside the run's loop {loop * 1e3:.0f} ms and results "
             f"{results * 1e3:.0f} ms (CPU, plan cached)")


def run(quick: bool) -> list[BenchResult]:
    """Every canonical config on each engine, afresh and cached, interleaved; medians over
    repeats (one when ``quick``)."""
    repeats = 1 if quick else 3
    results = []
    _settle_imports()
    with plan_cache.temporary_cache():
        for name, cfg in canonical_configs().items():
            for engine in engines_for(cfg):
                timed_run(cfg, engine, cached=True)
                fresh, cached = [], []
                for _ in range(repeats):
                    fresh.append(timed_run(cfg, engine, cached=False))
                    cached.append(timed_run(cfg, engine, cached=True))
                results.append(result(name, engine, cfg, fresh, cached))
    return results


def _settle_imports() -> None:
    """Both engines imported and what lives frozen (``gc.freeze``) before the first timed
    run. A process pays the collector's first full pass over the modules it imports on use
    (about 180K objects, 0.1 s) once, not in each run; unsettled, the pass landed in
    whichever run came first (micro-exclusive's simpy setup: 87-107 ms in the bench, 5-10 ms
    alone), as :mod:`netlock.cli.collector` keeps it out of a command's work."""
    import gc

    import sim.fast.simulate_fast
    import sim.simpy_model
    import sim.simulate_simpy  # noqa: F401

    gc.collect()
    gc.freeze()
