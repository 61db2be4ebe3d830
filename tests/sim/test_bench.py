"""``sim.bench.run`` reports the engine's phases beside the plain simpy model (no timing
asserted)."""

from __future__ import annotations

import pytest

from sim import bench


def _fake(monkeypatch, engine_rps: float, plain_rps: float, cached_setup_s: float = 0.05
          ) -> None:
    def run(duration_s, cached=False):
        setup_s = cached_setup_s if cached else 0.5
        return bench.Phases(granted=1000, events=3000, setup_s=setup_s,
                            loop_s=1000 / engine_rps, results_s=0.25, setup_wall_s=setup_s,
                            run_wall_s=0.25 + 1000 / engine_rps)

    monkeypatch.setattr(bench, "simpy_run", run)
    monkeypatch.setattr(bench, "baseline_rate", lambda duration_s: plain_rps)


def test_bench_reports_loop_and_phases_beside_the_baseline(monkeypatch):
    _fake(monkeypatch, 2.0e5, 1.0e5)
    loop, setup, results, whole, again = bench.run(quick=True)
    assert loop.value == pytest.approx(2.0e5) and loop.baseline_value == 1.0e5
    assert loop.speedup == pytest.approx(2.0) and loop.ok
    assert (setup.value, results.value) == (0.5, 0.25) and setup.unit == "CPU s"
    assert whole.value == pytest.approx(1000 / (0.5 + 0.005 + 0.25))
    assert again.value == pytest.approx(1000 / (0.05 + 0.005 + 0.25)) and not again.ok


def test_a_cached_whole_run_at_one_and_a_half_plain_simpy_meets_its_goal(monkeypatch):
    _fake(monkeypatch, 1.0e6, 1.0e3, cached_setup_s=0.4)
    again = bench.run(quick=True)[-1]
    assert again.speedup == pytest.approx(1000 / 0.651 / 1.0e3) and again.ok
    _fake(monkeypatch, 1.0e6, 1.0e3, cached_setup_s=0.5)
    assert not bench.run(quick=True)[-1].ok


def test_less_than_twice_plain_simpy_is_a_miss(monkeypatch):
    _fake(monkeypatch, 1.9e5, 1.0e5)
    assert not bench.run(quick=True)[0].ok


def test_the_measured_runs_simulate_the_microbenchmark():
    run = bench.simpy_run(0.0005)
    assert run.granted > 0 and min(run.setup_s, run.loop_s, run.results_s) > 0
    assert bench.baseline_rate(0.0005) > 0
    cfg = bench.micro_config(0.01)
    assert (cfg.workload.clients, cfg.workload.locks, cfg.workload.mode) == (120, 5000, "X")
    assert cfg.workload.think_time_us == 0


def test_a_run_with_violations_is_refused():
    with pytest.raises(RuntimeError, match="safety violations"):
        bench.timed_phases(lambda: None, lambda m: None,
                           lambda m: {"violations": 2, "granted": 10}, lambda: None)
