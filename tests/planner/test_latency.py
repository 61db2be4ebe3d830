"""The model's p99 of transaction latency (planner/latency.py) against hand-derived
quantiles and a Monte Carlo of the same distribution."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.latency import txn_quantile_us


def _one(fixed, wait, p, residual, n=1):
    """``n`` one-request transactions alike."""
    return txn_quantile_us(np.full(n, fixed), np.full(n, wait), np.full(n, p),
                           np.full(n, residual), np.arange(n + 1))


def test_a_residual_of_a_fixed_hold_is_uniform():
    # always waits, mean 5 = the residual: uniform on [0, 10] after 10 us
    assert _one(10.0, 5.0, 1.0, 5.0) == pytest.approx(19.9, abs=1e-6)
    # waits half the time: P = 0.5 + 0.5 u / 10 = 0.99 at u = 9.8
    assert _one(10.0, 2.5, 0.5, 5.0) == pytest.approx(19.8, abs=1e-6)


def test_waits_behind_waiters_are_exponential():
    assert _one(10.0, 10.0, 1.0, 0.0) == pytest.approx(10 + 10 * math.log(100), abs=1e-6)


def test_without_waits_the_p99_is_the_fixed_part():
    fixed = np.linspace(1.0, 100.0, 100)
    got = txn_quantile_us(fixed, np.zeros(100), np.zeros(100), np.zeros(100), np.arange(101))
    assert got == pytest.approx(99.0, abs=1e-6)


@settings(max_examples=8, deadline=None)
@given(st.floats(0.1, 1.0), st.floats(0.5, 20.0), st.floats(0.0, 30.0),
       st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_the_quantile_matches_a_monte_carlo(p, residual, extra, size, seed):
    """Transactions of ``size`` requests alike, each waiting with chance p a uniform
    residual plus an exponential rest, the longest wait counting."""
    rng = np.random.default_rng(seed)
    mean = residual + extra
    n = 200_000
    waits = np.where(rng.random((n, size)) < p,
                     rng.uniform(0, 2 * residual, (n, size))
                     + (rng.exponential(extra, (n, size)) if extra > 0 else 0.0), 0.0)
    sampled = 7.0 + float(np.quantile(waits.max(axis=1), 0.99))
    got = txn_quantile_us(np.full(3, 7.0), np.full(3 * size, p * mean), np.full(3 * size, p),
                          np.full(3 * size, residual), np.arange(0, 3 * size + 1, size))
    assert got == pytest.approx(sampled, rel=0.03, abs=0.05)
