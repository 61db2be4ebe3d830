"""Where planning parameters come from: command-line flags, then the config, then the paper.

Without a config the switch is the paper's testbed (section 5: 100K slots, here four
register arrays of 25,000 in stages 2..5 of 12) and a lock server completes 18 M
requests/s; a larger ``--slots`` spreads that many slots over the same four stages.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from netlock.config import Config, default_config, load_config
from netlock.errors import ConfigError
from netlock.geometry import SwitchGeometry
from planner.closedloop import RackTiming
from planner.offered import handover_us
from planner.openloop import OpenLoopClients
from planner.planning import PlanOptions

PAPER_SLOTS = 100_000
PAPER_SERVER_RATE_RPS = 18.0e6


def run_config(path: Path | None, sets: dict[str, str],
               forced: dict[str, str] | None = None) -> Config:
    """The config file (or the defaults, which describe the paper's testbed) with ``--set``
    overrides and then ``forced`` ones applied, validated."""
    overrides = {**sets, **(forced or {})}
    if path is not None:
        return load_config(path, overrides)
    return default_config(overrides)


def optional_config(path: Path | None, sets: dict[str, str]) -> Config | None:
    """:func:`run_config`, or None when there is neither a file nor an override."""
    return run_config(path, sets) if path is not None or sets else None


def plan_geometry(config: Config | None, slots: int | None,
                  priorities: int | None) -> SwitchGeometry:
    """The config's switch, or the paper's (grown to ``slots`` if that is larger)."""
    if config is not None:
        geometry = config.geometry
        if priorities is None or priorities == geometry.priorities:
            return geometry
        return _checked(lambda: SwitchGeometry(geometry.arrays, geometry.stages, priorities))
    total = max(slots or 0, PAPER_SLOTS)
    return _checked(lambda: SwitchGeometry.uniform(total, arrays=4, stages=12,
                                                   priorities=1 if priorities is None
                                                   else priorities, first_stage=2))


def _checked(build) -> SwitchGeometry:  # type: ignore[no-untyped-def]
    try:
        return build()
    except ValueError as exc:
        raise ConfigError(f"--priorities: {exc}") from None


def plan_options(config: Config | None, geometry: SwitchGeometry,
                 **flags: object) -> PlanOptions:
    """Options from the flags given (not None), else the config, else the paper's values.

    ``flags`` are :class:`PlanOptions` field names (``slots``, ``server_rate_rps``, ...).
    """
    if config is None:
        base = PlanOptions(slots=geometry.total_slots, server_rate_rps=PAPER_SERVER_RATE_RPS)
    else:
        base = PlanOptions(
            slots=config.switch.slots, server_rate_rps=config.servers.capacity_rps,
            policy=config.policy.allocation, contention=config.policy.contention,
            seed=config.sim.seed,
            hold_time_us=config.hold_time_us(),
            coarse_group=config.policy.coarse_group,
            handover_us=handover_us(config.switch.pass_us),
            rack=RackTiming.of(config), open_loop=OpenLoopClients.of(config))
    return replace(base, **{name: value for name, value in flags.items() if value is not None})

