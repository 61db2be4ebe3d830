"""The one-lock requests' lock-server path (planner/serverpath.py) against a hand-derived
value and a Monte Carlo of clients whose grants leave at the drain ticks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.closedloop import RackTiming
from planner.serverpath import core_wait_us, drain_phase_wait_us, one_lock_server_us

PAPER = RackTiming(clients=120, client_rtt_us=5.389, server_rtt_us=5.0, read_us=0.0,
                   think_us=0.0, acquire_gap_us=0.556, pass_us=0.3, servers=1, cores=8,
                   packet_us=0.222, timeout_us=400.0, backoff_us=135.0, tx_burst=32,
                   tx_drain_us=10.0, client_tx_us=0.056, client_rx_us=0.333, jitter_us=0.5)


def _rack(**changes) -> RackTiming:
    return RackTiming(**{**PAPER.__dict__, **changes})


def _monte_carlo_wait(rack: RackTiming, share: float, queue_us: float, seed: int = 0,
                      clients: int = 4000, steps: int = 120) -> float:
    """Clients one request after another: a server request's acquire reaches the server
    after two hops and a pass, is served, and leaves at the next drain tick; the grant comes
    back over two hops. The mean of the servers' grants' waits for their tick."""
    rng = np.random.default_rng(seed)
    half = rack.server_rtt_us / 2

    def hops(n: int) -> np.ndarray:
        return rng.normal(half, rack.jitter_us, (n, clients)).sum(axis=0)

    t = rng.uniform(0, 1000, clients)
    waits, count = 0.0, 0
    for step in range(steps):
        to_server = rng.random(clients) < share
        ready = t + rack.client_tx_us + hops(2) + rack.pass_us + queue_us + rack.packet_us
        leave = np.ceil(ready / rack.tx_drain_us) * rack.tx_drain_us
        back = hops(2) + rack.client_rx_us + rack.read_us + rack.think_us
        switch = (t + rack.client_tx_us + hops(2) + rack.pass_us + rack.client_rx_us
                  + rack.read_us + rack.think_us)
        if step >= steps // 4:  # past the start's uniform phases
            waits += float(np.sum((leave - ready)[to_server]))
            count += int(to_server.sum())
        t = np.where(to_server, leave + back, switch)
    return waits / count


def test_every_request_through_the_servers_waits_for_the_tick_after_next():
    """No jitter, every request the servers': a grant leaving at a tick comes back as the
    next acquire, served, 2h + r_x + t_x + 2h + P + S = 10.911 us later, and leaves at the
    tick at 20 us: 9.089 us of waiting (a uniform phase would give 5)."""
    rack = _rack(jitter_us=0.0)
    assert drain_phase_wait_us(rack, 1.0, 0.0) == pytest.approx(20 - 10.911, abs=1e-9)


def test_without_tx_batching_the_path_is_the_round_trip_service_and_queue():
    for rack in (_rack(tx_drain_us=0.0), _rack(tx_burst=1)):
        half = rack.capacity_rps(1) / 2  # utilisation 0.5: M/D/1 waits S / 2
        queue = core_wait_us(rack, half, 1)
        assert queue == pytest.approx(0.222 / 2)
        assert one_lock_server_us(rack, half, 1, 0.8) == pytest.approx(5.0 + 0.222 + queue)


def test_a_burst_that_fills_before_the_tick_leaves_early():
    """31 more grants at 16 per us on each core fill the burst in about 1 us on average."""
    rack = _rack(cores=1, packet_us=0.01)
    path = one_lock_server_us(rack, 16e6, 1, 1.0)
    assert path == pytest.approx(5.0 + 0.01 + core_wait_us(rack, 16e6, 1) + 31 / 32)


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([0.2, 0.5, 0.8, 1.0]), st.sampled_from([0.0, 3.0, 10.0, 100.0]),
       st.sampled_from([0.0, 0.5, 2.0]), st.integers(0, 2**31 - 1))
def test_the_phase_sum_matches_a_monte_carlo_of_the_clients(share, think_us, jitter_us,
                                                             seed):
    rack = _rack(think_us=think_us, jitter_us=jitter_us)
    queue = 0.3
    model = drain_phase_wait_us(rack, share, queue)
    assert 0 <= model <= rack.tx_drain_us
    assert model == pytest.approx(_monte_carlo_wait(rack, share, queue, seed), abs=0.06)


def test_a_think_time_of_whole_drain_periods_keeps_the_phase():
    at_zero = drain_phase_wait_us(PAPER, 0.8, 0.1)
    for think in (10.0, 100.0):
        assert drain_phase_wait_us(_rack(think_us=think), 0.8, 0.1) == pytest.approx(
            at_zero, rel=1e-9)
    assert not math.isclose(drain_phase_wait_us(_rack(think_us=5.0), 0.8, 0.1), at_zero)
