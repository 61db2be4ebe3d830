"""Compiled functions called from compiled code are compiled once per argument types."""

from __future__ import annotations

import pytest

from netlock.dataplane._kernel_jit import JIT_ENABLED, one_signature

numba = pytest.importorskip("numba")
pytestmark = pytest.mark.skipif(not JIT_ENABLED, reason="JIT disabled")


def _callers(callee):
    @numba.njit
    def caller(x):
        return callee(x, 1) + callee(x, 2) + callee(x, x)

    return caller


def test_constants_passed_by_callers_share_one_compiled_function():
    callee = one_signature(numba.njit(lambda x, k: x * k))
    assert _callers(callee)(3) == 3 + 6 + 9
    assert len(callee.overloads) == 1


def test_without_it_numba_compiles_one_per_constant():
    callee = numba.njit(lambda x, k: x * k)
    assert _callers(callee)(3) == 18
    assert len(callee.overloads) == 3
