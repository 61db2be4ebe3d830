"""A plan: which locks live in the switch, where their queue regions are, who serves the rest.

Plans are values. The planner makes them, the simulator and the hardware runner consume
them, and :mod:`netlock.plan_io` is the one place that reads and writes them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from netlock.geometry import SwitchGeometry
from netlock.server_lookup import NO_RANGES, owning_servers

PLAN_FORMAT_VERSION = 1
POLICIES = ("knapsack", "random", "even", "manual")


@dataclass(frozen=True)
class PartitionRange:
    """Locks ``lo..hi`` (inclusive) that the switch does not own are served by ``server``."""

    lo: int
    hi: int
    server: int


@dataclass(frozen=True)
class PlanInputs:
    """What the plan was computed from. Rates in requests per second (rps)."""

    slots: int
    server_rate_rps: float
    trace_digest: str | None = None
    contention: str = "max"
    hold_time_us: float | None = None
    lock_group: int = 1
    """Trace locks merged per coarse-grained lock: plan lock id = trace lock id // lock_group."""


@dataclass(frozen=True)
class PlanSummary:
    """The ``netlock plan --json`` summary (docs/formats.md); rates in rps."""

    policy: str
    slots_total: int
    slots_used: int
    locks_total: int
    locks_in_switch: int
    total_rps: float
    switch_rps: float
    server_rps: float
    servers_needed: int
    server_rate: float
    rates: str = "trace"
    """Where r_i came from: ``trace`` (as measured in the trace: the demand of clients
    that never wait, an upper bound when locks conflict), ``closed-loop`` (scaled to the
    rate the rack's clients sustain, planner/offered.py), ``open-loop`` (what open-loop
    clients get, planner/openloop.py) or ``pilot`` (measured in the simulator's warm-up
    run)."""
    rate_scale: float = 1.0
    """total_rps over the trace's request rate (1 = the trace's rates)."""

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class SwitchEntries:
    """Switch-resident queue regions, one row per (lock, priority), as int64 columns.

    ``left``/``right`` are inclusive global shared-queue slot indices;
    ``slots == right - left + 1``. ``rate_rps`` and ``contention`` record the r_i and c_i
    the allocation used (NaN / 0 when unknown).
    """

    lock_id: np.ndarray
    slots: np.ndarray
    left: np.ndarray
    right: np.ndarray
    priority: np.ndarray
    rate_rps: np.ndarray = field(default=None)  # type: ignore[assignment]
    contention: np.ndarray = field(default=None)  # type: ignore[assignment]

    COLUMNS = ("lock_id", "slots", "left", "right", "priority", "rate_rps", "contention")

    def __post_init__(self) -> None:
        n = len(self.lock_id)
        for name in ("lock_id", "slots", "left", "right", "priority"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.int64))
        if self.rate_rps is None:
            object.__setattr__(self, "rate_rps", np.full(n, np.nan))
        if self.contention is None:
            object.__setattr__(self, "contention", np.zeros(n, dtype=np.int64))
        object.__setattr__(self, "rate_rps", np.asarray(self.rate_rps, dtype=np.float64))
        object.__setattr__(self, "contention", np.asarray(self.contention, dtype=np.int64))
        for name in self.COLUMNS:
            if len(getattr(self, name)) != n:
                raise ValueError(f"entries.{name}: length {len(getattr(self, name))} != {n}")

    def __len__(self) -> int:
        return len(self.lock_id)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SwitchEntries):
            return NotImplemented
        return all(
            np.array_equal(getattr(self, c), getattr(other, c), equal_nan=(c == "rate_rps"))
            for c in self.COLUMNS
        )

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def empty(cls) -> SwitchEntries:
        z = np.zeros(0, dtype=np.int64)
        return cls(z, z, z, z, z)

    def rows(self) -> list[dict]:
        """Rows as plain dicts (for YAML and printing); fine for small plans only."""
        out = []
        for i in range(len(self)):
            row = {c: getattr(self, c)[i].item() for c in self.COLUMNS}
            if math.isnan(row["rate_rps"]):
                row["rate_rps"] = None
            out.append(row)
        return out

    def problem(self, geometry: SwitchGeometry) -> tuple[int | None, str] | None:
        """The first inconsistency as ``(row, 'field: what')``, or None when valid."""
        n = len(self)
        if n == 0:
            return None
        checks = [
            (self.lock_id < 0, "lock_id: must be >= 0"),
            (self.slots < 1, "slots: must be >= 1"),
            (self.right - self.left + 1 != self.slots, "slots: must equal right - left + 1"),
            ((self.priority < 0) | (self.priority >= geometry.priorities),
             f"priority: must be in 0..{geometry.priorities - 1}"),
        ]
        for bad, msg in checks:
            if bad.any():
                return int(np.argmax(bad)), msg
        ranges = np.array(geometry.priority_ranges, dtype=np.int64)
        lo, hi = ranges[self.priority, 0], ranges[self.priority, 1]
        bad = (self.left < lo) | (self.right > hi)
        if bad.any():
            i = int(np.argmax(bad))
            return i, (f"left/right: region [{self.left[i]}, {self.right[i]}] is outside priority "
                       f"{self.priority[i]}'s slots [{lo[i]}, {hi[i]}]")
        order = np.argsort(self.left, kind="stable")
        overlap = self.left[order][1:] <= self.right[order][:-1]
        if overlap.any():
            i = int(order[1:][np.argmax(overlap)])
            return i, f"left: region [{self.left[i]}, {self.right[i]}] overlaps another region"
        keys = self.lock_id * max(geometry.priorities, 1) + self.priority
        uniq, first = np.unique(keys, return_index=True)
        if len(uniq) != n:
            dup = np.setdiff1d(np.arange(n), first)[0]
            return int(dup), "lock_id: the same lock and priority appear twice"
        return None


