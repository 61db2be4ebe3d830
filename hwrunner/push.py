"""Installing a plan on a live switch: read back, compile, check, move, journal, verify.

A push reads the layout the switch holds now, compiles the migration to the plan
(:mod:`hwrunner.compile`), checks every batch against the program before sending any, and
runs the steps in order, journaling each. Until the point of no return (the first lock leaves
the switch, or server state moves between lock servers) a failure -- a rejected batch, a
drain or transfer timeout, Ctrl-C -- rolls the switch and the servers back to what they had;
after it, the push finishes forward (retrying the failed step) and, if it still cannot, stops
with the switch consistent and the journal telling ``--resume`` where to continue. Written
registers are read back before the locks they belong to go live, and the final layout is read
back and compared on every pipe.

Traffic may run between any two operations, as on a real switch. Where requests in flight
matter (after the partition changes, after lock-table entries are added) the push waits
``settle_s`` -- longer than a switch-to-server delivery -- before the servers act on them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from hwrunner.compile import (
    Program,
    Step,
    compile_migration,
    held_writes,
    partition_entries,
    partition_ops,
    pause_writes,
    step_ops,
)
from hwrunner.driver import Driver
from hwrunner.journal import (
    FORWARD,
    ROLLBACK,
    Journal,
    clear_journal,
    load_journal,
    save_journal,
)
from hwrunner.operations import Operation
from hwrunner.profile import SwitchProfile
from hwrunner.readback import check_layout, check_writes, read_live, read_partition
from hwrunner.server_handover import LockServers, NoLockServers
from hwrunner.switch_contents import Layout, diff, layout_for
from hwrunner.validate import validate_operations
from netlock.errors import TargetError
from netlock.plan import Plan
from planner.migrate import ServerMove


@dataclass(frozen=True)
class PushOptions:
    """Timeouts and polling in seconds; ``retries`` per step after the point of no return."""

    drain_timeout_s: float = 10.0
    quiesce_timeout_s: float = 10.0
    poll_s: float = 0.005
    settle_s: float = 0.001
    retries: int = 1
    verify: bool = True


class Pacer(Protocol):
    """Time as the push sees it: real seconds, or a simulation that runs traffic meanwhile."""

    def now(self) -> float: ...

    def wait(self, seconds: float) -> None: ...


Checkpoint = Callable[[], None]
"""Makes what the switch holds durable (an emulated switch's state file); a real switch
needs none."""


class WallPacer:
    def now(self) -> float:
        return time.monotonic()

    def wait(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


@dataclass(frozen=True)
class PushResult:
    """What a push did; ``outcome`` is installed, unchanged, rolled back or finished forward."""

    target: str
    operations: int
    batches: int
    verified: bool
    migrated_locks: int
    wall_s: float
    outcome: str
    problems: tuple[str, ...] = ()
    interrupted: bool = False
    """Ctrl-C came during the push (which rolled back or finished forward regardless)."""

    def to_json(self) -> dict:
        """The ``netlock push --json`` object (docs/formats.md)."""
        return {"target": self.target, "operations": self.operations, "verified": self.verified,
                "migrated_locks": self.migrated_locks, "wall_s": self.wall_s}


def capacities(driver: Driver, profile: SwitchProfile) -> tuple[int, int]:
    """(per-lock register size, per-slot register size) of the program on the switch."""
    schema = driver.schema
    lock = min(schema.table(r.register).size for r in profile.lock_registers.values())
    lock = min(lock, schema.table(profile.lock_table.table).size + profile.lock_index_base)
    slot = min((schema.table(r.register).size for r in profile.slot_registers.values()),
               default=profile.slot_capacity)
    return lock, slot


def prepare(driver: Driver, profile: SwitchProfile, plan: Plan) -> Program:
    """Read the live layout, compile the migration to ``plan`` and check every batch."""
    live = read_live(driver, profile)
    lock_cap, slot_cap = capacities(driver, profile)
    goal = layout_for(plan, profile, live.layout, lock_cap, slot_cap)
    program = compile_migration(profile, diff(live.layout, goal), live.partition_entries)
    validate_operations(driver.schema, (op for step in program.steps for op in step.ops))
    return program


class _PushRun:
    """One push (or resume) in progress."""

    def __init__(self, driver: Driver, profile: SwitchProfile, servers: LockServers,
                 options: PushOptions, pacer: Pacer, journal: Journal,
                 journal_path: Path | None, checkpoint: Checkpoint | None = None) -> None:
        self.checkpoint = checkpoint
        self.driver = driver
        self.profile = profile
        self.servers = servers
        self.options = options
        self.pacer = pacer
        self.journal = journal
        self.journal_path = journal_path
        self.operations = 0
        self.batches = 0
        self.problems: list[str] = []
        self.interrupted = False

    def record(self, **changes: object) -> None:
        """Journal the push's progress; the switch's own state is made durable first
        (``checkpoint``), so the journal is never ahead of the switch."""
        self.journal = replace(self.journal, **changes)  # type: ignore[arg-type]
        if self.journal_path is not None:
            if self.checkpoint is not None:
                self.checkpoint()
            save_journal(self.journal, self.journal_path)

    def send(self, ops: tuple[Operation, ...] | list[Operation]) -> None:
        for op in ops:
            self.driver.write(op)
            self.operations += len(op)
            self.batches += 1
            self.pacer.wait(0.0)

    def mapped(self, rows: Layout) -> np.ndarray:
        """Which of ``rows`` have a lock-table entry now (read back)."""
        lt = self.profile.lock_table
        table = self.driver.read_entries(lt.table, (lt.key,), (lt.index_param,))
        return np.isin(rows.lock_id, table.keys[0].value)

    def wait_until(self, what: str, rows: Layout, done: Callable[[Layout], np.ndarray],
                   timeout_s: float) -> None:
        start = self.pacer.now()
        pending = rows
        while len(pending):
            pending = pending.take(np.flatnonzero(~done(pending)))
            if not len(pending):
                return
            if self.pacer.now() - start > timeout_s:
                raise TargetError(f"{what}: {len(pending)} locks still busy after {timeout_s} s "
                                  f"(first: lock {int(pending.lock_id[0])})")
            self.pacer.wait(self.options.poll_s)

    def wait_transfer(self, moves: tuple[ServerMove, ...]) -> None:
        """Until the old servers have no holders left in the moving ranges (or time out)."""
        start = self.pacer.now()
        timeout_s = self.options.quiesce_timeout_s
        while not (ready := self.servers.transfer_ready(moves)).all():
            if self.pacer.now() - start > timeout_s:
                m = moves[int(np.argmax(~ready))]
                raise TargetError(f"transfer: lock server {m.source} still has holders of locks "
                                  f"{m.lo}..{m.hi} after {timeout_s} s")
            self.pacer.wait(self.options.poll_s)

    def drained(self, rows: Layout) -> np.ndarray:
        """Switch queues empty on every pipe: all slots free, no holders (or not mapped)."""
        ok = ~self.mapped(rows)
        regs = {c: self.profile.register(c) for c in ("free_slots", "exclusive_count",
                                                      "shared_count")}
        got = {c: self.driver.read_registers(r.register, (r.field,), rows.index)[r.field]
               for c, r in regs.items()}
        empty = ((got["free_slots"] == rows.slots[None, :]).all(axis=0)
                 & (got["exclusive_count"] == 0).all(axis=0)
                 & (got["shared_count"] == 0).all(axis=0))
        return ok | empty

    def run_step(self, step: Step, fresh: bool) -> None:
        """Run one step. ``fresh``: the switch is as the program expects (the first attempt of
        a new push), so the compiled operations are sent; otherwise (a retry, a resume) they
        are recomputed from what the switch holds now, so a step runs twice safely."""
        STEPS[step.phase](self, step, fresh)

    def _partition(self, step: Step, fresh: bool) -> None:
        self.send(step.ops if fresh else partition_ops(
            self.profile, read_partition(self.driver, self.profile),
            partition_entries(self.profile, self.journal.goal.partition)))

    def _transfer(self, step: Step, fresh: bool) -> None:
        self.servers.begin_transfer(step.moves)
        self.wait_transfer(step.moves)

    def _adopt(self, step: Step, fresh: bool) -> None:
        self.pacer.wait(self.options.settle_s)
        self.servers.finish_transfer(step.moves)

    def _pause(self, step: Step, fresh: bool) -> None:
        self.check(self._send_for(step, fresh, mapped=True), "pause")

    def _unmap(self, step: Step, fresh: bool) -> None:
        self._send_for(step, fresh, mapped=True)

    def _drain(self, step: Step, fresh: bool) -> None:
        self.wait_until("drain", step.rows, self.drained, self.options.drain_timeout_s)

    def _handover(self, step: Step, fresh: bool) -> None:
        self.servers.take_over(step.rows.lock_id)

    def _quiesce(self, step: Step, fresh: bool) -> None:
        self.servers.begin_move_in(step.rows.lock_id)
        self.wait_until("quiesce", step.rows,
                        lambda r: self.servers.ready_to_move_in(r.lock_id),
                        self.options.quiesce_timeout_s)

    def _install(self, step: Step, fresh: bool) -> None:
        self.check(self._send_for(step, fresh, mapped=False), "install")

    def _map(self, step: Step, fresh: bool) -> None:
        todo = self._rows_for(step, fresh, mapped=False)
        size = self.profile.batch_size
        for start in range(0, len(todo), size):
            self.map_batch(todo.take(np.arange(start, min(start + size, len(todo)))))
        self.pacer.wait(self.options.settle_s)
        self.servers.mapped(step.rows.lock_id)

    def _admit(self, step: Step, fresh: bool) -> None:
        self.servers.admit(step.rows.lock_id)

    def _rows_for(self, step: Step, fresh: bool, mapped: bool) -> Layout:
        """The step's rows still to do: all when ``fresh``, else those whose lock-table entry
        is (``mapped``) or is not there now."""
        if fresh:
            return step.rows
        return step.rows.take(np.flatnonzero(self.mapped(step.rows) == mapped))

    def _send_for(self, step: Step, fresh: bool, mapped: bool) -> tuple[Operation, ...]:
        """Send the step's operations (recomputed for :meth:`_rows_for` unless ``fresh``)."""
        ops = step.ops if fresh else step_ops(self.profile, step.phase,
                                              self._rows_for(step, fresh, mapped))
        self.send(ops)
        return ops

    def map_batch(self, rows: Layout) -> None:
        """Hand-over, server-held count and lock-table entries of ``rows``. Requests that
        reach the servers between the hand-over and the entries are held aside by them (and
        re-sent after the ``map`` step), so server-held is exactly what the servers hold."""
        held = self.servers.hand_over(rows.lock_id)
        self.pacer.wait(0.0)
        writes = held_writes(self.profile, rows, held) if held.any() else []
        self.send(writes)
        self.check(tuple(writes), "map")
        self.send(step_ops(self.profile, "map", rows))

    def check(self, ops: tuple[Operation, ...], phase: str) -> None:
        if not self.options.verify:
            return
        problems = check_writes(self.driver, ops)
        if problems:
            raise TargetError(f"{phase}: read-back differs from what was written: {problems[0]}")

    def forward(self, program: Program, start: int, fresh: bool) -> str:
        """Run the program's steps from ``start``; roll back or finish forward on failure.
        Returns the outcome."""
        steps, no_return = program.steps, program.no_return
        i = start
        recovered = False
        while i < len(steps):
            self.record(step=i)
            attempts = 0
            while True:
                try:
                    self.run_step(steps[i], fresh and attempts == 0 and not recovered)
                    break
                except (TargetError, KeyboardInterrupt) as exc:
                    reason = str(exc) or "interrupted"
                    self.interrupted |= isinstance(exc, KeyboardInterrupt)
                    if i < no_return:
                        self.rollback(steps, i, reason)
                        return "rolled back"
                    attempts += 1
                    recovered = True
                    if attempts > self.options.retries:
                        raise TargetError(
                            f"push stopped at step {i + 1} ({steps[i].phase}) after the point of "
                            f"no return: {reason}; the switch is consistent (locks in transit "
                            f"wait at their lock servers, nothing is granted twice or lost): run "
                            f"netlock push --resume to finish") from None
            i += 1
        return "finished forward" if recovered else "installed"

    def rollback(self, steps: tuple[Step, ...], upto: int, reason: str) -> None:
        """Undo steps ``[0, upto]``: resume the paused locks, call off server transfers and
        restore the partition."""
        self.record(direction=ROLLBACK, step=upto)
        self.problems.append(f"rolled back: {reason}")
        try:
            for step in steps[:upto + 1]:
                if step.phase == "transfer":
                    self.servers.cancel_transfer(step.moves)
            for rows in [s.rows for s in steps[:upto + 1] if s.phase == "pause"]:
                live = rows.take(np.flatnonzero(self.mapped(rows)))
                if len(live):
                    self.send([pause_writes(self.profile, live, 0)])
                    self.servers.admit(live.lock_id)
            if any(s.phase == "partition" for s in steps[:upto + 1]):
                self.send(partition_ops(self.profile, read_partition(self.driver, self.profile),
                                        partition_entries(self.profile,
                                                          self.journal.live.partition)))
        except (TargetError, KeyboardInterrupt) as exc:
            raise TargetError(f"rollback failed: {exc or 'interrupted'}; the push journal keeps "
                              f"it: run netlock push --resume to finish the rollback") from None


STEPS: dict[str, Callable[[_PushRun, Step, bool], None]] = {
    "partition": _PushRun._partition, "transfer": _PushRun._transfer, "adopt": _PushRun._adopt,
    "pause": _PushRun._pause, "unmap": _PushRun._unmap, "drain": _PushRun._drain,
    "handover": _PushRun._handover, "quiesce": _PushRun._quiesce, "install": _PushRun._install,
    "map": _PushRun._map, "admit": _PushRun._admit}
"""What each phase of :data:`hwrunner.compile.PHASES` does on the switch and the lock
servers."""


def _finish(run: _PushRun, outcome: str, goal: Layout, migrated: int,
            started: float) -> PushResult:
    expected = run.journal.live if outcome == "rolled back" else goal
    problems = list(run.problems)
    verified = True
    if run.options.verify:
        found = check_layout(run.driver, run.profile, expected)
        problems += found
        verified = not found
    if run.journal_path is not None:
        if run.checkpoint is not None:
            run.checkpoint()
        clear_journal(run.journal_path)
    return PushResult(run.driver.target, run.operations, run.batches, verified,
                      0 if outcome == "rolled back" else migrated,
                      time.perf_counter() - started, outcome, tuple(problems), run.interrupted)


def push(driver: Driver, profile: SwitchProfile, plan: Plan, *,
         servers: LockServers | None = None, options: PushOptions | None = None,
         pacer: Pacer | None = None, journal_path: str | Path | None = None,
         program: Program | None = None, checkpoint: Checkpoint | None = None) -> PushResult:
    """Install ``plan`` on ``driver``'s switch safely; see the module docstring.

    A push interrupted earlier (its journal still at ``journal_path``) is finished first, so
    a plain push after a crash ends in a verified switch as ``--resume`` would.
    """
    started = time.perf_counter()
    journal_path = Path(journal_path) if journal_path is not None else None
    earlier: list[str] = []
    if journal_path is not None and journal_path.exists():
        pending = load_journal(journal_path)
        done = resume(driver, profile, journal_path, servers=servers, options=options,
                      pacer=pacer, checkpoint=checkpoint)
        earlier = [*done.problems, f"finished the interrupted push to {pending.target} "
                   f"recorded in {journal_path} first: {done.outcome}, "
                   f"{'verified' if done.verified else 'NOT verified'}"]
        program = None
    program = program or prepare(driver, profile, plan)
    servers = servers or NoLockServers()
    moves = program.migration.server_moves if any(s.moves for s in program.steps) else ()
    if moves and not servers.can_transfer:
        m = moves[0]
        raise TargetError(f"plan: moves locks {m.lo}..{m.hi} from lock server {m.source} to "
                          f"{m.dest} ({len(moves)} range(s) change server): the push cannot "
                          f"move requests queued at lock servers it does not control; drain "
                          f"those servers and pass --servers-idle, or keep the live partition")
    migration = program.migration
    journal = Journal(driver.target, profile.name, migration.live, migration.target)
    run = _PushRun(driver, profile, servers, options or PushOptions(),
               pacer or WallPacer(), journal, journal_path if program.steps else None,
               checkpoint)
    run.problems += earlier
    outcome = run.forward(program, 0, fresh=True) if program.steps else "unchanged"
    return _finish(run, outcome, migration.target, migration.migrated_locks, started)


def resume(driver: Driver, profile: SwitchProfile, journal_path: str | Path, *,
           servers: LockServers | None = None, options: PushOptions | None = None,
           pacer: Pacer | None = None, checkpoint: Checkpoint | None = None) -> PushResult:
    """Continue the push recorded in ``journal_path`` (forward, or its rollback)."""
    started = time.perf_counter()
    journal_path = Path(journal_path)
    journal = load_journal(journal_path)
    if journal.target != driver.target or journal.profile != profile.name:
        raise TargetError(f"{journal_path}: records a push to {journal.target} with profile "
                          f"{journal.profile}, not {driver.target} with {profile.name}")
    program = compile_migration(profile, diff(journal.live, journal.goal))
    run = _PushRun(driver, profile, servers or NoLockServers(), options or PushOptions(),
               pacer or WallPacer(), journal, journal_path, checkpoint)
    if journal.direction == FORWARD:
        outcome = run.forward(program, journal.step, fresh=False)
        if outcome == "installed":
            outcome = "finished forward"
    else:
        run.rollback(program.steps, journal.step, "resumed rollback")
        outcome = "rolled back"
    return _finish(run, outcome, journal.goal, program.migration.migrated_locks, started)
