"""``netlock traffic``: replay a workload into the emulated switch as NetLock packets
(:mod:`hwrunner.packet_replay`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from hwrunner.cli_target import TARGET_PANEL, JsonOpt, ProfileOpt, WaitOpt
from hwrunner.emulator import TARGET as EMULATOR
from hwrunner.emulator import EmulatedSwitch
from hwrunner.packet_replay import Replay, load_requests
from hwrunner.statelock import writers
from hwrunner.stats import write_stats
from hwrunner.targets import open_target, resolve_profile, save_target
from netlock.cli.common import (
    OUTPUT_PANEL,
    distinct_outputs,
    emit_json,
    guarded,
    set_option,
    stderr,
)
from netlock.config.schema import MAX_SEED
from netlock.errors import PlanError, TargetError

SetOpt = set_option("workload.zipf=0.99")
ShiftOpt = Annotated[int, typer.Option(
    "--shift-locks", min=0, help="replay with lock ids rotated by this much over the "
    "workload's ids (its hot set moved)")]


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
