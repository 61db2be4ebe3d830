"""The smallest rack (switch slots x lock servers) the closed-loop model predicts meets a
throughput target: the candidates ``netlock capacity`` has the simulator verify.

Pure: a trace and the rack's numbers in, candidates out. For each switch memory on a
ladder (1-3-10 steps up to ``max_slots``) the trace is planned (Algorithm 3) and the
transaction model (:mod:`planner.closedloop`; for one-lock requests the plan's exact MVA with
the lock servers' path, :mod:`planner.offered`) is solved for 1..``max_servers`` lock servers;
the frontier is, per memory, the fewest servers whose predicted rate (and, with a
``--p99-us`` target, predicted p99 of transaction latency, :mod:`planner.latency`) meets the
target.
Rates are rps (requests) or tps (transactions), latencies us.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from netlock.errors import ConfigError
from netlock.geometry import SwitchGeometry
from netlock.trace import Trace
from planner.closedloop import Rates, TxnSample, solve
from planner.openloop import open_loop_demand
from planner.planning import PlanOptions, PlanReport, make_plan, one_lock_demand


@dataclass(frozen=True)
class Target:
    """What the rack must carry: ``tps`` or ``rps``, and optionally a p99 of transaction
    latency (us)."""

    tps: float | None = None
    rps: float | None = None
    p99_us: float | None = None

    def problem(self) -> str | None:
        """The first unusable flag as ``--flag: what``, or None."""
        if (self.tps is None) == (self.rps is None):
            return "--tps/--rps: give exactly one throughput target"
        for flag, value in (("--tps", self.tps), ("--rps", self.rps), ("--p99-us", self.p99_us)):
            if value is not None and not (math.isfinite(value) and value > 0):
                return f"{flag}: must be a finite number > 0, got {value}"
        return None

    def met_by(self, txn_rps: float, total_rps: float, p99_us: float | None = None) -> bool:
        """Whether these rates (and, when the target has one, this p99) meet it."""
        rate_ok = txn_rps >= self.tps if self.tps is not None else total_rps >= (self.rps or 0)
        if self.p99_us is None or p99_us is None:
            return rate_ok
        return rate_ok and p99_us <= self.p99_us

    def describe(self) -> str:
        rate = f"{self.tps:,.0f} tps" if self.tps is not None else f"{self.rps:,.0f} rps"
        return rate + (f", p99 <= {self.p99_us:g} us" if self.p99_us is not None else "")


@dataclass(frozen=True)
class Candidate:
    """One rack and the model's prediction for it (rps, tps, us)."""

    slots: int
    servers: int
    txn_rps: float
    total_rps: float
    switch_rps: float
    cycle_us: float
    bound: str
    meets: bool
    p99_us: float = float("nan")
    """The model's 99th percentile of transaction latency (:mod:`planner.latency`)."""


@dataclass(frozen=True, eq=False)
class Proposal:
    """The predicted grid, the frontier to verify, the plans behind it, and, when no rack
    within the limits meets the target, the constraint that binds."""

    grid: tuple[Candidate, ...]
    frontier: tuple[Candidate, ...]
    plans: dict[int, PlanReport]
    binds: str | None


def slot_ladder(max_slots: int) -> list[int]:
    """Switch memories to try: 1, 3, 10, 30, ... thousand slots up to ``max_slots``
    (which is always tried)."""
    out, step = [], 1000
    while step < max_slots:
        out.append(step)
        step = step * 3 if str(step)[0] == "1" else step * 10 // 3
    return [*out, max_slots]


