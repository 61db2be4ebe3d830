"""Lock servers' capacity with no switch slots, allocation policies, tenants' quotas."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.dataplane.registers import R_SERVER_HELD
from sim.simpy_model import build
from sim.simulate_simpy import simulate, summarise
from tests.sim.helpers import CONFIGS, config, private_locks_trace


def test_zero_switch_slots_give_the_lock_servers_capacity():
    """Every request is served by the servers, which are saturated: 240 clients keep
    ~60 requests queued at each of the 4 cores (also while grants wait for their core's TX
    drain), so throughput = servers x capacity."""
    cfg = config("micro-exclusive", switch__slots=0, servers__count=2, servers__cores=2,
                 servers__rate_rps=8e6, workload__clients=240, sim__duration_s=0.004,
                 sim__warmup_s=0.001)
    summary = simulate(cfg).summary
    capacity = cfg.servers.count * cfg.servers.capacity_rps
    assert cfg.servers.capacity_rps == 2e6
    assert summary["switch_share"] == 0.0
    assert summary["throughput_rps"] == pytest.approx(capacity, rel=0.03)


@pytest.mark.parametrize("cores", [1, 2, 4])
def test_lock_server_capacity_grows_with_its_cores(cores):
    """A saturated lock server completes rate_rps / rate_cores lock requests per second per
    core (the paper's Figure 9 varies the server's cores 1..8); 480 closed-loop clients keep
    even 4 cores busy while grants wait for their core's TX drain."""
    cfg = config("micro-exclusive", switch__slots=0, servers__count=1, servers__cores=cores,
                 workload__clients=480, sim__duration_s=0.003, sim__warmup_s=0.001)
    summary = simulate(cfg).summary
    per_core = cfg.servers.rate_rps / cfg.servers.rate_cores
    assert summary["throughput_rps"] == pytest.approx(cores * per_core, rel=0.03)


@pytest.mark.parametrize("slots", [50, 400])
def test_knapsack_is_never_below_random_on_zipf(slots):
    """Zipf popularity, scarce slots and a slow lock server: the policy decides how much
    of the load the switch takes."""
    settings = dict(workload__zipf=1.1, workload__locks=20000, workload__clients=60,
                    switch__slots=slots, servers__count=1, servers__cores=1,
                    servers__rate_rps=3e6, sim__duration_s=0.003, sim__warmup_s=0.001)
    knapsack = simulate(config("micro-exclusive", policy__allocation="knapsack",
                               **settings)).summary
    random = simulate(config("micro-exclusive", policy__allocation="random",
                             **settings)).summary
    assert knapsack["throughput_rps"] >= random["throughput_rps"]
    assert knapsack["switch_share"] > random["switch_share"]


def test_random_allocation_runs_a_trace_workload(tmp_path):
    """The random policy divides the workload's whole lock space, a replayed trace's too
    (it used to ask for a generator and fail with 'trace has no generator'): 12 private
    locks, all fit, so the switch serves every request."""
    trace = private_locks_trace(tmp_path / "trace.csv", 12)
    summary = simulate(config("micro-exclusive", workload__kind="trace", workload__replay="loop",
                              workload__trace=trace, workload__clients=12,
                              policy__allocation="random", sim__duration_s=0.001,
                              sim__warmup_s=0.0005)).summary
    assert summary["granted"] > 0 and summary["violations"] == 0
    assert summary["switch_share"] == 1.0


def test_a_tenant_quota_caps_that_tenant_only():
    quota = 2e6
    cfg = config("micro-exclusive", sim__duration_s=0.004, sim__warmup_s=0.001,
                 lease__us=300, lease__sweep_us=50,
                 tenants=f"[{{id: 0, clients: 60}}, {{id: 1, clients: 60, quota_rps: {quota}}}]")
    summary = simulate(cfg).summary
    free, capped = summary["tenants"]["0"], summary["tenants"]["1"]
    assert capped["throughput_rps"] <= quota * 1.03
    assert free["throughput_rps"] > 3 * capped["throughput_rps"]
    assert summary["violations"] == 0


def test_a_higher_priority_tenant_gets_more_of_contended_locks():
    cfg = config("micro-exclusive", workload__locks=20, switch__priorities=2,
                 sim__duration_s=0.004, sim__warmup_s=0.001,
                 tenants="[{id: 0, clients: 60, priority: 1}, {id: 1, clients: 60, priority: 0}]")
    summary = simulate(cfg).summary
    assert summary["tenants"]["1"]["throughput_rps"] > summary["tenants"]["0"]["throughput_rps"]
    assert summary["violations"] == 0


def test_overflow_of_a_request_served_in_another_class_is_pushed_back(tmp_path):
    """Lock 0's only switch queue is class 1 (its trace had priority-1 requests only) and
    holds two requests. Priority-0 clients queue there (``effective_class``), overflow to
    the server under class 1, and the switch's NOTIFY_SERVER for class 1 brings them back.
    Were they buffered under their own class, the server would push nothing back and the
    lock would overflow for ever (a wedge that took its throughput to almost nothing)."""
    trace = tmp_path / "class1.csv"
    pd.DataFrame({"lock_id": [0, 0], "mode": ["X", "X"], "t_request": [0.0, 0.0],
                  "t_release": [1e-5, 1e-5], "client_id": [0, 1], "txn_id": [0, 1],
                  "priority": [1, 1]}).to_csv(trace, index=False)
    plan = tmp_path / "plan.yaml"
    cfg_path = CONFIGS / "micro-exclusive.yaml"
    out = CliRunner().invoke(app, ["plan", str(trace), "--config", str(cfg_path), "--set",
                                   "switch.priorities=2", "--slots", "2", "--out", str(plan)])
    assert out.exit_code == 0, out.output
    cfg = config("micro-exclusive", workload__locks=1, workload__clients=20,
                 switch__priorities=2, policy__plan=plan, sim__duration_s=0.003,
                 sim__warmup_s=0.001)
    model = build(cfg)
    assert model.plan.entries.priority.tolist() == [1]
    model.run()
    switch = model.manager.switch
    for server in model.manager.servers:
        for lock, cls in server.state.buffer_keys():
            held = switch.regions[cls, switch.dp.lock_index(lock), R_SERVER_HELD]
            assert held >= len(server.state.buffered(lock, cls)), (lock, cls)
    summary = summarise(model, 0.0).summary
    one_lock_rate = 1e6 / (cfg.network.rtt_us + 2 * cfg.switch.pass_us)
    assert summary["throughput_rps"] > 0.5 * one_lock_rate
    assert summary["violations"] == 0
    assert summary["stalled"] == 0
