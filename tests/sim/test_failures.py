"""Switch failure and restart, and lock-server failure with partition reassignment."""

from __future__ import annotations

import pytest

from netlock.dataplane.registers import L_REQUESTS
from sim.simpy_model import build
from sim.simulate_simpy import simulate, summarise
from tests.sim.helpers import config, private_locks_trace, window_mean

FAIL_S, RESTART_S, END_S, LEASE_US = 0.004, 0.007, 0.012, 1000
BACKOFF_US = 300
"""The longest back-off before a retry (configs/testbed/paper.yaml: 10 slots of 30 us)."""


def failing(**overrides):
    return config("micro-exclusive", servers__count=2, lease__us=LEASE_US, lease__sweep_us=100,
                  failures__switch_fail_s=FAIL_S, sim__duration_s=END_S, sim__warmup_s=0.001,
                  sim__timeseries_bin_s=0.0005, **overrides)


def test_a_stopped_switch_passes_nothing_and_comes_back_to_its_pre_failure_level():
    """The paper's Figure 15: zero throughput during the outage, lock-server traffic
    included, and the pre-failure level again right after the restart."""
    result = simulate(failing(failures__switch_restart_s=RESTART_S))
    series = result.timeseries
    before = window_mean(series, 0.001, FAIL_S)
    during = window_mean(series, FAIL_S + 0.0001, RESTART_S)
    after = window_mean(series, RESTART_S + 0.0005, END_S)
    assert during == 0
    assert after == pytest.approx(before, rel=0.05)
    assert result.summary["violations"] == 0
    assert result.summary["stalled"] == 0  # the outage is excused; nothing wedged after it


def test_a_stopped_switch_that_restarts_within_a_lease_waits_for_the_lease():
    restart_s = FAIL_S + 0.5 * LEASE_US * 1e-6
    result = simulate(failing(failures__switch_restart_s=restart_s))
    series = result.timeseries
    assert window_mean(series, FAIL_S + 0.0001, FAIL_S + LEASE_US * 1e-6) == 0
    assert window_mean(series, FAIL_S + 2 * LEASE_US * 1e-6, END_S) > 0
    assert result.summary["violations"] == 0


def test_lock_servers_carry_the_switch_locks_and_hand_them_back_after_the_restart():
    result = simulate(failing(failures__switch_mode="servers",
                              failures__switch_restart_s=RESTART_S))
    series = result.timeseries
    before = window_mean(series, 0.001, FAIL_S)
    after = window_mean(series, RESTART_S + LEASE_US * 1e-6, END_S)
    during = window_mean(series, FAIL_S, FAIL_S + LEASE_US * 1e-6)
    assert during < 0.1 * before
    assert after == pytest.approx(before, rel=0.03)
    assert result.summary["violations"] == 0


def test_without_restart_the_lock_servers_carry_the_switch_locks():
    result = simulate(failing(failures__switch_mode="servers"))
    series = result.timeseries
    late = window_mean(series, FAIL_S + 2 * LEASE_US * 1e-6, END_S)
    assert late > 0
    assert result.summary["violations"] == 0
    assert result.requests[result.requests["t_us"] > (FAIL_S * 1e6 + 2 * LEASE_US)][
        "source"].eq(1).all()


def test_a_backup_switch_takes_over_after_one_lease():
    result = simulate(failing(failures__switch_mode="backup"))
    series = result.timeseries
    before = window_mean(series, 0.001, FAIL_S)
    after = window_mean(series, FAIL_S + 2 * LEASE_US * 1e-6, END_S)
    assert after == pytest.approx(before, rel=0.03)
    assert result.summary["violations"] == 0


def test_the_restarted_switch_takes_its_locks_back_from_the_backup():
    model = build(failing(failures__switch_mode="backup", failures__switch_restart_s=RESTART_S))
    model.run()
    result = summarise(model, 0.0)
    manager, original = model.manager, model.manager.switch
    assert manager.backup is None and not manager.staying
    assert manager.active is original
    assert manager.packet_handlers[0] == original.on_packets
    assert original.dp.resident_locks == sorted(set(model.plan.entries.lock_id.tolist()))
    assert int(original.locks[:, L_REQUESTS].sum()) > 1000
    granted = result.requests
    before = granted[(granted["t_us"] >= 1000) & (granted["t_us"] < FAIL_S * 1e6)]
    after = granted[granted["t_us"] >= RESTART_S * 1e6 + LEASE_US]
    assert after["source"].eq(0).mean() == pytest.approx(before["source"].eq(0).mean(),
                                                          abs=0.01)
    assert window_mean(result.timeseries, RESTART_S + LEASE_US * 1e-6, END_S) == \
        pytest.approx(window_mean(result.timeseries, 0.001, FAIL_S), rel=0.03)
    assert set(after["client"]) == set(range(model.config.workload.clients))
    assert result.summary["violations"] == 0


