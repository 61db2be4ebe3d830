"""Commands contributed by ``hwrunner``: ``netlock push``, ``netlock stats``, ``netlock
traffic`` and ``netlock autopilot``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from hwrunner.autopilot import Autopilot, AutopilotOptions, Counters, Round
from hwrunner.compile import render_program
from hwrunner.driver import Driver
from hwrunner.emulator import TARGET as EMULATOR
from hwrunner.emulator import EmulatedSwitch
from hwrunner.packet_replay import Replay, ReplayPacer, load_requests
from hwrunner.profile import OPTIONAL_LOCK_REGISTERS, SwitchProfile, shipped_profiles
from hwrunner.push import PushOptions, PushResult, prepare, push, resume
from hwrunner.server_handover import NoLockServers
from hwrunner.statelock import writers
from hwrunner.stats import (
    read_server_counters,
    read_stats,
    read_tenant_requests,
    stats_summary,
    write_stats,
)
from hwrunner.switch_contents import check_fits
from hwrunner.targets import (
    checkpointer,
    default_journal,
    open_target,
    requested_profile,
    resolve_profile,
    save_target,
)
from netlock.cli.common import (
    OUTPUT_PANEL,
    distinct_outputs,
    emit_json,
    guarded,
    json_option,
    set_option,
    stderr,
)
from netlock.config.schema import MAX_SEED
from netlock.errors import ConfigError, PlanError, TargetError
from netlock.plan import Plan
from netlock.plan_io import load_plan, save_plan

TARGET_PANEL = "Target"

TargetOpt = Annotated[str, typer.Option(
    "--target", help="emulator (in-process switch) or grpc://HOST:PORT (BFRuntime server of "
    "bf_switchd or tofino-model)", rich_help_panel=TARGET_PANEL)]
StateOpt = Annotated[Path | None, typer.Option(
    "--state", help="emulator only: load the switch from this file if it exists and save it "
    "back afterwards", rich_help_panel=TARGET_PANEL)]
ProfileOpt = Annotated[str | None, typer.Option(
    "--profile", help="switch profile: a shipped name (configs/switch/NAME.yaml) or a YAML "
    "file, checked against the program \\[default: for grpc://, the shipped profile the "
    "running program matches; for the emulator, the one --state was saved with, else "
    "netlock-stats, the public program extended with per-lock counters]",
    rich_help_panel=TARGET_PANEL)]
BfrtOpt = Annotated[Path | None, typer.Option(
    "--bfrt", help="the program's bf-rt.json: check the profile and every write against it "
    "(for the emulator: emulate that program)", rich_help_panel=TARGET_PANEL)]
DeviceOpt = Annotated[int, typer.Option("--device", help="device id on the BFRuntime server",
                                        rich_help_panel=TARGET_PANEL)]
ClientIdOpt = Annotated[int, typer.Option(
    "--client-id", min=0, help="BFRuntime client id to bind the program with (one client may "
    "bind it at a time)", rich_help_panel=TARGET_PANEL)]
JsonOpt = json_option("progress goes to")
SetOpt = set_option("workload.zipf=0.99")
ShiftOpt = Annotated[int, typer.Option(
    "--shift-locks", min=0, help="replay with lock ids rotated by this much over the "
    "workload's ids (its hot set moved)")]


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
WaitOpt = Annotated[bool, typer.Option(
    "--wait", help="when another command is writing the same state file (or journal), wait for "
    "it to finish \\[default: refuse, naming it]", rich_help_panel=TARGET_PANEL)]
ServersIdleOpt = Annotated[bool, typer.Option(
    "--servers-idle", help="the lock servers hold nothing for locks whose server the plan "
    "changes (drained by you): allow a new partition")]


def _connect(target: str, profile: str | None, state: Path | None, bfrt: Path | None,
             device: int, client_id: int, plan: Plan | None = None,
             counters: bool = False) -> Driver:
    """Open ``target`` with the profile named (or saved with the emulator), or the one a
    BFRuntime program matches, saying on stderr which was chosen and why; ``plan`` must fit,
    and with ``counters`` the profile must have the per-lock counters."""
    prof = requested_profile(profile, state, target)
    if prof is not None and plan is not None:
        check_fits(plan, prof)
    driver = open_target(target, prof, state=state, bfrt=bfrt, device=device,
                         geometry=plan.geometry if plan else None, client_id=client_id)
    try:
        if prof is None and plan is not None:
            check_fits(plan, driver.profile)
        if counters and not all(driver.profile.has(c) for c in OPTIONAL_LOCK_REGISTERS):
            raise TargetError(f"{driver.target}: profile {driver.profile.name}: the program "
                              f"keeps no per-lock request and peak-occupancy counters, which "
                              f"netlock autopilot reads ({counter_tables()})")
    except TargetError:
        driver.close()
        raise
    choice = getattr(driver, "choice", None)
    if choice is not None and choice.reason:
        stderr(f"netlock: {driver.target}: profile {driver.profile.name} chosen: "
               f"{choice.reason}")
    return driver


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
    driver = _connect(target, profile, state, bfrt, device, client_id, plan)
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


@guarded
def stats_command(
    target: TargetOpt = EMULATOR,
    state: StateOpt = None,
    profile: ProfileOpt = None,
    bfrt: BfrtOpt = None,
    device: DeviceOpt = 0,
    client_id: ClientIdOpt = 0,
    window: Annotated[float | None, typer.Option(
        "--window-s", min=0.0, help="seconds the request counters have been counting (gives "
        "r_i in requests/s) \\[default: on the emulator, the traffic netlock traffic replayed "
        "since the last reset; elsewhere rates are not computed]")] = None,
    reset: Annotated[bool, typer.Option(
        "--reset", help="zero the request counters after reading (start a new window)")]
    = False,
    wait: WaitOpt = False,
    out: Annotated[Path | None, typer.Option(
        "--out", help="write the per-lock table (lock_id, requests, rate_rps, contention, "
        "occupancy, holders) to this .parquet or .csv file", rich_help_panel=OUTPUT_PANEL)]
    = None,
    as_json: JsonOpt = False,
) -> None:
    """Read per-lock request counters and queue occupancy back from a switch.

    The per-lock table holds the numbers the planner weighs locks by: r_i = requests /
    window, c_i = the peak queue occupancy (switch queue plus requests buffered at the
    server). It is not a trace (netlock plan reads traces): netlock autopilot re-plans from
    these counters.

    Examples:

        netlock stats --target emulator --state switch.json --json

        netlock stats --target grpc://10.0.0.5:50052 --window-s 10 --out stats.parquet

        netlock stats --state switch.json --out stats.csv --reset
    """
    if out is not None and out.suffix not in (".parquet", ".csv"):
        raise PlanError(f"--out {out}: expected a .parquet or .csv file")
    with writers([state] if reset else [], wait):
        prof, table, tenants, target_name, window = _read_stats(
            target, state, profile, bfrt, device, client_id, window, reset)
    if out is not None:
        write_stats(table, out)
    summary = stats_summary(target_name, table, window, prof.has("requests"), prof.name,
                            tenants)
    if as_json:
        emit_json(summary)
        return
    for key, value in summary.items():
        typer.echo(f"{key}: {_stats_value(key, value, prof)}")


def _read_stats(target: str, state: Path | None, profile: str | None, bfrt: Path | None,
                device: int, client_id: int, window: float | None,
                reset: bool) -> tuple[SwitchProfile, pd.DataFrame, dict, str, float | None]:
    """The per-lock table and the per-tenant requests (and the profile, target and window
    they were read with)."""
    driver = _connect(target, profile, state, bfrt, device, client_id)
    prof = driver.profile
    if window is None and isinstance(driver, EmulatedSwitch):
        window = driver.window_s
    try:
        table = read_stats(driver, prof, window_s=window, reset=reset)
        tenants = read_tenant_requests(driver, prof)
        if reset and isinstance(driver, EmulatedSwitch):
            driver.window_s = None
    finally:
        if reset:
            save_target(driver, state)
        driver.close()
    return prof, table, tenants, driver.target, window


def _stats_value(key: str, value: object, profile: SwitchProfile) -> str:
    """A ``netlock stats`` value for people: what a missing one means and how to get it."""
    if isinstance(value, dict):
        return ", ".join(f"tenant {t}: {n}" for t, n in value.items()) or "none counted"
    if value is not None:
        if isinstance(value, float):
            return f"{value:,.0f}" if key.endswith("_rps") else f"{value:g}"
        return str(value)
    if key == "window_s":
        return "unknown (give --window-s, or replay traffic with netlock traffic)"
    if key == "requests":
        return (f"not counted (profile {profile.name}: the program has no per-lock request "
                f"counter, such as {counter_tables(('requests',))})")
    if key == "tenant_requests":
        return f"not counted (profile {profile.name} names no tenant counter)"
    return "not computed (needs the request counters and a window)"


def counter_tables(concepts: tuple[str, ...] = OPTIONAL_LOCK_REGISTERS) -> str:
    """The tables shipped profiles name for these per-lock counters, for a message."""
    found: dict[str, list[str]] = {}
    for p in shipped_profiles():
        tables = [p.register(c).register for c in concepts if p.has(c)]
        if len(tables) == len(concepts):
            found.setdefault(", ".join(tables), []).append(p.name)
    return "; ".join(f"{'table' if len(concepts) == 1 else 'tables'} {t} (profile "
                     f"{', '.join(n)})" for t, n in found.items()) or "no shipped profile has them"


CountingProfileOpt = Annotated[str | None, typer.Option(
    "--profile", help="switch profile; the program must count acquires and peak occupancy per "
    "lock \\[default: for grpc://, the shipped profile the running program matches; for the "
    "emulator, the one --state was saved with, else netlock-stats]",
    rich_help_panel=TARGET_PANEL)]
IntervalOpt = Annotated[float, typer.Option(
    "--interval", help="seconds per round (counters are read and reset each round)")]
MaxRoundsOpt = Annotated[int | None, typer.Option(
    "--max-rounds", min=1, help="stop after this many rounds \\[default: until Ctrl-C]")]
MarginOpt = Annotated[float, typer.Option(
    "--margin", help="migrate only when the new plan's switch rps beats the live layout's by "
    "this fraction, on two rounds' counters")]
KeepOpt = Annotated[float, typer.Option(
    "--keep", help="a switch-resident lock's value counts (1 + KEEP) times when locks compete "
    "for slots")]
MemoryOpt = Annotated[float, typer.Option(
    "--memory", help="fraction of last round's peak occupancy kept when a round's peak is "
    "lower")]
SlotsOpt = Annotated[int | None, typer.Option("--slots", help="slot budget \\[default: the "
                                              "plan's]")]
ServerCountersOpt = Annotated[Path | None, typer.Option(
    "--server-counters", help="a .csv/.parquet the lock servers rewrite each round with "
    "lock_id, requests, peak_occupancy of the locks they serve (without it only "
    "switch-resident locks are seen)")]
SavePlanOpt = Annotated[Path | None, typer.Option(
    "--save-plan", help="write each plan the loop pushes to this file",
    rich_help_panel=OUTPUT_PANEL)]
TrafficOpt = Annotated[Path | None, typer.Option(
    "--traffic", help="emulator only: replay this trace (.csv/.parquet, looped) or config's "
    "workload (.yaml) as NetLock packets while the loop runs; --interval is then trace time")]


@guarded
def autopilot_command(
    plan_file: Annotated[Path, typer.Argument(
        metavar="PLAN", help="the plan pushed last: its geometry, slot budget, server rate and "
        "partition frame the new plans")],
    target: TargetOpt = EMULATOR,
    state: StateOpt = None,
    profile: CountingProfileOpt = None,
    bfrt: BfrtOpt = None,
    device: DeviceOpt = 0,
    client_id: ClientIdOpt = 0,
    interval: IntervalOpt = 10.0,
    max_rounds: MaxRoundsOpt = None,
    margin: MarginOpt = AutopilotOptions.margin,
    keep: KeepOpt = AutopilotOptions.keep,
    memory: MemoryOpt = AutopilotOptions.memory,
    slots: SlotsOpt = None,
    server_counters: ServerCountersOpt = None,
    save_plan_to: SavePlanOpt = None,
    traffic: TrafficOpt = None,
    shift: ShiftOpt = 0,
    wait: WaitOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Keep the switch's plan current: measure, re-plan, migrate when the workload moved.

    Each round reads the per-lock counters (r_i, c_i), re-plans with Algorithm 3 keeping the
    live partition, and pushes (safely, as netlock push) only when the new plan beats the live
    layout by --margin on two consecutive rounds' counters; locks in the switch keep their
    place unless their value falls clearly below the entry threshold (--keep).

    Examples:

        netlock autopilot plan.yaml --state switch.json --max-rounds 3 --json

        netlock autopilot plan.yaml --target grpc://10.0.0.5:50052 --interval 10

        netlock autopilot plan.yaml --state switch.json --traffic shifted.parquet
    """
    options = AutopilotOptions(interval_s=interval, margin=margin, keep=keep, memory=memory,
                               slots=slots)
    found = options.problem()
    if found:
        raise ConfigError(found)
    distinct_outputs({"--save-plan": save_plan_to},
                     {"PLAN": plan_file, "--state": state, "--traffic": traffic,
                      "--server-counters": server_counters})
    plan = load_plan(plan_file)
    if traffic is not None and target != EMULATOR:
        raise TargetError("--traffic: only the emulator target takes replayed traffic")
    requests = load_requests(traffic, shift=shift) if traffic is not None else None
    journal_path = default_journal(target, state)
    with writers([state, journal_path], wait):
        driver = _connect(target, profile, state, bfrt, device, client_id, plan,
                          counters=True)
        prof = driver.profile
        replay = (Replay(driver, requests, len(prof.partition.servers), loop=True)
                  if requests is not None and isinstance(driver, EmulatedSwitch) else None)
        try:
            pilot = Autopilot(driver, prof, plan, options=options,
                              server_counters=_server_counters(server_counters, replay),
                              servers=replay.lock_servers() if replay else None,
                              pacer=ReplayPacer(replay) if replay else None,
                              push_options=replay_push_options(interval) if replay else None,
                              journal_path=journal_path,
                              checkpoint=checkpointer(driver, state))
            rounds = pilot.run(max_rounds, _round_reporter(pilot, save_plan_to))
            if replay is not None:
                replay.finish()
        finally:
            save_target(driver, state)
            driver.close()
    if pilot.interrupted:
        raise KeyboardInterrupt
    if as_json:
        emit_json({"target": driver.target, "rounds": len(rounds),
                   "migrations": pilot.migrations,
                   "verified": all(r.push.verified for r in rounds if r.push),
                   "history": [r.to_json() for r in rounds]})
    if any(r.push is not None and not r.push.verified for r in rounds):
        raise typer.Exit(1)


