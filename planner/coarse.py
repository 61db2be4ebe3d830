"""Coarse-grained locks for uniform workloads (paper section 4.5).

When popularity is flat, every lock has a small r_i and the switch's slots sit idle between
requests. Merging K neighbouring locks into one coarse lock (lock ``L`` -> ``L // K``) adds
their rates while the measured concurrency of the merged lock grows more slowly, so each
slot turns over more often. The price is false sharing: requests for different locks of
one group now queue behind each other, which the merged lock's measured c_i accounts for.
This module scores candidate K on a trace and picks the one the switch serves best.
"""

from __future__ import annotations

from dataclasses import dataclass

from netlock.geometry import SwitchGeometry
from netlock.plan import servers_needed
from netlock.trace import Trace
from planner.allocate import allocate, switch_rate
from planner.measure import measure

CANDIDATES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


@dataclass(frozen=True)
class CoarseOption:
    """The outcome of planning with ``group`` locks per coarse lock. Rates in rps."""

    group: int
    locks: int
    switch_rps: float
    server_rps: float
    servers_needed: int


def score_groups(trace: Trace, geometry: SwitchGeometry, slots: int, server_rate_rps: float,
                 statistic: str = "max",
                 candidates: tuple[int, ...] = CANDIDATES) -> list[CoarseOption]:
    """Knapsack outcome for every candidate group size."""
    capacities = tuple(geometry.priority_capacity(p) for p in range(geometry.priorities))
    out = []
    for group in candidates:
        stats = measure(trace, statistic, geometry.priorities, group)
        given = allocate(stats.rate_rps, stats.contention, stats.priority, slots, capacities)
        total = float(stats.rate_rps.sum())
        switch = min(switch_rate(stats.rate_rps, stats.contention, given), total)
        out.append(CoarseOption(group=group, locks=len(stats), switch_rps=switch,
                                server_rps=max(total - switch, 0.0),
                                servers_needed=servers_needed(total - switch, server_rate_rps)))
    return out


def best_group(options: list[CoarseOption]) -> CoarseOption:
    """Fewest servers; among those the smallest group within 0.1 % of the best switch rate."""
    fewest = min(o.servers_needed for o in options)
    pool = [o for o in options if o.servers_needed == fewest]
    top = max(o.switch_rps for o in pool)
    return min((o for o in pool if o.switch_rps >= top * 0.999), key=lambda o: o.group)
