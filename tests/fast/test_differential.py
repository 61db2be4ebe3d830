"""The fast engine against the simpy engine: same configs, same seeds, same results.

Each case runs one config on both engines (each making its own plan the same way) and
checks that throughput, switch share and request latency p50/p99 agree within 2 %, that
both report zero safety violations, and that the case exercises what it is named after.
On one plan the engines make the very same grants at the very same times.
"""

from __future__ import annotations

import pytest

from netlock.trace import write_trace
from sim.core.parts import client_workload, make_workload
from sim.fast.heap import Q_SEQ
from sim.fast.simulate_fast import build as build_fast
from sim.fast.simulate_fast import simulate_fast
from sim.fast.state import K_FOLDED
from sim.simpy_model import build
from sim.simulate_simpy import simulate, summarise
from sim.workloads.tracegen import trace_from_config
from tests.sim.helpers import config, private_locks_trace

TOLERANCE = 0.02
OPEN_LOOP = {"workload.clients": 20, "clients.machines": 10, "sim.duration_s": 0.002,
             "sim.warmup_s": 0.0005}

CASES = {
    "shared": ("micro-shared", {"sim.duration_s": 0.002, "sim.warmup_s": 0.0005}),
    "exclusive": ("micro-exclusive", {"sim.duration_s": 0.002, "sim.warmup_s": 0.0005}),
    "contended": ("micro-contended", {"sim.duration_s": 0.003, "sim.warmup_s": 0.0005}),
    "overflow-heavy": ("micro-contended", {"switch.slots": 150, "workload.zipf": 0.9,
                                           "sim.duration_s": 0.003, "sim.warmup_s": 0.0005}),
    "lossy": ("micro-contended", {"network.loss": 0.01, "switch.slots": 150,
                                  "sim.duration_s": 0.004, "sim.warmup_s": 0.0005}),
    "tpcc": ("tpcc-high", {"sim.duration_s": 0.003, "sim.warmup_s": 0.001}),
    "tpcc-dslr": ("tpcc-low", {"workload.generator": "dslr", "sim.duration_s": 0.003,
                               "sim.warmup_s": 0.001}),
    "priorities": ("tenants-priority", {"tenants[1].start_s": 0.001, "sim.duration_s": 0.003}),
    "think-time": ("memory-vs-think-time", {"workload.think_time_us": 10,
                                            "switch.slots": 20000,
                                            "policy.allocation": "random",
                                            "sim.duration_s": 0.003}),
    "servers-only": ("micro-exclusive", {"switch.slots": 0, "servers.cores": 4,
                                         "servers.rate_rps": 9e6, "servers.partition": "range",
                                         "sim.duration_s": 0.002, "sim.warmup_s": 0.0005}),
    "servers-unbatched": ("micro-exclusive", {"switch.slots": 0, "servers.tx_burst": 1,
                                              "servers.tx_drain_us": 0,
                                              "sim.duration_s": 0.002,
                                              "sim.warmup_s": 0.0005}),
    "mixed-multi-lock": ("micro-contended", {"workload.mode": "mixed",
                                             "workload.locks_per_txn": 3, "lease.us": 500,
                                             "clients.timeout_us": 100,
                                             "sim.duration_s": 0.003,
                                             "sim.warmup_s": 0.0005}),
    "think-multi-lock": ("micro-contended", {"workload.mode": "mixed",
                                             "workload.locks_per_txn": 4,
                                             "workload.think_time_us": 5, "lease.us": 300,
                                             "clients.timeout_us": 60,
                                             "sim.duration_s": 0.003,
                                             "sim.warmup_s": 0.0005}),
    "coarse-locks": ("tpcc-low", {"policy.coarse_group": 4, "sim.duration_s": 0.003,
                                  "sim.warmup_s": 0.001}),
    "open-loop": ("micro-exclusive", {**OPEN_LOOP, "clients.send_limit_per_ms": 200,
                                      "clients.skip_held": True, "workload.locks": 500}),
    "open-loop-servers": ("micro-exclusive", {**OPEN_LOOP, "clients.send_limit_per_ms": 1000,
                                              "switch.slots": 0, "servers.cores": 2}),
    "open-loop-stuck": ("micro-exclusive", {**OPEN_LOOP, "clients.send_limit_per_ms": 20,
                                            "workload.locks": 2, "lease.us": 500,
                                            "lease.sweep_us": 100}),
}


