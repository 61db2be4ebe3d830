"""c_i sized by the closed loop's occupancy (planner/occupancy.py): the Poisson quantile
against a summed-pmf oracle, and a transaction plan whose locks the closed loop holds longer
than its demand trace did."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.geometry import SwitchGeometry
from netlock.trace import Trace
from planner.allocate import allocate
from planner.closedloop import RackTiming, TxnSample, solve
from planner.measure import measure
from planner.occupancy import QUANTILE_FOR_MAX, occupancy_contention
from planner.offered import handover_us
from planner.planning import PlanOptions, make_plan

RACK = RackTiming(clients=20, client_rtt_us=5.389, server_rtt_us=5.0, read_us=10.0,
                  think_us=20.0, acquire_gap_us=0.111, pass_us=0.3, servers=2, cores=8,
                  packet_us=0.222, timeout_us=400.0, backoff_us=135.0)


def _poisson_cdf(k: int, mean: float) -> float:
    term, total = math.exp(-mean), 0.0
    for n in range(k + 1):
        total += term
        term *= mean / (n + 1)
    return total


@settings(max_examples=60, deadline=None)
@given(st.floats(0.0, 25.0), st.floats(0.5, 0.999), st.integers(1, 8), st.integers(1, 40))
def test_the_sized_count_is_where_a_share_q_of_requests_first_fits(mean, q, measured, most):
    got = int(occupancy_contention(np.array([mean]), np.array([measured]), q, most)[0])
    fits = next(k for k in range(1, 10_000) if _poisson_cdf(k - 1, mean) >= q - 1e-12)
    assert got == max(measured, min(fits, most))


def _demand_trace(hot_mode: int = 1, seed: int = 0) -> Trace:
    """20 clients, each running transactions back to back in the trace: one of 4 hot rows
    (exclusive: ``hot_mode`` 1) and 3 of 400 warm rows shared, every lock held 25 us
    (RTT + read + think, never waiting, as ``netlock trace gen`` writes it)."""
    rng = np.random.default_rng(seed)
    lock, mode, start, txn = [], [], [], []
    for client in range(20):
        for k in range(60):
            t = (k * 26.0 + client * 1.3) * 1e-6
            for row, m in [(int(rng.integers(0, 4)), hot_mode),
                           *((int(x), 0) for x in 4 + rng.choice(400, 3, replace=False))]:
                lock.append(row)
                mode.append(m)
                start.append(t)
                txn.append(client * 1000 + k)
    t_request = np.array(start)
    return Trace(source="test", lock_id=np.array(lock, dtype=np.int64),
                 mode=np.array(mode, dtype=np.int8), t_request=t_request,
                 t_release=t_request + 25e-6, txn=np.array(txn, dtype=np.int64))


def _overflow_share(trace: Trace, slots_per_item: np.ndarray, lock_id: np.ndarray) -> float:
    """The model's share of requests for switch locks that overflow their slots, each lock's
    occupancy at its expected future rate."""
    sample = TxnSample.of(trace.lock_id, trace.mode, trace.txn)
    per_lock = np.zeros(len(sample.lock_ids))
    np.add.at(per_lock, np.searchsorted(sample.lock_ids, lock_id), slots_per_item)
    occupancy = solve(sample, RACK, per_lock).occupancy * sample.lock_weight()
    held = per_lock > 0
    fit = np.array([_poisson_cdf(int(s) - 1, m) for s, m in zip(per_lock[held],
                                                                occupancy[held], strict=True)])
    count = np.bincount(sample.lock, minlength=len(per_lock))[held]
    return float(np.sum(count * (1 - fit)) / count.sum())


def test_locks_held_longer_in_the_closed_loop_get_more_slots_and_overflow_less():
    trace = _demand_trace()
    geometry = SwitchGeometry.uniform(4000, arrays=4, stages=12, priorities=1, first_stage=2)
    options = PlanOptions(slots=4000, handover_us=handover_us(RACK.pass_us), rack=RACK)
    report = make_plan(trace, geometry, options)
    measured = measure(trace).contention
    assert report.plan.summary.rates.startswith("closed-loop")
    assert np.all(report.stats.contention >= measured)
    assert np.any(report.stats.contention > measured)  # the waits lengthen the warm rows' holds
    assert np.array_equal(report.slots, report.stats.contention)  # all fit in 4,000 slots
    trace_sized = allocate(report.stats.rate_rps, measured, report.stats.priority, 4000,
                           (geometry.priority_capacity(0),))
    before = _overflow_share(trace, trace_sized, report.stats.lock_id)
    after = _overflow_share(trace, report.slots, report.stats.lock_id)
    assert after <= 1 - QUANTILE_FOR_MAX + 1e-9 < before


def test_a_lock_without_waiting_keeps_the_count_the_trace_measured():
    mean = np.array([0.0, 1e-9])
    assert list(occupancy_contention(mean, np.array([3, 1]), 0.99, 20)) == [3, 1]
    assert occupancy_contention(np.array([50.0]), np.array([1]), 0.99, 20)[0] == 20


@pytest.mark.parametrize("statistic, level", [("max", QUANTILE_FOR_MAX), ("p90", 0.9)])
def test_the_level_is_the_contention_statistics_own(statistic, level):
    from planner.occupancy import quantile_of

    assert quantile_of(statistic) == level


def test_where_the_raised_counts_do_not_fit_the_greedy_takes_them_whole():
    """In 800 slots the trace's counts (738) fit and the closed loop's do not: Algorithm 3
    on the raised counts gives each lock it holds all of them but the last it reaches."""
    trace = _demand_trace()
    geometry = SwitchGeometry.uniform(4000, arrays=4, stages=12, priorities=1, first_stage=2)
    measured = measure(trace).contention
    report = make_plan(trace, geometry, PlanOptions(
        slots=800, handover_us=handover_us(RACK.pass_us), rack=RACK))
    c = report.stats.contention
    assert measured.sum() <= 800 < c.sum() and np.all(c >= measured)
    assert report.slots.sum() == 800
    assert np.count_nonzero((report.slots > 0) & (report.slots < c)) <= 1
    assert any("quantile of their closed-loop occupancy" in w for w in report.warnings)


def test_a_locks_weight_is_its_requests_repeat_weight():
    sample = TxnSample.of(*(lambda t: (t.lock_id, t.mode, t.txn))(_demand_trace()))
    assert np.array_equal(sample.lock_weight()[sample.lock], sample.repeat_weight())
