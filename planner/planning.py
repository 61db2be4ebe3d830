"""From a validated trace to a :class:`netlock.plan.Plan` and the report around it.

Steps: measure r_i / c_i per item, allocate slots (Algorithm 3 or random), lay the regions
out on the switch geometry (keeping a live plan's regions in place where possible), size
the lock servers, partition the lock ids over them (keeping a live plan's partition unless
servers are added or removed), and, when a live plan is given, the migration from it that
``netlock push`` will run. Pure: no files are read or written here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from netlock.errors import ConfigError, PlanError, TraceError
from netlock.geometry import SwitchGeometry
from netlock.plan import (
    PartitionRange,
    Plan,
    PlanInputs,
    PlanSummary,
    SwitchEntries,
    servers_needed,
)
from netlock.trace import Trace
from planner.allocate import POLICIES, allocate, server_load_rps, switch_rate
from planner.closedloop import RackTiming, TxnSample, fewest_servers, solve
from planner.closedloop import servers_needed as model_servers_needed
from planner.demand import Demand
from planner.measure import LockStats, measure, parse_statistic
from planner.migrate import PlanMigration, plan_migration
from planner.occupancy import quantile_of, size_by_occupancy
from planner.openloop import OpenLoopClients, open_loop_demand
from planner.partition import keep_partition, partition_locks
from planner.placement import Fragmentation, fragmentation, layout


@dataclass(frozen=True)
class PlanOptions:
    """How to plan. ``hold_time_us`` None = the trace's mean hold time (us)."""

    slots: int
    server_rate_rps: float = 18.0e6
    policy: str = "knapsack"
    contention: str = "max"
    seed: int = 0
    hold_time_us: float | None = None
    coarse_group: int = 1
    handover_us: float | None = None
    """Switch time an exclusive hand-over adds to a hold (us), from the config's switch
    (:data:`planner.offered.HANDOVER_PASSES` passes). Given, the trace is read as the
    workload's demand and r_i are scaled to what a closed loop of its clients sustains
    (:mod:`planner.offered`); None keeps the trace's rates and states their bound."""
    rack: RackTiming | None = None
    """The rack's clients, network and lock servers (from the config). Given with a
    handover, and the trace names its transactions, r_i and the lock servers needed come
    from the closed-loop transaction model (:mod:`planner.closedloop`)."""
    open_loop: OpenLoopClients | None = None
    """Open-loop clients (the config's ``clients.send_limit_per_ms``): with a rack, the
    plan's rates come from :mod:`planner.openloop` instead of the closed loop."""
    servers: int | None = None
    """The lock-server count, settled elsewhere (``netlock servers``: by simulation); the
    plan's rates, ``servers_needed`` and partition are for that many. None: the rate model's
    count by issue 30's rule."""

    def problem(self, geometry: SwitchGeometry) -> str | None:
        """The first unusable option as ``--flag: what``, or None."""
        if not 0 <= self.slots <= geometry.total_slots:
            return (f"--slots: must be in 0..{geometry.total_slots} (the switch's register "
                    f"arrays), got {self.slots}")
        if not self.server_rate_rps > 0:
            return f"--server-rate: must be > 0 rps, got {self.server_rate_rps}"
        if self.policy not in POLICIES:
            return f"--policy: must be one of {', '.join(POLICIES)}, got {self.policy!r}"
        try:
            parse_statistic(self.contention)
        except ValueError as exc:
            return str(exc)
        if self.hold_time_us is not None and not self.hold_time_us >= 0:
            return f"--hold-us: must be >= 0, got {self.hold_time_us}"
        if self.coarse_group < 1:
            return f"--coarse: must be >= 1, got {self.coarse_group}"
        if self.handover_us is not None and not self.handover_us >= 0:
            return f"switch.pass_us: must be >= 0, got a hand-over of {self.handover_us} us"
        return None


@dataclass(frozen=True, eq=False)
class PlanReport:
    """A plan with what the planner learned making it. Rates in rps, times in us."""

    plan: Plan
    stats: LockStats
    slots: np.ndarray
    requests_total: int
    shared_requests: int
    requests_to_servers: int
    requests_over_contention: int
    hold_time_us: float
    hold_time_source: str
    st_bound_rps: float
    fragmentation: Fragmentation
    migration: PlanMigration | None
    """What ``netlock push`` will do to take a switch holding the live plan to this one."""
    warnings: tuple[str, ...]
    coarse_group: int


MOST_SERVERS = 64
"""``servers_needed`` looks no further than this many lock servers."""