def _server_counters(path: Path | None,
                     replay: Replay | None) -> Callable[[], Counters] | None:
    """How the loop reads the lock servers' counters: from the file they rewrite, else from
    the replay's in-process servers, else (None) from the push's lock servers."""
    if path is not None:
        return lambda: read_server_counters(path)
    return replay.server_counters if replay is not None else None


def _round_reporter(pilot: Autopilot, save_plan_to: Path | None) -> Callable[[Round], None]:
    """A line on stderr per round, and the plan just pushed saved to ``save_plan_to``."""
    def report(done: Round) -> None:
        stderr(f"netlock: round {done.number}: {done.locks_seen} locks, "
               f"{done.total_rps:,.0f} rps, switch {done.live_rps:,.0f} rps live vs "
               f"{done.new_rps:,.0f} planned: "
               f"{'migrated ' + str(done.push.migrated_locks) + ' locks' if done.push else 'kept'}")
        if done.push is not None and save_plan_to is not None and pilot.last_plan is not None:
            save_plan(pilot.last_plan, save_plan_to)
    return report


def replay_push_options(interval_s: float) -> PushOptions:
    """A push beside replayed traffic waits in trace time, where packets arrive at once: poll
    and settle in microseconds, and give up on a drain after one round's traffic."""
    return PushOptions(drain_timeout_s=interval_s, quiesce_timeout_s=interval_s, poll_s=1e-5,
                       settle_s=1e-5)


