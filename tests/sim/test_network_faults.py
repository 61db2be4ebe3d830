"""Duplicated and reordered packets (``network.duplicate``, ``network.reorder``) in both
engines, and the switch's release check measured end to end.

The workload makes the duplicate-release hazard likely: 20 locks, three requests in four
shared, 10 us of think time, so shared holders overlap while exclusive requests wait behind
them. A duplicated shared release then frees a second holder's slot unless the switch checks
the release's owner: ``release_check: none`` must show violations, ``owner`` none. Measured
(``none``, ``duplicate`` 0.01): the fast engine gave 5-15 violations per 10 ms run over seeds
1-8 (it runs 20 ms here), the simpy engine 7-9 per 6 ms run over seeds 1-4 (6 ms here), and
``owner`` gave 0 on every one of them.
"""

from __future__ import annotations

import numpy as np
import pytest

from sim.core.draws import fault_rng
from sim.fast.simulate_fast import build, simulate_fast
from sim.fast.state import K_BAD_FREE, K_COPIES, K_FAULT
from sim.network import Faults
from sim.simulate_simpy import simulate
from tests.sim.helpers import config

ENGINES = {"simpy": simulate, "fast": simulate_fast}
HAZARD = {"workload__mode": "mixed", "workload__shared_fraction": 0.75,
          "workload__think_time_us": 10, "workload__locks": 20, "sim__warmup_s": 0.0005}
LENGTH_S = {"simpy": 0.006, "fast": 0.02}


def hazard_config(engine: str, **overrides: object):
    return config("micro-contended", **{**HAZARD, "sim__duration_s": LENGTH_S[engine],
                                        **overrides})


@pytest.mark.parametrize("engine", list(ENGINES))
def test_duplicates_are_safe_with_the_owner_check_and_not_without(engine):
    run = ENGINES[engine]
    owner = run(hazard_config(engine, network__duplicate=0.01)).summary
    none = run(hazard_config(engine, network__duplicate=0.01,
                             switch__release_check="none")).summary
    assert owner["manager"]["copied_packets"] > 100
    assert owner["ignored_grants"] > 0, "copies of held grants reached clients"
    assert owner["violations"] == 0 and owner["stalled"] == 0
    assert none["violations"] > 0


@pytest.mark.parametrize("engine", list(ENGINES))
def test_reordered_packets_are_safe_and_nothing_stalls(engine):
    summary = ENGINES[engine](hazard_config(engine, network__reorder=0.01)).summary
    assert summary["manager"]["reordered_packets"] > 100
    assert summary["manager"]["copied_packets"] == 0
    assert summary["violations"] == 0 and summary["stalled"] == 0


@pytest.mark.parametrize("engine", list(ENGINES))
def test_lock_servers_drop_duplicated_acquires(engine):
    """Every lock on the lock servers: copies of waiting or held acquires are dropped there
    (counted one holder twice, a lock would never be free again: stalled waits)."""
    cfg = config("micro-contended", **HAZARD, sim__duration_s=0.004, switch__slots=0,
                 network__duplicate=0.02, network__reorder=0.01)
    summary = ENGINES[engine](cfg).summary
    assert summary["switch_share"] == 0.0
    assert summary["manager"]["server_drops"] > 0
    assert summary["violations"] == 0 and summary["stalled"] == 0


def test_engines_agree_under_faults():
    """Both engines draw the same faults for the same packets, but they do not replay each
    other event for event even without faults (the differential tests compare summaries),
    so under faults the comparison is statistical too: throughput and the fault counts
    within a few percent."""
    cfg = hazard_config("fast", network__duplicate=0.01, network__reorder=0.01,
                        sim__duration_s=0.004)
    slow, fast = simulate(cfg).summary, simulate_fast(cfg).summary
    for a, b in ((slow["throughput_rps"], fast["throughput_rps"]),
                 (slow["manager"]["copied_packets"], fast["manager"]["copied_packets"]),
                 (slow["manager"]["reordered_packets"], fast["manager"]["reordered_packets"])):
        assert abs(a - b) <= 0.1 * max(a, b), (a, b)
    assert slow["violations"] == fast["violations"] == 0


def test_fast_engine_draws_the_simpy_networks_faults_across_refills():
    """The fast engine's fault buffer, consumed in uneven steps and refilled, yields exactly
    the sequence :class:`sim.network.Faults` draws from the same stream."""
    cfg = hazard_config("fast", network__duplicate=0.05, network__reorder=0.05)
    model = build(cfg)
    model.refill_faults()
    got = []
    for step in (1000, 40_000, 30_000, 5):
        rack = model.rack
        start = int(rack.cnt[K_FAULT])
        got.append(rack.faults[start:start + step].copy())
        rack.cnt[K_FAULT] = start + step
        model.refill_faults()
    faults = Faults(0.05, 0.05, cfg.network.reorder_delay_us, fault_rng(cfg.sim.seed))
    want = [faults.draw() for _ in range(sum(len(g) for g in got))]
    np.testing.assert_array_equal(np.concatenate(got),
                                  np.array([(float(c), e) for c, e in want]))


def test_fast_engine_gives_back_each_copy_once():
    """Copies are rows chained to their original: a run with many of them frees none twice
    and keeps the engine's results reproducible."""
    cfg = hazard_config("fast", network__duplicate=0.1, network__reorder=0.05,
                        sim__duration_s=0.002)
    end_us = (cfg.sim.warmup_s + cfg.sim.duration_s) * 1e6
    model = build(cfg)
    model.advance(end_us)
    model.close(end_us)
    assert model.rack.cnt[K_BAD_FREE] == 0
    assert model.rack.cnt[K_COPIES] > 1000
    assert model.requests_frame().equals(simulate_fast(cfg).requests)