def case_config(name: str):
    base, sets = CASES[name]
    return config(base, **{key.replace(".", "__"): value for key, value in sets.items()})


def close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(abs(a), abs(b), 1e-12)


def exercised(name: str, summary: dict) -> bool:
    """Whether the run shows the behaviour its case is named after."""
    manager = summary["manager"]
    return {
        "shared": summary["switch_share"] == 1.0,
        "exclusive": summary["switch_share"] == 1.0,
        "contended": summary["latency_us"]["p99"] > 2 * summary["latency_us"]["p50"],
        "overflow-heavy": 0 < summary["switch_share"] < 1 and manager["server_grants"] > 0,
        "lossy": manager["lost_packets"] > 0 and summary["retries"] > 0,
        "tpcc": summary["tps"] > 0 and summary["switch_share"] > 0,
        "tpcc-dslr": summary["tps"] > 0 and summary["switch_share"] > 0,
        "priorities": all(t["throughput_rps"] > 0 for t in summary["tenants"].values()),
        "think-time": summary["hold_time_us"] > 10,
        "servers-only": summary["switch_share"] == 0.0 and manager["server_grants"] > 0,
        "servers-unbatched": summary["switch_share"] == 0.0 and manager["server_grants"] > 0,
        "mixed-multi-lock": summary["retries"] > 0,
        "think-multi-lock": summary["retries"] > 0 and summary["hold_time_us"] > 5,
        "coarse-locks": summary["tps"] > 0,
        "open-loop": summary["switch_share"] == 1.0
        and summary["throughput_rps"] == pytest.approx(20 * 200 * 1000, rel=0.01),
        "open-loop-servers": manager["server_rx_drops"] > 0,
        "open-loop-stuck": summary["unanswered"] > 0
        and summary["stalled"] >= summary["unanswered"],
    }[name]


@pytest.mark.parametrize("name", list(CASES))
def test_engines_agree(name):
    cfg = case_config(name)
    slow = simulate(cfg).summary
    fast = simulate_fast(cfg).summary
    assert fast["engine"] == "fast" and slow["engine"] == "simpy"
    assert fast.keys() == slow.keys()
    assert slow["violations"] == 0 and fast["violations"] == 0
    for key in ("throughput_rps", "switch_share", "tps"):
        assert close(fast[key], slow[key]), (key, fast[key], slow[key])
    for q in ("p50", "p99"):
        assert close(fast["latency_us"][q], slow["latency_us"][q]), (q, fast, slow)
    assert exercised(name, slow) and exercised(name, fast)


ONE_PLAN_CASES = ["exclusive", "overflow-heavy", "lossy", "servers-only", "servers-unbatched",
                  "mixed-multi-lock", "think-multi-lock", "tpcc-dslr", "open-loop",
                  "open-loop-servers", "open-loop-stuck"]
EXACT_COUNTS = ("granted", "retries", "stale_grants", "ignored_grants", "violations", "stalled",
                "unanswered")
"""Counts the engines must report identically on one plan (the README promises the same
grants, retries and latencies)."""


@pytest.mark.parametrize("name", ONE_PLAN_CASES)
def test_on_one_plan_the_engines_make_the_same_grants_at_the_same_times(name):
    """Every granted request (time, latency, client, lock, source, end) is the same double
    on both engines: each computes every event time with the same operations and breaks
    ties in the order the events were scheduled, with the clients' send and receive
    processing on and requests overflowing to the lock server, whose grants leave in TX
    bursts (the testbed's ``servers.tx_burst``) or one by one. Their counts of retries (one
    per lock of an attempt given up), stale and ignored grants, committed transactions and
    the lock manager's counters are equal too."""
    cfg = case_config(name)
    model = build(cfg)
    model.run()
    slow_result = summarise(model, 0.0)
    fast_result = simulate_fast(cfg, model.plan, model.manager.partition)
    slow, fast = slow_result.requests, fast_result.requests
    order = ["t_us", "client", "lock"]
    assert len(slow) > 0 and cfg.clients.tx_us > 0 and cfg.clients.rx_us > 0
    assert (cfg.servers.tx_burst > 1) == (name != "servers-unbatched")
    assert slow.sort_values(order).reset_index(drop=True).equals(
        fast.sort_values(order).reset_index(drop=True))
    s, f = slow_result.summary, fast_result.summary
    assert {k: f[k] for k in EXACT_COUNTS} == {k: s[k] for k in EXACT_COUNTS}
    assert len(fast_result.txns) == len(slow_result.txns)
    assert f["manager"] == s["manager"]
    assert exercised(name, s)