SourceArg = Annotated[Path, typer.Argument(
    metavar="TRACE|CONFIG", help="a trace (.csv/.parquet) or a config (.yaml) whose workload "
    "is generated")]
EmulatorStateOpt = Annotated[Path, typer.Option(
    "--state", help="the emulated switch (from netlock push --state); updated in place",
    rich_help_panel=TARGET_PANEL)]
RequestsOpt = Annotated[int | None, typer.Option(
    "--requests", min=1, help="lock requests: with a config, how many to generate "
    "\\[default: 100000]; with a trace, replay only the first ones")]
SeedOpt = Annotated[int | None, typer.Option(
    "--seed", min=0, max=MAX_SEED, help="with a config: RNG seed \\[default: sim.seed]")]
CountersOutOpt = Annotated[Path | None, typer.Option(
    "--server-counters", help="write the lock servers' per-lock counters (lock_id, requests, "
    "peak_occupancy) to this .csv/.parquet, for netlock autopilot",
    rich_help_panel=OUTPUT_PANEL)]


@guarded
def traffic_command(
    source: SourceArg,
    state: EmulatorStateOpt,
    profile: ProfileOpt = None,
    requests: RequestsOpt = None,
    sets: SetOpt = None,
    seed: SeedOpt = None,
    shift: ShiftOpt = 0,
    server_counters: CountersOutOpt = None,
    wait: WaitOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Replay a workload into the emulated switch as NetLock packets.

    Each request of the trace (or of the config's workload) is sent as an acquire packet
    in the project's wire format at its time, and released after its hold time once
    granted. Locks the switch does not own go to in-process lock servers (one per
    partition entry). Afterwards the switch's per-lock counters hold what it saw, and
    netlock stats shows r_i and c_i over the replayed window.

    Examples:

        netlock traffic zipf.parquet --state switch.json --json

        netlock traffic configs/demo.yaml --requests 50000 --state switch.json

        netlock traffic zipf.parquet --state switch.json --server-counters servers.csv
    """
    if not state.exists():
        raise TargetError(f"--state {state}: no emulated switch there (run netlock push "
                          f"PLAN --state {state} first)")
    if server_counters is not None and server_counters.suffix not in (".parquet", ".csv"):
        raise PlanError(f"--server-counters {server_counters}: expected a .parquet or .csv file")
    distinct_outputs({"--server-counters": server_counters},
                     {"TRACE|CONFIG": source, "--state": state})
    reqs = load_requests(source, requests, sets, seed, shift)
    with writers([state], wait):
        prof = resolve_profile(profile, state)
        driver = open_target(EMULATOR, prof, state=state)
        assert isinstance(driver, EmulatedSwitch)
        replay = Replay(driver, reqs, len(prof.partition.servers))
        replay.run_until(reqs.span_us)
        replay.finish()
        driver.window_s = (driver.window_s or 0.0) + reqs.span_us / 1e6
        save_target(driver, state)
    if server_counters is not None:
        write_stats(pd.DataFrame(replay.server_counters()), server_counters)
    counts = replay.counts
    summary = {"target": EMULATOR, "requests": len(reqs), **counts.to_json(),
               "window_s": reqs.span_us / 1e6}
    stderr(f"netlock: replayed {len(reqs):,} requests over {reqs.span_us / 1e6:.4g} s: "
           f"{counts.granted_by_switch:,} granted by the switch, "
           f"{counts.granted_by_servers:,} by lock servers, {counts.dropped:,} dropped")
    if as_json:
        emit_json(summary)
    else:
        for key, value in summary.items():
            typer.echo(f"{key}: {value}")


def register(app: typer.Typer) -> None:
    """Add ``push``, ``stats``, ``traffic`` and ``autopilot`` to the ``netlock`` app."""
    app.command("push")(push_command)
    app.command("stats")(stats_command)
    app.command("traffic")(traffic_command)
    app.command("autopilot")(autopilot_command)
