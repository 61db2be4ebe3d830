"""Plans made on the fly: a warm-up trace of the workload, then Algorithm 3 (or random).

NetLock measures r_i and c_i in the running rack; the simulator does the same with a
warm-up run of the rack with every lock on the lock servers (:func:`trace_from_uses`; see
:mod:`sim.core.pilot`). Without lock servers it synthesises a trace instead
(:func:`sim.workloads.tracegen.warmup_trace`): every client runs its transactions back to
back with the network's round trip, the data read and the think time. c_i is the larger
of the concurrency measured with :func:`planner.measure.measure` and the number of
clients that asked for the lock (:func:`contention`). r_i are the rates the planned rack will offer
(:func:`offered_stats`): a micro workload's from its known distribution for every lock it
can draw (with one lock per transaction, totalling the closed-loop rate of its clients);
other workloads' as measured. The
planner's :func:`planner.planning.plan_from_stats` then gives the switch-resident locks
their regions under ``policy.allocation`` and ``switch.slots``;
locks outside the switch are split over ``servers.count`` lock servers by
``servers.partition``.

With ``policy.coarse_group`` K > 1 the clients lock coarse-grained locks (paper section 4.5,
for uniform workloads): :class:`CoarseWorkload` turns workload lock id x into x // K, as the
planner does, so warm-up, plan and run all see the coarse ids.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from netlock.config import Config
from netlock.plan import Plan
from netlock.server_lookup import NO_RANGES, owning_server
from netlock.trace import Trace
from planner.allocate import server_load_rps
from planner.measure import LockStats, measure
from planner.offered import closed_loop_rps, handover_us
from planner.partition import partition_locks
from planner.planning import PlanOptions, plan_from_stats
from sim.core.rows import Table, column
from sim.workloads import workload_from_config
from sim.workloads.base import TxnBatch, WorkloadGenerator
from sim.workloads.factory import make_workload
from sim.workloads.micro import MicroWorkload


class CoarseWorkload:
    """``inner`` with locks ``g * K .. g * K + K - 1`` merged into coarse lock ``g``.

    A transaction takes each coarse lock once, exclusive if any of its locks in it was."""

    def __init__(self, inner: WorkloadGenerator, group: int) -> None:
        self.inner = inner
        self.group = group

    @property
    def n_locks(self) -> int:
        return -(-self.inner.n_locks // self.group)

    @property
    def clients_independent(self) -> bool:
        return bool(getattr(self.inner, "clients_independent", False))

    @property
    def timed(self) -> bool:
        return bool(getattr(self.inner, "timed", False))

    def next_txn(self, client_id: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        locks, modes = self.inner.next_txn(client_id, rng)
        batch = self._merge(TxnBatch(np.asarray(locks, dtype=np.int64),
                                     np.asarray(modes, dtype=np.int8),
                                     np.array([0, len(locks)], dtype=np.int64),
                                     np.zeros(1, dtype=np.int64)))
        return batch.lock_ids, batch.modes

    def sample_txns(self, n: int, rng: np.random.Generator,
                    client_ids: np.ndarray | None = None) -> TxnBatch:
        return self._merge(self.inner.sample_txns(n, rng, client_ids))

    def describe(self) -> str:
        return (f"{self.inner.describe()} Locks are merged {self.group} per coarse lock "
                f"(lock id // {self.group}).")

    def _merge(self, batch: TxnBatch) -> TxnBatch:
        coarse = batch.lock_ids // self.group
        txn = batch.txn_index()
        first = np.ones(len(coarse), dtype=bool)
        first[1:] = (coarse[1:] != coarse[:-1]) | (txn[1:] != txn[:-1])
        starts = np.flatnonzero(first)
        modes = (np.maximum.reduceat(batch.modes, starts) if len(starts)
                 else batch.modes[:0])
        sizes = np.bincount(txn[starts], minlength=len(batch))
        offsets = np.zeros(len(batch) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        return TxnBatch(coarse[starts], modes.astype(np.int8, copy=False), offsets,
                        batch.client_ids, batch.start_us, batch.hold_us)


class Partition:
    """Which lock server owns a lock id: ``hash`` (id modulo the server count) or contiguous
    ``range``s of ids balancing the load the switch leaves to the servers, by
    :func:`netlock.server_lookup.owning_server` (``his``: the ranges' upper bounds,
    ``owners``: their servers; both empty for hash)."""

    def __init__(self, servers: int, his: list[int] | None = None,
                 owners: list[int] | None = None) -> None:
        self.servers = max(servers, 1)
        self.his = np.asarray(his if his else NO_RANGES, dtype=np.int64)
        self.owners = np.asarray(owners if owners else NO_RANGES, dtype=np.int64)

    def owner(self, lock: int) -> int:
        """Called per packet from Python: the rule's Python body, not a compiled call."""
        return int(_owning_server(lock, self.his, self.owners, self.servers))


