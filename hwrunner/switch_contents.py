"""What a switch holds (or will hold): each switch-resident lock's register index and region.

A :class:`Layout` is the plan seen through a profile: the lock-to-index table, the queue
region [left, right] (global shared-queue slots, the plan's numbering) of every lock, and the
lock-server partition. A :class:`Migration` is the difference between the live layout and the
target, as :mod:`planner.migrate` defines it for ``netlock plan --live`` too: which locks stay,
move (same index, new region), leave (hand over to their lock server) or enter (start empty),
and which lock-id ranges change lock server. Register indices of locks that stay are kept, so
a lock that does not move is never touched.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwrunner.operations import EntryAdd
from hwrunner.profile import SwitchProfile
from netlock.errors import TargetError
from netlock.plan import PartitionRange, Plan
from planner.migrate import (
    EVERY_LOCK,
    ServerMove,
    normalize_partition,
    region_changes,
    server_moves,
)

_I64 = np.int64


@dataclass(frozen=True)
class Layout:
    """Switch-resident locks sorted by ``lock_id`` (int64 columns) plus the partition."""

    lock_id: np.ndarray
    index: np.ndarray
    left: np.ndarray
    right: np.ndarray
    partition: tuple[PartitionRange, ...] = ()

    COLUMNS = ("lock_id", "index", "left", "right")

    def __post_init__(self) -> None:
        cols = {c: np.asarray(getattr(self, c), dtype=_I64) for c in self.COLUMNS}
        order = np.argsort(cols["lock_id"], kind="stable")
        for c, v in cols.items():
            object.__setattr__(self, c, v[order])
        if len({len(v) for v in cols.values()}) > 1:
            raise ValueError("layout columns of unequal length")

    def __len__(self) -> int:
        return len(self.lock_id)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return self.partition == other.partition and all(
            np.array_equal(getattr(self, c), getattr(other, c)) for c in self.COLUMNS)

    __hash__ = None  # type: ignore[assignment]

    @property
    def slots(self) -> np.ndarray:
        return self.right - self.left + 1

    @classmethod
    def empty(cls) -> Layout:
        z = np.zeros(0, dtype=_I64)
        return cls(z, z, z, z, ())

    def take(self, rows: np.ndarray) -> Layout:
        return Layout(*(getattr(self, c)[rows] for c in self.COLUMNS), self.partition)

    def to_dict(self) -> dict:
        return {"locks": {c: getattr(self, c).tolist() for c in self.COLUMNS},
                "partition": [[p.lo, p.hi, p.server] for p in self.partition]}

    @classmethod
    def from_dict(cls, doc: dict) -> Layout:
        locks = doc["locks"]
        return cls(*(locks[c] for c in cls.COLUMNS),
                   tuple(PartitionRange(int(lo), int(hi), int(s))
                         for lo, hi, s in doc.get("partition", [])))


def check_fits(plan: Plan, profile: SwitchProfile, lock_capacity: int | None = None,
               slot_capacity: int | None = None) -> None:
    """Refuse (one TargetError line) a plan the switch cannot hold: more priority classes than
    its one queue per lock, more locks than its lock indices, more slots than its registers.

    The capacities default to the profile's; a connected switch may report its own.
    """
    classes = max(plan.geometry.priorities, int(plan.entries.priority.max(initial=0)) + 1)
    if classes != 1:
        raise TargetError(f"plan: geometry.priorities: the plan is for {classes} priority "
                          f"classes, but profile {profile.name} has one queue per lock (1 "
                          f"class); plan again with --priorities 1")
    capacity = lock_capacity or profile.lock_capacity
    if len(plan.entries) > capacity - profile.lock_index_base:
        raise TargetError(f"plan: {len(plan.entries)} switch-resident locks, but the switch has "
                          f"{capacity - profile.lock_index_base} lock indices")
    needed = profile.slot_base + plan.geometry.total_slots
    slots = slot_capacity or profile.slot_capacity
    if needed > slots:
        raise TargetError(f"plan: geometry has {plan.geometry.total_slots} slots, but the "
                          f"switch holds {slots - profile.slot_base}")


def layout_for(plan: Plan, profile: SwitchProfile, live: Layout | None = None,
               lock_capacity: int | None = None, slot_capacity: int | None = None) -> Layout:
    """The layout that realises ``plan``, keeping the register index of every live lock.

    Entering locks take the lowest indices no live lock uses; only when those run out do they
    reuse indices of locks that leave. The plan must fit the switch (:func:`check_fits`).
    """
    check_fits(plan, profile, lock_capacity, slot_capacity)
    live = live or Layout.empty()
    entries = plan.entries
    capacity = lock_capacity or profile.lock_capacity
    lock_id = entries.lock_id
    index = np.zeros(len(lock_id), dtype=_I64)
    kept = np.zeros(len(lock_id), dtype=bool)
    if len(live):
        pos = np.minimum(np.searchsorted(live.lock_id, lock_id), len(live) - 1)
        kept = live.lock_id[pos] == lock_id
        index[kept] = live.index[pos[kept]]
    fresh_needed = int((~kept).sum())
    if fresh_needed:
        base = profile.lock_index_base
        span = np.arange(base, min(capacity, base + fresh_needed + len(live)), dtype=_I64)
        unused = span[~np.isin(span, live.index)]
        ours = (live.index >= base) & (live.index < capacity) & ~np.isin(live.index, index[kept])
        freed = np.sort(live.index[ours])
        pool = np.concatenate([unused, freed])
        index[~kept] = pool[:fresh_needed]
    partition = normalize_partition(plan.partition or EVERY_LOCK, profile.partition.key_width)
    return Layout(lock_id, index, entries.left, entries.right, partition)


def decode_partition(profile: SwitchProfile, entries: EntryAdd) -> tuple[PartitionRange, ...]:
    """Partition-table entries -> server ranges; an address the profile does not list becomes
    server -1."""
    part = profile.partition
    if len(entries) == 0:
        return ()
    key = entries.keys[0]
    full = (1 << part.key_width) - 1
    if key.mask is not None:
        lo, hi = key.value, key.value | (~key.mask & full)
    else:
        lo, hi = key.value, key.high if key.high is not None else key.value
    index_of = {ip: i for i, ip in enumerate(part.servers)}
    server = [index_of.get(int(ip), -1) for ip in entries.data[0].value.tolist()]
    ranges = [PartitionRange(int(a), int(b), s) for a, b, s in zip(lo.tolist(), hi.tolist(),
                                                                   server, strict=True)]
    return normalize_partition(tuple(ranges), part.key_width)


@dataclass(frozen=True)
class Migration:
    """From ``live`` to ``target``: row selections into each layout.

    ``moved`` are rows of ``target`` whose lock stays but changes region; ``entering`` rows of
    ``target``; ``leaving`` rows of ``live``; ``moved_live`` the live rows of the moved locks.
    """

    live: Layout
    target: Layout
    moved: np.ndarray
    moved_live: np.ndarray
    entering: np.ndarray
    leaving: np.ndarray

    @property
    def partition_changed(self) -> bool:
        return self.live.partition != self.target.partition

    @property
    def server_moves(self) -> tuple[ServerMove, ...]:
        """Lock-id ranges that change lock server (their server state must move too)."""
        return server_moves(self.live.partition, self.target.partition)

    @property
    def migrated_locks(self) -> int:
        """Locks whose placement changes: moved within, entering or leaving the switch."""
        return len(self.moved) + len(self.entering) + len(self.leaving)

    @property
    def is_noop(self) -> bool:
        return self.migrated_locks == 0 and not self.partition_changed

    def lock_ids(self, which: str) -> np.ndarray:
        layout = self.live if which in ("leaving", "moved_live") else self.target
        return layout.lock_id[getattr(self, which)]


def diff(live: Layout, target: Layout) -> Migration:
    """Which locks move, enter or leave between two layouts (indices of stayers must agree)."""
    common, t_rows, l_rows = np.intersect1d(target.lock_id, live.lock_id, assume_unique=True,
                                            return_indices=True)
    if not np.array_equal(target.index[t_rows], live.index[l_rows]):
        bad = int(common[np.argmax(target.index[t_rows] != live.index[l_rows])])
        raise TargetError(f"lock {bad}: target layout changes the register index of a lock "
                          "that stays on the switch")
    c = region_changes(live.lock_id, live.left, live.right, target.lock_id, target.left,
                       target.right)
    return Migration(live, target, c.moved, c.moved_live, c.entering, c.leaving)
