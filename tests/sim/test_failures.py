"""Switch failure and restart, and lock-server failure with partition reassignment."""

from __future__ import annotations

import pytest

from sim.simulate import simulate
from tests.sim.helpers import config, window_mean

FAIL_S, RESTART_S, END_S, LEASE_US = 0.004, 0.007, 0.012, 1000


def failing(**overrides):
    return config("micro-exclusive", servers__count=2, lease__us=LEASE_US, lease__sweep_us=100,
                  failures__switch_fail_s=FAIL_S, sim__duration_s=END_S, sim__warmup_s=0.001,
                  sim__timeseries_bin_s=0.0005, **overrides)


def test_throughput_returns_to_its_pre_failure_level_within_a_lease_of_the_restart():
    result = simulate(failing(failures__switch_restart_s=RESTART_S))
    series = result.timeseries
    before = window_mean(series, 0.001, FAIL_S)
    after = window_mean(series, RESTART_S + LEASE_US * 1e-6, END_S)
    during = window_mean(series, FAIL_S, FAIL_S + LEASE_US * 1e-6)
    assert during < 0.1 * before
    assert after == pytest.approx(before, rel=0.03)
    assert result.summary["violations"] == 0


def test_without_restart_the_lock_servers_carry_the_switch_locks():
    result = simulate(failing())
    series = result.timeseries
    late = window_mean(series, FAIL_S + 2 * LEASE_US * 1e-6, END_S)
    assert late > 0
    assert result.summary["violations"] == 0
    assert result.requests[result.requests["t_us"] > (FAIL_S * 1e6 + 2 * LEASE_US)][
        "source"].eq(1).all()


def test_a_backup_switch_takes_over_after_one_lease():
    result = simulate(failing(failures__backup_switch=True))
    series = result.timeseries
    before = window_mean(series, 0.001, FAIL_S)
    after = window_mean(series, FAIL_S + 2 * LEASE_US * 1e-6, END_S)
    assert after == pytest.approx(before, rel=0.03)
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