_owning_server = getattr(owning_server, "py_func", owning_server)


@dataclass(frozen=True)
class Warmup:
    """A warm-up trace and the client behind each of its requests."""

    trace: Trace
    clients: np.ndarray


def trace_from_uses(requests: Table, priorities: list[int]) -> Warmup:
    """The trace of a warm-up run: each granted request from when it was made to when its
    client stopped using the lock (``Recorder.requests_columns`` rows, times in us)."""
    made = (column(requests, "t_us") - column(requests, "latency_us")) * 1e-6
    ended = column(requests, "end_us") * 1e-6
    clients = column(requests, "client").astype(np.int64)
    trace = Trace(source="warm-up run", lock_id=column(requests, "lock").astype(np.int64),
                  mode=column(requests, "mode").astype(np.int8), t_request=made,
                  t_release=np.maximum(ended, made),
                  priority=np.asarray(priorities, dtype=np.int64)[clients])
    return Warmup(trace, clients)


def contention(warmup: Warmup, stats: LockStats, priorities: int) -> np.ndarray:
    """c_i per item: the measured concurrency, but at least the number of clients that asked
    for the item, as a client may hold or wait for each lock once (the paper takes c_i from
    "how many clients may need this lock"); a short warm-up rarely sees those clients
    overlap even when they will."""
    trace = warmup.trace
    prio = np.minimum(trace.priority, priorities - 1) if priorities > 1 else 0
    item = trace.lock_id * max(priorities, 1) + prio
    keys, askers = distinct_askers(item, warmup.clients)
    wanted = stats.lock_id * max(priorities, 1) + (stats.priority if priorities > 1 else 0)
    return np.maximum(stats.contention, askers[np.searchsorted(keys, wanted)])


