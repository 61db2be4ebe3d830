"""The fast engine as a whole: results, determinism, refusals, safety under loss."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from netlock.errors import ConfigError
from sim.fast.simulate_fast import build, simulate_fast
from sim.fast.state import K_BAD_FREE, K_HOP
from sim.network import Network
from sim.run_engine import run_engine
from sim.simulate_simpy import simulate
from tests.sim.helpers import config


def short(name: str = "micro-exclusive", **overrides):
    return config(name, sim__duration_s=0.001, sim__warmup_s=0.0002, **overrides)


def test_same_seed_same_result_other_seed_other_result():
    a = simulate_fast(short()).summary
    b = simulate_fast(short()).summary
    c = simulate_fast(short(sim__seed=7)).summary
    for key in ("granted", "latency_us", "events", "retries"):
        assert a[key] == b[key]
    assert a["latency_us"] != c["latency_us"]


def test_result_has_the_simpy_engines_shape():
    fast = simulate_fast(short())
    slow = simulate(short())
    assert fast.summary["engine"] == "fast"
    assert fast.summary.keys() == slow.summary.keys()
    assert fast.summary["manager"].keys() == slow.summary["manager"].keys()
    for name in ("requests", "txns", "timeseries"):
        a, b = getattr(fast, name), getattr(slow, name)
        assert list(a.columns) == list(b.columns)
        assert list(a.dtypes) == list(b.dtypes)


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_progress_reports_the_run_and_changes_nothing(engine):
    """Reporting progress advances the run in steps; the events stay the same."""
    cfg = short("micro-contended", network__loss=0.01)
    seen: list[tuple[float, float]] = []
    told = run_engine(cfg, engine, progress=lambda now, end: seen.append((now, end)))
    quiet = run_engine(cfg, engine)
    assert len(seen) >= 2 and seen[-1] == (1200.0, 1200.0)
    assert [now for now, _ in seen] == sorted(now for now, _ in seen)
    drop = {"wall_s"}
    assert {k: v for k, v in told.summary.items() if k not in drop} == \
        {k: v for k, v in quiet.summary.items() if k not in drop}
    pd.testing.assert_frame_equal(told.requests, quiet.requests)


def test_writes_tables(tmp_path):
    written = simulate_fast(short()).write(tmp_path, "csv")
    assert {p.name for p in written} >= {"summary.json", "requests.csv", "txns.csv"}


def test_failures_are_refused_with_a_clear_error():
    with pytest.raises(ConfigError, match="fast engine does not model"):
        simulate_fast(short(failures__switch_fail_s=0.0005))


def test_requests_lost_to_the_network_are_retried_and_granted_safely():
    cfg = config("micro-contended", network__loss=0.02, lease__us=300,
                 sim__duration_s=0.004, sim__warmup_s=0.0)
    result = simulate_fast(cfg).summary
    assert result["violations"] == 0
    assert result["manager"]["lost_packets"] > 0 and result["retries"] > 0
    assert result["granted"] > 0


def test_arrays_grow_and_refill_mid_run_without_changing_results():
    """A run long enough to refill transactions, hop delays and the recorder's rows."""
    cfg = config("micro-exclusive", sim__duration_s=0.004, sim__warmup_s=0.0)
    model = build(cfg)
    model.advance(2000.0)
    model.advance(4000.0)
    model.close(4000.0)
    once = simulate_fast(cfg)
    assert model.requests_frame().equals(once.requests)
    assert model.rack.cnt[K_BAD_FREE] == 0, "no request row was given back twice"


@pytest.mark.parametrize("loss", [0.0, 0.05])
def test_hop_delays_are_the_simpy_networks_draws_across_refills(loss):
    """The engine's hop buffer, consumed in uneven steps and refilled, yields exactly the
    sequence :class:`sim.network.Network` draws from the same stream."""
    cfg = short(network__loss=loss)
    model = build(cfg)
    model.refill_hops()
    rack = model.rack
    got = []
    for step in (1000, 40_000, 333_333, 900_001, 5):
        start = int(rack.cnt[K_HOP])
        got.append(model.rack.hops[start:start + step].copy())
        rack.cnt[K_HOP] = start + step
        model.refill_hops()
        rack = model.rack
    seq = np.random.SeedSequence(cfg.sim.seed).spawn(3 + cfg.workload.clients)[0]
    net = Network(cfg.network.rtt_us, cfg.network.jitter_us, loss, np.random.default_rng(seq))
    want = [net.hop() for _ in range(sum(len(g) for g in got))]
    np.testing.assert_array_equal(np.concatenate(got), np.array(want))
