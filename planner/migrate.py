"""The migration between two plans: the one ``netlock plan --live`` prints and ``netlock push``
executes (:mod:`hwrunner.switch_contents` and :mod:`hwrunner.compile` build the switch
operations from it).

Locks are compared by id (and priority) and region:

- a lock whose region is unchanged **stays** and is never touched;
- a lock in both plans at another region **moves**: it leaves the switch (paused, drained,
  handed to its lock server) and enters again at the new region, so no step ever rewrites
  the region of a lock the switch is serving and no two live regions overlap;
- a lock only in the live plan **leaves** (its lock server takes it over);
- a lock only in the new plan **enters** (it starts empty; its server hands over what it
  queued).

The push takes every changed lock off the switch before it installs any, so the order within
each group does not matter and the migration is a few vectorised set operations, not a loop
per lock. Lock-id ranges whose lock server changes (:func:`server_moves`) move their server
state too; ``plan --live`` keeps the live partition so that there are none unless lock servers
are added or removed (:func:`planner.partition.keep_partition`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netlock.plan import PartitionRange, Plan, SwitchEntries

KEY_WIDTH = 32
"""Bits of a lock id on the wire and in the switch's partition table."""
EVERY_LOCK = (PartitionRange(0, 0, 0),)
"""The partition of a plan that names none: every lock id to server 0."""


@dataclass(frozen=True)
class ServerMove:
    """Lock ids ``lo..hi`` change lock server, from ``source`` to ``dest`` (server numbers)."""

    lo: int
    hi: int
    source: int
    dest: int


def normalize_partition(ranges: tuple[PartitionRange, ...],
                        width: int = KEY_WIDTH) -> tuple[PartitionRange, ...]:
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


@dataclass(frozen=True, eq=False)
class RegionChanges:
    """Row selections: ``moved`` rows of the target whose lock stays but changes region (and
    ``moved_live``, the same locks' live rows), ``entering`` rows of the target, ``leaving``
    rows of the live layout. Both layouts are sorted by key."""

    moved: np.ndarray
    moved_live: np.ndarray
    entering: np.ndarray
    leaving: np.ndarray
    staying: np.ndarray
    """Rows of the target whose region is unchanged."""

    @property
    def migrated_locks(self) -> int:
        return len(self.moved) + len(self.entering) + len(self.leaving)


def region_changes(live_key: np.ndarray, live_left: np.ndarray, live_right: np.ndarray,
                   key: np.ndarray, left: np.ndarray, right: np.ndarray) -> RegionChanges:
    """Which locks stay, move, enter or leave between two layouts sorted by unique ``key``."""
    _, t_rows, l_rows = np.intersect1d(key, live_key, assume_unique=True, return_indices=True)
    changed = (left[t_rows] != live_left[l_rows]) | (right[t_rows] != live_right[l_rows])
    return RegionChanges(moved=t_rows[changed], moved_live=l_rows[changed],
                         entering=np.setdiff1d(np.arange(len(key)), t_rows),
                         leaving=np.setdiff1d(np.arange(len(live_key)), l_rows),
                         staying=t_rows[~changed])


def entry_keys(entries: SwitchEntries, priorities: int) -> tuple[np.ndarray, np.ndarray]:
    """One key per (lock, priority) row, and the order that sorts the rows by it."""
    key = entries.lock_id * max(priorities, 1) + entries.priority
    return key, np.argsort(key, kind="stable")


@dataclass(frozen=True, eq=False)
class PlanMigration:
    """From the live plan to a new one: the locks in each group and the server moves."""

    live: SwitchEntries
    target: SwitchEntries
    changes: RegionChanges
    moves: tuple[ServerMove, ...]

    def lock_ids(self, which: str) -> np.ndarray:
        rows = getattr(self.changes, which)
        return (self.live if which in ("leaving", "moved_live") else self.target).lock_id[rows]

    def counts(self) -> dict[str, int]:
        """Locks per group (what ``plan --live`` prints and ``push`` reports as migrated)."""
        c = self.changes
        return {"stay": len(c.staying), "move": len(c.moved), "leave": len(c.leaving),
                "enter": len(c.entering), "server_ranges": len(self.moves)}


def plan_migration(live: Plan, target: Plan) -> PlanMigration:
    """The migration ``netlock push`` runs to take a switch holding ``live`` to ``target``."""
    priorities = max(live.geometry.priorities, target.geometry.priorities)
    live_key, live_order = entry_keys(live.entries, priorities)
    key, order = entry_keys(target.entries, priorities)
    a, b = live.entries, target.entries
    sorted_live = SwitchEntries(a.lock_id[live_order], a.slots[live_order], a.left[live_order],
                                a.right[live_order], a.priority[live_order])
    sorted_target = SwitchEntries(b.lock_id[order], b.slots[order], b.left[order],
                                  b.right[order], b.priority[order])
    changes = region_changes(live_key[live_order], sorted_live.left, sorted_live.right,
                             key[order], sorted_target.left, sorted_target.right)
    moves = server_moves(normalize_partition(live.partition or EVERY_LOCK),
                         normalize_partition(target.partition or EVERY_LOCK))
    return PlanMigration(sorted_live, sorted_target, changes, moves)
