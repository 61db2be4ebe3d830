"""A run's result tables, as both engines record them, and the statistics over them.

The clients record one row per granted request (each also a lock use, for the safety
checker), per committed transaction and per stale grant; both engines write rows of these
types (:class:`sim.recorder.Recorder` for the simpy engine, the fast engine's chunks).
Nothing here knows which lock manager produced the grants: a grant's ``source`` is an index
into the names the lock manager declares (``switch``, ``server`` for NetLock). The row types
live in :mod:`sim.core.rows` (without pandas) and are named here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from netlock.plan import PlanSummary, servers_needed
from sim.core.rows import HANDBACK_DTYPE as HANDBACK_DTYPE
from sim.core.rows import TXN_DTYPE as TXN_DTYPE
from sim.core.rows import TXN_FIELDS as TXN_FIELDS
from sim.core.rows import USE_DTYPE as USE_DTYPE
from sim.core.rows import USE_FIELDS as USE_FIELDS
from sim.core.rows import Table, column

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Latency:
    """Latency statistics in us; None (JSON null) each when nothing was granted: a run
    with no grant has no latency, and 0 would read as the best one."""

    mean: float | None
    p50: float | None
    p99: float | None
    p999: float | None

    @classmethod
    def of(cls, values: np.ndarray) -> Latency:
        if len(values) == 0:
            return cls(None, None, None, None)
        p50, p99, p999 = np.percentile(values, [50, 99, 99.9])
        return cls(float(values.mean()), float(p50), float(p99), float(p999))

    def to_dict(self) -> dict[str, float | None]:
        return {"mean": self.mean, "p50": self.p50, "p99": self.p99, "p999": self.p999}


def in_window(frame: pd.DataFrame, start_us: float, end_us: float) -> pd.DataFrame:
    """Rows with ``start_us <= t_us < end_us``."""
    t = frame["t_us"].to_numpy()
    return frame[(t >= start_us) & (t < end_us)]


def timeseries(requests: Table, txns: Table, end_us: float,
               bin_us: float, tenants: list[int]) -> pd.DataFrame:
    """Granted requests/s and transactions/s per tenant in bins of ``bin_us`` from time 0."""
    import pandas as pd

    n_bins = max(1, int(np.ceil(end_us / bin_us - 1e-9)))
    edges = np.arange(n_bins + 1) * bin_us
    rows = []
    for tenant in tenants:
        req_t = column(requests, "t_us")[column(requests, "tenant") == tenant]
        txn_t = column(txns, "t_us")[column(txns, "tenant") == tenant]
        req_counts = np.histogram(req_t, bins=edges)[0]
        txn_counts = np.histogram(txn_t, bins=edges)[0]
        rows.append(pd.DataFrame({
            "t_s": edges[:-1] / 1e6,
            "tenant": tenant,
            "granted_rps": req_counts / (bin_us / 1e6),
            "tps": txn_counts / (bin_us / 1e6),
        }))
    return pd.concat(rows, ignore_index=True)


def plan_predicted(plan: PlanSummary, total_rps: float, switch_rps: float,
                   server_rps: float) -> dict[str, Any]:
    """The plan's predicted rates (rps) and server count beside the measured ones, and
    measured / predicted per rate (None where the plan predicts 0), so that a run shows
    how far the plan it follows was from what the rack did. ``rates`` is where the plan's
    r_i came from (:class:`netlock.plan.PlanSummary`)."""
    measured = {"total_rps": total_rps, "switch_rps": switch_rps, "server_rps": server_rps,
                "servers_needed": servers_needed(server_rps, plan.server_rate)}
    predicted = {"total_rps": plan.total_rps, "switch_rps": plan.switch_rps,
                 "server_rps": plan.server_rps, "servers_needed": plan.servers_needed}
    ratio = {key: (measured[key] / predicted[key] if predicted[key] > 0 else None)
             for key in ("total_rps", "switch_rps", "server_rps")}
    return {**predicted, "rates": plan.rates, "measured": measured, "ratio": ratio}
