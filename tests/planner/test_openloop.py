"""The open-loop rate model (planner/openloop.py) against hand-derived values."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from netlock.config import load_config, override_config
from planner.openloop import OpenLoopClients, open_loop_rates
from tests.sim.helpers import CONFIGS


def _clients(**sets) -> OpenLoopClients:
    config = override_config(load_config(CONFIGS / "micro-exclusive.yaml"), {
        "clients.send_limit_per_ms": 5000, "clients.machines": 12, "workload.clients": 24,
        **sets})
    clients = OpenLoopClients.of(config)
    assert clients is not None
    return clients


def test_a_closed_loop_config_has_no_open_loop():
    assert OpenLoopClients.of(load_config(CONFIGS / "micro-exclusive.yaml")) is None


def test_each_context_offers_its_limit_or_its_nic_share():
    assert _clients().offered_rps == pytest.approx(24 * 5e6)  # 5000 per 1 ms window
    # one machine of 24 contexts: its 18 M requests/s NIC binds (0.75 M each)
    assert _clients(**{"clients.machines": 1}).offered_rps == pytest.approx(18e6)


def test_an_exclusive_lock_hands_over_once_per_drain_tick_of_the_receiving_cores():
    """Release hop + two passes + grant hop + receive = 5.93 us, under one 10 us tick (the
    two hops' jitter, 0.71 us, almost never reaches it); without TX bursts: 5.93 + 0.056."""
    assert _clients().handover_us() == pytest.approx(10.0, rel=1e-6)
    assert _clients(**{"clients.tx_burst": 1}).handover_us() == pytest.approx(
        5.0 + 0.6 + 0.333 + 0.056)


def test_skipping_contexts_fill_the_switch_locks_hand_overs():
    clients = _clients()
    share = np.full(500, 1 / 500)
    rates = open_loop_rates(clients, share, np.zeros(500), np.full(500, 200.0), 1)
    assert rates.total_rps == pytest.approx(500 / 10e-6)  # 500 locks x one per 10 us
    skewed = np.r_[0.5, np.full(499, 0.5 / 499)]
    skip = open_loop_rates(clients, skewed, np.zeros(500), np.full(500, 200.0), 1)
    wait = open_loop_rates(replace(clients, skip_held=False), skewed, np.zeros(500),
                           np.full(500, 200.0), 1)
    assert skip.total_rps == pytest.approx(500 / 10e-6)
    assert wait.total_rps == pytest.approx(1e5 + 499 * 1e5)  # each lock its own cap


def test_shared_locks_in_the_switch_carry_the_offered_load():
    rates = open_loop_rates(_clients(), np.zeros(12), np.full(12, 1 / 12), np.full(12, 8333.0),
                            1)
    assert rates.total_rps == pytest.approx(120e6) and rates.server_rps == 0


def test_a_saturated_server_grants_lambda_x_with_x_1_plus_x_the_capacity_ratio():
    clients = _clients(**{"servers.cores": 1})
    rates = open_loop_rates(clients, np.zeros(4), np.full(4, 0.25), np.zeros(4), 1)
    packets = 1e6 / clients.packet_us
    x = rates.server_rps / clients.offered_rps
    assert x * (1 + x) == pytest.approx(packets / clients.offered_rps)
    assert rates.switch_rps == 0
    # 60 servers serve 270 M packets/s: the 120 M acquires and their releases
    below = open_loop_rates(clients, np.zeros(4), np.full(4, 0.25), np.zeros(4), 60)
    assert below.total_rps == pytest.approx(clients.offered_rps)
