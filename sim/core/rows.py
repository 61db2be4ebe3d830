"""The rows both engines record and the transactions a simpy client draws at once: what a
run allocates per grant and per client, in a module without pandas or the engines, so that
the memory estimate (:mod:`sim.footprint`, read by ``netlock config check``) takes them from
here as the engines do. :mod:`sim.core.metrics` holds the statistics over these rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

TXN_BATCH = 512
"""Transactions a simpy client (:mod:`sim.client_inputs`) draws from the workload at once."""
USE_FIELDS = ("t_us", "latency_us", "tenant", "source", "lock", "mode", "end_us", "client",
              "asked_us")
"""One row per granted request, written when the client stops using the lock: when the
grant arrived, how long after the request was made, the tenant, which lock-manager
component granted it, the lock and mode, when the use ended, the client, and when its
transaction first asked for the lock (its first attempt's start)."""
TXN_FIELDS = ("t_us", "latency_us", "tenant", "locks", "client")
"""One row per committed transaction: commit time, latency from its first attempt, tenant,
lock count, client."""
USE_DTYPE = np.dtype([("t_us", np.float64), ("latency_us", np.float64), ("tenant", np.int32),
                      ("source", np.int8), ("lock", np.int64), ("mode", np.int8),
                      ("end_us", np.float64), ("client", np.int32), ("asked_us", np.float64)])
"""The type of each ``USE_FIELDS`` column in results (packed: one row is 50 bytes)."""
TXN_DTYPE = np.dtype([("t_us", np.float64), ("latency_us", np.float64), ("tenant", np.int32),
                      ("locks", np.int32), ("client", np.int32)])
"""The type of each ``TXN_FIELDS`` column in results."""
HANDBACK_DTYPE = np.dtype([("t_us", np.float64), ("lock", np.int64)])
"""One row per grant that reached a client no longer waiting for it (its attempt given up):
when it arrived and the lock. The lock manager did grant the lock then (the client hands it
back at once); the liveness checker counts that instant as the lock granted."""


class Columns:
    """A recorded table as named numpy columns of one length: what a run's summary reads
    (``table[name]``, ``len(table)``), without pandas. Its DataFrame (:meth:`frame`) is made
    only when asked for: importing pandas and pyarrow is about a quarter of a short fast
    run's CPU (issue 32), and a run reported by its summary alone never needs them."""

    __slots__ = ("columns", "rows")

    def __init__(self, columns: dict[str, np.ndarray], rows: int | None = None) -> None:
        self.columns = columns
        self.rows = len(next(iter(columns.values()))) if rows is None else rows

    @classmethod
    def of_records(cls, records: np.ndarray) -> Columns:
        """The fields of a structured array, each a column (views, not copies)."""
        return cls({name: records[name] for name in records.dtype.names}, len(records))

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def __len__(self) -> int:
        return self.rows

    def frame(self) -> pd.DataFrame:
        """The table as a DataFrame over the same arrays (not copied)."""
        import pandas as pd

        return pd.DataFrame(self.columns, copy=False)


Table: TypeAlias = "Columns | pd.DataFrame"
"""A recorded table as the summary reads it: :class:`Columns`, or a DataFrame of them."""


def column(table: Table, name: str) -> np.ndarray:
    """Column ``name`` of ``table`` as a numpy array (a DataFrame's without a copy)."""
    return np.asarray(table[name])
