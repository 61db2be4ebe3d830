"""Slot counts c_i sized by the closed loop's occupancy of each lock, not the demand trace's.

Why: Algorithm 3 gives lock i min(c_i, what is left) slots, with c_i the most requests the
demand trace saw holding or waiting for it at once (:mod:`planner.measure`). A demand trace
holds a lock RTT + think; in the rack a transaction holds every lock until its last grant,
so a lock is held longer (the sketch TPC-C generator at one warehouse, think 100 us: 115 us
in the trace, 218 us simulated) and more requests meet on it than the trace's c_i. The
requests beyond its slots overflow: the switch forwards them to the lock server, which only
buffers them and pushes them back when the switch queue empties (paper section 4.3), so an
overflowed request waits for every holder, and its transaction for it.

The closed-loop model already gives the share that overflows (:mod:`planner.closedloop`):
its replay of the transactions (:mod:`planner.grant_recursion`) gives each lock's occupancy
L_i, the time-averaged number of requests holding or waiting for it (``Rates.occupancy``).
The sizing takes it at each lock's expected future rate, w_i L_i with w_i its expected
future requests per sampled one (:meth:`TxnSample.lock_weight`, the regression to the mean
the model's switch share already uses): most of a TPC-C trace's locks were drawn once or
twice, and a lock drawn twice in 1,102 transactions is not asked for twice as often as one
drawn once. Taking the requests on a lock as Poisson of that mean, the slot count at which a
share q of lock i's requests fit is

    c_i(q) = 1 + F^-1(q; w_i L_i),   F^-1 the Poisson quantile function,

and the sized count is max(c_i(trace), min(c_i(q), N)) with N the transaction contexts (a
context has at most one request on a lock in flight, so N slots always fit; the trace's c_i
stays the floor: what the trace saw at once can meet again). q is the contention
statistic's own level: ``pNN`` -> NN %, ``max`` -> :data:`QUANTILE_FOR_MAX`.

L_i depends on the allocation (a lock on the switch is handed over in two switch passes, on
a lock server in two server packets and a TX burst; where the other locks are changes every
transaction's waits), and the allocation (Algorithm 3 on the counts) on c_i. The sizing
iterates

    c^0 = c(trace),   c^(k+1) = max(c^k, c(q; L(allocate(c^k)))),

a ratchet: c^k never decreases and is bounded by max(c(trace), N), so it reaches a fixed
point in finitely many passes (each lock can only step up to N). Without the max the map
could cycle: raising c_i can push lock i off the switch (Algorithm 3 takes items by
r_i / c_i), its occupancy changes with its path, and a lowered c_i would bring it back to
overflow. :data:`PASSES` bounds the work (a solve is seconds on a 100K-request trace); on
TPC-C's traces (both generators, 1K-100K slots) it reached the fixed point in 2-4 passes.

Measured against the simulation (tests/sim/test_capacity.py's window, planner/README.md has
the tables): the sketch generator's fall with memory (tpcc-high, think 100 us, one server:
169,350 / 155,600 / 153,550 tps at 1K / 10K / 100K slots) becomes a rise (197,900 /
216,000 / 220,600). Two variants were measured and not kept. Sizing on the sampled rates
(w_i = 1) raises nearly every lock of the sketch's traces from 1 slot to 2 (a lock in 3 %
of transactions, held 218 us, finds another request on it 3 % of the time), so where the
memory does not hold them half the locks leave the switch for the lock servers; where the
servers are loaded that cost more than the overflow did (tpcc-low, two servers, 100K
slots: 484,750 -> 332,850 tps at think 0, 471,200 -> 331,750 at think 10 us). Placing the
raised counts only in the memory Algorithm 3 leaves free with the trace's c_i lost nothing
but left every plan below that memory as it was (155,600 tps at 10K). The model itself
prices the servers' CPU but not an overflowed request's wait for its queue to empty, so its
rate barely moves with the sizing (-35 % -> -54 % off at tpcc-high, think 100 us, 100K).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from planner.closedloop import RackTiming, TxnSample, solve
from planner.measure import parse_statistic

QUANTILE_FOR_MAX = 0.99
"""The share of a lock's closed-loop requests its slots should hold when c_i is the trace's
``max``: the trace's max has no closed-loop counterpart (a Poisson count is unbounded)."""
PASSES = 6
"""Allocate-solve passes at most (:func:`size_by_occupancy`)."""


