"""The network's random draws, block by block, as both engines make them.

Hop delays and fault draws come in blocks of ``BLOCK`` from a run's own streams; the simpy
engine (:class:`sim.network.Network`, :class:`sim.network.Faults`) hands them out one by
one, the fast engine keeps them in arrays, and both, handling packets in the same order,
see the same delays, losses, copies and reorderings. A hop's delay is half the round trip
plus normal noise of standard deviation ``jitter_us`` (clipped at zero), negative when the
packet is lost (us).
"""

from __future__ import annotations

import numpy as np

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
            rng.standard_normal(out=block)
            block *= jitter_us
            block += half_rtt_us
            np.maximum(block, 0.0, out=block)
        else:
            block[:] = half_rtt_us
        if loss > 0:
            block[rng.random(len(block)) < loss] = -1.0


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
