"""r_i and c_i against brute-force oracles on small random traces."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.measure import measure, parse_statistic
from tests.planner.traces import make_trace


def overlap_oracle(starts: list[float], ends: list[float]) -> int:
    """Most [a, b) intervals containing one point (checked at every start), at least 1."""
    best = max(sum(a <= t < b for a, b in zip(starts, ends, strict=True)) for t in starts)
    return max(best, 1)


@st.composite
def grid_traces(draw: st.DrawFn) -> tuple[list[int], list[float], list[float]]:
    n = draw(st.integers(1, 40))
    locks = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    starts = draw(st.lists(st.integers(0, 20), min_size=n, max_size=n))
    holds = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    return locks, [float(s) for s in starts], [float(s + h) for s, h in
                                              zip(starts, holds, strict=True)]


@settings(max_examples=150, deadline=None)
@given(grid_traces())
def test_contention_max_matches_brute_force(case) -> None:
    locks, starts, ends = case
    trace = make_trace(locks, starts, ends)
    stats = measure(trace)
    assert list(stats.lock_id) == sorted(set(locks))
    span = max(ends) - min(starts)
    for i, lock in enumerate(stats.lock_id):
        mine = [j for j, k in enumerate(locks) if k == lock]
        expected = overlap_oracle([starts[j] for j in mine], [ends[j] for j in mine])
        assert stats.contention[i] == expected
        assert stats.requests[i] == len(mine)
        if span > 0:
            assert stats.rate_rps[i] == pytest.approx(len(mine) / span)
    assert (stats.requests_above(stats.contention) == 0).all()


def arrival_oracle(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Queue depth each request finds on arrival, itself included (distinct times)."""
    return np.array([max(1, int(np.sum((starts <= t) & (ends > t)))) for t in starts])


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["p50", "p90", "p99", "max"]))
def test_percentiles_and_overflow_match_brute_force(seed: int, statistic: str) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 120))
    locks = rng.integers(0, 4, n)
    starts = rng.uniform(0, 1, n)
    ends = starts + rng.exponential(0.1, n)
    stats = measure(make_trace(locks, starts, ends), statistic)
    q = parse_statistic(statistic)
    slots = rng.integers(0, 5, len(stats))
    above = stats.requests_above(slots)
    for i, lock in enumerate(stats.lock_id):
        mine = locks == lock
        k = np.sort(arrival_oracle(starts[mine], ends[mine]))
        assert stats.contention_max[i] == k.max()
        want = k.max() if q is None else k[max(math.ceil(q * len(k) - 1e-9), 1) - 1]
        assert stats.contention[i] == want
        assert above[i] == np.count_nonzero(k > slots[i])


def test_priorities_are_separate_items_and_clamped() -> None:
    trace = make_trace([1, 1, 1, 2], [0, 0, 0, 0], [1, 1, 1, 1], priority=[0, 1, 5, 3])
    stats = measure(trace, priorities=2)
    assert list(zip(stats.lock_id, stats.priority, stats.contention, strict=True)) == \
        [(1, 0, 1), (1, 1, 2), (2, 1, 1)]
    single = measure(trace, priorities=1)
    assert list(single.contention) == [3, 1] and (single.priority == 0).all()


def test_coarse_groups_merge_neighbouring_locks() -> None:
    trace = make_trace([0, 1, 2, 3, 9], [0, 0.5, 0, 3, 0], [1, 1.5, 1, 4, 1])
    stats = measure(trace, coarse_group=2)
    assert list(stats.lock_id) == [0, 1, 4]
    assert list(stats.contention) == [2, 1, 1]
    assert list(stats.requests) == [2, 2, 1]


def test_sparse_lock_ids_use_the_sorting_path() -> None:
    ids = np.array([2**40, 5, 2**40, 2**50])
    stats = measure(make_trace(ids, [0, 0, 0.5, 0], [1, 1, 1, 1]))
    assert list(stats.lock_id) == [5, 2**40, 2**50]
    assert list(stats.contention) == [1, 2, 1]


def test_zero_length_requests_count_as_one() -> None:
    stats = measure(make_trace([0, 0, 0], [1.0, 1.0, 2.0], [1.0, 1.0, 3.0]))
    assert stats.contention[0] == 1


@pytest.mark.parametrize(("name", "q"), [("max", None), ("p99", 0.99), ("p999", 0.999),
                                         ("p50", 0.5), ("p99.5", 0.995), ("p5", 0.05)])
def test_parse_statistic(name: str, q: float | None) -> None:
    assert parse_statistic(name) == (q if q is None else pytest.approx(q))


@pytest.mark.parametrize("bad", ["p", "p100", "p0", "median", "99"])
def test_parse_statistic_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="--contention"):
        parse_statistic(bad)
