"""Trace replay keeps the trace's timing (``workload.replay: timed``, the default): each
transaction starts no earlier than its recorded start, holds its locks for its recorded hold,
each client keeps its trace client's order, and the run ends when the trace does; ``loop``
keeps the closed loop that ignores the timestamps (issue 36: a 60 ms run granted 61,378
requests from a 50,000-row trace)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.trace import write_trace
from sim.fast.simulate_fast import simulate_fast
from sim.simpy_model import build
from sim.simulate_simpy import simulate
from sim.workloads.tracegen import trace_from_config
from tests.sim.helpers import CONFIGS, config

ENGINES = {"simpy": simulate, "fast": simulate_fast}
MICRO = CONFIGS / "micro-exclusive.yaml"


def uncontended_trace(path, rows: int = 4000):
    """``trace gen``'s trace of 10 clients over 10^6 locks, each sending one transaction per
    10 us (``workload.rate_rps`` = 10^5): no two requests meet on a lock, and the clients
    idle between transactions."""
    cfg = config("micro-exclusive", workload__clients=10, workload__locks=1_000_000,
                 workload__rate_rps=1e5)
    columns = trace_from_config(cfg, rows, seed=5)
    write_trace(columns, path)
    return path, columns


def replay(trace, clients=10, **overrides):
    settings = dict(workload__kind="trace", workload__trace=trace, workload__clients=clients,
                    sim__warmup_s=0.0, sim__duration_s=0.01)
    settings.update(overrides)
    return config("micro-exclusive", **settings)


@pytest.mark.parametrize("engine", list(ENGINES))
def test_timed_replay_grants_the_trace_once_at_its_rate(tmp_path, engine):
    """Every row is granted once, the run ends with the trace's last transaction (before
    sim.duration_s), and the rate is the trace's own: rows over its span, max(t_release) -
    min(t_request). Looping, the same 10 ms granted ~15,000 requests from 4,000 rows."""
    trace, columns = uncontended_trace(tmp_path / "t.parquet")
    summary = ENGINES[engine](replay(trace)).summary
    span_s = columns["t_release"].max() - columns["t_request"].min()
    assert summary["granted"] == len(columns["lock_id"])
    assert summary["ended"] == "trace"
    assert summary["measured_s"] < 0.01 and summary["sim_time_s"] == summary["measured_s"]
    assert summary["throughput_rps"] == pytest.approx(len(columns["lock_id"]) / span_s,
                                                      rel=0.01)
    assert summary["violations"] == 0 and summary["stalled"] == 0


def timed_trace(path, transactions: int = 60, seed: int = 3):
    """Three trace clients (two simulated ones: trace client 2 is played by simulated client
    0), one or two private locks per transaction (lock ``i`` and ``1000 + i`` for
    transaction ``i``), starts 20-40 us apart and recorded holds of 0-30 us after the
    clients' round trip. Returns the path and, per transaction, its recorded start and
    hold (us) and trace client."""
    rng = np.random.default_rng(seed)
    trip_us = config("micro-exclusive").client_rtt_us
    start_us = np.cumsum(rng.uniform(20.0, 40.0, transactions))
    hold_us = rng.uniform(0.0, 30.0, transactions)
    two = rng.random(transactions) < 0.5
    rows = []
    for i in range(transactions):
        locks = [i, 1000 + i] if two[i] else [i]
        for k, lock in enumerate(locks):
            request = start_us[i] + 0.1 * k
            release = start_us[i] + 0.1 * (len(locks) - 1) + trip_us + hold_us[i]
            rows.append((lock, "X", request * 1e-6, release * 1e-6, i % 3, i))
    pd.DataFrame(rows, columns=["lock_id", "mode", "t_request", "t_release", "client_id",
                                "txn_id"]).to_csv(path, index=False)
    return path, start_us - start_us[0], hold_us, np.arange(transactions) % 3


@pytest.mark.parametrize("engine", list(ENGINES))
def test_each_transaction_keeps_its_recorded_start_hold_and_order(tmp_path, engine):
    trace, start_us, hold_us, trace_client = timed_trace(tmp_path / "t.csv")
    result = ENGINES[engine](replay(trace, clients=2))
    granted = result.requests
    txn = granted["lock"].to_numpy() % 1000
    assert len(granted) == len(pd.read_csv(trace)) and result.summary["ended"] == "trace"
    asked = granted["asked_us"].to_numpy()
    assert (asked >= start_us[txn] - 1e-9).all()
    by_txn = granted.assign(txn=txn).groupby("txn")
    last_grant = by_txn["t_us"].max()
    released = by_txn["end_us"].agg(["min", "max"])
    assert (released["min"] == released["max"]).all()
    assert np.allclose(released["max"] - last_grant, hold_us[last_grant.index], atol=1e-6)
    for client in (0, 1):
        mine = granted[granted["client"] == client].assign(txn=txn[granted["client"] == client])
        played = mine.sort_values("asked_us")["txn"].drop_duplicates().to_numpy()
        recorded = np.flatnonzero(trace_client % 2 == client)
        assert played.tolist() == recorded.tolist()


def test_loop_keeps_the_closed_loop_that_ignores_the_timestamps(tmp_path):
    """``workload.replay: loop``: the clients start over when they run out (more grants than
    rows), each lock is held for workload.think_time_us, not its recorded hold, and the run
    lasts sim.duration_s."""
    trace, _, _, _ = timed_trace(tmp_path / "t.csv")
    result = simulate(replay(trace, clients=2, workload__replay="loop",
                             workload__think_time_us=10, sim__duration_s=0.004))
    granted = result.requests
    assert len(granted) > 2 * len(pd.read_csv(trace))
    assert result.summary["ended"] == "duration" and result.summary["measured_s"] == 0.004
    one_lock = granted[~(granted["lock"] + 1000).isin(granted["lock"])
                       & (granted["lock"] < 1000)]
    ends = one_lock[one_lock["end_us"] < 4000.0]
    assert len(ends) and np.allclose(ends["end_us"] - ends["t_us"], 10.0)


def test_the_pilot_of_a_timed_replay_sees_no_transaction_recorded_after_the_warm_up(tmp_path):
    """The plan made on the fly comes from a pilot run of sim.warmup_s; timed, no transaction
    recorded to start at or after it can be in it. Every transaction locks its own lock (lock
    ``i`` starts at ``i`` us), so the plan's switch locks are all below the warm-up's 200."""
    ids = np.arange(20_000)
    path = tmp_path / "fresh.parquet"
    pd.DataFrame({"lock_id": ids, "mode": "X", "t_request": ids * 1e-6,
                  "t_release": ids * 1e-6 + 6e-6, "client_id": ids % 10,
                  "txn_id": ids}).to_parquet(path, index=False)
    model = build(replay(path, switch__slots=100_000, sim__warmup_s=0.0002,
                         sim__duration_s=0.0005))
    planned = model.plan.entries.lock_id
    assert len(planned) > 0 and int(np.max(planned)) < 200


def test_a_trace_holding_longer_than_a_lease_is_refused_in_one_line(tmp_path):
    """Transaction 7 holds its lock 1 ms: under a 600 us lease it could never commit."""
    trace = tmp_path / "t.csv"
    pd.DataFrame({"lock_id": [1, 2], "mode": ["X", "X"], "t_request": [0.0, 0.0],
                  "t_release": [1e-5, 1e-3], "client_id": [0, 1],
                  "txn_id": [3, 7]}).to_csv(trace, index=False)
    args = ["sim", str(MICRO), "--set", "workload.kind=trace", "--set",
            f"workload.trace={trace}", "--set", "workload.clients=2", "--set", "lease.us=600"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in result.output
    assert f"{trace}: txn_id 7 holds its locks" in line and "workload.replay: loop" in line
    looped = CliRunner().invoke(app, [*args, "--set", "workload.replay=loop", "--set",
                                      "sim.duration_s=0.0005", "--engine", "simpy"])
    assert looped.exit_code == 0, looped.output
    bad = CliRunner().invoke(app, ["sim", str(MICRO), "--set", "workload.replay=recorded"])
    assert bad.exit_code == 2
    assert "workload.replay: must be one of timed, loop; got 'recorded'" in bad.stderr


def test_the_cli_replays_a_generated_trace_as_recorded(tmp_path):
    """``netlock trace gen`` then ``netlock sim`` on it: every row granted once, the run
    ended by the trace and saying so, in JSON and in the table."""
    trace = tmp_path / "t.parquet"
    gen = CliRunner().invoke(app, ["trace", "gen", "micro", "--config", str(MICRO), "--out",
                                   str(trace), "--requests", "2000", "--set",
                                   "workload.clients=10", "--set", "workload.locks=1000000",
                                   "--set", "workload.rate_rps=1e5", "--json"])
    assert gen.exit_code == 0, gen.output
    rows = json.loads(gen.stdout)["requests"]
    args = ["sim", str(MICRO), "--engine", "simpy", "--set", "workload.kind=trace", "--set",
            f"workload.trace={trace}", "--set", "workload.clients=10", "--set",
            "sim.warmup_s=0", "--set", "sim.duration_s=0.01"]
    done = CliRunner().invoke(app, [*args, "--json"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert summary["granted"] == rows == 2000 and summary["ended"] == "trace"
    assert summary["measured_s"] < 0.01
    table = CliRunner().invoke(app, args)
    assert table.exit_code == 0 and "ended when the replayed trace ran out" in table.stdout
