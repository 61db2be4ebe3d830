"""``netlock stats``: read the per-lock request counters and queue occupancy back from a
switch (:mod:`hwrunner.stats`) and say what a missing value means."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
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
    counter_tables,
)
from hwrunner.emulator import TARGET as EMULATOR
from hwrunner.emulator import EmulatedSwitch
from hwrunner.profile import SwitchProfile
from hwrunner.statelock import writers
from hwrunner.stats import read_stats, read_tenant_requests, stats_summary, write_stats
from hwrunner.targets import save_target
from netlock.cli.common import OUTPUT_PANEL, emit_json, guarded
from netlock.errors import PlanError


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
    driver = connect(target, profile, state, bfrt, device, client_id)
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
