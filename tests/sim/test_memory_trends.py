"""The trends section 6.4 states for switch memory, think time and allocation policy, on
its setting (DSLR's TPC-C, ten shared warehouses, ten client machines, two lock servers)."""

from __future__ import annotations

import pytest

from sim.fast.simulate import simulate_fast
from sim.paper.memory import FLAT
from tests.sim.helpers import config

SHORT = dict(sim__duration_s=0.015, sim__warmup_s=0.002)


def run(slots: int, policy: str, think_us: float = 0.0) -> dict:
    return simulate_fast(config("memory-vs-think-time", switch__slots=slots,
                                policy__allocation=policy, workload__think_time_us=think_us,
                                **SHORT)).summary


@pytest.fixture(scope="module")
def points():
    return {(slots, policy): run(slots, policy) for slots in (0, 100_000)
            for policy in ("knapsack", "random")}


def test_throughput_grows_with_slots_under_knapsack_and_not_under_random(points):
    knapsack = points[100_000, "knapsack"]["tps"] / points[0, "knapsack"]["tps"]
    random = points[100_000, "random"]["tps"] / points[0, "random"]["tps"]
    assert knapsack > 1.10
    # "Does not grow" as Figure 14b's check reads it (FLAT, 5 %); on DSLR's TPC-C, 15 ms:
    # measured 1.044x (it was within 3 % on the NewOrder sketch).
    assert random == pytest.approx(1.0, abs=FLAT)
    for summary in points.values():
        assert summary["violations"] == 0 and summary["stalled"] == 0


def test_knapsack_gives_lower_latency_than_random_especially_at_the_tail(points):
    knapsack, random = points[100_000, "knapsack"], points[100_000, "random"]
    assert knapsack["latency_us"]["mean"] < random["latency_us"]["mean"]
    assert knapsack["latency_us"]["p99"] < random["latency_us"]["p99"]
    assert knapsack["switch_share"] > 5 * random["switch_share"]


def test_think_time_lowers_throughput(points):
    thinking = run(100_000, "knapsack", think_us=100.0)
    assert thinking["tps"] < 0.6 * points[100_000, "knapsack"]["tps"]
