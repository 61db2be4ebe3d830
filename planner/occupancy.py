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
the requests holding or waiting for lock i are Poisson with mean

    L_i = lam_X,i (H_X,i + h_i + w_X,i) + lam_S,i (H_S,i + w_S,i)

(Little's law per mode, ``Rates.occupancy``), and a request finds a free one of s_i slots
with probability P(N <= s_i - 1), N ~ Poisson(L_i) (PASTA; ``_fits``). So the slot count at
which a share q of lock i's requests fit is

    c_i(q) = 1 + F^-1(q; L_i),   F^-1 the Poisson(L_i) quantile function,

and the sized count is max(c_i(trace), min(c_i(q), N)) with N the transaction contexts (a
context has at most one request on a lock in flight, so N slots always fit; the trace's c_i
stays the floor: what the trace saw at once can meet again). q is the contention
statistic's own level: ``pNN`` -> NN %, ``max`` -> :data:`QUANTILE_FOR_MAX`.

L_i depends on the allocation (a lock on the switch is handed over in two switch passes, on
a lock server in two server packets and a TX burst; where the other locks are changes every
transaction's waits), and the allocation on c_i. The sizing iterates

    c^0 = c(trace),   c^(k+1) = max(c^k, c(q; L(allocate(c^k)))),

with ``allocate`` the allocation of :func:`within_spare` (below): a ratchet. c^k never
decreases and is bounded by max(c(trace), N), so it reaches a fixed point in finitely many
passes (each lock can only step up to N). Without the max the map could cycle: raising
c_i can change where lock i and the others live, its occupancy changes with its path, and
a lowered c_i would bring its overflow back. :data:`PASSES` bounds the work (a solve is
seconds on a 100K-request trace); on TPC-C's traces (both generators, 1K-100K slots) it
reached the fixed point in 2-3 passes.

Where the raised counts go: only into the memory Algorithm 3 leaves free with the trace's
c_i (:func:`within_spare`). Letting them into Algorithm 3 itself (knapsack by r_i / c_i on
the raised counts) was measured and not kept. On the sketch generator's TPC-C nearly every
lock's c_i goes from 1 to 2 (a lock in 3 % of transactions, held 218 us, finds another
request on it 3 % of the time), so half the locks leave the switch for the lock servers,
trading overflow for the servers' CPU. The model prices that CPU but not an overflowed
request's wait for its whole queue to empty (it routes overflow through the server path
and no more), so it cannot weigh the two, and the simulation (tests/sim/test_capacity.py's
window) went both ways: at tpcc-high, think 100 us, one server, 169,350 / 155,600 /
153,550 tps at 1K / 10K / 100K slots became 197,250 / 216,850 / 224,400, but at tpcc-low,
two servers, 100K slots 484,750 became 332,850 tps at think 0 and 471,200 became 331,750 at
think 10 us (its plan's prediction from -11 % to +17 % off). Guarding it by the model's
own bound (keep the trace's c_i where the lock servers bind) did not help: at think 10 us
the model's servers were not its bound. Within the free memory no lock moves to the
servers: at 100K slots the fall at tpcc-high, think 100 us is gone (222,100 tps, 981 locks
overflowing where 2,514 did), tpcc-low at two servers does not lose (488,500 and 479,650
tps), and where Algorithm 3 leaves no memory free, below the trace's sum of c_i (79K-86K
slots on the sketch generator's traces, 56K-65K on DSLR's), plans are as before (so
155,600 tps at 10K stays). On DSLR's TPC-C it raises 6-10 locks at 100K slots and changes
no rate by more than a point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from planner.allocate import allocate, fill, knapsack_order
from planner.closedloop import RackTiming, TxnSample, solve
from planner.measure import parse_statistic

QUANTILE_FOR_MAX = 0.99
"""The share of a lock's closed-loop requests its slots should hold when c_i is the trace's
``max``: the trace's max has no closed-loop counterpart (a Poisson count is unbounded)."""
PASSES = 4
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


def within_spare(rate_rps: np.ndarray, measured: np.ndarray, priority: np.ndarray,
                 budget: int, capacities: tuple[int, ...], policy: str = "knapsack",
                 seed: int = 0) -> Callable[[np.ndarray], np.ndarray]:
    """Slots per item for counts c: Algorithm 3's allocation on the trace's c_i
    (``measured``), then the slots it leaves free, per priority class, to the items it holds
    wholly, up to c_i each, by decreasing r_i / c_i (:func:`planner.allocate.fill`). No item
    the trace's allocation holds is left to the lock servers."""
    measured = np.asarray(measured, dtype=np.int64)
    base = allocate(rate_rps, measured, priority, budget, capacities, policy, seed)
    whole = base >= measured
    used = np.bincount(priority, weights=base, minlength=len(capacities))
    left = tuple(int(cap - used[p]) for p, cap in enumerate(capacities))
    spare = int(budget - base.sum())

    def items(counts: np.ndarray) -> np.ndarray:
        extra = np.where(whole, np.maximum(counts - measured, 0), 0)
        if spare <= 0 or not extra.any():
            return base
        return base + fill(knapsack_order(rate_rps, counts), extra, priority, spare, left)

    return items


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
    """Items given more slots than the trace's c_i."""
    wanted: int
    """Items whose closed-loop count exceeds the trace's c_i (raised where memory was free)."""

    def describe(self) -> tuple[str, ...]:
        """The plan's warning saying what the sizing changed (none when nothing wanted)."""
        if not self.wanted:
            return ()
        return (f"{self.wanted:,} locks need more slots than the trace's c_i to hold the "
                f"{self.quantile:.3g} quantile of their closed-loop occupancy; the memory "
                f"Algorithm 3 left free raised {self.raised:,} of them ({self.passes} "
                f"allocation pass(es){'' if self.converged else ', not converged'}; "
                f"planner/occupancy.py)",)


def size_by_occupancy(measured: np.ndarray, item_lock: np.ndarray, sample: TxnSample,
                      rack: RackTiming, allocate_items: Callable[[np.ndarray], np.ndarray],
                      quantile: float, passes: int = PASSES) -> Sized:
    """The ratchet of the module doc. ``measured`` is the trace's c_i per item,
    ``item_lock`` each item's dense lock in ``sample`` and ``allocate_items(c)`` the slots per
    item for counts ``c`` (:func:`within_spare`); the model is solved with the rack's lock
    servers. The plan's c_i are the counts its slots hold: max(trace c_i, slots)."""
    target = np.asarray(measured, dtype=np.int64)
    slots = allocate_items(target)
    per_lock = _per_lock(slots, item_lock, len(sample.lock_ids))
    taken, converged = 0, False
    while taken < passes:
        taken += 1
        occupancy = solve(sample, rack, per_lock).occupancy[item_lock]
        sized = np.maximum(target, occupancy_contention(occupancy, measured, quantile,
                                                        max(rack.clients, 1)))
        if np.array_equal(sized, target):
            converged = True
            break
        target = sized
        slots = allocate_items(target)
        per_lock = _per_lock(slots, item_lock, len(sample.lock_ids))
    held = np.maximum(np.asarray(measured, dtype=np.int64), slots)
    return Sized(held, slots, per_lock, taken, converged, quantile,
                 int(np.count_nonzero(held > measured)),
                 int(np.count_nonzero(target > measured)))


def _per_lock(slots: np.ndarray, item_lock: np.ndarray, locks: int) -> np.ndarray:
    per_lock = np.zeros(locks)
    np.add.at(per_lock, item_lock, slots)
    return per_lock