def st_bound_rps(slots: int, hold_time_us: float) -> float:
    """S / T: requests per second S slots turn over when each is held T us."""
    if hold_time_us <= 0:
        return float("inf")
    return slots / (hold_time_us * 1e-6)


def make_plan(trace: Trace, geometry: SwitchGeometry, options: PlanOptions,
              live: Plan | None = None, digest: str | None = None,
              live_source: str = "live plan") -> PlanReport:
    """Plan ``trace`` for ``geometry``; ``live`` is the plan installed now (for migration)."""
    found = options.problem(geometry)
    if found:
        raise ConfigError(found)
    if live is not None and live.geometry != geometry:
        raise PlanError(f"{live_source}: geometry: made for a different switch geometry than "
                        f"this plan; a migration needs the same register arrays and priorities")
    if not trace.duration_s > 0:
        raise TraceError(f"{trace.source}: the trace spans no time (max t_release = min "
                         f"t_request), so request rates are undefined")
    stats = measure(trace, options.contention, geometry.priorities, options.coarse_group)
    trace_hold_us = _mean_hold_us(trace)
    hold_us, hold_source = ((float(options.hold_time_us), "given")
                            if options.hold_time_us is not None else (trace_hold_us, "trace mean"))
    if options.handover_us is not None and options.rack is not None and trace.txn is not None \
            and _several_locks(trace.txn):
        plan, slots, said, stats = _closed_loop_plan(trace, stats, geometry, options,
                                                     hold_us, live, digest)
    elif options.handover_us is not None and options.rack is not None:
        plan, slots, said, stats = _one_lock_plan(trace, stats, geometry, options, hold_us,
                                                  live, digest)
    else:
        demand = Demand.of(trace, options, trace_hold_us)
        said = demand.warnings(options)
        scale = demand.scale if options.handover_us is not None else 1.0
        if scale < 1.0:
            stats = replace(stats, rate_rps=stats.rate_rps * scale)
        plan, slots = plan_from_stats(stats, geometry, options, hold_us, live, digest,
                                      rates="closed-loop" if scale < 1.0 else "trace",
                                      rate_scale=scale)
    entries, switch = plan.entries, plan.summary.switch_rps
    bound = st_bound_rps(options.slots, hold_us)
    return PlanReport(
        plan=plan, stats=stats, slots=slots, requests_total=len(trace),
        shared_requests=int(np.count_nonzero(trace.mode == 0)),
        requests_to_servers=int(stats.requests_above(slots).sum()),
        requests_over_contention=int(stats.requests_above(stats.contention).sum()),
        hold_time_us=hold_us, hold_time_source=hold_source, st_bound_rps=bound,
        fragmentation=fragmentation(entries, geometry),
        migration=None if live is None else plan_migration(live, plan),
        warnings=said + _warnings(trace, geometry, options, switch,
                                                       bound, hold_us),
        coarse_group=options.coarse_group)


def _several_locks(txn: np.ndarray) -> bool:
    """Whether some transaction takes several locks: one-lock workloads keep the exact
    mean-value analysis of :mod:`planner.offered` (within a few per cent of the simulator
    on skewed exclusive locks, where the transaction model's Schweitzer correction is 40 %
    low), with the lock servers' path (:func:`_one_lock_plan`)."""
    return len(np.unique(txn)) < len(txn)


def _one_lock_plan(trace: Trace, stats: LockStats, geometry: SwitchGeometry,
                   options: PlanOptions, hold_us: float, live: Plan | None,
                   digest: str | None
                   ) -> tuple[Plan, np.ndarray, tuple[str, ...], LockStats]:
    """One-lock requests on the config's rack: allocate on the trace's r_i, then the exact
    MVA of :mod:`planner.offered` with the hand-overs of the locks left to the lock servers
    lengthened by their path (:meth:`Demand.of`); the lock servers needed by issue 30's
    rule (:func:`_one_lock_servers`)."""
    assert options.rack is not None
    capacities = tuple(geometry.priority_capacity(p) for p in range(geometry.priorities))
    slots = allocate(stats.rate_rps, stats.contention, stats.priority, options.slots,
                     capacities, options.policy, options.seed)
    locks = trace.lock_id // options.coarse_group
    sample = TxnSample.of(locks, trace.mode, np.arange(len(trace), dtype=np.int64))
    per_lock = np.zeros(len(sample.lock_ids))
    np.add.at(per_lock, np.searchsorted(sample.lock_ids, stats.lock_id), slots)
    if options.open_loop is not None:
        return _open_loop_plan(trace, stats, slots, geometry, options, hold_us, live, digest,
                               sample, per_lock)
    needed = _one_lock_servers(trace, options, sample, per_lock) if options.servers is None \
        else options.servers
    demand = one_lock_demand(trace, options, sample, per_lock, needed or None)
    scale = demand.scale
    served = demand.served_share
    if scale < 1.0:
        stats = replace(stats, rate_rps=stats.rate_rps * scale)
    total = float(stats.rate_rps.sum())
    plan = build_plan(stats, slots, geometry, options, hold_us, live=live, digest=digest,
                      rates="closed-loop" if scale < 1.0 else "trace", rate_scale=scale,
                      servers=needed, switch_rps=total * (1.0 - served) if served > 0 else None)
    return plan, slots, demand.warnings(options), stats


