"""A run's plan, made the same way for both engines: from a file, or on the fly from a
warm-up trace and a pilot run (:mod:`sim.core.allocation` turns either into a plan).

On the fly: a synthetic warm-up trace of the clients' workload
(:func:`sim.workloads.tracegen.warmup_trace`); then, with switch slots and lock servers, a
pilot run of the same rack with every lock on the lock servers, on the run's own engine and
with its own random streams, whose granted requests are the trace the plan is measured from
(:func:`pilot_trace`); then Algorithm 3 or random allocation. A replayed trace
(``workload.kind: trace``) is planned from a pilot run of exactly ``sim.warmup_s``: its
clients replay the trace from its start, as the measured run's do, so a pilot run past the
warm-up would show the plan the very transactions the measured period replays (the plan must
not see the measured period's future). Replayed timed (``workload.replay``), no transaction
recorded to start at or after ``sim.warmup_s`` can start in it at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Protocol

import numpy as np

from netlock.config import Config
from netlock.errors import ConfigError
from netlock.plan import Plan, PlanInputs, PlanSummary, SwitchEntries
from netlock.plan_io import load_plan
from sim.core import plan_cache
from sim.core.allocation import Partition, Warmup, plan_from_trace, trace_from_uses
from sim.core.budget import WallBudget, WallBudgetSpent
from sim.core.parts import client_workload
from sim.core.rows import Columns
from sim.core.run_spec import RunSpec
from sim.workloads.tracegen import warmup_trace

PILOT_TXNS_PER_CLIENT = 20
PILOT_REQUESTS = 50_000
PILOT_STEP_US = 1000.0
PILOT_MAX_US = 50_000.0
PILOT_STREAM = 1
"""The plan's stream key beside the run's seed: the warm-up trace draws from
``SeedSequence([seed, PILOT_STREAM])`` and the pilot run is seeded with
``[seed, PILOT_STREAM]``, so neither touches the measured run's streams."""


class PilotRun(Protocol):
    """An engine's rack, started, as the pilot run needs it (times in us)."""

    @property
    def committed(self) -> int: ...

    @property
    def granted(self) -> int: ...

    def advance(self, until_us: float) -> None: ...

    def requests_columns(self) -> Columns: ...


StartPilot = Callable[[Plan, Partition, object], PilotRun]
"""``start(plan, partition, seed_key)``: the engine's rack of the run's config with that
plan, its random streams spawned from ``seed_key``, started at time 0 without failures."""

_PILOTS: dict[str, tuple[str, Warmup]] = {}
"""Per engine, the key and trace of its last pilot run (kept per process)."""


def make_plan(config: Config, spec: RunSpec, start: StartPilot,
              engine: str, budget: WallBudget | None = None) -> tuple[Plan, Partition]:
    """The plan named by ``policy.plan``, else one made on the fly, its pilot run on
    ``engine`` (:func:`pilot_trace`; within the run's wall ``budget``), or the same plan
    made before, from the plan cache (:mod:`sim.core.plan_cache`)."""
    if config.policy.plan:
        return plan_from_file(config)
    key = plan_cache.plan_key(config, engine) if plan_cache.enabled() else ""
    cached = plan_cache.load(key) if key else None
    if cached is not None:
        return cached
    made = _made_plan(config, spec, start, engine, budget)
    if key:
        plan_cache.store(key, made)
    return made


def _made_plan(config: Config, spec: RunSpec, start: StartPilot, engine: str,
               budget: WallBudget | None) -> tuple[Plan, Partition]:
    """The plan made afresh: the warm-up trace (drawn only where it is used), the pilot run,
    Algorithm 3 (or random)."""

    @cache
    def synthetic() -> Warmup:
        rng = np.random.default_rng(np.random.SeedSequence([config.sim.seed, PILOT_STREAM]))
        return Warmup(*warmup_trace(client_workload(config), config, list(spec.priorities),
                                    spec.fetch_hops, rng))

    if config.switch.slots > 0 and config.servers.count > 0:
        trace = pilot_trace(config, synthetic, spec, start, engine, budget)
    else:
        trace = synthetic()
    return plan_from_trace(trace, config, spec.hold_us)


def servers_only(config: Config, synthetic: Callable[[], Warmup],
                 hold_us: float) -> tuple[Plan, Partition]:
    """The pilot run's plan: no lock in the switch, the lock servers partitioned as
    :func:`plan_from_trace` with no slots partitions them. The racks read only a plan's
    entries (none here), so with ``servers.partition`` hash (or one server), whose
    partition reads no rates, the synthetic warm-up trace is not drawn for it."""
    count = max(config.servers.count, 1)
    if config.servers.partition == "hash" or count == 1:
        return no_plan(config), Partition(count)
    return plan_from_trace(synthetic(), config, hold_us, slots=0)


def pilot_key(config: Config) -> str:
    """What a pilot run depends on: the config without switch memory, allocation policy,
    run length and failures (runs differing only in those share their pilot)."""
    doc = config.to_dict()
    doc["switch"].pop("slots")
    doc["policy"].pop("allocation")
    doc["sim"].pop("duration_s")
    doc.pop("failures")
    return json.dumps(doc, sort_keys=True, default=str)


