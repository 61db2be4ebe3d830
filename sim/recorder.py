"""The simpy engine's recorder: the probe its clients write what they saw to.

One row per granted request, per committed transaction and per stale grant, of the types
:mod:`sim.core.metrics` gives every engine's results. It stores compact typed arrays
(``array.array``) so a long run does not hold millions of Python objects.
"""

from __future__ import annotations

from array import array
from itertools import chain

import numpy as np
import pandas as pd

from sim.core.metrics import HANDBACK_DTYPE, TXN_DTYPE, TXN_FIELDS, USE_DTYPE, USE_FIELDS


class Recorder:
    """What the clients saw, as flat float64 arrays of fixed-width rows. Times in us.

    Clients hand rows over as tuples (``add_use``, ``add_txn``: a list append, the
    cheapest thing Python does); :meth:`flush` packs them into the arrays. The model
    flushes between slices of simulated time, so the tuples never pile up.
    """

    def __init__(self) -> None:
        self.uses = array("d")
        self.txns = array("d")
        self._use_rows: list[tuple] = []
        self._txn_rows: list[tuple] = []
        self.add_use = self._use_rows.append
        self.add_txn = self._txn_rows.append
        self.retries = 0
        self.stale_grants = 0
        self.denied = 0
        """Attempts given up because the lock manager refused one of their locks."""
        self.ignored_grants = 0
        """Copies of grants a client already held (a duplicating network)."""
        self.open_waits: list[tuple[int, float, float]] = []
        """At the end of a run: ``(lock, asked_us, end_us)`` of each lock a transaction
        still waited for (for the liveness checker)."""
        self.handbacks: list[tuple[float, int]] = []
        """``(t_us, lock)`` of each stale grant (``HANDBACK_DTYPE``)."""

    def flush(self) -> None:
        """Move the rows handed over since the last flush into the arrays (through a list:
        ``array.fromlist`` takes a list about twice as fast as ``extend`` takes an iterator)."""
        self.uses.fromlist(list(chain.from_iterable(self._use_rows)))
        self.txns.fromlist(list(chain.from_iterable(self._txn_rows)))
        self._use_rows.clear()
        self._txn_rows.clear()

    @property
    def committed(self) -> int:
        """Committed transactions recorded so far (flushed or not)."""
        return len(self.txns) // len(TXN_FIELDS) + len(self._txn_rows)

    @property
    def granted(self) -> int:
        """Granted requests recorded so far (flushed or not)."""
        return len(self.uses) // len(USE_FIELDS) + len(self._use_rows)

    def _rows(self, data: array, fields: tuple[str, ...]) -> np.ndarray:
        return np.frombuffer(data, dtype=np.float64).reshape(-1, len(fields))

    def requests_frame(self) -> pd.DataFrame:
        """Granted requests (``USE_FIELDS``), typed as ``USE_DTYPE``."""
        return typed_frame(self._rows(self.uses, USE_FIELDS), USE_DTYPE)

    def txns_frame(self) -> pd.DataFrame:
        """Committed transactions (``TXN_FIELDS``), typed as ``TXN_DTYPE``."""
        return typed_frame(self._rows(self.txns, TXN_FIELDS), TXN_DTYPE)

    def handbacks_frame(self) -> pd.DataFrame:
        """Stale grants, typed as ``HANDBACK_DTYPE``."""
        return pd.DataFrame(np.array(self.handbacks, dtype=HANDBACK_DTYPE))


def typed_frame(rows: np.ndarray, dtype: np.dtype) -> pd.DataFrame:
    """A frame of float64 ``rows`` (one column per field of ``dtype``), typed as ``dtype``."""
    return pd.DataFrame({name: rows[:, j].astype(dtype[name])
                         for j, name in enumerate(dtype.names)})
