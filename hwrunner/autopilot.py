"""The closed loop: measure the workload on the switch, re-plan, migrate when it has moved.

Each round waits ``interval_s``, then reads and resets the per-lock counters of the switch
(:func:`hwrunner.stats.read_stats`: acquires and peak occupancy of the locks it holds) and of
the lock servers (the locks they serve), which give r_i (acquires / window, rps) and c_i (peak
occupancy, at least 1) for every lock seen. It re-plans with the planner's Algorithm 3
(:func:`planner.allocate.knapsack_order` and :func:`planner.allocate.fill`) and its plan builder
(:func:`planner.planning.build_plan`, keeping live regions in place), keeps the live partition,
and pushes the new plan (:func:`hwrunner.push.push`) only when that is worth it. Hysteresis keeps
noise from thrashing the switch:

- ``keep``: the value r_i / c_i of a lock the switch holds counts ``1 + keep`` times when the
  locks are ordered, so it keeps its slots unless its value falls below the entry threshold
  (the value of the last lock admitted) divided by ``1 + keep``; a lock that stays keeps its
  region's size when it would only shrink and the slots are not needed elsewhere;
- ``margin``: the switch rate of the new plan, sum r_i min(s_i, c_i) / c_i over the measured r
  and c, must beat the live layout's by more than ``margin`` of it (and ``min_gain_rps``);
- ``validate``: a plan fitted to one window's counters looks better on them than it is, so it
  is pushed only when the candidate fitted to the *previous* window also beats the live layout
  by the margin on *this* window's counters. Noise does not survive that, a moved workload
  does (the migration comes one round after the move);
- ``memory``: a peak over a short window is noisy, so c_i falls to no less than ``memory``
  times the last round's estimate; a rise shows at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from hwrunner.driver import Driver
from hwrunner.profile import SwitchProfile
from hwrunner.push import Checkpoint, Pacer, PushOptions, PushResult, WallPacer, push
from hwrunner.readback import read_live
from hwrunner.server_handover import LockServers, NoLockServers
from hwrunner.stats import read_stats
from netlock.errors import ConfigError, TargetError
from netlock.plan import Plan, SwitchEntries
from planner.allocate import fill, knapsack_order, switch_rate
from planner.planning import PlanOptions, build_plan

Counters = dict[str, np.ndarray]


@dataclass(frozen=True)
class AutopilotOptions:
    """Round length (s), hysteresis (see the module docstring) and the slot budget (None: the
    base plan's)."""

    interval_s: float = 10.0
    margin: float = 0.2
    min_gain_rps: float = 0.0
    keep: float = 0.5
    memory: float = 0.8
    validate: bool = True
    slots: int | None = None

    def problem(self) -> str | None:
        """The first unusable option as ``--flag: what``, or None."""
        if not self.interval_s > 0:
            return f"--interval: must be > 0 s, got {self.interval_s}"
        if not self.margin >= 0:
            return f"--margin: must be >= 0, got {self.margin}"
        if not self.min_gain_rps >= 0:
            return f"--min-gain: must be >= 0 rps, got {self.min_gain_rps}"
        if not self.keep >= 0:
            return f"--keep: must be >= 0, got {self.keep}"
        if not 0 <= self.memory < 1:
            return f"--memory: must be in [0, 1), got {self.memory}"
        if self.slots is not None and self.slots < 0:
            return f"--slots: must be >= 0, got {self.slots}"
        return None

    def worth(self, new_rps: float, live_rps: float) -> bool:
        """Whether a plan giving ``new_rps`` is worth migrating to from ``live_rps``."""
        return new_rps - live_rps > max(self.margin * live_rps, self.min_gain_rps)


@dataclass(frozen=True, eq=False)
class MeasuredLocks:
    """r_i (rps) and c_i (>= 1) of every lock seen, sorted by lock id."""

    lock_id: np.ndarray
    rate_rps: np.ndarray
    contention: np.ndarray

    @property
    def priority(self) -> np.ndarray:
        """Every lock in priority class 0: the switch's counters are per lock, not per class."""
        return np.zeros(len(self.lock_id), dtype=np.int64)


def merge_counters(switch: Counters, servers: Counters, window_s: float) -> MeasuredLocks:
    """One window's workload from the switch's and the servers' counters (a lock counted at
    both, e.g. moved during the window, sums its acquires and takes the larger peak)."""
    ids = np.concatenate([switch["lock_id"], servers["lock_id"]]).astype(np.int64)
    locks, inverse = np.unique(ids, return_inverse=True)
    requests = np.zeros(len(locks), dtype=np.int64)
    peak = np.ones(len(locks), dtype=np.int64)
    np.add.at(requests, inverse, np.concatenate([switch["requests"], servers["requests"]]))
    np.maximum.at(peak, inverse, np.concatenate([switch["peak_occupancy"],
                                                 servers["peak_occupancy"]]))
    return MeasuredLocks(locks, requests / window_s, peak)


def hold_peaks(previous: MeasuredLocks | None, window: MeasuredLocks,
               memory: float) -> MeasuredLocks:
    """This window's r_i, and c_i held at ``memory`` times the last estimate when this
    window's peak is lower (peaks over short windows are noisy; a real rise shows at once)."""
    if previous is None or memory <= 0:
        return window
    found = np.isin(window.lock_id, previous.lock_id)
    held = np.array(window.contention, dtype=np.float64)
    at = np.searchsorted(previous.lock_id, window.lock_id[found])
    held[found] = np.maximum(held[found], memory * previous.contention[at])
    return MeasuredLocks(window.lock_id, window.rate_rps, held)


def switch_counters(driver: Driver, profile: SwitchProfile) -> Counters:
    """Read and reset the switch's per-lock counters (the profile must have them)."""
    if not (profile.has("requests") and profile.has("peak_occupancy")):
        raise TargetError(f"profile {profile.name}: the program keeps no per-lock request and "
                          f"peak-occupancy counters (use a profile such as netlock-stats)")
    frame = read_stats(driver, profile, reset=True)
    return {"lock_id": frame["lock_id"].to_numpy(np.int64),
            "requests": frame["requests"].to_numpy(np.int64),
            "peak_occupancy": frame["contention"].to_numpy(np.int64)}


@dataclass(frozen=True, eq=False)
class Replan:
    """A candidate plan and what it is worth against the live layout, in rps."""

    plan: Plan
    live_rps: float
    new_rps: float
    changed: bool
    migrate: bool


def replan(workload: MeasuredLocks, live: SwitchEntries, base: Plan,
           options: AutopilotOptions) -> Replan:
    """The plan Algorithm 3 makes for ``workload`` with sticky live locks, and whether to push.

    ``base`` gives the geometry, the inputs and the partition, which is kept: the lock
    servers keep their ranges, the live regions their places (:func:`build_plan`).
    """
    budget = base.inputs.slots if options.slots is None else options.slots
    geometry = base.geometry
    items, held = _with_live_locks(workload, live)
    boost = np.where(held > 0, 1.0 + options.keep, 1.0)
    capacities = tuple(geometry.priority_capacity(p) for p in range(geometry.priorities))
    room = min(budget, capacities[0])
    slots = fill(knapsack_order(items.rate_rps * boost, items.contention), items.contention,
                 items.priority, room, capacities)
    _keep_sizes(slots, held, room)
    inputs = base.inputs
    plan = build_plan(items, slots, geometry,
                      PlanOptions(slots=budget, server_rate_rps=inputs.server_rate_rps,
                                  contention=inputs.contention, coarse_group=inputs.lock_group),
                      inputs.hold_time_us, live=replace(base, entries=live),
                      partition=base.partition)
    live_rps = switch_rate(items.rate_rps, items.contention,
                           np.minimum(held, items.contention))
    new_rps = plan.summary.switch_rps
    changed = not _same_regions(plan.entries, live)
    return Replan(plan, live_rps, new_rps, changed, changed and options.worth(new_rps, live_rps))


def _with_live_locks(workload: MeasuredLocks,
                     live: SwitchEntries) -> tuple[MeasuredLocks, np.ndarray]:
    """``workload`` over the locks it saw and those the switch holds (r_i = 0, c_i = 1 when
    unseen), c_i rounded up to whole slots, and the slots each holds now."""
    ids = np.union1d(workload.lock_id, live.lock_id)
    rate = np.zeros(len(ids))
    contention = np.ones(len(ids), dtype=np.int64)
    seen = np.searchsorted(ids, workload.lock_id)
    rate[seen] = workload.rate_rps
    contention[seen] = np.maximum(np.ceil(workload.contention - 1e-9), 1)
    held = np.zeros(len(ids), dtype=np.int64)
    held[np.searchsorted(ids, live.lock_id)] = live.slots
    return MeasuredLocks(ids, rate, contention), held


def _keep_sizes(slots: np.ndarray, held: np.ndarray, room: int) -> None:
    """Give locks that stay in the switch but would shrink their live size back, smallest
    change first, while the slots left over allow (a smaller region gains nothing)."""
    spare = room - int(slots.sum())
    shrunk = np.flatnonzero((slots > 0) & (slots < held))
    for i in shrunk[np.argsort(held[shrunk] - slots[shrunk], kind="stable")].tolist():
        extra = int(held[i] - slots[i])
        if extra > spare:
            break
        slots[i] = held[i]
        spare -= extra


def plan_rate(entries: SwitchEntries, workload: MeasuredLocks) -> float:
    """The switch rate (rps) ``entries`` give ``workload``: sum r_i min(s_i, c_i) / c_i."""
    rate = np.zeros(len(entries))
    contention = np.ones(len(entries), dtype=np.int64)
    found = np.isin(entries.lock_id, workload.lock_id)
    at = np.searchsorted(workload.lock_id, entries.lock_id[found])
    rate[found] = workload.rate_rps[at]
    contention[found] = np.maximum(np.ceil(workload.contention[at] - 1e-9), 1)
    return switch_rate(rate, contention, np.minimum(entries.slots, contention))


def _same_regions(a: SwitchEntries, b: SwitchEntries) -> bool:
    order_a, order_b = np.argsort(a.lock_id), np.argsort(b.lock_id)
    return all(np.array_equal(getattr(a, c)[order_a], getattr(b, c)[order_b])
               for c in ("lock_id", "left", "right"))


@dataclass(frozen=True)
class Round:
    """What one round saw and did; rates in rps, times in s."""

    number: int
    window_s: float
    locks_seen: int
    total_rps: float
    live_rps: float
    new_rps: float
    migrated: bool
    push: PushResult | None = None

    def to_json(self) -> dict:
        return {"round": self.number, "window_s": self.window_s, "locks_seen": self.locks_seen,
                "total_rps": self.total_rps, "live_switch_rps": self.live_rps,
                "planned_switch_rps": self.new_rps, "migrated": self.migrated,
                "migrated_locks": self.push.migrated_locks if self.push else 0,
                "verified": self.push.verified if self.push else True}


class Autopilot:
    """Rounds of measure, re-plan, maybe push, on one switch (see the module docstring).

    ``server_counters`` reads and resets the lock servers' counters (default: ``servers``').
    Pushes go through ``journal_path`` and ``checkpoint`` as ``netlock push``'s do, so a kill
    at any point is finished by ``netlock push --resume``. Ctrl-C ends :meth:`run` after the
    round it came in (a push it interrupted rolls back or finishes forward) and sets
    :attr:`interrupted`.
    """

    def __init__(self, driver: Driver, profile: SwitchProfile, base: Plan, *,
                 options: AutopilotOptions | None = None,
                 servers: LockServers | None = None,
                 server_counters: Callable[[], Counters] | None = None,
                 pacer: Pacer | None = None, push_options: PushOptions | None = None,
                 journal_path: str | Path | None = None,
                 checkpoint: Checkpoint | None = None) -> None:
        self.options = options or AutopilotOptions()
        found = self.options.problem()
        if found:
            raise ConfigError(found)
        self.driver = driver
        self.profile = profile
        self.base = base
        self.servers = servers or NoLockServers()
        self.server_counters = server_counters or (lambda: self.servers.counters(reset=True))
        self.pacer = pacer or WallPacer()
        self.push_options = push_options
        self.journal_path = journal_path
        self.checkpoint = checkpoint
        self.interrupted = False
        self.rounds = 0
        self.migrations = 0
        self.last_plan: Plan | None = None
        self.pending: Plan | None = None
        self.estimate: MeasuredLocks | None = None
        """The last round's candidate, waiting to be validated on this round's counters."""
        self._reset_at = self._reset()

    def _reset(self) -> float:
        switch_counters(self.driver, self.profile)
        self.server_counters()
        return self.pacer.now()

    def live_entries(self) -> tuple[SwitchEntries, Plan]:
        """The regions the switch holds now, and the base plan with its live partition."""
        live = read_live(self.driver, self.profile).layout
        n = len(live)
        entries = SwitchEntries(live.lock_id, live.slots, live.left, live.right,
                                np.zeros(n, dtype=np.int64))
        base = replace(self.base, partition=live.partition or self.base.partition)
        return entries, base

    def round(self) -> Round:
        """Wait one interval, measure, re-plan, and push when the hysteresis allows it."""
        self.pacer.wait(self.options.interval_s)
        now = self.pacer.now()
        window = max(now - self._reset_at, 1e-9)
        workload = hold_peaks(self.estimate, merge_counters(
            switch_counters(self.driver, self.profile), self.server_counters(), window),
            self.options.memory)
        self.estimate = workload
        self._reset_at = now
        entries, base = self.live_entries()
        candidate = replan(workload, entries, base, self.options)
        validated = not self.options.validate or (self.pending is not None and self.options.worth(
            plan_rate(self.pending.entries, workload), candidate.live_rps))
        self.pending = candidate.plan if candidate.migrate else None
        self.rounds += 1
        result = None
        if candidate.migrate and validated:
            self.pending = None
            result = push(self.driver, self.profile, candidate.plan, servers=self.servers,
                          options=self.push_options, pacer=self.pacer,
                          journal_path=self.journal_path, checkpoint=self.checkpoint)
            self.interrupted |= result.interrupted
            self.migrations += result.outcome in ("installed", "finished forward")
            self.last_plan = candidate.plan
            self._reset_at = self._reset()
        return Round(self.rounds, window, len(workload.lock_id),
                     float(workload.rate_rps.sum()), candidate.live_rps, candidate.new_rps,
                     result is not None, result)

    def run(self, max_rounds: int | None = None,
            report: Callable[[Round], None] | None = None) -> list[Round]:
        """Rounds until ``max_rounds`` (None: until interrupted with Ctrl-C)."""
        done: list[Round] = []
        while (max_rounds is None or len(done) < max_rounds) and not self.interrupted:
            try:
                done.append(self.round())
            except KeyboardInterrupt:
                self.interrupted = True
                break
            if report is not None:
                report(done[-1])
        return done