@pytest.mark.parametrize("name", ["mixed-multi-lock", "think-multi-lock", "tpcc-dslr"])
def test_the_fast_engine_folds_the_arrivals_of_grants_before_a_transactions_last(name):
    """Grants a transaction gets before its last are held from their arrival without an
    event of their own (:data:`netlock.txn_context.FOLD_NOW`), their events still counted.
    The simpy engine schedules every arrival, so the one-plan test above, over these cases
    (with attempts given up, leases that end, think times and transactions that commit at
    once), checks that folding changes no grant, time or count."""
    cfg = case_config(name)
    model = build_fast(cfg)
    model.advance(cfg.sim.end_s * 1e6)
    folded, events = int(model.rack.cnt[K_FOLDED]), int(model.rack.heap.cnt[Q_SEQ])
    assert 0.1 * events < folded < events


def test_fast_engine_runs_coarse_locks():
    """With ``policy.coarse_group`` the clients take the merged locks, as on simpy."""
    cfg = case_config("coarse-locks")
    locks = simulate_fast(cfg).requests["lock"]
    assert len(locks) and locks.max() < client_workload(cfg).n_locks < make_workload(cfg).n_locks


def test_engines_agree_on_a_trace_replay(tmp_path):
    trace = private_locks_trace(tmp_path / "trace.csv", 12)
    cfg = config("micro-exclusive", workload__kind="trace",
                 workload__replay="loop", workload__trace=trace,
                 workload__clients=12, sim__duration_s=0.002, sim__warmup_s=0.0005)
    slow, fast = simulate(cfg).summary, simulate_fast(cfg).summary
    assert fast["granted"] > 0 and fast["violations"] == 0
    assert close(fast["throughput_rps"], slow["throughput_rps"])
    assert close(fast["latency_us"]["p99"], slow["latency_us"]["p99"])


@pytest.mark.parametrize("replay", ["timed", "loop"])
def test_on_one_plan_the_engines_replay_a_trace_the_same(tmp_path, replay):
    """A contended trace (two of 200 locks per transaction, 100 of them in the switch, the
    rest on the lock server) replayed timed, as recorded until the rack falls behind and the
    trace runs out, or looped: the same grants at the same times, the same counts, and the
    same end of the run."""
    trace = tmp_path / "t.parquet"
    recorded = config("micro-exclusive", workload__clients=20, workload__locks=200,
                      workload__locks_per_txn=2)
    write_trace(trace_from_config(recorded, 4000, seed=2), trace)
    cfg = config("micro-exclusive", workload__kind="trace", workload__trace=trace,
                 workload__replay=replay, workload__clients=20, switch__slots=100,
                 sim__duration_s=0.004, sim__warmup_s=0.0005)
    model = build(cfg)
    model.run()
    slow_result = summarise(model, 0.0)
    fast_result = simulate_fast(cfg, model.plan, model.manager.partition)
    order = ["t_us", "client", "lock"]
    slow, fast = slow_result.requests, fast_result.requests
    assert slow.sort_values(order).reset_index(drop=True).equals(
        fast.sort_values(order).reset_index(drop=True))
    s, f = slow_result.summary, fast_result.summary
    assert {k: f[k] for k in EXACT_COUNTS} == {k: s[k] for k in EXACT_COUNTS}
    assert len(fast_result.txns) == len(slow_result.txns)
    assert (f["ended"], f["measured_s"]) == (s["ended"], s["measured_s"])
    assert s["ended"] == ("trace" if replay == "timed" else "duration")
    assert 0 < s["switch_share"] < 1 and s["violations"] == 0
    if replay == "timed":
        assert len(slow_result.txns) == 2000 and s["latency_us"]["p99"] > 20


@pytest.mark.slow
@pytest.mark.parametrize("name", ["micro-shared", "micro-exclusive", "micro-contended",
                                  "tpcc-low", "tpcc-high", "tenants-priority",
                                  "tenants-quota"])
def test_engines_agree_on_the_canonical_configs(name):
    cfg = config(name)
    slow = simulate(cfg).summary
    fast = simulate_fast(cfg).summary
    assert slow["violations"] == 0 and fast["violations"] == 0
    for key in ("throughput_rps", "switch_share"):
        assert close(fast[key], slow[key]), (key, fast[key], slow[key])
    for q in ("p50", "p99"):
        assert close(fast["latency_us"][q], slow["latency_us"][q]), q