def test_a_failed_lock_server_hands_its_partition_to_another():
    cfg = config("micro-exclusive", switch__slots=0, servers__count=2, lease__us=500,
                 lease__sweep_us=100, sim__duration_s=0.006, sim__warmup_s=0.0005,
                 sim__timeseries_bin_s=0.0005,
                 failures__server_failures="[{server: 0, at_s: 0.002}]")
    result = simulate(cfg)
    late = result.requests[result.requests["t_us"] > 3000]
    assert len(late) > 1000
    assert result.summary["violations"] == 0
    assert result.summary["manager"]["server_packets"][1] > result.summary["manager"][
        "server_packets"][0]


def test_the_heir_keeps_granting_its_own_locks_while_the_adopted_ones_wait_a_lease(tmp_path):
    """Client c only locks lock c, so clients of the heir's own partition (odd locks, hash
    partition over two servers) never wait behind the adopted partition (even locks)."""
    clients, fail_us, lease_us = 64, 2000, 500
    trace = private_locks_trace(tmp_path / "private.csv", clients)
    cfg = config("micro-exclusive", workload__kind="trace",
                 workload__replay="loop", workload__trace=trace,
                 workload__clients=clients, clients__machines=4, switch__slots=0,
                 servers__count=2, servers__partition="hash", lease__us=lease_us,
                 lease__sweep_us=100, sim__duration_s=0.004, sim__warmup_s=0.0005,
                 failures__server_failures=f"[{{server: 0, at_s: {fail_us * 1e-6}}}]")
    result = simulate(cfg)
    granted = result.requests
    own = granted[granted["lock"] % 2 == 1]["t_us"]
    adopted = granted[granted["lock"] % 2 == 0]["t_us"]

    def rate(times, start_us, end_us):
        return ((times >= start_us) & (times < end_us)).sum() / (end_us - start_us)

    in_flight_us = 50
    assert rate(own, fail_us, fail_us + lease_us) == pytest.approx(
        rate(own, 1000, fail_us), rel=0.05)
    assert rate(adopted, fail_us + in_flight_us, fail_us + lease_us) == 0
    recovered = fail_us + lease_us + BACKOFF_US
    assert rate(adopted, recovered, 4000) > 0.9 * rate(adopted, 1000, fail_us)
    assert result.summary["violations"] == 0


def test_after_a_switch_failure_the_servers_keep_granting_their_own_locks_during_the_grace(
        tmp_path):
    """Half the private locks live in the switch (one slot each); the servers adopt them for
    a lease after the switch fails, and keep granting the other half at the same rate."""
    clients, fail_us, lease_us = 64, 2000, 500
    trace = private_locks_trace(tmp_path / "private.csv", clients)
    cfg = config("micro-exclusive", workload__kind="trace",
                 workload__replay="loop", workload__trace=trace,
                 workload__clients=clients, clients__machines=4, switch__slots=clients // 2,
                 servers__count=2, lease__us=lease_us, lease__sweep_us=100,
                 sim__duration_s=0.004, sim__warmup_s=0.0005,
                 failures__switch_fail_s=fail_us * 1e-6, failures__switch_mode="servers")
    model = build(cfg)
    model.run()
    result = summarise(model, 0.0)
    granted = result.requests
    in_switch = granted["lock"].isin(model.plan.entries.lock_id.tolist())
    switch_locks, server_locks = granted[in_switch]["t_us"], granted[~in_switch]["t_us"]

    def rate(times, start_us, end_us):
        return ((times >= start_us) & (times < end_us)).sum() / (end_us - start_us)

    assert len(set(model.plan.entries.lock_id.tolist())) == clients // 2
    assert rate(server_locks, fail_us, fail_us + lease_us) == pytest.approx(
        rate(server_locks, 1000, fail_us), rel=0.05)
    assert rate(switch_locks, fail_us + 50, fail_us + lease_us) == 0
    recovered = fail_us + lease_us + BACKOFF_US
    assert rate(switch_locks, recovered, 4000) > 0.9 * rate(server_locks, 1000, fail_us)
    assert result.summary["violations"] == 0


@pytest.mark.parametrize(("mode", "restart_s"), [("backup", None), ("servers", None),
                                                 ("stop", FAIL_S + 0.0002)])
def test_no_switch_lock_is_granted_within_a_lease_of_the_failure(mode, restart_s):
    """When the switch fails, clients still use what it granted, for as long as their
    transactions last (think time, several locks each): whatever takes over must not grant
    the switch's locks again until a lease has passed since the failure."""
    restart = {} if restart_s is None else {"failures__switch_restart_s": restart_s}
    model = build(failing(failures__switch_mode=mode, workload__think_time_us=100,
                          workload__locks_per_txn=2, workload__locks=500,
                          workload__mode="mixed", **restart))
    model.run()
    result = summarise(model, 0.0)
    switch_locks = set(model.plan.entries.lock_id.tolist())
    granted = result.requests
    early = granted[(granted["t_us"] >= FAIL_S * 1e6) & (granted["t_us"] < FAIL_S * 1e6 + LEASE_US)
                    & granted["lock"].isin(switch_locks)]
    assert early.empty, f"{len(early)} grants of switch locks within a lease of the failure"
    late = granted[granted["t_us"] >= FAIL_S * 1e6 + 2 * LEASE_US]
    assert late["lock"].isin(switch_locks).any(), "the switch's locks are served again"
    assert result.summary["violations"] == 0
