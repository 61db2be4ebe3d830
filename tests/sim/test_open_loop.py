"""Open-loop microbenchmark clients (``clients.send_limit_per_ms``) on the simpy engine:
they offer their send limit whatever the lock manager does, skip locks they wait for in
SYNCHRONOUS mode, and a lock server over capacity drops at its RX rings instead of
queueing without bound. The engines' agreement is tests/fast/test_differential.py's."""

from __future__ import annotations

import pytest

from netlock.lockserver.request_path import C_FREE
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
    return (server.core_rows[0][C_FREE] - duration_s * 1e6,
            model.manager.stats()["server_rx_drops"])


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


def test_unanswered_counts_what_no_grant_and_no_rx_ring_explains():
    """``unanswered`` (sim.core.result): acquires sent before the cutoff less those granted
    (asked before it) and those an RX ring dropped; nothing for a closed loop or a window
    that ends before the engine's."""
    import math

    import pandas as pd

    from sim.core.result import unanswered
    from sim.core.run_spec import unanswered_cutoff_us

    cfg = config("micro-exclusive", clients__send_limit_per_ms=300, sim__duration_s=0.01,
                 **OPEN)
    cutoff = unanswered_cutoff_us(cfg)
    assert 0 < cutoff < cfg.sim.end_s * 1e6
    granted = pd.DataFrame({"asked_us": [0.0, cutoff - 1, cutoff, cutoff + 5]})
    assert unanswered(cfg, granted, cutoff, 10, 3) == 5
    assert unanswered(cfg, granted, -math.inf, 10, 3) == 0
    early = config("micro-exclusive", clients__send_limit_per_ms=300, sim__duration_s=0.005,
                   **OPEN)
    assert unanswered(early, granted, cutoff, 10, 3) == 0


def test_requests_no_grant_answers_are_stalled():
    """Two locks offered twice what they can grant: the queue grows without bound, so the
    requests sent a stall bound before the end are still unanswered and count as stalled
    (before, an open-loop request that never got an answer counted as nothing)."""
    cfg = config("micro-exclusive", clients__send_limit_per_ms=20, workload__locks=2,
                 lease__us=500, lease__sweep_us=100, sim__duration_s=0.002,
                 workload__clients=20, clients__machines=10, sim__warmup_s=0.0005)
    s = simulate(cfg).summary
    assert s["unanswered"] > 0 and s["stalled"] >= s["unanswered"]
    assert s["manager"]["server_rx_drops"] == 0


@pytest.mark.slow
def test_figure_8a_knapsack_plan_loses_requests_and_the_even_split_does_not():
    """Figure 8a's 12 shared locks at 12 machines (configs/paper/fig8a.yaml), fast engine,
    5 ms: on Algorithm 3's plan from a pilot (about 300 slots a lock) the queues overflow
    and the one lock server's RX rings drop requests the authors' client never resends, so
    Figure 8a's "safe, live and loses no request" check fails; on the authors' even split
    (8,333 slots a lock) nothing is dropped or left unanswered and it holds."""
    import pandas as pd

    from sim.fast.simulate_fast import simulate_fast
    from sim.paper.experiments import figure

    def run(policy: str) -> dict:
        cfg = config("micro-shared", workload__locks=12, clients__machines=12,
                     workload__clients=24, clients__send_limit_per_ms=5000,
                     clients__skip_held=False, policy__allocation=policy, sim__engine="fast",
                     sim__duration_s=0.004, sim__warmup_s=0.001)
        s = simulate_fast(cfg).summary
        return {"violations": s["violations"], "stalled": s["stalled"],
                "dropped": s["manager"]["server_rx_drops"]}

    def lossless(row: dict) -> bool:
        table = pd.DataFrame([{"clients.machines": 12, "throughput_rps": 1.0,
                               "latency_p50_us": 6.6, **row}])
        return figure("fig8a").checks(table)[-1].holds

    capped, even = run("knapsack"), run("even")
    assert capped["dropped"] > 0 and not lossless(capped)
    assert even == {"violations": 0, "stalled": 0, "dropped": 0} and lossless(even)
