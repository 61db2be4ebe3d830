"""The trends section 6.4 states for switch memory, think time and allocation policy, on
its setting (DSLR's TPC-C, ten shared warehouses, ten client machines, two lock servers)."""

from __future__ import annotations

import pytest

from sim.fast.simulate_fast import simulate_fast
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
    # Random slots land on almost none of DSLR's TPC-C traffic (7 M lock ids), so random's
    # switch share stays near 0 at any memory and its TPS moves by the run-to-run spread
    # only: 263-337 K TPS over three seeds of 15 ms (measured while deadlocked attempts
    # waited out the 2 ms timeout, before an attempt's acquires travelled in one burst), so
    # "does not grow" is judged on where the requests are served.
    assert points[100_000, "random"]["switch_share"] < 0.05
    assert random == pytest.approx(1.0, abs=0.3)
    for summary in points.values():
        assert summary["violations"] == 0 and summary["stalled"] == 0


def test_knapsack_serves_far_more_in_the_switch_than_random(points):
    """Figure 13's mechanism. Its latency claim (lower mean and tail under knapsack) does not
    hold on DSLR's TPC-C in this model: both policies' tails sit at the attempt timeout
    (configs/paper/fig13.yaml)."""
    knapsack, random = points[100_000, "knapsack"], points[100_000, "random"]
    assert knapsack["switch_share"] > 0.25
    assert knapsack["switch_share"] > 5 * random["switch_share"]


def test_think_time_lowers_throughput(points):
    thinking = run(100_000, "knapsack", think_us=100.0)
    assert thinking["tps"] < 0.6 * points[100_000, "knapsack"]["tps"]
