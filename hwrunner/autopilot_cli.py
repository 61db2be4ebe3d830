"""``netlock autopilot``: keep the switch's plan current, round by round
(:mod:`hwrunner.autopilot`), optionally beside traffic replayed into the emulator."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from hwrunner.autopilot import Autopilot, AutopilotOptions, Counters, Round
from hwrunner.cli_target import (
    TARGET_PANEL,
    BfrtOpt,
    ClientIdOpt,
    DeviceOpt,
    JsonOpt,
    StateOpt,
    TargetOpt,
    WaitOpt,
    connect,
)
from hwrunner.emulator import TARGET as EMULATOR
from hwrunner.emulator import EmulatedSwitch
from hwrunner.packet_replay import Replay, ReplayPacer, load_requests
from hwrunner.push import PushOptions
from hwrunner.statelock import writers
from hwrunner.stats import read_server_counters
from hwrunner.targets import checkpointer, default_journal, save_target
from hwrunner.traffic_cli import ShiftOpt
from netlock.cli.common import OUTPUT_PANEL, distinct_outputs, emit_json, guarded, stderr
from netlock.errors import ConfigError, TargetError
from netlock.plan_io import load_plan, save_plan

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
        driver = connect(target, profile, state, bfrt, device, client_id, plan,
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