def pilot_trace(config: Config, synthetic: Callable[[], Warmup], spec: RunSpec,
                start: StartPilot, engine: str, budget: WallBudget | None = None) -> Warmup:
    """The trace of a warm-up run with every lock on the lock servers.

    It runs for at least ``sim.warmup_s`` and until the clients have committed
    ``PILOT_TXNS_PER_CLIENT`` transactions each and ``PILOT_REQUESTS`` requests in all (at
    most ``PILOT_MAX_US``), so that r_i and c_i rest on enough requests; a replayed trace's
    for ``sim.warmup_s`` exactly (the module docstring says why). Runs on one engine
    that differ only in switch memory or allocation policy share their warm-up run, which is
    kept per process. A pilot run (as long as ``sim.warmup_s``: up to an hour) that spends
    the run's wall ``budget`` is :class:`sim.core.budget.WallBudgetSpent`.
    """
    key = pilot_key(config)
    kept = _PILOTS.get(engine)
    if kept is not None and kept[0] == key:
        return kept[1]
    pilot = start(*servers_only(config, synthetic, spec.hold_us),
                  [config.sim.seed, PILOT_STREAM])
    wanted = PILOT_TXNS_PER_CLIENT * config.workload.clients
    replayed = config.workload.kind == "trace"
    until = config.sim.warmup_s * 1e6 if replayed else max(config.sim.warmup_s * 1e6,
                                                             PILOT_STEP_US)
    _advance(pilot, 0.0, until, budget)
    while (not replayed and (pilot.committed < wanted or pilot.granted < PILOT_REQUESTS)
           and until < PILOT_MAX_US):
        until += PILOT_STEP_US
        _advance(pilot, until - PILOT_STEP_US, until, budget)
    requests = pilot.requests_columns()
    trace = trace_from_uses(requests, list(spec.priorities)) if len(requests) else synthetic()
    _PILOTS[engine] = (key, trace)
    return trace


def _advance(pilot: PilotRun, from_us: float, until_us: float,
             budget: WallBudget | None) -> None:
    """``pilot.advance(until_us)`` from ``from_us``; with a ``budget``, in steps of
    ``PILOT_STEP_US``, stopping when it is spent."""
    if budget is None:
        pilot.advance(until_us)
        return
    step = PILOT_STEP_US
    now = from_us
    while now < until_us:
        now = min(now + step, until_us)
        pilot.advance(now)
        if now < until_us and budget.spent():
            raise WallBudgetSpent(
                f"--max-wall-s {budget.max_wall_s:g}: stopped in the pilot run that plans the "
                f"switch (sim.warmup_s {until_us / 1e3:g} simulated ms), at {now / 1e3:g} ms; "
                f"nothing was measured, nothing written (a shorter sim.warmup_s, or a larger "
                f"budget)")


def forget_pilots() -> None:
    """Drop the kept pilot runs (a benchmark times the setup of a single run)."""
    _PILOTS.clear()


def plan_from_file(config: Config) -> tuple[Plan, Partition]:
    """The plan named by ``policy.plan`` and its partition over ``servers.count`` servers."""
    path = config.policy.plan
    plan = load_plan(path)
    if plan.geometry != config.geometry:
        raise ConfigError(f"{path}: geometry: the plan was made for other register arrays or "
                          f"priorities than this config's switch")
    if plan.summary.slots_used > config.switch.slots:
        raise ConfigError(f"{path}: the plan uses {plan.summary.slots_used:,} switch slots but "
                          f"switch.slots is {config.switch.slots:,}; re-plan with --slots "
                          f"{config.switch.slots} (a plan is used as made, never cut down)")
    group = config.policy.coarse_group
    if plan.inputs.lock_group != group:
        raise ConfigError(f"{path}: inputs.lock_group: the plan merges "
                          f"{plan.inputs.lock_group} locks per coarse lock but "
                          f"policy.coarse_group is {group}")
    count = max(config.servers.count, 1)
    if not plan.partition:
        return plan, Partition(count)
    return plan, Partition(count, [p.hi for p in plan.partition],
                           [p.server % count for p in plan.partition])


def no_plan(config: Config) -> Plan:
    """The plan of a design that allocates no NetLock switch memory: nothing in the switch,
    no predicted rates."""
    policy = config.policy.allocation
    return Plan(geometry=config.geometry, policy=policy,
                inputs=PlanInputs(slots=0, server_rate_rps=config.servers.capacity_rps,
                                  lock_group=config.policy.coarse_group),
                entries=SwitchEntries.empty(), partition=(),
                summary=PlanSummary(policy=policy, slots_total=0, slots_used=0,
                                    locks_total=0, locks_in_switch=0, total_rps=0.0,
                                    switch_rps=0.0, server_rps=0.0, servers_needed=0,
                                    server_rate=config.servers.capacity_rps,
                                    rates="none"))