def one_lock_demand(trace: Trace, options: PlanOptions, sample: TxnSample,
                    per_lock: np.ndarray, servers: int | None = None) -> Demand:
    """The closed-loop rate of one-lock requests with ``per_lock`` switch slots (per dense
    lock of ``sample``) and ``servers`` lock servers (None: the rack's): the exact MVA of
    :mod:`planner.offered` with the lock servers' path (:meth:`Demand.of`)."""
    return Demand.of(trace, options, _mean_hold_us(trace), sample, per_lock, servers)


def _plan_at_model_rates(trace: Trace, stats: LockStats, slots: np.ndarray,
                         geometry: SwitchGeometry, options: PlanOptions, hold_us: float,
                         live: Plan | None, digest: str | None, rates: str, total_rps: float,
                         switch_rps: float, servers: int) -> tuple[Plan, float, LockStats]:
    """The plan with r_i scaled uniformly from the trace's rate to a rate model's total
    (requests/s; Algorithm 3's choice does not change), its rates named ``rates``."""
    scale = total_rps / (len(trace) / trace.duration_s)
    scaled = replace(stats, rate_rps=stats.rate_rps * scale)
    plan = build_plan(scaled, slots, geometry, options, hold_us, live=live, digest=digest,
                      rates=rates, rate_scale=scale, servers=servers, switch_rps=switch_rps)
    return plan, scale, scaled


def _open_loop_plan(trace: Trace, stats: LockStats, slots: np.ndarray,
                    geometry: SwitchGeometry, options: PlanOptions, hold_us: float,
                    live: Plan | None, digest: str | None, sample: TxnSample,
                    per_lock: np.ndarray
                    ) -> tuple[Plan, np.ndarray, tuple[str, ...], LockStats]:
    """One-lock requests from open-loop clients: r_i scaled to what they get
    (:mod:`planner.openloop`), the lock servers needed by issue 30's rule."""
    clients = options.open_loop
    assert clients is not None
    first = open_loop_demand(clients, sample, per_lock, 1)
    needed = 0 if options.servers is None else options.servers
    if options.servers is None and (first.server_rps > 0
                                    or first.total_rps < first.offered_rps * (1 - 1e-9)):
        needed = fewest_servers(
            lambda count: open_loop_demand(clients, sample, per_lock, count).total_rps,
            most=MOST_SERVERS)
    rates = open_loop_demand(clients, sample, per_lock, max(needed, 1))
    plan, scale, scaled = _plan_at_model_rates(
        trace, stats, slots, geometry, options, hold_us, live, digest, "open-loop",
        rates.total_rps, rates.switch_rps, needed)
    said = (f"r_i are scaled by {scale:.3g} to what the open-loop clients get: they offer "
            f"{rates.offered_rps:,.0f} rps, the switch carries {rates.switch_rps:,.0f} and "
            f"the lock servers {rates.server_rps:,.0f} (planner/openloop.py)",)
    return plan, slots, said, scaled


def _one_lock_servers(trace: Trace, options: PlanOptions, sample: TxnSample,
                      per_lock: np.ndarray, most: int = 64) -> int:
    """Issue 30's rule on the one-lock model: the fewest lock servers at which one more adds
    less than :data:`planner.closedloop.SERVER_GAIN` of throughput (0 when they get
    nothing)."""
    if one_lock_demand(trace, options, sample, per_lock, 1).served_share <= 0:
        return 0
    return fewest_servers(
        lambda count: one_lock_demand(trace, options, sample, per_lock, count).closed_loop_rps,
        most=most)


