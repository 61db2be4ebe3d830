"""The network's random draws, block by block, as both engines make them.

Hop delays and fault draws come in blocks of ``BLOCK`` from a run's own streams; the simpy
engine (:class:`sim.network.Network`, :class:`sim.network.Faults`) hands them out one by
one, the fast engine keeps them in arrays, and both, handling packets in the same order,
see the same delays, losses, copies and reorderings. A hop's delay is half the round trip
plus normal noise of standard deviation ``jitter_us`` (clipped at zero), negative when the
packet is lost (us).

The normal delays are drawn by compiled code, from the same generator and in the same order
as NumPy's ``standard_normal`` draws them (numba's ``np.random.Generator`` support runs
NumPy's ziggurat on the generator's own bit stream), scaled, shifted and clipped as NumPy's
three passes do, in one pass: the same floats, 3.3x faster (8.9 -> 2.7 ns a delay, medians
of 7; the fast engine's microbenchmark loop took 11 % less CPU, issue 32).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

from netlock.dataplane._kernel_jit import JIT_ENABLED, kernel_nogil

BLOCK = 1 << 15
FAULT_STREAM = 2
"""The fault stream's key beside the run's seed (``SeedSequence([seed, FAULT_STREAM])``)."""


def draw_hops(rng: np.random.Generator, half_rtt_us: float, jitter_us: float, loss: float,
              out: np.ndarray) -> None:
    """Fill ``out`` with hop delays (us; -1 for a lost packet), block by block when packets
    can be lost, as the loss draws follow each block's delays."""
    step = BLOCK if loss > 0 else max(len(out), 1)
    for at in range(0, len(out), step):
        block = out[at:at + step]
        if jitter_us > 0:
            normal_hops()(rng, half_rtt_us, jitter_us, block)
        else:
            block[:] = half_rtt_us
        if loss > 0:
            block[rng.random(len(block)) < loss] = -1.0


def numpy_normal_hops(rng: np.random.Generator, half_rtt_us: float, jitter_us: float,
                      out: np.ndarray) -> None:
    """Fill ``out`` with ``max(half_rtt_us + jitter_us * N(0, 1), 0)`` (us), NumPy pass by
    pass: what :func:`compiled_normal_hops` computes, used when the JIT is off."""
    rng.standard_normal(out=out)
    out *= jitter_us
    out += half_rtt_us
    np.maximum(out, 0.0, out=out)


def compiled_normal_hops(rng: np.random.Generator, half_rtt_us: float, jitter_us: float,
                         out: np.ndarray) -> None:
    """:func:`numpy_normal_hops` value by value: the same draws and the same two roundings
    (a product, then a sum; never fused), so the same floats."""
    for i in range(out.shape[0]):
        delay = rng.standard_normal() * jitter_us + half_rtt_us
        out[i] = delay if delay >= 0.0 else 0.0


@cache
def normal_hops() -> Callable[[np.random.Generator, float, float, np.ndarray], None]:
    """The compiled :func:`compiled_normal_hops` (compiled or loaded from numba's cache on
    first use, so that what never draws hops never imports numba), or
    :func:`numpy_normal_hops` with the JIT off."""
    if JIT_ENABLED:
        return kernel_nogil(compiled_normal_hops)
    return numpy_normal_hops


def fault_rng(seed_key: object) -> np.random.Generator:
    """The fault stream of a run seeded by ``seed_key`` (an int or a list of ints)."""
    return np.random.default_rng([*np.atleast_1d(np.asarray(seed_key, dtype=np.int64)).tolist(),
                                  FAULT_STREAM])


def draw_faults(rng: np.random.Generator, duplicate: float, reorder: float,
                reorder_delay_us: float, copy: np.ndarray, extra: np.ndarray) -> None:
    """Fill ``copy`` (1 = duplicate the packet) and ``extra`` (a reordered packet's extra
    delay in us, 0 = in order) for one block of packets: duplication draws, then reordering
    draws, then the extra delays."""
    n = len(copy)
    copy[:] = rng.random(n) < duplicate
    late = rng.random(n) < reorder
    extra[:] = np.where(late, rng.exponential(reorder_delay_us, n), 0.0)
