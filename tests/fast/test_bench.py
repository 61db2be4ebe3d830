"""``sim.fast_bench``: fast engine beside the simpy engine, plain simpy and the native loop;
the agreement check fails the results loudly (no timing asserted)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sim import fast_bench as bench
from sim.bench import Phases
from sim.native.reference import NativeRun


def _phases(rps: float) -> Phases:
    return Phases(granted=1000, events=1000, setup_s=0.5, loop_s=1000 / rps, results_s=0.1,
                  setup_wall_s=0.5, run_wall_s=0.1 + 1000 / rps)


class FakeLoop:
    """The calendar queue at 18M requests/s, the heap at 9M, same results."""

    def run(self, *args, queue="heap", **kwargs):
        rate = 1.8e7 if queue == "calendar" else 9.0e6
        return NativeRun(granted=1000, events=3000, loop_s=1000 / rate, latency_sum_us=5000.0,
                         checksum=7)

    def close(self):
        pass


@pytest.fixture
def rates(monkeypatch):
    monkeypatch.setattr(bench, "first_load_s", lambda: 0.5)
    monkeypatch.setattr(bench, "fast_run", lambda d, loss=0.0: _phases(7.0e6))
    monkeypatch.setattr(bench, "simpy_run", lambda d: _phases(2.0e5))
    monkeypatch.setattr(bench, "baseline_rate", lambda d: 1.0e5)
    monkeypatch.setattr(bench, "native_loop", FakeLoop)
    monkeypatch.setattr(bench.fast_bench_process, "run", lambda quick: [])
    monkeypatch.setattr(bench, "tpcc_run", lambda d: Phases(
        granted=int(4e7 * d), events=int(1.5e8 * d), setup_s=1.0, loop_s=6.0 * d,
        results_s=1.0 * d, setup_wall_s=1.0, run_wall_s=6.0 * d))


def _named(results, start):
    (found,) = [r for r in results if r.name.startswith(start)]
    return found


def test_the_table_turns_measured_rates_into_speedups_and_met_targets(rates, monkeypatch):
    """With the rates and the agreement check stubbed (no timing in unit tests), the table
    reports each rate, its speedup over its baseline and the native loop's share, and marks
    the targets met; whether the engines agree is tested by tests/fast/test_differential.py
    and the next tests."""
    monkeypatch.setattr(bench, "check_agreement", lambda: (0.0, []))
    results = bench.run(quick=True)
    assert all(r.ok for r in results if "fair native reference" not in r.name)
    main = results[0]
    assert main.value == pytest.approx(7.0e6) and main.baseline_value == 1.0e5
    assert main.speedup == pytest.approx(70.0)
    assert "39% of the fair native reference" in main.note
    assert _named(results, "native C loop: fair").value == pytest.approx(1.8e7)
    heap = _named(results, "native C loop: the same on a binary heap")
    assert heap.value == pytest.approx(9.0e6) and heap.speedup == pytest.approx(0.5)
    share = _named(results, "fast engine's event loop / the fair native reference")
    assert share.value == pytest.approx(7.0 / 18.0) and share.target == 0.5 and not share.ok
    assert _named(results, "fast engine: setup").value == 0.5
    assert _named(results, "fast engine vs simpy").speedup == pytest.approx(35.0)


def test_half_the_fair_reference_meets_its_goal_and_different_queue_results_fail(rates,
                                                                               monkeypatch):
    monkeypatch.setattr(bench, "check_agreement", lambda: (0.0, []))
    monkeypatch.setattr(bench, "fast_run", lambda d, loss=0.0: _phases(9.0e6))
    share = _named(bench.run(quick=True), "fast engine's event loop / the fair")
    assert share.value == pytest.approx(0.5) and share.ok

    class Inexact(FakeLoop):
        def run(self, *args, queue="heap", **kwargs):
            run = super().run(*args, queue=queue, **kwargs)
            return run if queue == "heap" else replace(run, checksum=8)

    monkeypatch.setattr(bench, "native_loop", Inexact)
    results = bench.run(quick=True)
    for start in ("fast engine's event loop / the fair", "native C loop: fair",
                  "native C loop: the same"):
        assert not _named(results, start).ok
    assert "HEAP AND CALENDAR QUEUE RESULTS DIFFER" in _named(results, "fast engine's event").note


def test_the_fair_reference_runs_the_micro_config_on_both_queues():
    loop = bench.native_loop()
    if loop is None:
        pytest.skip("no C compiler")
    try:
        calendar, heap = bench.native_runs(loop, 0.0005)
    finally:
        loop.close()
    assert calendar.outcome == heap.outcome and calendar.granted > 10_000


def test_disagreement_is_the_largest_relative_difference_of_the_compared_figures():
    slow = {"throughput_rps": 100.0, "switch_share": 0.5, "latency_us": {"p50": 10.0, "p99": 40.0}}
    assert bench.disagreement(slow, slow) == 0.0
    for key, value, diff in (("throughput_rps", 97.0, 0.03), ("switch_share", 0.45, 0.1)):
        assert bench.disagreement({**slow, key: value}, slow) == pytest.approx(diff)
    p99 = {**slow, "latency_us": {"p50": 10.0, "p99": 50.0}}
    assert bench.disagreement(p99, slow) == pytest.approx(0.2)


def test_without_a_compiler_the_native_loop_is_skipped(rates, monkeypatch):
    monkeypatch.setattr(bench, "check_agreement", lambda: (0.0, []))
    monkeypatch.setattr(bench, "native_loop", lambda: None)
    results = bench.run(quick=True)
    assert "native loop skipped" in results[0].note
    assert not [r for r in results if r.name.startswith("native")]


def test_disagreeing_engines_fail_loudly(rates, monkeypatch):
    monkeypatch.setattr(bench, "check_agreement", lambda: (0.3, ["lossy: engines differ"]))
    results = bench.run(quick=True)
    assert not results[0].ok and "ENGINES DISAGREE" in results[0].note
    agreement = _named(results, "engines agree")
    assert not agreement.ok and agreement.value == 0.3


def test_no_row_has_an_absolute_goal(rates, monkeypatch):
    """Machines differ 4-6x: every goal is a ratio to a same-run baseline (issue 32); a slow
    machine misses none by its speed alone."""
    monkeypatch.setattr(bench, "check_agreement", lambda: (0.0, []))
    monkeypatch.setattr(bench, "fast_run", lambda d, loss=0.0: _phases(9.0e5))
    monkeypatch.setattr(bench, "native_loop", lambda: None)
    results = bench.run(quick=True)
    assert results[0].ok and results[0].target is None
    assert [r.name for r in results if r.target is not None and r.unit in ("requests/s", "s")
            and r.baseline_value is None] == []


def test_disagreement_is_the_largest_relative_difference():
    same = {"throughput_rps": 100.0, "switch_share": 1.0, "latency_us": {"p50": 5.0, "p99": 9.0}}
    other = {**same, "latency_us": {"p50": 5.0, "p99": 10.0}}
    assert bench.disagreement(same, same) == 0.0
    assert bench.disagreement(same, other) == pytest.approx(0.1)


def test_the_agreement_check_runs_both_engines():
    worst, problems = bench.check_agreement()
    assert problems == [] and worst <= bench.TOLERANCE


def test_the_full_run_reports_the_cold_compile_in_cpu_seconds(rates, monkeypatch):
    monkeypatch.setattr(bench, "check_agreement", lambda: (0.0, []))
    monkeypatch.setattr(bench, "cold_compile_s", lambda: (120.0, 300.0))
    compile_row = _named(bench.run(quick=False), "fast engine JIT compile")
    assert (compile_row.value, compile_row.unit) == (120.0, "CPU s")
    assert "300 s wall" in compile_row.note


def test_tpcc_is_cpu_per_simulated_second_over_the_native_loops_for_its_events(rates,
                                                                              monkeypatch):
    """Setup once, loop and results scaled to one simulated second, in CPU seconds, over
    the native loop's time for the same events (same run); over 3x misses."""
    monkeypatch.setattr(bench, "check_agreement", lambda: (0.0, []))
    row = _named(bench.run(quick=True), "TPC-C low")
    assert row.value == pytest.approx(8.0 / (1.5e8 / 5.4e7)) and row.ok and row.unit == "x"
    assert "40.0M requests" in row.note and "8.0 CPU s" in row.note and "7.0 wall s" in row.note
    assert "150M events alone take the native loop 2.8 s (54.0M events/s)" in row.note
    monkeypatch.setattr(bench, "tpcc_run", lambda d: Phases(
        granted=int(4e7 * d), events=int(1.5e8 * d), setup_s=1.0, loop_s=40.0 * d,
        results_s=6.0 * d, setup_wall_s=1.0, run_wall_s=44.0 * d))
    row = _named(bench.run(quick=True), "TPC-C low")
    assert row.value == pytest.approx(47.0 / (1.5e8 / 5.4e7)) and not row.ok
    monkeypatch.setattr(bench, "native_loop", lambda: None)
    row = _named(bench.run(quick=True), "TPC-C low")
    assert row.value == pytest.approx(47.0) and row.target is None and "no goal" in row.note


def test_a_short_tpcc_run_is_measured():
    """The real TPC-C config builds, runs and summarises without violations."""
    run = bench.tpcc_run(0.0005)
    assert run.granted > 0 and run.loop_s > 0 and run.results_s > 0
