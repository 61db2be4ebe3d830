"""Shared helpers for the simulator tests: canonical configs with overrides, small traces."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from netlock.config import Config, load_config

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"
SHORT = ["--set", "sim.duration_s=0.001", "--set", "sim.warmup_s=0.0002"]
"""Flags for a short run of any simulation config."""


def config(name: str, **overrides: object) -> Config:
    """``configs/<name>.yaml`` with ``--set``-style overrides (dots written as ``__``)."""
    sets = {key.replace("__", "."): str(value) for key, value in overrides.items()}
    return load_config(CONFIGS / f"{name}.yaml", sets)


def private_locks_trace(path: Path, clients: int) -> Path:
    """A trace in which client ``c`` only ever locks lock ``c``, exclusively: no contention."""
    pd.DataFrame({
        "lock_id": range(clients), "mode": ["X"] * clients,
        "t_request": [0.0] * clients, "t_release": [1e-5] * clients,
        "client_id": range(clients), "txn_id": range(clients),
    }).to_csv(path, index=False)
    return path


def window_mean(timeseries: pd.DataFrame, start_s: float, end_s: float) -> float:
    """Mean granted requests/s over the time-series bins inside ``[start_s, end_s)``."""
    t = timeseries["t_s"]
    return float(timeseries[(t >= start_s - 1e-12) & (t < end_s - 1e-12)]["granted_rps"].mean())