def distinct_askers(item: np.ndarray, clients: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct items (sorted) and how many distinct clients asked for each: one sort of
    the (item, client) pairs, as one int64 where they fit (``np.unique(..., axis=1)``
    compares them as opaque bytes and made most of a fast run's plan time)."""
    if len(item) == 0:
        return item[:0], np.zeros(0, dtype=np.int64)
    width = int(clients.max()) + 1
    if item.min() >= 0 and clients.min() >= 0 and int(item.max()) < (2**62) // width:
        pairs = np.sort(item * width + clients)
        item = pairs // width
        first = np.r_[True, pairs[1:] != pairs[:-1]]
    else:
        order = np.lexsort((clients, item))
        item, clients = item[order], clients[order]
        first = np.r_[True, (item[1:] != item[:-1]) | (clients[1:] != clients[:-1])]
    item = item[first]
    starts = np.flatnonzero(np.r_[True, item[1:] != item[:-1]])
    return item[starts], np.diff(np.r_[starts, len(item)])


def plan_from_trace(warmup: Warmup, config: Config, hold_us: float,
                    slots: int | None = None) -> tuple[Plan, Partition]:
    """The plan for ``config`` (or for ``slots`` switch slots) and the lock servers'
    partition, from a warm-up trace: the planner's Algorithm 3 (or random) on c_i measured
    from it (raised to the number of clients that asked for each lock) and on the r_i the
    rack offers (:func:`offered_stats`). The trace already holds coarse lock ids
    (:class:`CoarseWorkload`); the plan records K."""
    geometry = config.geometry
    stats = measure(warmup.trace, config.policy.contention, geometry.priorities)
    stats = replace(stats, contention=contention(warmup, stats, geometry.priorities))
    stats, rates, scale = offered_stats(stats, warmup.trace, config, hold_us)
    slots = config.switch.slots if slots is None else slots
    if config.policy.allocation == "random":
        slots = random_share(stats, config, slots)
    options = PlanOptions(
        slots=slots,
        server_rate_rps=config.servers.capacity_rps, policy=config.policy.allocation,
        contention=config.policy.contention, seed=config.sim.seed,
        coarse_group=config.policy.coarse_group)
    plan, given = plan_from_stats(stats, geometry, options, hold_us, rates=rates,
                                  rate_scale=scale)
    return plan, partition(stats.lock_id,
                           server_load_rps(stats.rate_rps, stats.contention, given), config)


def random_share(stats: LockStats, config: Config, slots: int) -> int:
    """The slots the random policy gives the locks in ``stats`` (us: a count of slots).

    The paper's strawman "randomly divides locks between the switch and the servers": all
    the workload's locks, not just those a warm-up saw (which are the popular ones). A
    random order over the whole lock space gives the seen locks their share of the slots
    (their c_i against one slot for each lock never seen); the rest would go to locks that
    carry next to no requests, so they are left out of the plan. The lock space is the
    workload's, a replayed trace's included (its largest lock id + 1).
    """
    group = config.policy.coarse_group
    space = -(-make_workload(config).n_locks // group)
    seen = len(np.unique(stats.lock_id))
    if space <= seen:
        return slots
    wanted = float(np.sum(stats.contention))
    return int(slots * wanted / (wanted + space - seen))


def known_popularity(config: Config) -> np.ndarray | None:
    """Per lock id (coarse ids under ``policy.coarse_group``), the share of requests that
    ask for it, when the workload knows it exactly: the microbenchmark draws each lock
    from its Zipf / uniform pmf (exact for one lock per transaction; with several distinct
    locks per transaction the hottest are slightly less likely than the pmf says). None for
    workloads whose popularity is only known by sampling (TPC-C, traces)."""
    workload = workload_from_config(config) if config.workload.kind == "micro" else None
    if not isinstance(workload, MicroWorkload):
        return None
    pmf = workload.pmf()
    group = config.policy.coarse_group
    return np.add.reduceat(pmf, np.arange(0, len(pmf), group)) if group > 1 else pmf


def offered_stats(stats: LockStats, trace: Trace, config: Config,
                  hold_us: float) -> tuple[LockStats, str, float]:
    """``stats`` with the r_i the planned rack will offer, where the rates come from, and
    their total over the trace's.

    Why: the warm-up trace is a different rack (every lock on the lock servers, or clients
    that never wait), so its rates are not the planned rack's, and a warm-up too short for
    the lock count never sees most locks of a large uniform workload, which then would all
    be left to the lock servers. So:

    - a workload with a known popularity (:func:`known_popularity`) gives every lock it can
      draw a rate, in every priority class in the trace's proportions; c_i is the measured
      one where the warm-up saw the lock, else 1 (one request at a time);
    - for one-lock transactions the total is the closed-loop rate of the config's clients
      (:func:`planner.offered.closed_loop_rps`: each client keeps one request, an exclusive
      lock hands over once per hold plus the switch's hand-over passes), capped by what the
      client machines can generate; otherwise it is the trace's measured total.
    """
    measured_rps = len(trace) / trace.duration_s
    measured = "pilot" if trace.source == "warm-up run" else "trace"
    popularity = known_popularity(config)
    if popularity is None:
        return stats, measured, 1.0
    priorities = config.geometry.priorities
    classes = (np.minimum(trace.priority, priorities - 1) if priorities > 1
               and trace.priority is not None else np.zeros(len(trace), dtype=np.int64))
    class_share = np.bincount(classes, minlength=priorities) / len(trace)
    wl = config.workload
    total, rates = measured_rps, measured
    if wl.locks_per_txn == 1:
        exclusive = popularity * float(np.mean(trace.mode == 1))
        handover = hold_us + handover_us(config.switch.pass_us)
        caps = [config.clients.machines * config.clients.rate_rps]
        if wl.rate_rps > 0:
            caps.append(wl.clients * wl.rate_rps)
        total = min(closed_loop_rps(exclusive, wl.clients, handover), *caps)
        rates = "closed-loop"
    return every_lock(stats, popularity, class_share, total), rates, total / measured_rps


def every_lock(stats: LockStats, popularity: np.ndarray, class_share: np.ndarray,
               total_rps: float) -> LockStats:
    """``stats`` over every (lock, class) with a non-zero share: r_i = ``total_rps`` x the
    lock's popularity x the class's share; measured requests and c_i where ``stats`` has
    the item, else no requests and c_i = 1."""
    classes = np.flatnonzero(class_share > 0)
    locks = np.arange(len(popularity), dtype=np.int64)
    lock_id = np.repeat(locks, len(classes))
    priority = np.tile(classes, len(locks)).astype(np.int64)
    p = len(class_share)
    keys = lock_id * p + priority
    at = np.searchsorted(keys, stats.lock_id * p + stats.priority)
    requests = np.zeros(len(keys), dtype=stats.requests.dtype)
    requests[at] = stats.requests
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(requests, out=offsets[1:])
    found = np.ones(len(keys), dtype=np.int64)
    cmax = found.copy()
    found[at] = stats.contention
    cmax[at] = stats.contention_max
    return replace(stats, lock_id=lock_id, priority=priority, requests=requests,
                   rate_rps=total_rps * popularity[lock_id] * class_share[priority],
                   contention=found, contention_max=cmax, offsets=offsets)


def partition(lock_id: np.ndarray, load_rps: np.ndarray, config: Config) -> Partition:
    """The lock servers' partition per ``servers.partition``."""
    count = max(config.servers.count, 1)
    if config.servers.partition == "hash" or count == 1:
        return Partition(count)
    ranges = partition_locks(lock_id, load_rps, count)
    return Partition(count, [p.hi for p in ranges], [p.server for p in ranges])
