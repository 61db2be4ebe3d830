"""What every hardware command takes to reach a switch: the target options (the "Target"
panel of ``--help``: ``--target``, ``--state``, ``--profile``, ``--bfrt``, ``--device``,
``--client-id``, ``--wait``), ``--json``, and opening the target they name with its profile
(:func:`connect`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hwrunner.driver import Driver
from hwrunner.profile import OPTIONAL_LOCK_REGISTERS, shipped_profiles
from hwrunner.switch_contents import check_fits
from hwrunner.targets import open_target, requested_profile
from netlock.cli.common import json_option, stderr
from netlock.errors import TargetError
from netlock.plan import Plan

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
WaitOpt = Annotated[bool, typer.Option(
    "--wait", help="when another command is writing the same state file (or journal), wait for "
    "it to finish \\[default: refuse, naming it]", rich_help_panel=TARGET_PANEL)]


def connect(target: str, profile: str | None, state: Path | None, bfrt: Path | None,
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


def counter_tables(concepts: tuple[str, ...] = OPTIONAL_LOCK_REGISTERS) -> str:
    """The tables shipped profiles name for these per-lock counters, for a message."""
    found: dict[str, list[str]] = {}
    for p in shipped_profiles():
        tables = [p.register(c).register for c in concepts if p.has(c)]
        if len(tables) == len(concepts):
            found.setdefault(", ".join(tables), []).append(p.name)
    return "; ".join(f"{'table' if len(concepts) == 1 else 'tables'} {t} (profile "
                     f"{', '.join(n)})" for t, n in found.items()) or "no shipped profile has them"
