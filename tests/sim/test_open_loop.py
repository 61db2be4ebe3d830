"""Open-loop microbenchmark clients (``clients.send_limit_per_ms``) on the simpy engine:
they offer their send limit whatever the lock manager does, skip locks they wait for in
SYNCHRONOUS mode, and a lock server over capacity drops at its RX rings instead of
queueing without bound. The engines' agreement is tests/fast/test_differential.py's."""

from __future__ import annotations

import pytest

from sim.simpy_model import build
from sim.simulate_simpy import simulate
from tests.sim.helpers import config

OPEN = {"workload__clients": 10, "clients__machines": 5, "sim__warmup_s": 0.0005}


def test_an_uncongested_open_loop_offers_its_send_limit():
    cfg = config("micro-exclusive", clients__send_limit_per_ms=300, sim__duration_s=0.002,
                 **OPEN)
    s = simulate(cfg).summary
    assert s["throughput_rps"] == pytest.approx(10 * 300 * 1000, rel=0.01)
    assert s["violations"] == 0 and s["stalled"] == 0


def test_a_synchronous_context_never_has_two_requests_on_one_lock():
    """Few locks and a high limit: a context asks for a lock again only after its grant
    came (without the skip rule it queues behind itself)."""
    def asked_after_granted(skip_held: bool) -> bool:
        cfg = config("micro-exclusive", clients__send_limit_per_ms=1000, workload__locks=200,
                     sim__duration_s=0.001, clients__skip_held=skip_held, **OPEN)
        requests = simulate(cfg).requests.sort_values("t_us")
        for _, uses in requests.groupby(["client", "lock"]):
            granted = uses["t_us"].to_numpy()
            asked = granted - uses["latency_us"].to_numpy()
            if not (asked[1:] >= granted[:-1] - 1e-9).all():
                return False
        return True

    assert asked_after_granted(True)
    assert not asked_after_granted(False)


def _server_backlog_us(ring: int, duration_s: float) -> tuple[float, int]:
    """The work queued on the one lock server core at the end (us), and its RX drops."""
    cfg = config("micro-exclusive", clients__send_limit_per_ms=1000, switch__slots=0,
                 servers__cores=1, servers__rx_ring=ring, sim__duration_s=duration_s,
                 clients__skip_held=True, workload__clients=4, clients__machines=2,
                 sim__warmup_s=0.0)
    model = build(cfg)
    model.run()
    server = model.manager.servers[0]
    return server.core_free[0] - duration_s * 1e6, model.manager.stats()["server_rx_drops"]


def test_rx_rings_bound_what_an_overloaded_server_queues():
    """4 M requests/s (8 M packets/s) offered to one core that serves 4.5 M packets/s: with
    the testbed's 512-packet rings the core's queue stays within a ring however long the
    run (the rest is dropped); without a bound it grows with the run."""
    ring_us = 512 * 1e6 / (2 * 18e6 / 8)
    short, drops = _server_backlog_us(512, 0.0005)
    longer, more_drops = _server_backlog_us(512, 0.003)
    assert more_drops > 0 and drops < more_drops
    assert longer <= ring_us + 1 and short <= ring_us + 1
    unbounded_short, none = _server_backlog_us(0, 0.0005)
    unbounded_long, _ = _server_backlog_us(0, 0.003)
    assert none == 0 and unbounded_short > 2 * ring_us
    assert unbounded_long > 1.5 * unbounded_short
