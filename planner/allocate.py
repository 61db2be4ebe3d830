"""Switch memory allocation: Algorithm 3 (knapsack by r_i / c_i), the random baseline, and
the even split the authors' controller gives the microbenchmarks.

The problem (paper section 4.3): maximise sum r_i s_i / c_i subject to sum s_i <= S and
0 <= s_i <= c_i. With priorities, each priority class also has its own stages, so the
slots of class p are further bounded by that class's capacity C_p. These bounds form a
laminar family, so the feasible set is a polymatroid and the greedy rule stays optimal:
visit items by decreasing r_i / c_i and give each min(c_i, slots left in the switch,
slots left in its class). Both passes are vectorised cumulative sums.

``even`` is not an optimisation: it is what the authors' controller installs for the
shared and exclusive microbenchmarks (netx-repo/NetLock
switch_code/netlock/controller_init/test.py, lines 395-430: ``qs = slot_num / tot_lk``
slots for each of the benchmark's ``tot_lk`` locks, whatever their contention), so an open
loop, whose concurrency on a lock no warm-up of another rack measures, never overflows.
"""

from __future__ import annotations

import numpy as np

POLICIES = ("knapsack", "random", "even")


def knapsack_order(rate_rps: np.ndarray, contention: np.ndarray) -> np.ndarray:
    """Items by decreasing value r_i / c_i; ties keep the input (lock id) order."""
    return np.argsort(-(rate_rps / contention), kind="stable")


def random_order(n: int, seed: int) -> np.ndarray:
    """The baseline: items in a random order (the seed makes it repeatable)."""
    return np.random.default_rng(seed).permutation(n)


def fill(order: np.ndarray, contention: np.ndarray, priority: np.ndarray, budget: int,
         capacities: tuple[int, ...]) -> np.ndarray:
    """Slots per item when items take min(c_i, what is left) in ``order``.

    ``budget`` bounds the total, ``capacities[p]`` the slots of priority class ``p``.
    """
    c = contention[order]
    if len(capacities) == 1:
        want = np.clip(capacities[0] - (np.cumsum(c) - c), 0, c)
    else:
        p = priority[order]
        want = np.empty_like(c)
        for cls, cap in enumerate(capacities):
            mask = p == cls
            before = np.cumsum(c[mask]) - c[mask]
            want[mask] = np.clip(cap - before, 0, c[mask])
    before = np.cumsum(want) - want
    given = np.clip(budget - before, 0, want)
    slots = np.empty_like(given)
    slots[order] = given
    return slots


def allocate(rate_rps: np.ndarray, contention: np.ndarray, priority: np.ndarray,
             budget: int, capacities: tuple[int, ...], policy: str = "knapsack",
             seed: int = 0) -> np.ndarray:
    """Slots s_i per item (int64) under ``policy``; see :func:`fill` for the bounds (``even``
    gives every item ``budget // items`` slots, or one each to the first ``budget`` items
    when there are more items than slots, ignoring c_i; class capacities still bound it)."""
    if policy == "even":
        n = len(rate_rps)
        share = np.full(n, max(budget // n, 1) if n else 0, dtype=np.int64)
        return fill(np.arange(n), share, np.asarray(priority), budget, capacities)
    if policy == "knapsack":
        order = knapsack_order(rate_rps, contention)
    elif policy == "random":
        order = random_order(len(rate_rps), seed)
    else:
        raise ValueError(f"policy: must be one of {', '.join(POLICIES)}, got {policy!r}")
    return fill(order, np.asarray(contention, dtype=np.int64), np.asarray(priority), budget,
                capacities)


def switch_rate(rate_rps: np.ndarray, contention: np.ndarray, slots: np.ndarray) -> float:
    """The objective sum r_i s_i / c_i: the request rate the switch guarantees, rps."""
    return float(np.sum(rate_rps * (slots / contention)))


def server_load_rps(rate_rps: np.ndarray, contention: np.ndarray,
                    slots: np.ndarray) -> np.ndarray:
    """Per item, the rate the switch leaves to the lock servers, r_i (1 - min(s_i, c_i) / c_i)
    (rps): what the lock-id ranges of :mod:`planner.partition` balance."""
    return rate_rps * (1.0 - np.minimum(slots, contention) / contention)
