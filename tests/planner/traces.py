"""Small trace builders shared by the planner tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from netlock.trace import Trace


def make_trace(lock_id, t_request, t_release, mode=None, priority=None) -> Trace:
    lock_id = np.asarray(lock_id, dtype=np.int64)
    n = len(lock_id)
    return Trace(source="test", lock_id=lock_id,
                 mode=np.zeros(n, np.int8) if mode is None else np.asarray(mode, np.int8),
                 t_request=np.asarray(t_request, dtype=float),
                 t_release=np.asarray(t_release, dtype=float),
                 priority=None if priority is None else np.asarray(priority, np.int64))


def random_trace(rng: np.random.Generator, n: int, locks: int, span_s: float = 1.0,
                 hold_s: float = 0.05) -> Trace:
    t = np.sort(rng.uniform(0, span_s, n))
    return make_trace(rng.integers(0, locks, n), t, t + rng.uniform(0, hold_s, n),
                      rng.integers(0, 2, n))


def trace_frame(n: int = 6) -> pd.DataFrame:
    """A valid trace as the file format has it."""
    t = np.arange(n, dtype=float) * 0.001
    return pd.DataFrame({"lock_id": np.arange(n) % 3, "mode": ["S", "X"] * (n // 2),
                         "t_request": t, "t_release": t + 0.0025,
                         "client_id": np.arange(n) % 2, "txn_id": np.arange(n)})


def write_frame(frame: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)
    return path
