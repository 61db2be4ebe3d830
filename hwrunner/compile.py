"""Plan (+ the live layout) -> ordered steps of batched switch operations.

The order is the paper's move protocol, made explicit so it can be journaled and resumed:

1. ``pause``      set the pause flag of every lock that moves or leaves: new acquires overflow
                  to the lock server, which buffers them behind the switch queue;
2. ``drain``      wait (with a timeout) until those switch queues are empty;
3. ``transfer``   for lock-id ranges that change lock server: the old server stops granting
                  them, the new one holds back what it gets, and the push waits (with a
                  timeout) until the old server has no holders in them;
4. ``partition``  rewrite the lock-server partition table (locks the switch does not own);
5. ``adopt``      after a settling delay, the old servers hand their queues, buffers and
                  resident locks of those ranges to the new ones, ahead of what came since;
6. ``unmap``      delete the lock-table entries of locks that move or leave;
7. ``handover``   their lock servers take them over (buffered requests first);
8. ``quiesce``    the servers of locks that enter (or re-enter at a new region) stop granting
                  them and wait until no holder remains;
9. ``install``    write their registers at the new region, empty;
10. ``map``       per batch: the servers hand over the requests they queue for the batch's
                  locks, their count is written as server-held (so the switch stays in overflow
                  mode and the server pushes them back in order), and the lock-table entries are
                  added: the switch owns the locks from here on. Requests the switch forwarded
                  between the hand-over and the entry are held aside by the servers and, after
                  a settling delay, sent to the switch again, so server-held counts exactly the
                  requests the servers hold (traffic may run between any two operations);
11. ``admit``     the servers push their queued requests back into the switch queues.

A lock that moves within the switch leaves and re-enters, so no step ever rewrites the region
of a lock the switch is serving. Locks that stay are never touched, and a plan that is already
live compiles to no step at all. Until the point of no return (:attr:`Program.no_return`: the
first step after ``pause``, ``drain`` and ``transfer``, or after ``partition`` when no server
state moves) a push can be undone; see :mod:`hwrunner.push`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwrunner.bfrt_info import MATCH_PRIORITY
from hwrunner.operations import (
    DataColumn,
    EntryAdd,
    EntryDelete,
    EntryModify,
    KeyColumn,
    Operation,
    RegisterWrite,
    count_rows,
)
from hwrunner.profile import SwitchProfile
from hwrunner.switch_contents import Layout, Migration
from netlock.errors import TargetError
from netlock.plan import PartitionRange
from planner.migrate import ServerMove, normalize_partition

PHASES = ("pause", "drain", "transfer", "partition", "adopt", "unmap", "handover", "quiesce",
          "install", "map", "admit")
WAIT_PHASES = ("drain", "transfer", "adopt", "handover", "quiesce", "admit")
"""Phases that send no switch operation: they wait on the switch or on the lock servers."""


@dataclass(frozen=True, eq=False)
class Step:
    """One phase over the locks in ``rows``: ``ops`` to send, or a wait on those locks."""

    phase: str
    rows: Layout
    ops: tuple[Operation, ...] = ()
    moves: tuple[ServerMove, ...] = ()
    """Lock-id ranges changing server (``transfer`` and ``adopt`` steps)."""

    @property
    def lock_ids(self) -> np.ndarray:
        return self.rows.lock_id

    @property
    def operations(self) -> int:
        return count_rows(self.ops)

    def describe(self) -> str:
        if self.phase in WAIT_PHASES:
            what = {"drain": "wait until the switch queues are empty",
                    "transfer": "old lock servers stop granting and wait for holders to "
                                "release",
                    "adopt": "new lock servers adopt the old servers' queues",
                    "handover": "lock servers take over",
                    "quiesce": "lock servers stop granting and wait for holders to release",
                    "admit": "lock servers push their queued requests back to the switch"}
            if self.moves:
                ranges = ", ".join(f"{m.lo}..{m.hi}: server {m.source} -> {m.dest}"
                                   for m in self.moves)
                return f"{self.phase}: {what[self.phase]} ({ranges})"
            return f"{self.phase}: {what[self.phase]} ({len(self.rows)} locks)"
        return (f"{self.phase}: {self.operations} operations in {len(self.ops)} batches "
                f"({len(self.rows)} locks)")


@dataclass(frozen=True, eq=False)
class Program:
    """The compiled push: the migration it realises and its steps, in order."""

    migration: Migration
    steps: tuple[Step, ...]

    @property
    def operations(self) -> int:
        return sum(s.operations for s in self.steps)

    @property
    def batches(self) -> int:
        return sum(len(s.ops) for s in self.steps)

    @property
    def no_return(self) -> int:
        """Index of the first step that cannot be undone (``len(steps)`` if none)."""
        undoable = UNDOABLE if any(s.phase == "transfer" for s in self.steps) else (
            *UNDOABLE, "partition")
        return next((i for i, s in enumerate(self.steps) if s.phase not in undoable),
                    len(self.steps))


def lock_table_add(profile: SwitchProfile, rows: Layout) -> EntryAdd:
    lt = profile.lock_table
    return EntryAdd(lt.table, (KeyColumn(lt.key, rows.lock_id),),
                    (DataColumn(lt.index_param, rows.index),), lt.action)


def lock_table_delete(profile: SwitchProfile, rows: Layout) -> EntryDelete:
    lt = profile.lock_table
    return EntryDelete(lt.table, (KeyColumn(lt.key, rows.lock_id),))


def lock_register_writes(profile: SwitchProfile, rows: Layout, *, paused: int = 0,
                         server_held: np.ndarray | None = None) -> list[RegisterWrite]:
    """Registers of ``rows`` as an empty queue over their region, one batch per register table.

    Every field of each table is written (a register write replaces the whole entry).
    """
    n = len(rows)
    base = profile.slot_base
    left = rows.left + base
    held = np.zeros(n, dtype=np.int64) if server_held is None else server_held
    values = {
        "left": left, "right": rows.right + base, "head": left, "tail": left,
        "free_slots": rows.slots, "server_held": held,
        "exclusive_count": np.zeros(n, dtype=np.int64), "shared_count": np.zeros(n, np.int64),
        "paused": np.full(n, paused, dtype=np.int64), "requests": np.zeros(n, dtype=np.int64),
        "peak_occupancy": held,
    }
    concept_of = {reg: c for c, reg in profile.lock_registers.items()}
    writes = []
    for table, regs in profile.register_tables().items():
        cols = {reg.field: values[concept_of[reg]] for reg in regs}
        writes.append(RegisterWrite.of(table, rows.index, **cols))
    return writes


def pause_writes(profile: SwitchProfile, rows: Layout, paused: int) -> RegisterWrite:
    """Set (1) or clear (0) the pause flag of ``rows``."""
    reg = profile.register("paused")
    return RegisterWrite.of(reg.register, rows.index, **{reg.field: paused})


def _ternary_cover(lo: int, hi: int, width: int) -> list[tuple[int, int]]:
    """The fewest (value, mask) prefix blocks covering lock ids lo..hi exactly."""
    full = (1 << width) - 1
    out = []
    while lo <= hi:
        size = lo & -lo if lo else 1 << width
        while size > hi - lo + 1:
            size >>= 1
        out.append((lo, full & ~(size - 1)))
        lo += size
    return out


def partition_entries(profile: SwitchProfile, ranges: tuple[PartitionRange, ...]) -> EntryAdd:
    """The partition table's entries for ``ranges`` in the profile's match kind."""
    part = profile.partition
    norm = normalize_partition(ranges, part.key_width)
    for p in norm:
        if p.server >= len(part.servers):
            raise TargetError(f"profile {profile.source}: partition_table.servers: the plan "
                              f"uses lock server {p.server} but the profile lists "
                              f"{len(part.servers)} address(es)")
    if part.match == "ternary":
        rows = [(v, m, part.servers[p.server]) for p in norm
                for v, m in _ternary_cover(p.lo, p.hi, part.key_width)]
    else:
        rows = [(p.lo, p.hi, part.servers[p.server]) for p in norm]
    cols = np.array(rows, dtype=np.int64).reshape(len(rows), 3)
    match = {"mask": cols[:, 1]} if part.match == "ternary" else {"high": cols[:, 1]}
    keys = (KeyColumn(part.key, cols[:, 0], **match),
            KeyColumn(MATCH_PRIORITY, np.zeros(len(cols), dtype=np.int64)))
    return EntryAdd(part.table, keys, (DataColumn(part.server_param, cols[:, 2]),),
                    part.action)


def _key_rows(op: Operation) -> list[tuple[int, ...]]:
    cols = []
    for k in op.keys:
        cols.append(k.value)
        for extra in (k.mask, k.high):
            if extra is not None:
                cols.append(extra)
    return list(zip(*(c.tolist() for c in cols), strict=True)) if cols else []


def partition_ops(profile: SwitchProfile, live: Operation | None,
                  target: EntryAdd) -> list[Operation]:
    """Add new keys, modify changed servers, then delete stale keys (``live``: the read-back
    entries). Make before break: while the batches go out, every lock id the table covered
    stays covered, by an entry of the old partition or of the new one."""
    if live is None or len(live) == 0:
        return [target] if len(target) else []
    live_rows = {k: i for i, k in enumerate(_key_rows(live))}
    target_rows = {k: i for i, k in enumerate(_key_rows(target))}
    live_server = live.data[0].value
    target_server = target.data[0].value
    stale = np.array([i for k, i in live_rows.items() if k not in target_rows], dtype=np.int64)
    fresh = np.array([i for k, i in target_rows.items() if k not in live_rows], dtype=np.int64)
    changed = np.array([i for k, i in target_rows.items()
                        if k in live_rows and live_server[live_rows[k]] != target_server[i]],
                       dtype=np.int64)
    ops: list[Operation] = []
    if len(fresh):
        ops.append(target.take(fresh))
    if len(changed):
        mod = target.take(changed)
        ops.append(EntryModify(mod.table, mod.keys, mod.data, mod.action))
    if len(stale):
        dead = live.take(stale)
        ops.append(EntryDelete(dead.table, dead.keys))
    return ops


def chunked(ops: list[Operation], size: int) -> tuple[Operation, ...]:
    return tuple(chunk for op in ops if len(op) for chunk in op.chunks(size))


def held_writes(profile: SwitchProfile, rows: Layout,
                server_held: np.ndarray) -> list[RegisterWrite]:
    """The register entries holding the server-held count of ``rows`` (whole entries)."""
    tables = {profile.register(c).register for c in ("server_held", "peak_occupancy")
              if profile.has(c)}
    return [op for op in lock_register_writes(profile, rows, server_held=server_held)
            if op.table in tables]


def step_ops(profile: SwitchProfile, phase: str, rows: Layout) -> tuple[Operation, ...]:
    """The batches a lock phase sends for ``rows`` (wait phases send none)."""
    if phase == "pause":
        ops: list[Operation] = [pause_writes(profile, rows, 1)]
    elif phase == "unmap":
        ops = [lock_table_delete(profile, rows)]
    elif phase == "install":
        ops = list(lock_register_writes(profile, rows))
    elif phase == "map":
        ops = [lock_table_add(profile, rows)]
    else:
        ops = []
    return chunked(ops, profile.batch_size)


OUT_PHASES = ("pause", "drain", "unmap", "handover")
IN_PHASES = ("quiesce", "install", "map", "admit")
UNDOABLE = ("pause", "drain", "transfer")
"""Steps a failure can roll back (the partition too when no server state moves)."""


def compile_migration(profile: SwitchProfile, migration: Migration,
                      live_partition: Operation | None = None) -> Program:
    """The ordered steps that take the switch from ``migration.live`` to ``migration.target``.

    ``live_partition`` is the partition table as read back (None: compare the layouts'
    partitions and rewrite the whole table when they differ).
    """
    live, target = migration.live, migration.target
    steps: list[Step] = []
    out_rows = live.take(np.union1d(migration.moved_live, migration.leaving))
    out = [Step(p, out_rows, step_ops(profile, p, out_rows)) for p in OUT_PHASES] \
        if len(out_rows) else []
    steps += out[:2]
    part_ops: list[Operation] = []
    if live_partition is not None or migration.partition_changed:
        part_ops = partition_ops(profile, live_partition,
                                 partition_entries(profile, target.partition))
    moves = migration.server_moves if part_ops else ()
    if moves:
        steps.append(Step("transfer", Layout.empty(), moves=moves))
    if part_ops:
        steps.append(Step("partition", Layout.empty(), chunked(part_ops, profile.batch_size)))
    if moves:
        steps.append(Step("adopt", Layout.empty(), moves=moves))
    steps += out[2:]
    in_rows = target.take(np.union1d(migration.moved, migration.entering))
    if len(in_rows):
        steps += [Step(p, in_rows, step_ops(profile, p, in_rows)) for p in IN_PHASES]
    return Program(migration, tuple(steps))


def render_program(program: Program, limit: int | None = None) -> list[str]:
    """Readable lines: each step, then each operation (at most ``limit`` rows per batch)."""
    lines = []
    for n, step in enumerate(program.steps, 1):
        lines.append(f"step {n} {step.describe()}")
        for b, op in enumerate(step.ops, 1):
            lines.append(f"  batch {b}: {op.kind} {op.table} x{len(op)}")
            shown = len(op) if limit is None else min(limit, len(op))
            lines.extend(f"    {op.render_row(i)}" for i in range(shown))
            if shown < len(op):
                lines.append(f"    ... {len(op) - shown} more")
    return lines
