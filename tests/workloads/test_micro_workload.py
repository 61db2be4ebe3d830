"""The microbenchmark generator: exact Zipf popularity, distinct sorted locks, modes, seeds."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sim.workloads import EXCLUSIVE, SHARED, MicroWorkload, WorkloadGenerator, ZipfSampler


def chi_square_p(observed: np.ndarray, expected_pmf: np.ndarray) -> float:
    expected = expected_pmf * observed.sum()
    return float(stats.chisquare(observed, expected).pvalue)


@pytest.mark.parametrize("exponent", [0.0, 0.5, 0.99, 1.2, 2.0])
def test_zipf_frequencies_match_theory(exponent: float) -> None:
    n = 50
    sampler = ZipfSampler(n, exponent)
    draws = sampler.sample(np.random.default_rng(7), 200_000)
    assert draws.min() >= 0 and draws.max() < n
    weights = np.arange(1, n + 1, dtype=float) ** -exponent
    theory = weights / weights.sum()
    np.testing.assert_allclose(sampler.pmf(), theory, rtol=1e-12)
    assert chi_square_p(np.bincount(draws, minlength=n), theory) > 1e-4


def test_zipf_is_far_from_uniform_when_skewed() -> None:
    draws = ZipfSampler(1000, 1.2).sample(np.random.default_rng(1), 100_000)
    counts = np.bincount(draws, minlength=1000)
    assert counts[0] > 20 * counts[100] > 0
    assert chi_square_p(counts, np.full(1000, 1e-3)) < 1e-12


def test_zipf_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="exponent"):
        ZipfSampler(10, -1.0)
    with pytest.raises(ValueError, match="at least one"):
        ZipfSampler(0, 1.0)


def test_transactions_hold_distinct_sorted_locks() -> None:
    wl = MicroWorkload(locks=20, mode="X", zipf=1.5, locks_per_txn=6)
    batch = wl.sample_txns(5000, np.random.default_rng(3))
    rows = batch.lock_ids.reshape(-1, 6)
    assert (np.diff(rows, axis=1) > 0).all()
    assert batch.lock_ids.dtype == np.int64 and batch.modes.dtype == np.int8
    assert (batch.modes == EXCLUSIVE).all()
    locks, modes = wl.next_txn(4, np.random.default_rng(3))
    assert len(locks) == 6 and (np.diff(locks) > 0).all() and (modes == EXCLUSIVE).all()


def test_all_locks_per_transaction_is_the_whole_set() -> None:
    wl = MicroWorkload(locks=5, zipf=3.0, locks_per_txn=5)
    batch = wl.sample_txns(50, np.random.default_rng(0))
    assert (batch.lock_ids.reshape(-1, 5) == np.arange(5)).all()


def test_modes_shared_exclusive_and_mixed() -> None:
    rng = np.random.default_rng(11)
    assert (MicroWorkload(10, "S").sample_txns(100, rng).modes == SHARED).all()
    mixed = MicroWorkload(1000, "mixed", shared_fraction=0.3, locks_per_txn=2)
    modes = mixed.sample_txns(50_000, rng).modes
    assert abs(np.mean(modes == SHARED) - 0.3) < 0.01


def test_same_seed_same_transactions() -> None:
    wl = MicroWorkload(1000, "mixed", zipf=0.9, locks_per_txn=3)
    a = wl.sample_txns(1000, np.random.default_rng(42), np.arange(1000) % 7)
    b = wl.sample_txns(1000, np.random.default_rng(42), np.arange(1000) % 7)
    assert np.array_equal(a.lock_ids, b.lock_ids) and np.array_equal(a.modes, b.modes)
    assert np.array_equal(a.client_ids, np.arange(1000) % 7)
    c = wl.sample_txns(1000, np.random.default_rng(43))
    assert not np.array_equal(a.lock_ids, c.lock_ids)


def test_protocol_and_validation() -> None:
    wl = MicroWorkload(100)
    assert isinstance(wl, WorkloadGenerator) and wl.n_locks == 100
    assert "uniform" in wl.describe()
    with pytest.raises(ValueError, match="locks_per_txn"):
        MicroWorkload(3, locks_per_txn=4)
    with pytest.raises(ValueError, match="mode"):
        MicroWorkload(3, mode="Q")