def _closed_loop_plan(trace: Trace, stats: LockStats, geometry: SwitchGeometry,
                      options: PlanOptions, hold_us: float, live: Plan | None,
                      digest: str | None) -> tuple[Plan, np.ndarray, tuple[str, ...], LockStats]:
    """Allocate on the trace's r_i (a uniform scale does not change Algorithm 3's choice)
    with each c_i sized by the closed loop's occupancy of its lock (:mod:`planner.occupancy`),
    then solve the transaction model with the locks left to the lock servers, scale r_i to
    its total and size the servers by its rule (:mod:`planner.closedloop`)."""
    assert options.rack is not None and trace.txn is not None
    capacities = tuple(geometry.priority_capacity(p) for p in range(geometry.priorities))
    sample = TxnSample.of(trace.lock_id // options.coarse_group, trace.mode, trace.txn)
    sized = size_by_occupancy(
        stats.contention, np.searchsorted(sample.lock_ids, stats.lock_id), sample,
        options.rack, lambda counts: allocate(stats.rate_rps, counts, stats.priority,
                                              options.slots, capacities, options.policy,
                                              options.seed),
        quantile_of(options.contention))
    stats = replace(stats, contention=sized.contention)
    slots, per_lock = sized.slots, sized.per_lock
    needed = model_servers_needed(sample, options.rack, per_lock) if options.servers is None \
        else options.servers
    rates = solve(sample, options.rack, per_lock, needed or options.rack.servers)
    trace_rps = len(trace) / trace.duration_s
    plan, scale, scaled = _plan_at_model_rates(
        trace, stats, slots, geometry, options, hold_us, live, digest, "closed-loop (approx)",
        rates.total_rps, rates.switch_rps, needed)
    said = (f"r_i are scaled by {scale:.3g} from the trace's {trace_rps:,.0f} rps to what the "
            f"rack carries: {options.rack.clients} transaction contexts cycling every "
            f"{rates.cycle_us:.3g} us ({rates.wait_us:.3g} us of it waiting for locks; "
            f"limited by {rates.bound}) complete {rates.txn_rps:,.0f} transactions/s, "
            f"{rates.total_rps:,.0f} rps (closed-loop transaction model: the sample's "
            f"transactions replayed on the contexts' FIFO lock queues, the lock servers' "
            f"path and per-core queues drawn per request, their CPU's bound; see "
            f"planner/closedloop.py)", *sized.describe())
    return plan, slots, said, scaled


def plan_from_stats(stats: LockStats, geometry: SwitchGeometry, options: PlanOptions,
                    hold_time_us: float, live: Plan | None = None,
                    digest: str | None = None, rates: str = "trace",
                    rate_scale: float = 1.0) -> tuple[Plan, np.ndarray]:
    """Allocate (Algorithm 3 or random) from measured r_i and c_i (``stats``), then build the
    plan (:func:`build_plan`); also returns the slots given to each item of ``stats``.
    ``rates`` and ``rate_scale`` say where r_i came from (:class:`netlock.plan.PlanSummary`)."""
    capacities = tuple(geometry.priority_capacity(p) for p in range(geometry.priorities))
    slots = allocate(stats.rate_rps, stats.contention, stats.priority, options.slots,
                     capacities, options.policy, options.seed)
    plan = build_plan(stats, slots, geometry, options, hold_time_us, live=live, digest=digest,
                      rates=rates, rate_scale=rate_scale)
    return plan, slots


class PlanItems(Protocol):
    """Per-item r_i (rps) and c_i, items sorted by (lock_id, priority): a
    :class:`planner.measure.LockStats`, or the locks the autopilot measured on a switch."""

    @property
    def lock_id(self) -> np.ndarray: ...

    @property
    def priority(self) -> np.ndarray: ...

    @property
    def rate_rps(self) -> np.ndarray: ...

    @property
    def contention(self) -> np.ndarray: ...


def build_plan(items: PlanItems, slots: np.ndarray, geometry: SwitchGeometry,
               options: PlanOptions, hold_time_us: float | None, *, live: Plan | None = None,
               partition: tuple[PartitionRange, ...] | None = None, digest: str | None = None,
               rates: str = "trace", rate_scale: float = 1.0,
               servers: int | None = None, switch_rps: float | None = None) -> Plan:
    """The plan giving each item of ``items`` its ``slots``: the one builder of plans, for
    ``netlock plan``, the simulator's pilot and the autopilot.

    The regions are laid out keeping ``live``'s in place where possible; the summary's switch
    rate is sum r_i min(s_i, c_i) / c_i and the lock servers needed carry the rest at
    ``options.server_rate_rps``. ``partition`` is kept as given (the autopilot cannot add or
    remove lock servers); None splits the lock ids over the servers needed, keeping
    ``live``'s ranges as far as that count allows (:func:`planner.partition.keep_partition`).
    ``servers`` is the lock servers needed and ``switch_rps`` the switch's rate when a
    model decided them (else the server rate divided into the servers' load, and the
    formula above).
    """
    entries = _entries(items, slots, geometry, live)
    total = float(items.rate_rps.sum())
    switch = min(switch_rate(items.rate_rps, items.contention,
                             np.minimum(slots, items.contention)) if switch_rps is None
                 else switch_rps, total)
    server = max(total - switch, 0.0)
    needed = servers_needed(server, options.server_rate_rps) if servers is None else servers
    if partition is None:
        partition = _partition(items, slots, max(needed, 1), live)
    plan = Plan(
        geometry=geometry, policy=options.policy,
        inputs=PlanInputs(slots=options.slots, server_rate_rps=options.server_rate_rps,
                          trace_digest=digest, contention=options.contention,
                          hold_time_us=hold_time_us, lock_group=options.coarse_group),
        entries=entries, partition=partition,
        summary=PlanSummary(
            policy=options.policy, slots_total=options.slots,
            slots_used=int(entries.slots.sum()), locks_total=_distinct(items.lock_id),
            locks_in_switch=_distinct(entries.lock_id), total_rps=total, switch_rps=switch,
            server_rps=server, servers_needed=needed, server_rate=options.server_rate_rps,
            rates=rates, rate_scale=rate_scale))
    bug = plan.problem()
    if bug:
        raise PlanError(f"internal: the computed plan is inconsistent: row {bug[0]}: {bug[1]}")
    return plan


def for_servers(report: PlanReport, servers: int) -> Plan:
    """``report``'s plan with its lock ids partitioned over ``servers`` lock servers (to run
    it on a rack of that many, rather than folding its own count's ranges onto them)."""
    partition = _partition(report.stats, report.slots, max(servers, 1), None)
    return replace(report.plan, partition=partition)


def _partition(items: PlanItems, slots: np.ndarray, servers: int,
               live: Plan | None) -> tuple[PartitionRange, ...]:
    """The lock ids over ``servers`` by the load the switch leaves them, ``live``'s ranges
    kept where it has some."""
    load = server_load_rps(items.rate_rps, items.contention, slots)
    if live is not None and live.partition:
        return keep_partition(live.partition, items.lock_id, load, servers)
    return partition_locks(items.lock_id, load, servers)


def _entries(items: PlanItems, slots: np.ndarray, geometry: SwitchGeometry,
             live: Plan | None) -> SwitchEntries:
    chosen = np.flatnonzero(slots > 0)
    left = layout(items.lock_id[chosen], items.priority[chosen], slots[chosen], geometry,
                  None if live is None else live.entries)
    return SwitchEntries(lock_id=items.lock_id[chosen], slots=slots[chosen], left=left,
                         right=left + slots[chosen] - 1, priority=items.priority[chosen],
                         rate_rps=items.rate_rps[chosen], contention=items.contention[chosen])


def _distinct(lock_id: np.ndarray) -> int:
    """Distinct values of a sorted-by-lock array (items repeat a lock per priority)."""
    return int(np.count_nonzero(np.r_[True, lock_id[1:] != lock_id[:-1]])) if len(lock_id) \
        else 0


def _mean_hold_us(trace: Trace) -> float:
    """Mean t_release - t_request over the trace, us (summed in chunks: 8 bytes a row)."""
    step = 1 << 20
    total = sum(float(np.sum(trace.t_release[i:i + step] - trace.t_request[i:i + step]))
                for i in range(0, len(trace), step))
    return total / len(trace) * 1e6


def _warnings(trace: Trace, geometry: SwitchGeometry, options: PlanOptions, switch_rps: float,
              bound_rps: float, hold_us: float) -> tuple[str, ...]:
    out = []
    if switch_rps > bound_rps * (1 + 1e-9):
        out.append(f"the plan asks the switch for {switch_rps:,.0f} rps but {options.slots} "
                   f"slots held {hold_us:g} us each turn over at most {bound_rps:,.0f} rps "
                   f"(S/T bound): expect more load on the lock servers")
    if trace.priority is not None and geometry.priorities < int(trace.priority.max()) + 1:
        out.append(f"the trace uses priorities up to {int(trace.priority.max())} but the "
                   f"switch has {geometry.priorities}: lower classes share the last one")
    if options.coarse_group > 1:
        out.append(f"coarse locks: lock ids in this plan are trace lock ids // "
                   f"{options.coarse_group} (inputs.lock_group); clients must request "
                   f"coarse lock ids")
    return tuple(out)
