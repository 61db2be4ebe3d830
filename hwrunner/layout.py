"""What a switch holds (or will hold): each switch-resident lock's register index and region.

A :class:`Layout` is the plan seen through a profile: the lock-to-index table, the queue
region [left, right] (global shared-queue slots, the plan's numbering) of every lock, and the
lock-server partition. A :class:`Migration` is the difference between the live layout and the
target: which locks stay, move (same index, new region), leave (hand over to their lock
server) or enter (start empty), and which lock-id ranges change lock server
(:func:`server_moves`). Register indices of locks that stay are kept, so a lock that does not
move is never touched.

Why this module diffs layouts itself instead of taking :func:`planner.migrate.plan_migration`'s
steps: the planner orders per-lock changes so that no two live regions ever overlap (a
protocol that moves locks one at a time while the others serve), which costs a Python loop
per lock -- 1.6 s for 100K locks, most of the 2 s a whole push may take. The hardware runner
does not need that order: it takes every changed lock off the switch before it installs any
(:mod:`hwrunner.compile`), so it needs only which locks stay, change, leave or enter, against
the layout read back from the switch, keyed by register index. That set is a few vectorised
set operations here; ``tests/hwrunner/test_compile.py`` checks that it always agrees with the
planner's steps (a planner ``resize`` or ``move`` is a lock that moves here, a ``leave``
followed by an ``enter`` of the same lock as well).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwrunner.operations import EntryAdd
from hwrunner.profile import SwitchProfile
from netlock.errors import TargetError
from netlock.plan import PartitionRange, Plan

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


def layout_for(plan: Plan, profile: SwitchProfile, live: Layout | None = None,
               lock_capacity: int | None = None, slot_capacity: int | None = None) -> Layout:
    """The layout that realises ``plan``, keeping the register index of every live lock.

    Entering locks take the lowest indices no live lock uses; only when those run out do they
    reuse indices of locks that leave. The public program has one queue per lock, so a plan
    with several priority rows for one lock is refused.
    """
    live = live or Layout.empty()
    entries = plan.entries
    if (entries.priority != 0).any():
        raise TargetError(f"profile {profile.name}: one queue per lock, but the plan puts "
                          f"{int((entries.priority != 0).sum())} locks in priority classes > 0")
    if len(np.unique(entries.lock_id)) != len(entries):
        raise TargetError(f"profile {profile.name}: one queue per lock, but the plan gives some "
                          f"locks several priority rows (geometry.priorities = "
                          f"{plan.geometry.priorities})")
    capacity = lock_capacity or profile.lock_capacity
    if len(entries) > capacity - profile.lock_index_base:
        raise TargetError(f"plan: {len(entries)} switch-resident locks, but the switch has "
                          f"{capacity - profile.lock_index_base} lock indices")
    needed = profile.slot_base + plan.geometry.total_slots
    slots = slot_capacity or profile.slot_capacity
    if needed > slots:
        raise TargetError(f"plan: geometry has {plan.geometry.total_slots} slots, but the "
                          f"switch holds {slots - profile.slot_base}")
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
    partition = normalize_partition(plan.partition or (PartitionRange(0, 0, 0),),
                                    profile.partition.key_width)
    return Layout(lock_id, index, entries.left, entries.right, partition)


def normalize_partition(ranges: tuple[PartitionRange, ...], width: int) -> tuple[PartitionRange,
                                                                                  ...]:
    """Ranges over the whole key space: the last range reaches the largest key, neighbours
    served by the same server are merged (the form both plans and read-backs compare in).
    No ranges stay no ranges (a switch whose partition table is empty)."""
    top = (1 << width) - 1
    clipped = [PartitionRange(p.lo, min(p.hi, top), p.server) for p in ranges if p.lo <= top]
    items = sorted(clipped, key=lambda p: p.lo)
    if not items:
        return ()
    merged: list[PartitionRange] = []
    for p in items:
        if merged and merged[-1].server == p.server and merged[-1].hi + 1 >= p.lo:
            merged[-1] = PartitionRange(merged[-1].lo, max(merged[-1].hi, p.hi), p.server)
        else:
            merged.append(p)
    last = merged[-1]
    merged[-1] = PartitionRange(last.lo, top, last.server)
    return tuple(merged)


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
class ServerMove:
    """Lock ids ``lo..hi`` change lock server, from ``source`` to ``dest`` (server numbers)."""

    lo: int
    hi: int
    source: int
    dest: int


def server_moves(live: tuple[PartitionRange, ...],
                 target: tuple[PartitionRange, ...]) -> tuple[ServerMove, ...]:
    """The lock-id ranges whose server differs between two normalized partitions.

    An empty live partition (a switch whose table routes nothing yet) moves nothing.
    """
    if not live or not target:
        return ()
    starts = sorted({p.lo for p in (*live, *target)})
    top = max(live[-1].hi, target[-1].hi)

    def owner(ranges: tuple[PartitionRange, ...], lock: int) -> int:
        return next((p.server for p in ranges if p.lo <= lock <= p.hi), -1)

    moves: list[ServerMove] = []
    for lo, nxt in zip(starts, [*starts[1:], top + 1], strict=True):
        source, dest = owner(live, lo), owner(target, lo)
        if source == dest:
            continue
        if moves and moves[-1].hi + 1 == lo and (moves[-1].source, moves[-1].dest) == (source,
                                                                                      dest):
            moves[-1] = ServerMove(moves[-1].lo, nxt - 1, source, dest)
        else:
            moves.append(ServerMove(lo, nxt - 1, source, dest))
    return tuple(moves)


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
    changed = ((target.left[t_rows] != live.left[l_rows])
               | (target.right[t_rows] != live.right[l_rows]))
    entering = np.setdiff1d(np.arange(len(target)), t_rows)
    leaving = np.setdiff1d(np.arange(len(live)), l_rows)
    return Migration(live, target, t_rows[changed], l_rows[changed], entering, leaving)
