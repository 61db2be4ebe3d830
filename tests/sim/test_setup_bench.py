"""``sim.setup_bench``: the canonical configs it times, the cached run really reusing the
plan, and the share against the goal (no timing asserted)."""

from __future__ import annotations

import os

import pytest

from sim import setup_bench
from sim.bench import Phases
from sim.core import pilot, plan_cache
from tests.sim.helpers import config


def test_the_canonical_configs_are_those_that_plan_on_the_fly():
    found = setup_bench.canonical_configs()
    assert {"micro-exclusive", "tpcc-low", "demo", "switch-failure"} <= found.keys()
    assert not {"concordia-skew", "netstore-lbp"} & found.keys()
    assert setup_bench.engines_for(found["switch-failure"]) == ["simpy"]
    assert setup_bench.engines_for(found["tpcc-low"]) == ["simpy", "fast"]


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_the_cached_run_makes_no_plan_and_the_fresh_one_does(engine, monkeypatch):
    cfg = config("micro-exclusive", workload__clients=8, sim__duration_s=0.0003,
                 sim__warmup_s=0.0001)
    monkeypatch.setattr(pilot, "PILOT_REQUESTS", 500)
    made = []
    real = pilot._made_plan
    monkeypatch.setattr(pilot, "_made_plan", lambda *a: made.append(1) or real(*a))
    before = dict(os.environ)
    with plan_cache.temporary_cache():
        setup_bench.timed_run(cfg, engine, cached=True)
        setup_bench.timed_run(cfg, engine, cached=True)
        assert len(made) == 1
        setup_bench.timed_run(cfg, engine, cached=False)
        assert len(made) == 2
    assert dict(os.environ) == before


def phases(setup_s: float) -> Phases:
    return Phases(granted=10, events=30, setup_s=setup_s, loop_s=0.8, results_s=0.1,
                  setup_wall_s=setup_s, run_wall_s=0.9)


def test_the_share_is_set_beside_the_fresh_one_and_the_goal():
    cfg = config("micro-exclusive")
    hit = setup_bench.result("m", "simpy", cfg, [phases(0.9)] * 3, [phases(0.1)] * 3)
    assert hit.value == pytest.approx(0.1) and hit.baseline_value == pytest.approx(0.5)
    assert hit.ok and hit.target == setup_bench.TARGET_SHARE and not hit.higher_is_better
    assert "100 ms with the plan cached" in hit.note and "900 ms made afresh" in hit.note
    assert "loop 800 ms and results 100 ms" in hit.note
    miss = setup_bench.result("m", "simpy", cfg, [phases(0.9)], [phases(0.2)])
    assert not miss.ok
