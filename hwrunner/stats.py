"""Per-lock counters read back from a switch, as the planner's r_i / c_i input.

For every switch-resident lock: acquires counted since the last reset (``requests``, when the
program counts them; summed over pipes), the peak queue occupancy (switch queue plus requests
buffered at the lock server; the current occupancy when the program keeps no peak), and the
holders now. Queue state is read from the profile's ``traffic_pipe``, the pipe lock packets go
through: the other pipes' copies keep what the control plane last wrote.
r_i = requests / window (requests per second); c_i = the peak occupancy, at least 1. A
program without the request counter (the public one) leaves ``requests`` empty (null), not a
sentinel, and still gives the occupancy, holders and its per-tenant acquire counters.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from hwrunner.driver import Driver
from hwrunner.operations import RegisterWrite
from hwrunner.profile import SwitchProfile
from hwrunner.readback import read_bounds
from netlock import atomic
from netlock.errors import TargetError

STATS_COLUMNS = ("lock_id", "index", "slots", "requests", "rate_rps", "contention", "occupancy",
                 "server_held", "exclusive_holders", "shared_holders")


def _per_pipe(driver: Driver, profile: SwitchProfile, concept: str,
              index: np.ndarray) -> np.ndarray:
    reg = profile.register(concept)
    return driver.read_registers(reg.register, (reg.field,), index)[reg.field]


def _pipe_sum(driver: Driver, profile: SwitchProfile, concept: str,
              index: np.ndarray) -> np.ndarray:
    """A counter summed over pipes (each pipe counts the traffic it saw)."""
    return _per_pipe(driver, profile, concept, index).sum(axis=0)


def _state(driver: Driver, profile: SwitchProfile, concept: str,
           index: np.ndarray) -> np.ndarray:
    """Queue state as the pipe that carries lock traffic holds it (the other pipes keep what
    the control plane wrote)."""
    return _per_pipe(driver, profile, concept, index)[profile.traffic_pipe]


def read_stats(driver: Driver, profile: SwitchProfile, window_s: float | None = None,
               reset: bool = False) -> pd.DataFrame:
    """One row per switch-resident lock, sorted by lock id (columns ``STATS_COLUMNS``)."""
    lt = profile.lock_table
    table = driver.read_entries(lt.table, (lt.key,), (lt.index_param,))
    order = np.argsort(table.keys[0].value, kind="stable")
    lock_id, index = table.keys[0].value[order], table.data[0].value[order]
    bounds = read_bounds(driver, profile, index)
    slots = bounds["right"][0] - bounds["left"][0] + 1
    queued = slots - _state(driver, profile, "free_slots", index)
    held = _state(driver, profile, "server_held", index)
    occupancy = queued + held
    has_requests = profile.has("requests")
    requests = (pd.array(_pipe_sum(driver, profile, "requests", index), dtype="Int64")
                if has_requests else pd.array([pd.NA] * len(index), dtype="Int64"))
    peak = (_state(driver, profile, "peak_occupancy", index)
            if profile.has("peak_occupancy") else occupancy)
    rate = (requests.to_numpy(np.float64) / window_s if has_requests and window_s
            else np.full(len(index), np.nan))
    frame = pd.DataFrame({
        "lock_id": lock_id, "index": index, "slots": slots, "requests": requests,
        "rate_rps": rate, "contention": np.maximum(peak, 1), "occupancy": occupancy,
        "server_held": held,
        "exclusive_holders": _state(driver, profile, "exclusive_count", index),
        "shared_holders": _state(driver, profile, "shared_count", index),
    })
    if reset:
        if not has_requests:
            raise TargetError(f"profile {profile.name}: the program keeps no per-lock request "
                              "counter to reset")
        reg = profile.register("requests")
        driver.write(RegisterWrite.of(reg.register, index, **{reg.field: 0}))
        if profile.has("peak_occupancy"):
            peak_reg = profile.register("peak_occupancy")
            driver.write(RegisterWrite.of(peak_reg.register, index,
                                          **{peak_reg.field: occupancy}))
    return frame


def read_tenant_requests(driver: Driver, profile: SwitchProfile) -> dict[str, int] | None:
    """Acquires counted per tenant since the controller last reset the counters, summed over
    pipes: ``{tenant id: count}`` for the tenants with any; None when the profile names no
    tenant counter."""
    reg = profile.tenant_counter
    if reg is None:
        return None
    size = driver.schema.table(reg.register).size
    values = driver.read_registers(reg.register, (reg.field,), np.arange(size))[reg.field]
    counts = values.sum(axis=0)
    return {str(t): int(counts[t]) for t in np.flatnonzero(counts)}


def write_stats(frame: pd.DataFrame, path: Path) -> None:
    """Write the table atomically, as Parquet or CSV by extension."""
    if path.suffix == ".csv":
        atomic.write_with(path, lambda tmp: frame.to_csv(tmp, index=False))
    else:
        atomic.write_with(path, lambda tmp: frame.to_parquet(tmp, index=False))


def stats_summary(target: str, frame: pd.DataFrame, window_s: float | None,
                  counted: bool, profile: str,
                  tenant_requests: dict[str, int] | None) -> dict:
    """The ``netlock stats --json`` object; ``counted``: the program counts requests per lock
    (else ``requests`` and ``total_rps`` are null)."""
    return {
        "target": target,
        "profile": profile,
        "locks": len(frame),
        "requests": int(frame["requests"].sum()) if counted else None,
        "window_s": window_s,
        "total_rps": float(frame["rate_rps"].sum()) if counted and window_s else None,
        "occupancy": int(frame["occupancy"].sum()),
        "server_held": int(frame["server_held"].sum()),
        "holders": int(frame["exclusive_holders"].sum() + frame["shared_holders"].sum()),
        "max_contention": int(frame["contention"].max()) if len(frame) else 0,
        "tenant_requests": tenant_requests,
    }


SERVER_COUNTER_COLUMNS = ("lock_id", "requests", "peak_occupancy")


def read_server_counters(path: Path) -> dict[str, np.ndarray]:
    """The lock servers' per-lock counters for the current window, as their exporter writes
    them (.csv or .parquet with ``SERVER_COUNTER_COLUMNS``, non-negative integers)."""
    try:
        frame = pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise TargetError(f"{path}: cannot read lock-server counters: {exc}") from None
    out = {}
    for column in SERVER_COUNTER_COLUMNS:
        if column not in frame.columns:
            raise TargetError(f"{path}: column {column}: missing (expected "
                              f"{', '.join(SERVER_COUNTER_COLUMNS)})")
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() | (values < 0) | (values != values.round())
        if bad.any():
            row = int(np.argmax(bad.to_numpy()))
            raise TargetError(f"{path}: row {row}: {column}: expected an integer >= 0, got "
                              f"{frame[column].iloc[row]!r}")
        out[column] = values.to_numpy(np.int64)
    order = np.argsort(out["lock_id"], kind="stable")
    return {c: v[order] for c, v in out.items()}
