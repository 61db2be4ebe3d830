"""The compiled hop-delay draws are NumPy's, float for float (sim.core.draws)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.dataplane._kernel_jit import JIT_ENABLED
from sim.core.draws import BLOCK, draw_hops, normal_hops, numpy_normal_hops

pytestmark = pytest.mark.skipif(not JIT_ENABLED, reason="the compiled draws need numba")


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**63 - 1),
       half_rtt_us=st.sampled_from([0.0, 0.5, 2.5, 1e3]) | st.floats(0.0, 1e4),
       jitter_us=st.sampled_from([1e-9, 0.5, 3.0, 1e3]) | st.floats(1e-12, 1e4),
       n=st.integers(0, 3 * BLOCK))
def test_compiled_normal_hops_are_numpys_three_passes(seed, half_rtt_us, jitter_us, n):
    """The same bits, and the generator left where NumPy leaves it; large jitter makes
    many delays clip at zero, and 3 blocks' worth of draws reach the ziggurat's rare
    branches (its tail and its wedges) hundreds of times."""
    numpy_rng, compiled_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    expected, got = np.full(n, np.nan), np.full(n, np.nan)
    numpy_normal_hops(numpy_rng, half_rtt_us, jitter_us, expected)
    normal_hops()(compiled_rng, half_rtt_us, jitter_us, got)
    np.testing.assert_array_equal(got.view(np.int64), expected.view(np.int64))
    assert compiled_rng.bit_generator.state == numpy_rng.bit_generator.state


def test_lossy_hops_follow_each_blocks_delays_with_its_loss_draws():
    """With loss, each block's loss draws come right after its delays: drawing two blocks
    at once is drawing them one after the other, and about ``loss`` of them are lost."""
    whole = np.empty(2 * BLOCK)
    draw_hops(np.random.default_rng(5), 2.5, 0.5, 0.01, whole)
    rng = np.random.default_rng(5)
    first, second = np.empty(BLOCK), np.empty(BLOCK)
    draw_hops(rng, 2.5, 0.5, 0.01, first)
    draw_hops(rng, 2.5, 0.5, 0.01, second)
    np.testing.assert_array_equal(whole, np.concatenate([first, second]))
    assert 0.005 < np.mean(whole < 0) < 0.015
    assert np.all(whole[whole >= 0] <= 2.5 + 0.5 * 10)
