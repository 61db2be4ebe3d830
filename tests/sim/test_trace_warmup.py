"""A replayed trace is planned from its warm-up only: the plan must not see the locks the
measured period will take (issue: the pilot run replayed the same prefix past the warm-up,
so a large switch held exactly the measured period's locks)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sim.simulate_simpy import simulate
from tests.sim.helpers import config

CLIENTS = 10
TXNS = 20_000


def fresh_locks_trace(path):
    """Every transaction locks a lock no other transaction takes: what the warm-up sees
    says nothing about the locks that follow."""
    ids = np.arange(TXNS)
    pd.DataFrame({"lock_id": ids, "mode": "X", "t_request": ids * 1e-6,
                  "t_release": ids * 1e-6 + 5e-6, "client_id": ids % CLIENTS,
                  "txn_id": ids}).to_parquet(path, index=False)
    return path


def test_the_plan_of_a_replayed_trace_sees_only_the_warm_up(tmp_path):
    run = simulate(config("micro-exclusive", workload__kind="trace",
                          workload__trace=fresh_locks_trace(tmp_path / "t.parquet"),
                          workload__clients=CLIENTS, switch__slots=100_000,
                          sim__warmup_s=0.0002, sim__duration_s=0.0005))
    summary = run.summary
    assert summary["granted"] > 0 and summary["violations"] == 0
    planned = summary["plan"]["locks_in_switch"]
    measured_locks = run.requests[run.requests["t_us"] >= 200.0]["lock"].nunique()
    assert 0 < planned < TXNS / 2, "the plan saw more than the warm-up replayed"
    assert measured_locks > 0
    assert summary["switch_share"] < 0.05, summary["switch_share"]