@dataclass(frozen=True)
class Plan:
    """A complete allocation for one switch geometry."""

    geometry: SwitchGeometry
    policy: str
    inputs: PlanInputs
    entries: SwitchEntries
    partition: tuple[PartitionRange, ...]
    summary: PlanSummary
    version: int = PLAN_FORMAT_VERSION

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"policy: must be one of {', '.join(POLICIES)}, got {self.policy!r}")

    @property
    def servers(self) -> int:
        return 1 + max((p.server for p in self.partition), default=0)

    def server_of(self, lock_ids: np.ndarray, servers: int | None = None) -> np.ndarray:
        """Owning lock server of each lock id on a rack of ``servers`` lock servers (default
        the plan's own count), by :func:`netlock.server_lookup.owning_server`."""
        lock_ids = np.ascontiguousarray(lock_ids, dtype=np.int64)
        his, owners = self.partition_arrays()
        out = np.empty(lock_ids.shape, dtype=np.int64)
        owning_servers(lock_ids.reshape(-1), his, owners, max(servers or self.servers, 1),
                       out.reshape(-1))
        return out

    def partition_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The partition as :mod:`netlock.server_lookup` takes it: the ranges' upper bounds
        and their servers (both empty: no ranges, the rack hashes)."""
        if not self.partition:
            return NO_RANGES, NO_RANGES
        return (np.array([p.hi for p in self.partition], dtype=np.int64),
                np.array([p.server for p in self.partition], dtype=np.int64))

    def problem(self) -> tuple[int | None, str] | None:
        """First inconsistency of the whole plan as ``(row, 'field: what')``, or None."""
        if self.version != PLAN_FORMAT_VERSION:
            return None, f"version: unsupported plan format {self.version}"
        found = self.entries.problem(self.geometry)
        if found:
            return found[0], f"entries.{found[1]}"
        used = int(self.entries.slots.sum())
        if used > self.geometry.total_slots:
            return None, (f"entries: {used} slots used but the switch has "
                          f"{self.geometry.total_slots}")
        prev_hi = -1
        for i, part in enumerate(self.partition):
            if part.lo != prev_hi + 1 or part.hi < part.lo or part.server < 0:
                return None, (f"partition[{i}]: ranges must be contiguous from lock 0 with "
                              f"lo <= hi and server >= 0, got {part}")
            prev_hi = part.hi
        return None


def servers_needed(server_rps: float, server_rate_rps: float) -> int:
    """ceil(server_rps / server_rate_rps), tolerant of float noise just above an integer."""
    if server_rps <= 0:
        return 0
    ratio = server_rps / server_rate_rps
    return max(1, math.ceil(ratio - 1e-9))
