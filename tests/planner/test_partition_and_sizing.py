"""Server partition, server count, S/T bound, and whole plans from traces."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.errors import ConfigError, PlanError, TraceError
from netlock.geometry import SwitchGeometry
from netlock.plan import Plan, servers_needed
from planner.partition import partition_locks
from planner.planning import PlanOptions, make_plan, st_bound_rps
from tests.planner.traces import make_trace, random_trace


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 200), st.floats(0, 1e4)), min_size=1, max_size=60,
                unique_by=lambda x: x[0]), st.integers(1, 8))
def test_partition_is_contiguous_and_balanced(items, servers: int) -> None:
    items.sort()
    locks = np.array([i[0] for i in items], np.int64)
    load = np.array([i[1] for i in items])
    ranges = partition_locks(locks, load, servers)
    assert len(ranges) == min(servers, len(locks))
    assert ranges[0].lo == 0 and ranges[-1].hi == locks.max()
    for a, b in itertools.pairwise(ranges):
        assert b.lo == a.hi + 1 and a.lo <= a.hi
    assert [r.server for r in ranges] == list(range(len(ranges)))
    if load.sum() > 0:
        per = [load[(locks >= r.lo) & (locks <= r.hi)].sum() for r in ranges]
        assert max(per) <= load.sum() / len(ranges) + 2 * load.max() + 1e-6


@pytest.mark.parametrize(("server_rps", "rate", "expected"), [
    (0.0, 18e6, 0), (1.0, 18e6, 1), (18e6, 18e6, 1), (18e6 + 1, 18e6, 2), (36e6, 18e6, 2),
    (3 * 0.1, 0.1, 3)])
def test_servers_needed(server_rps: float, rate: float, expected: int) -> None:
    assert servers_needed(server_rps, rate) == expected


def test_st_bound() -> None:
    assert st_bound_rps(100_000, 20.0) == pytest.approx(5e9)
    assert st_bound_rps(10, 0.0) == math.inf


def small_geometry(slots: int = 64, priorities: int = 1) -> SwitchGeometry:
    return SwitchGeometry.uniform(slots, arrays=4, priorities=priorities)


def test_plan_summary_is_consistent() -> None:
    trace = random_trace(np.random.default_rng(1), 3000, 200)
    report = make_plan(trace, small_geometry(), PlanOptions(slots=40, server_rate_rps=500.0))
    plan, s = report.plan, report.plan.summary
    stats = report.stats
    assert isinstance(plan, Plan) and plan.problem() is None
    assert s.slots_used == plan.entries.slots.sum() <= 40
    assert s.total_rps == pytest.approx(3000 / trace.duration_s)
    assert s.switch_rps == pytest.approx(float(np.sum(stats.rate_rps * report.slots /
                                                      stats.contention)))
    assert s.server_rps == pytest.approx(s.total_rps - s.switch_rps)
    assert s.servers_needed == math.ceil(s.server_rps / 500.0)
    assert plan.servers == s.servers_needed
    assert s.locks_total == len(np.unique(trace.lock_id))
    assert s.locks_in_switch == len(plan.entries)
    in_switch = np.isin(trace.lock_id, plan.entries.lock_id)
    assert report.requests_to_servers >= np.count_nonzero(~in_switch)
    random = make_plan(trace, small_geometry(), PlanOptions(slots=40, policy="random"))
    assert random.plan.summary.switch_rps <= s.switch_rps


def test_plan_with_priorities_uses_each_class_range() -> None:
    rng = np.random.default_rng(2)
    base = random_trace(rng, 2000, 50)
    trace = make_trace(base.lock_id, base.t_request, base.t_release,
                       priority=rng.integers(0, 3, 2000))
    report = make_plan(trace, small_geometry(64, priorities=2), PlanOptions(slots=64))
    assert report.plan.problem() is None
    assert set(report.plan.entries.priority.tolist()) == {0, 1}
    assert any("priorities up to 2" in w for w in report.warnings)


def test_st_bound_warning() -> None:
    trace = random_trace(np.random.default_rng(3), 2000, 10)
    report = make_plan(trace, small_geometry(), PlanOptions(slots=10, hold_time_us=1e6))
    assert any("S/T bound" in w for w in report.warnings)
    assert report.hold_time_source == "given"
    quiet = make_plan(trace, small_geometry(), PlanOptions(slots=10))
    assert not any("S/T bound" in w for w in quiet.warnings)
    assert quiet.hold_time_us == pytest.approx(np.mean(trace.t_release - trace.t_request) * 1e6)


def test_percentile_contention_reports_what_goes_to_servers() -> None:
    trace = random_trace(np.random.default_rng(4), 5000, 5, hold_s=0.01)
    strict = make_plan(trace, small_geometry(256), PlanOptions(slots=256))
    loose = make_plan(trace, small_geometry(256), PlanOptions(slots=256, contention="p50"))
    assert strict.requests_over_contention == 0 and strict.requests_to_servers == 0
    assert loose.requests_over_contention > 0
    assert loose.requests_to_servers == loose.requests_over_contention


def test_replan_against_live_plan_keeps_regions_and_partition() -> None:
    rng = np.random.default_rng(5)
    geometry = small_geometry(200)
    first = make_plan(random_trace(rng, 4000, 300), geometry, PlanOptions(slots=150)).plan
    second = make_plan(random_trace(rng, 4000, 300), geometry, PlanOptions(slots=150),
                       live=first)
    assert second.migration is not None
    assert second.migration.moves == (), "the live partition is kept"
    assert second.plan.partition == first.partition
    assert second.migration.counts()["stay"] > 0
    with pytest.raises(PlanError, match=r"old\.yaml: geometry"):
        make_plan(random_trace(rng, 100, 3), small_geometry(128), PlanOptions(slots=10),
                  live=first, live_source="old.yaml")


def test_bad_options_and_degenerate_trace() -> None:
    trace = random_trace(np.random.default_rng(6), 100, 5)
    with pytest.raises(ConfigError, match="--slots"):
        make_plan(trace, small_geometry(), PlanOptions(slots=65))
    with pytest.raises(ConfigError, match="--policy"):
        make_plan(trace, small_geometry(), PlanOptions(slots=5, policy="best"))
    with pytest.raises(ConfigError, match="--contention"):
        make_plan(trace, small_geometry(), PlanOptions(slots=5, contention="p"))
    flat = make_trace([1, 2], [1.0, 1.0], [1.0, 1.0])
    with pytest.raises(TraceError, match="spans no time"):
        make_plan(flat, small_geometry(), PlanOptions(slots=5))
