"""Algorithm 3 is optimal: it equals the LP optimum and never loses to the random baseline."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from planner.allocate import allocate, fill, knapsack_order, switch_rate


def lp_optimum(rate: np.ndarray, contention: np.ndarray, priority: np.ndarray, budget: int,
               capacities: tuple[int, ...]) -> float:
    """max sum r s / c  s.t.  sum s <= S, per-class sums <= C_p, 0 <= s <= c."""
    rows = [np.ones(len(rate))] + [(priority == p).astype(float) for p in range(len(capacities))]
    result = linprog(-(rate / contention), A_ub=np.array(rows),
                     b_ub=np.array([budget, *capacities], dtype=float),
                     bounds=list(zip(np.zeros(len(rate)), contention, strict=True)),
                     method="highs-ds")
    assert result.status == 0
    return -result.fun


@st.composite
def instances(draw: st.DrawFn):
    n = draw(st.integers(1, 40))
    classes = draw(st.integers(1, 3))
    rate = np.array(draw(st.lists(st.floats(1e-3, 1e6), min_size=n, max_size=n)))
    contention = np.array(draw(st.lists(st.integers(1, 12), min_size=n, max_size=n)))
    priority = np.array(draw(st.lists(st.integers(0, classes - 1), min_size=n, max_size=n)))
    capacities = tuple(draw(st.lists(st.integers(0, 60), min_size=classes, max_size=classes)))
    budget = draw(st.integers(0, int(contention.sum()) + 5))
    return rate, contention, priority, budget, capacities


@settings(max_examples=300, deadline=None)
@given(instances(), st.integers(0, 1000))
def test_knapsack_equals_lp_optimum_and_beats_random(instance, seed: int) -> None:
    rate, contention, priority, budget, capacities = instance
    slots = allocate(rate, contention, priority, budget, capacities)
    assert (slots >= 0).all() and (slots <= contention).all()
    assert slots.sum() <= budget
    for p, cap in enumerate(capacities):
        assert slots[priority == p].sum() <= cap
    ours = switch_rate(rate, contention, slots)
    best = lp_optimum(rate, contention, priority, budget, capacities)
    assert ours == pytest.approx(best, rel=1e-9, abs=1e-9)
    baseline = allocate(rate, contention, priority, budget, capacities, "random", seed)
    assert (baseline <= contention).all() and baseline.sum() <= budget
    assert ours >= switch_rate(rate, contention, baseline) * (1 - 1e-12)


def test_paper_figure_7() -> None:
    """Lock 1: two clients at 100 rps each (c = 2); lock 2: one client at 10 rps; S = 2."""
    rate, contention = np.array([200.0, 10.0]), np.array([2, 1])
    slots = allocate(rate, contention, np.zeros(2, np.int64), 2, (2,))
    assert list(slots) == [2, 0]
    assert switch_rate(rate, contention, slots) == 200.0
    naive = np.array([1, 1])
    assert switch_rate(rate, contention, naive) == 110.0


def test_fill_respects_order_and_all_bounds() -> None:
    contention = np.array([3, 3, 3, 3])
    priority = np.array([0, 1, 0, 1])
    slots = fill(np.array([3, 2, 1, 0]), contention, priority, budget=7, capacities=(4, 10))
    assert list(slots) == [0, 1, 3, 3]


def test_ties_are_broken_by_lock_order() -> None:
    order = knapsack_order(np.array([2.0, 1.0, 2.0, 1.0]), np.array([2, 1, 2, 1]))
    assert list(order) == [0, 1, 2, 3]


def test_random_is_seeded_and_unknown_policy_fails() -> None:
    rate, contention = np.arange(1.0, 51.0), np.ones(50, np.int64)
    zeros = np.zeros(50, np.int64)
    a = allocate(rate, contention, zeros, 10, (10,), "random", seed=5)
    assert np.array_equal(a, allocate(rate, contention, zeros, 10, (10,), "random", seed=5))
    assert not np.array_equal(a, allocate(rate, contention, zeros, 10, (10,), "random", 6))
    with pytest.raises(ValueError, match="policy"):
        allocate(rate, contention, zeros, 10, (10,), "greedy")


def even_oracle(n: int, budget: int, priority: np.ndarray, capacities: tuple[int, ...]) -> list:
    """The authors' controller, item by item: budget // n slots each (at least one while
    slots last), in item order, within the switch's and each class's slots left."""
    share = max(budget // n, 1)
    left, room, out = budget, list(capacities), []
    for p in priority.tolist():
        s = min(share, left, room[p])
        out.append(s)
        left -= s
        room[p] -= s
    return out


@settings(max_examples=200, deadline=None)
@given(instances())
def test_even_split_ignores_rates_and_contention(instance) -> None:
    rate, contention, priority, budget, capacities = instance
    slots = allocate(rate, contention, priority, budget, capacities, "even")
    assert list(slots) == even_oracle(len(rate), budget, priority, capacities)
    assert np.array_equal(slots, allocate(rate[::-1].copy(), contention + 7, priority, budget,
                                          capacities, "even"))


def test_even_split_of_the_microbenchmark() -> None:
    """Figure 8a: 12 locks on the testbed's 100K slots get 8,333 each, far above any c_i."""
    slots = allocate(np.ones(12), np.full(12, 300), np.zeros(12, np.int64), 100_000,
                     (100_000,), "even")
    assert list(slots) == [8333] * 12
