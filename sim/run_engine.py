"""``run_engine(config) -> SimResult``: one run on the engine the config (or the caller) names.

It sits above both engines: the simpy engine (:mod:`sim.simulate_simpy`) and the fast engine
(:mod:`sim.fast.simulate_fast`); both summarise their runs with :func:`sim.core.result.result_of`.
Each engine is imported on use: the fast engine loads numba, the simpy engine simpy and the
rack's Python model, which a fast run does not need.
"""

from __future__ import annotations

from netlock.config import Config
from sim.core.budget import WallBudget
from sim.core.result import Progress, SimResult


def run_engine(config: Config, engine: str | None = None,
               progress: Progress | None = None, max_wall_s: float | None = None) -> SimResult:
    """One run on ``engine`` (``simpy`` or ``fast``; default: the config's ``sim.engine``);
    ``progress(now_us, end_us)`` is told how far the run has come. A run longer than
    ``max_wall_s`` of wall time stops: its summary's ``incomplete`` says where
    (:mod:`sim.core.budget`)."""
    budget = None if max_wall_s is None else WallBudget(max_wall_s)
    if (engine or config.sim.engine) == "fast":
        from sim.fast.simulate_fast import simulate_fast

        return simulate_fast(config, progress=progress, budget=budget)
    from sim.simulate_simpy import simulate

    return simulate(config, progress, budget)
