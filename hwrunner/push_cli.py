"""``netlock push``: install a plan on a switch, moving live locks safely
(:mod:`hwrunner.push`), or show what it would send (``--dry-run``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hwrunner.cli_target import (
    BfrtOpt,
    ClientIdOpt,
    DeviceOpt,
    JsonOpt,
    ProfileOpt,
    StateOpt,
    TargetOpt,
    WaitOpt,
    connect,
)
from hwrunner.compile import render_program
from hwrunner.driver import Driver
from hwrunner.emulator import TARGET as EMULATOR
from hwrunner.profile import SwitchProfile
from hwrunner.push import PushOptions, PushResult, prepare, push, resume
from hwrunner.server_handover import NoLockServers
from hwrunner.statelock import writers
from hwrunner.targets import checkpointer, default_journal, save_target
from netlock.cli.common import distinct_outputs, emit_json, guarded, stderr
from netlock.errors import TargetError
from netlock.plan import Plan
from netlock.plan_io import load_plan

DryRunOpt = Annotated[bool, typer.Option(
    "--dry-run", help="print the steps and operations the push would send; send none")]
RowsOpt = Annotated[int, typer.Option(
    "--rows", min=0, help="with --dry-run: operations shown per batch (0 = all)")]
ResumeOpt = Annotated[bool, typer.Option(
    "--resume", help="continue the interrupted push recorded in the journal (or finish its "
    "rollback)")]
JournalOpt = Annotated[Path | None, typer.Option(
    "--journal", help="push journal \\[default: STATE.journal for the emulator, "
    "netlock-push-HOST-PORT.journal for a switch]")]
DrainTimeoutOpt = Annotated[float, typer.Option(
    "--drain-timeout", min=0.0, help="seconds to wait for moving locks' queues to drain (then "
    "roll back)")]
ServersIdleOpt = Annotated[bool, typer.Option(
    "--servers-idle", help="the lock servers hold nothing for locks whose server the plan "
    "changes (drained by you): allow a new partition")]


def _report(result: PushResult, as_json: bool, profile: str) -> None:
    for problem in result.problems:
        stderr(f"netlock: {problem}")
    stderr(f"netlock: push to {result.target}: {result.outcome}; {result.operations} "
           f"operations in {result.batches} batches, {result.migrated_locks} locks migrated, "
           f"{'verified' if result.verified else 'NOT verified'} ({result.wall_s:.3f} s)")
    if as_json:
        emit_json({**result.to_json(), "profile": profile})
    if result.interrupted:
        raise KeyboardInterrupt
    if not result.verified:
        raise typer.Exit(1)


@guarded
def push_command(
    plan_file: Annotated[Path | None, typer.Argument(
        metavar="PLAN", help="plan file from netlock plan (omit with --resume)")] = None,
    target: TargetOpt = EMULATOR,
    state: StateOpt = None,
    profile: ProfileOpt = None,
    bfrt: BfrtOpt = None,
    device: DeviceOpt = 0,
    client_id: ClientIdOpt = 0,
    dry_run: DryRunOpt = False,
    rows: RowsOpt = 4,
    resume_push: ResumeOpt = False,
    journal: JournalOpt = None,
    drain_timeout: DrainTimeoutOpt = 10.0,
    servers_idle: ServersIdleOpt = False,
    wait: WaitOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Install a plan on a switch, moving live locks safely, and verify it by reading back.

    Locks that move or leave are paused, drained and handed to their lock servers; locks
    that enter start empty; locks that stay are not touched; pushing the plan that is
    already installed sends nothing. A failure before the first lock leaves rolls back;
    after it the push finishes forward, or stops with a journal for --resume. A push that
    was interrupted (stopped, killed, Ctrl-C) is finished by --resume or by the next push.
    A plan that gives lock ids to other lock servers is refused unless --servers-idle:
    this command cannot move requests queued at lock servers between them.
    One command at a time writes a state file (and its journal): another one is refused
    (exit 2, naming it) unless --wait. Exit status 1 when the read-back does not match.

    Examples:

        netlock push plan.yaml --dry-run

        netlock push plan.yaml --target emulator --state switch.json --json

        netlock push plan2.yaml --target grpc://10.0.0.5:50052 --bfrt bf-rt.json

        netlock push --resume --target emulator --state switch.json
    """
    if resume_push == (plan_file is not None):
        raise TargetError("push: give a PLAN, or --resume without one")
    journal_path = journal or default_journal(target, state)
    distinct_outputs({"--state": state, "--journal": journal_path},
                     {"PLAN": plan_file, "--bfrt": bfrt})
    with writers([] if dry_run else [state, journal_path], wait):
        pushed = _push(plan_file, target, state, profile, bfrt, device, client_id, dry_run,
                       rows, journal_path, drain_timeout, servers_idle, as_json)
    if pushed is not None:
        result, profile_name = pushed
        _report(result, as_json, profile_name)


def _push(plan_file: Path | None, target: str, state: Path | None, profile: str | None,
          bfrt: Path | None, device: int, client_id: int, dry_run: bool, rows: int,
          journal_path: Path | None, drain_timeout: float, servers_idle: bool,
          as_json: bool) -> tuple[PushResult, str] | None:
    """``netlock push`` once it holds the state file: its result and the profile's name
    (None: a dry run, already printed)."""
    plan = load_plan(plan_file) if plan_file is not None else None
    driver = connect(target, profile, state, bfrt, device, client_id, plan)
    prof = driver.profile
    options = PushOptions(drain_timeout_s=drain_timeout)
    servers = NoLockServers(idle=servers_idle)
    try:
        if plan is None:
            if journal_path is None or not journal_path.exists():
                raise TargetError(f"push --resume: no journal at {journal_path} (nothing to "
                                  "resume)")
            return resume(driver, prof, journal_path, servers=servers, options=options,
                          checkpoint=checkpointer(driver, state)), prof.name
        if dry_run:
            _dry_run(driver, prof, plan, rows, as_json)
            return None
        return push(driver, prof, plan, servers=servers, options=options,
                    journal_path=journal_path, checkpoint=checkpointer(driver, state)), prof.name
    finally:
        if not dry_run:
            save_target(driver, state)
        driver.close()


def _dry_run(driver: Driver, profile: SwitchProfile, plan: Plan, rows: int,
             as_json: bool) -> None:
    """Print what a push of ``plan`` would send (``rows`` operations per batch, 0 = all)."""
    program = prepare(driver, profile, plan)
    if as_json:
        emit_json({"target": driver.target, "profile": profile.name,
                   "operations": program.operations, "verified": False,
                   "migrated_locks": program.migration.migrated_locks,
                   "wall_s": 0.0, "dry_run": True, "batches": program.batches})
        return
    for line in render_program(program, rows or None):
        typer.echo(line)
    typer.echo(f"{program.operations} operations in {program.batches} batches, "
               f"{program.migration.migrated_locks} locks migrated (dry run: nothing sent)")
