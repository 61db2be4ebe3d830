"""Max-min fair rates of flows on links (progressive filling).

This is the sharing a flow-level model gives long-lived TCP flows: every flow's rate is
limited by some saturated link on its path on which no other flow gets more. NetStore's
least-bottlenecked-path choice approximates the same allocation (section 3.1, which names
global max-min fairness as the fair share it stands in for).
"""

from __future__ import annotations

import numpy as np

_TIE = 1e-12


def max_min_rates(flow_of: np.ndarray, link_of: np.ndarray, flows: int,
                  capacity: np.ndarray) -> np.ndarray:
    """The max-min fair rate of each flow (the unit of ``capacity``, e.g. bits/s).

    The flows' paths are given as pairs: entry ``i`` says flow ``flow_of[i]`` crosses link
    ``link_of[i]``; a flow crosses each link at most once and every flow crosses at least
    one link. Progressive filling: the link whose remaining capacity per unfrozen flow is
    least fixes that share for all of its unfrozen flows, whose rates then leave the other
    links on their paths; repeated until every flow is fixed (at most one round per link).
    """
    rate = np.zeros(flows)
    frozen = np.zeros(flows, dtype=bool)
    remaining = np.asarray(capacity, dtype=np.float64).copy()
    links = len(remaining)
    while not frozen.all():
        live = ~frozen[flow_of]
        count = np.bincount(link_of[live], minlength=links)
        used = count > 0
        share = np.full(links, np.inf)
        share[used] = np.maximum(remaining[used], 0.0) / count[used]
        level = share.min()
        bottleneck = share <= level * (1.0 + _TIE)
        hit = np.bincount(flow_of[live], weights=bottleneck[link_of[live]], minlength=flows)
        fixed = (hit > 0) & ~frozen
        rate[fixed] = level
        remaining -= level * np.bincount(link_of[fixed[flow_of]], minlength=links)
        frozen |= fixed
    return rate
