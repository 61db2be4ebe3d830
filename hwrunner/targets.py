"""Opening a switch target named on the command line, and saving an emulated one.

``emulator`` is the in-process switch (its state kept in ``--state FILE`` between commands);
``grpc://HOST:PORT`` is a Tofino or tofino-model reached through BFRuntime, whose running
program decides the profile when none is named. Either way the profile is checked against the
program before anything is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hwrunner.bfrt_driver import BfrtDriver, parse_address
from hwrunner.bfrt_info import load_schema
from hwrunner.driver import Driver
from hwrunner.emulator import TARGET as EMULATOR
from hwrunner.emulator import EmulatedSwitch, emulator_geometry
from hwrunner.emulator_state import load_state, save_state, saved_profile
from hwrunner.profile import (
    DEFAULT_PROFILE,
    PROFILE_DIR,
    SwitchProfile,
    load_profile,
    shipped_profiles,
)
from hwrunner.profile_choice import check_profile
from hwrunner.push import PushOptions, PushResult, push
from hwrunner.server_handover import LockServers
from hwrunner.statelock import writers
from netlock.errors import TargetError
from netlock.geometry import RegisterArray, SwitchGeometry
from netlock.plan import Plan


def resolve_profile(profile: str | Path | None, state: Path | None,
                    default: str = DEFAULT_PROFILE) -> SwitchProfile:
    """The profile named on the command line; else the one the emulator's state file was
    saved with, which must be a shipped profile's name (a file's contents never name a path
    to open); else ``default``."""
    if profile is None and state is not None:
        saved = saved_profile(state)
        if saved is not None:
            shipped = sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))
            if saved not in shipped:
                raise TargetError(f"{state}: saved with switch profile {saved[:80]!r}, which is "
                                  f"not a shipped profile ({', '.join(shipped)}): name its file "
                                  f"with --profile")
            profile = PROFILE_DIR / f"{saved}.yaml"
    return load_profile(profile or default)


def requested_profile(profile: str | Path | None, state: Path | None,
                      target: str) -> SwitchProfile | None:
    """The profile to open ``target`` with: None for a BFRuntime target given none, whose
    running program then decides it; else as :func:`resolve_profile`."""
    if profile is None and target != EMULATOR:
        return None
    return resolve_profile(profile, state)


def default_geometry(profile: SwitchProfile) -> SwitchGeometry:
    """One slot array as large as the profile's slot registers (an emulator with no plan yet)."""
    return SwitchGeometry((RegisterArray(0, profile.slot_capacity - profile.slot_base),))


def open_target(target: str, profile: SwitchProfile | None, *, state: Path | None = None,
                bfrt: Path | None = None, geometry: SwitchGeometry | None = None,
                device: int = 0, client_id: int = 0) -> Driver:
    """A connected driver whose program matches ``profile`` (else one TargetError line); its
    ``profile`` is the one in use. A BFRuntime target given None chooses the shipped profile
    its program matches (``driver.choice.reason`` says why).

    For the emulator, ``state`` is loaded when it exists; ``geometry`` (the plan's) must then
    match the saved switch, and sizes a fresh one.
    """
    if target == EMULATOR:
        if profile is None:
            raise TargetError("emulator: a switch profile is needed (see resolve_profile)")
        schema = load_schema(bfrt) if bfrt else None
        if schema is not None:
            check_profile(profile, shipped_profiles(), lambda _: schema, schema.source,
                          "give --profile {name}")
        if state is not None and state.exists():
            switch = load_state(state, profile, schema)
            if geometry is not None and emulator_geometry(geometry) != switch.geometry:
                raise TargetError(f"{state}: the emulated switch has slot arrays "
                                  f"{_arrays(switch.geometry)}, the plan was made for "
                                  f"{_arrays(geometry)}")
            return switch
        return EmulatedSwitch(profile, geometry or default_geometry(profile), schema)
    parse_address(target)
    return BfrtDriver(target, profile, bfrt, device=device, client_id=client_id)


def _arrays(geometry: SwitchGeometry) -> str:
    return "[" + ", ".join(f"{a.size}@{a.stage}" for a in geometry.arrays) + "]"


def save_target(driver: Driver, state: Path | None) -> None:
    """Keep an emulated switch's state for the next command (nothing for real switches)."""
    if state is not None and isinstance(driver, EmulatedSwitch):
        save_state(driver, state)


def checkpointer(driver: Driver, state: Path | None) -> Callable[[], None] | None:
    """For an emulated switch kept in ``state``: save it whenever a push journals progress,
    so that a crash never leaves the journal ahead of the state file (as a real switch keeps
    every write it applied). Every time, not only after writes: traffic replayed meanwhile
    (``autopilot --traffic``) changes the queues a step waits on, and a resumed step must
    see them as they were when the journal moved past it. None for real switches."""
    if state is None or not isinstance(driver, EmulatedSwitch):
        return None
    return lambda: save_state(driver, state)


def default_journal(target: str, state: Path | None) -> Path | None:
    """Where a push journals by default: beside the emulator's state file, or in the working
    directory for a real switch; an emulator without a state file has nothing to resume."""
    if target == EMULATOR:
        return Path(f"{state}.journal") if state is not None else None
    host, port = parse_address(target)
    return Path(f"netlock-push-{host}-{port}.journal")


def push_plan(plan: Plan, target: str = EMULATOR, *, state: Path | None = None,
              profile: str | Path | None = None, bfrt: Path | None = None,
              options: PushOptions | None = None,
              servers: LockServers | None = None) -> PushResult:
    """Open ``target``, push ``plan`` (journaled as the CLI does), save an emulator's state.

    What ``netlock push PLAN`` does, for library users (the demo, notebooks); the profile
    defaults as the command line's does.
    """
    journal = default_journal(target, state)
    with writers([state, journal]):
        driver = open_target(target, requested_profile(profile, state, target), state=state,
                             bfrt=bfrt, geometry=plan.geometry)
        try:
            return push(driver, driver.profile, plan, servers=servers, options=options,
                        journal_path=journal, checkpoint=checkpointer(driver, state))
        finally:
            save_target(driver, state)
            driver.close()
