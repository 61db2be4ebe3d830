"""The simpy engine's recorder: the probe its clients write what they saw to.

One row per granted request, per committed transaction and per stale grant, of the types
:mod:`sim.core.metrics` gives every engine's results. It stores compact float64 arrays so a
long run does not hold millions of Python objects.
"""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from sim.core.rows import HANDBACK_DTYPE, TXN_DTYPE, TXN_FIELDS, USE_DTYPE, USE_FIELDS, Columns

if TYPE_CHECKING:
    import pandas as pd


class Recorder:
    """What the clients saw, as float64 arrays of fixed-width rows. Times in us.

    Clients hand rows over as tuples (``add_use``, ``add_txn``: a list append, the
    cheapest thing Python does); :meth:`flush` packs them into arrays. The model
    flushes between short slices of simulated time, so the tuples never pile up and are
    still in the CPU's cache when they are packed.
    """

    def __init__(self) -> None:
        self._uses = Chunks(len(USE_FIELDS))
        self._txns = Chunks(len(TXN_FIELDS))
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
        """``(lock, asked_us, end_us)`` of each wait no grant ended (for the liveness
        checker): at the end of a run, each lock a transaction still waited for; and for
        clients that take locks one at a time, the acquire in flight when an attempt was
        given up (:mod:`sim.clients`)."""
        self.handbacks: list[tuple[float, int]] = []
        """``(t_us, lock)`` of each stale grant (``HANDBACK_DTYPE``)."""

    def flush(self) -> None:
        """Move the rows handed over since the last flush into the arrays."""
        self._uses.add(self._use_rows)
        self._txns.add(self._txn_rows)
        self._use_rows.clear()
        self._txn_rows.clear()

    @property
    def committed(self) -> int:
        """Committed transactions recorded so far (flushed or not)."""
        return self._txns.rows + len(self._txn_rows)

    @property
    def granted(self) -> int:
        """Granted requests recorded so far (flushed or not)."""
        return self._uses.rows + len(self._use_rows)

    def requests_columns(self) -> Columns:
        """Granted requests (``USE_FIELDS``), typed as ``USE_DTYPE``."""
        return typed_columns(self._uses.array(), USE_DTYPE)

    def txns_columns(self) -> Columns:
        """Committed transactions (``TXN_FIELDS``), typed as ``TXN_DTYPE``."""
        return typed_columns(self._txns.array(), TXN_DTYPE)

    def handbacks_columns(self) -> Columns:
        """Stale grants, typed as ``HANDBACK_DTYPE``."""
        return Columns.of_records(np.array(self.handbacks, dtype=HANDBACK_DTYPE))

    def requests_frame(self) -> pd.DataFrame:
        """:meth:`requests_columns` as a DataFrame."""
        return self.requests_columns().frame()

    def txns_frame(self) -> pd.DataFrame:
        """:meth:`txns_columns` as a DataFrame."""
        return self.txns_columns().frame()

    def handbacks_frame(self) -> pd.DataFrame:
        """:meth:`handbacks_columns` as a DataFrame."""
        return self.handbacks_columns().frame()


class Chunks:
    """Rows of ``width`` float64 fields, kept as the arrays each flush made."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.rows = 0
        self._chunks: list[np.ndarray] = [np.empty((0, width))]

    def add(self, rows: list[tuple]) -> None:
        """Append ``rows`` (tuples of ``width`` numbers). ``np.fromiter`` with a known count
        packs them about 1.6x faster than ``array.fromlist`` of a flattened list."""
        if rows:
            flat = np.fromiter(chain.from_iterable(rows), np.float64,
                               count=len(rows) * self.width)
            self._chunks.append(flat.reshape(-1, self.width))
            self.rows += len(rows)

    def array(self) -> np.ndarray:
        """Every row so far, one array (the chunks are joined once and kept joined)."""
        if len(self._chunks) > 1:
            self._chunks = [np.concatenate(self._chunks)]
        return self._chunks[0]


def typed_columns(rows: np.ndarray, dtype: np.dtype) -> Columns:
    """The columns of float64 ``rows`` (one per field of ``dtype``), typed as ``dtype``."""
    return Columns({name: rows[:, j].astype(dtype[name]) for j, name in enumerate(dtype.names)},
                   len(rows))
