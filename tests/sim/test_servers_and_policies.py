"""Lock servers' capacity with no switch slots, allocation policies, tenants' quotas."""

from __future__ import annotations

import pytest

from sim.simulate import simulate
from tests.sim.helpers import config


def test_zero_switch_slots_give_the_lock_servers_capacity():
    """Every request is served by the servers, which are saturated: 120 clients keep
    ~30 requests queued at each of the 4 cores, so throughput = servers x rate_rps."""
    cfg = config("micro-exclusive", switch__slots=0, servers__count=2, servers__cores=2,
                 servers__rate_rps=2e6, sim__duration_s=0.004, sim__warmup_s=0.001)
    summary = simulate(cfg).summary
    capacity = cfg.servers.count * cfg.servers.rate_rps
    assert summary["switch_share"] == 0.0
    assert summary["throughput_rps"] == pytest.approx(capacity, rel=0.03)


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
