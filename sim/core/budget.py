"""A run's wall-clock budget (``--max-wall-s``): the engines stop at the first step after it
is spent, and the result covers the simulated time reached, marked incomplete.

A run stopped in its warm-up has measured nothing: that is :class:`WallBudgetSpent`, exit
3, and nothing is written. A run stopped later is summarised over ``[sim.warmup_s, reached)``
(its ``measured_s``) with ``incomplete`` saying where and why it stopped; the command then
exits 3 too, after writing that whole, marked result.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from netlock.config import Config
from netlock.errors import ConfigError, NetlockError

EXIT_CODE = 3
"""Exit status of a run its ``--max-wall-s`` stopped (2 is bad input, 130 Ctrl-C)."""


class WallBudgetSpent(NetlockError):
    """A run reached its ``--max-wall-s`` before it measured anything (or a sweep point
    reached it: a sweep's table holds whole runs only)."""

    exit_code = EXIT_CODE


@dataclass(frozen=True)
class WallBudget:
    """``max_wall_s`` of wall-clock time from ``started`` (``time.monotonic()``, s)."""

    max_wall_s: float
    started: float = dataclasses.field(default_factory=time.monotonic)

    def spent(self) -> bool:
        return time.monotonic() - self.started >= self.max_wall_s


def stop_boundary_us(t_us: float) -> float:
    """A step boundary near ``t_us`` (us) that its own seconds form maps back to exactly:
    ``(b / 1e6) * 1e6 == b``. A run stopped at ``b`` reports ``reached_s = b / 1e6``, and
    the run planned to end there (``sim.duration_s`` = reached_s, no warm-up) ends at
    ``reached_s * 1e6``, the same instant, so events due at the boundary itself (the lock
    servers' drain ticks fall on multiples of ``tx_drain_us``) are on the same side in
    both. One rounding step reaches the fixed point; the loop is the guard."""
    b = t_us
    for _ in range(4):
        back = (b / 1e6) * 1e6
        if back == b:
            break
        b = back
    return b


def check_max_wall_s(value: float | None) -> None:
    """Refuse a budget that is not a finite number of seconds > 0 (one line, exit 2)."""
    if value is not None and not (0.0 < value < float("inf")):
        raise ConfigError(f"--max-wall-s: must be a number of seconds > 0, got {value}")


def stopped_config(config: Config, reached_us: float, budget: WallBudget) -> Config:
    """``config`` with the measured duration cut to what the run reached (for its summary);
    :class:`WallBudgetSpent` when it did not get past the warm-up."""
    sim = config.sim
    measured_s = reached_us / 1e6 - sim.warmup_s
    if measured_s <= 0:
        raise WallBudgetSpent(
            f"--max-wall-s {budget.max_wall_s:g}: stopped in the warm-up, at "
            f"{reached_us / 1e3:g} of {sim.end_s * 1e3:g} simulated ms after "
            f"{time.monotonic() - budget.started:.1f} s of wall time; nothing was measured, "
            f"nothing written (a shorter sim.warmup_s or sim.duration_s, or a larger budget)")
    return dataclasses.replace(config, sim=dataclasses.replace(sim, duration_s=measured_s))


def incomplete(config: Config, reached_us: float, budget: WallBudget) -> dict[str, float | str]:
    """The summary's ``incomplete`` entry of a run ``budget`` stopped at ``reached_us``."""
    return {"reason": "max_wall_s", "max_wall_s": budget.max_wall_s,
            "reached_s": reached_us / 1e6, "planned_s": config.sim.end_s}


def require_whole(summary: dict) -> None:
    """Refuse (:class:`WallBudgetSpent`) a run its budget stopped where only whole runs may
    go (a sweep's table, a paper figure)."""
    stop = summary.get("incomplete")
    if stop:
        raise WallBudgetSpent(
            f"--max-wall-s {stop['max_wall_s']:g}: a run stopped at "
            f"{stop['reached_s'] * 1e3:g} of {stop['planned_s'] * 1e3:g} simulated ms; only "
            f"whole runs are kept")


def stopped_line(summary: dict) -> str:
    """What ``netlock sim`` says on stderr about a run its budget stopped."""
    stop = summary["incomplete"]
    return (f"netlock: stopped by --max-wall-s {stop['max_wall_s']:g} after "
            f"{summary['wall_s']:.1f} s of wall time, at {stop['reached_s'] * 1e3:g} of "
            f"{stop['planned_s'] * 1e3:g} simulated ms: the result covers "
            f"{summary['measured_s'] * 1e3:g} measured ms and is marked incomplete")