def occupancy_contention(occupancy: np.ndarray, measured: np.ndarray, quantile: float,
                         most: int) -> np.ndarray:
    """Per item, max(measured c_i, min(1 + Poisson(L_i) quantile ``quantile``, ``most``))
    (int64): the slots at which a share ``quantile`` of its requests find a free one."""
    from scipy.stats import poisson

    need = poisson.ppf(quantile, np.maximum(np.asarray(occupancy, dtype=np.float64), 1e-12))
    need = np.minimum(np.nan_to_num(need, nan=most, posinf=most) + 1, most)
    return np.maximum(np.asarray(measured, dtype=np.int64), need.astype(np.int64))


def quantile_of(statistic: str) -> float:
    """The level c_i is sized at: a ``pNN`` statistic's own, :data:`QUANTILE_FOR_MAX` for
    ``max``."""
    level = parse_statistic(statistic)
    return QUANTILE_FOR_MAX if level is None else level


@dataclass(frozen=True, eq=False)
class Sized:
    """The fixed point: per item c_i and its slots; per dense lock of the sample its slots;
    the passes taken (``converged`` False when :data:`PASSES` ran out first)."""

    contention: np.ndarray
    slots: np.ndarray
    per_lock: np.ndarray
    passes: int
    converged: bool
    quantile: float
    raised: int
    """Items whose c_i the closed loop raised above the trace's."""

    def describe(self) -> tuple[str, ...]:
        """The plan's warning saying what the sizing changed (none when nothing)."""
        if not self.raised:
            return ()
        return (f"c_i of {self.raised:,} locks raised from the trace's to the "
                f"{self.quantile:.3g} quantile of their closed-loop occupancy ({self.passes} "
                f"allocation pass(es){'' if self.converged else ', not converged'}; "
                f"planner/occupancy.py)",)


def size_by_occupancy(measured: np.ndarray, item_lock: np.ndarray, sample: TxnSample,
                      rack: RackTiming, allocate_items: Callable[[np.ndarray], np.ndarray],
                      quantile: float, passes: int = PASSES) -> Sized:
    """The ratchet of the module doc. ``measured`` is the trace's c_i per item,
    ``item_lock`` each item's dense lock in ``sample`` and ``allocate_items(c)`` Algorithm 3's
    slots per item for counts ``c``; the model is solved with the rack's lock servers and
    each lock's occupancy taken at its expected future rate (:meth:`TxnSample.lock_weight`)."""
    weight = sample.lock_weight()[item_lock]
    contention = np.asarray(measured, dtype=np.int64)
    slots = allocate_items(contention)
    per_lock = _per_lock(slots, item_lock, len(sample.lock_ids))
    taken, converged = 0, False
    while taken < passes:
        taken += 1
        occupancy = solve(sample, rack, per_lock).occupancy[item_lock] * weight
        sized = np.maximum(contention, occupancy_contention(occupancy, measured, quantile,
                                                            max(rack.clients, 1)))
        if np.array_equal(sized, contention):
            converged = True
            break
        contention = sized
        slots = allocate_items(contention)
        per_lock = _per_lock(slots, item_lock, len(sample.lock_ids))
    return Sized(contention, slots, per_lock, taken, converged, quantile,
                 int(np.count_nonzero(contention > measured)))


def _per_lock(slots: np.ndarray, item_lock: np.ndarray, locks: int) -> np.ndarray:
    per_lock = np.zeros(locks)
    np.add.at(per_lock, item_lock, slots)
    return per_lock
