"""``sim.fast.bench``: fast engine beside the simpy engine and plain simpy; the agreement
check fails the results loudly (no timing asserted)."""

from __future__ import annotations

import pytest

from sim.fast import bench


@pytest.fixture
def rates(monkeypatch):
    monkeypatch.setattr(bench, "first_load_s", lambda: 0.5)
    monkeypatch.setattr(bench, "fast_rate", lambda d: (4.0e6, 0.1))
    monkeypatch.setattr(bench, "engine_rate", lambda d: (2.0e5, 0.1))
    monkeypatch.setattr(bench, "baseline_rate", lambda d: 7.0e4)


def test_targets_met_and_engines_agree(rates, monkeypatch):
    monkeypatch.setattr(bench, "check_agreement", lambda: (0.0, []))
    results = bench.run(quick=True)
    assert all(r.ok for r in results)
    main = results[0]
    assert main.value == 4.0e6 and main.baseline_value == 7.0e4
    assert main.speedup == pytest.approx(4.0e6 / 7.0e4)


def test_disagreeing_engines_fail_loudly(rates, monkeypatch):
    monkeypatch.setattr(bench, "check_agreement", lambda: (0.3, ["lossy: engines differ"]))
    results = bench.run(quick=True)
    assert not results[0].ok and "ENGINES DISAGREE" in results[0].note
    assert not results[2].ok and results[2].value == 0.3


def test_missing_the_speedup_fails(rates, monkeypatch):
    monkeypatch.setattr(bench, "check_agreement", lambda: (0.0, []))
    monkeypatch.setattr(bench, "baseline_rate", lambda d: 2.0e5)
    assert not bench.run(quick=True)[0].ok


def test_disagreement_is_the_largest_relative_difference():
    same = {"throughput_rps": 100.0, "switch_share": 1.0, "latency_us": {"p50": 5.0, "p99": 9.0}}
    other = {**same, "latency_us": {"p50": 5.0, "p99": 10.0}}
    assert bench.disagreement(same, same) == 0.0
    assert bench.disagreement(same, other) == pytest.approx(0.1)


def test_the_agreement_check_runs_both_engines():
    worst, problems = bench.check_agreement()
    assert problems == [] and worst <= bench.TOLERANCE
