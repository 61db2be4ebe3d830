"""``sim.bench.run`` reports the engine beside the plain simpy model (no timing asserted)."""

from __future__ import annotations

from sim import bench


def test_bench_reports_engine_and_baseline(monkeypatch):
    monkeypatch.setattr(bench, "engine_rate", lambda duration_s: (2.0e5, 0.1))
    monkeypatch.setattr(bench, "baseline_rate", lambda duration_s: 1.0e5)
    (result,) = bench.run(quick=True)
    assert result.value == 2.0e5 and result.baseline_value == 1.0e5
    assert result.speedup == 2.0 and result.ok
    assert result.target == bench.TARGET_RPS


def test_the_measured_runs_simulate_the_microbenchmark():
    rate, built_s = bench.engine_rate(0.0005)
    assert rate > 0 and built_s >= 0
    assert bench.baseline_rate(0.0005) > 0
    cfg = bench.micro_config(0.01)
    assert (cfg.workload.clients, cfg.workload.locks, cfg.workload.mode) == (120, 5000, "X")
    assert cfg.workload.think_time_us == 0