def propose(trace: Trace, geometry: SwitchGeometry, options: PlanOptions, target: Target,
            max_slots: int, max_servers: int,
            tick: Callable[[], None] | None = None) -> Proposal:
    """The model's grid over slots x servers and its frontier (module doc)."""
    if options.rack is None or trace.txn is None:
        raise ConfigError("capacity: needs a config (the rack's clients, network and lock "
                          "servers) and a trace with client_id and txn_id")
    sample = TxnSample.of(trace.lock_id // options.coarse_group, trace.mode, trace.txn)
    grid: list[Candidate] = []
    frontier: list[Candidate] = []
    plans: dict[int, PlanReport] = {}
    for slots in slot_ladder(min(max_slots, geometry.total_slots)):
        report = make_plan(trace, geometry, replace(options, slots=slots))
        plans[slots] = report
        per_lock = _slots_per_lock(sample, report)
        row = []
        for servers in range(1, max_servers + 1):
            rates, (txn_rps, total, switch) = _predicted(trace, options, sample, per_lock,
                                                         servers)
            row.append(Candidate(slots, servers, txn_rps, total, switch, rates.cycle_us,
                                 rates.bound, target.met_by(txn_rps, total, rates.p99_us),
                                 rates.p99_us))
        grid.extend(row)
        meeting = [c for c in row if c.meets]
        if meeting:
            frontier.append(meeting[0])
        if tick:
            tick()
    binds = None if frontier else _binding(grid, sample, options, target, max_slots)
    return Proposal(tuple(grid), tuple(frontier), plans, binds)


def predicted_total_rps(trace: Trace, options: PlanOptions, report: PlanReport,
                        counts: list[int]) -> dict[int, float]:
    """The model's total (requests/s) for ``report``'s allocation with each of ``counts``
    lock servers, by the rate model its plan used (``netlock servers`` beside its
    simulations)."""
    sample = TxnSample.of(trace.lock_id // options.coarse_group, trace.mode, trace.txn)
    per_lock = _slots_per_lock(sample, report)
    return {n: _predicted(trace, options, sample, per_lock, n)[1][1] for n in counts}


def _predicted(trace: Trace, options: PlanOptions, sample: TxnSample, per_lock: np.ndarray,
               servers: int) -> tuple[Rates, tuple[float, float, float]]:
    """The closed-loop model's rates with ``servers`` lock servers, and (tps, total rps,
    switch rps) by the model the plan uses: for one-lock workloads the open-loop or
    one-lock model, as :func:`planner.planning.make_plan` chooses."""
    assert options.rack is not None
    rates = solve(sample, options.rack, per_lock, servers)
    if np.all(sample.sizes == 1) and options.open_loop is not None:
        got = open_loop_demand(options.open_loop, sample, per_lock, servers)
        return rates, (got.total_rps, got.total_rps, got.switch_rps)
    if np.all(sample.sizes == 1):
        demand = one_lock_demand(trace, options, sample, per_lock, servers)
        total = demand.closed_loop_rps
        return rates, (total, total, total * (1.0 - demand.served_share))
    return rates, (rates.txn_rps, rates.total_rps, rates.switch_rps)


def _slots_per_lock(sample: TxnSample, report: PlanReport) -> np.ndarray:
    per_lock = np.zeros(len(sample.lock_ids))
    entries = report.plan.entries
    at = np.searchsorted(sample.lock_ids, entries.lock_id)
    np.add.at(per_lock, np.minimum(at, len(per_lock) - 1), entries.slots)
    return per_lock


def _binding(grid: list[Candidate], sample: TxnSample, options: PlanOptions, target: Target,
             max_slots: int) -> str:
    """Which constraint keeps the largest rack below the target: ``clients`` (they could
    not offer it even with no waits and every lock in the switch), ``latency`` (some rack
    carries the rate, but none within the predicted p99), ``servers`` (their CPU limits at
    the most servers allowed), ``contention`` (lock waits), else ``switch memory``."""
    assert options.rack is not None
    rack = options.rack
    sizes = sample.sizes.astype(np.float64)
    free_cycle = float(np.mean((sizes - 1) * rack.acquire_gap_us)) + rack.hold_us()
    free_tps = rack.clients / free_cycle * 1e6
    if not target.met_by(free_tps, free_tps * float(sizes.mean())):
        return "clients"
    if any(target.met_by(c.txn_rps, c.total_rps) for c in grid):
        return "latency"
    best = max(grid, key=lambda c: c.total_rps)
    if best.bound in ("servers", "contention"):
        return best.bound
    return "switch memory"
