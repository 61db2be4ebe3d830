"""Replay of a recorded trace (docs/formats.md format) as the clients' transactions.

The trace's rows are grouped into transactions by ``txn_id`` (a lock appearing twice in one
transaction is requested once, exclusive if any row is), ordered by their first
``t_request``. Trace client ``k`` is played by simulated client ``k % workload.clients``;
each client replays its transactions in order and starts over when it runs out. Timing
comes from the simulation (closed loop, ``workload.think_time_us``), not from the trace's
timestamps: the trace says what is locked together, the model says how fast.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from netlock.errors import TraceError
from netlock.trace import read_trace, trace_format
from sim.workloads.base import TxnBatch, as_client_ids


class TraceWorkload:
    """Transactions of a trace file, per simulated client, in trace order."""

    def __init__(self, lock_ids: np.ndarray, modes: np.ndarray, offsets: np.ndarray,
                 owners: np.ndarray, clients: int, source: str) -> None:
        self.source = source
        self._locks = lock_ids
        self._modes = modes
        self._offsets = offsets
        self._n_locks = int(lock_ids.max()) + 1 if len(lock_ids) else 1
        self._by_client = [np.flatnonzero(owners == c) for c in range(clients)]
        self._cursor = [0] * clients
        empty = [c for c, txns in enumerate(self._by_client) if len(txns) == 0]
        if empty:
            raise TraceError(f"{source}: simulated client {empty[0]} gets no transaction "
                             f"(the trace has fewer client_ids than workload.clients = "
                             f"{clients}); lower workload.clients")

    @classmethod
    def from_file(cls, path: str | Path, clients: int) -> TraceWorkload:
        trace = read_trace(path)
        columns = ["client_id", "txn_id"]
        if trace_format(Path(path)) == "csv":
            ids = pd.read_csv(path, usecols=columns)
        else:
            ids = pd.read_parquet(path, columns=columns)
        frame = pd.DataFrame({"txn": id_column(ids, "txn_id", path),
                              "client": id_column(ids, "client_id", path),
                              "lock": trace.lock_id, "mode": trace.mode,
                              "t": trace.t_request})
        first = frame.groupby("txn")["t"].transform("min")
        frame = frame.assign(first=first)
        merged = (frame.groupby(["first", "txn", "lock"], sort=True)
                  .agg(mode=("mode", "max"), client=("client", "first")).reset_index())
        starts = np.flatnonzero(np.r_[True, merged["txn"].to_numpy()[1:]
                                      != merged["txn"].to_numpy()[:-1]])
        offsets = np.r_[starts, len(merged)].astype(np.int64)
        owners = merged["client"].to_numpy()[starts] % clients
        return cls(merged["lock"].to_numpy(np.int64), merged["mode"].to_numpy(np.int8),
                   offsets, owners, clients, str(path))

    @property
    def n_locks(self) -> int:
        return self._n_locks

    def next_txn(self, client_id: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        batch = self.sample_txns(1, rng, np.array([client_id]))
        return batch.txn(0)

    def sample_txns(self, n: int, rng: np.random.Generator,
                    client_ids: np.ndarray | None = None) -> TxnBatch:
        """The next ``n`` transactions of the given clients, in each client's trace order."""
        clients = as_client_ids(n, client_ids) % len(self._by_client)
        picks = np.empty(n, dtype=np.int64)
        for j, c in enumerate(clients.tolist()):
            own = self._by_client[c]
            picks[j] = own[self._cursor[c] % len(own)]
            self._cursor[c] += 1
        sizes = self._offsets[picks + 1] - self._offsets[picks]
        offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
        index = np.concatenate([np.arange(self._offsets[p], self._offsets[p + 1])
                                for p in picks.tolist()]) if n else np.zeros(0, np.int64)
        return TxnBatch(lock_ids=self._locks[index], modes=self._modes[index],
                        offsets=offsets, client_ids=clients)

    def describe(self) -> str:
        return (f"trace replay of {self.source}: {len(self._offsets) - 1} transactions over "
                f"{self._n_locks} lock ids")


MAX_ID = 2**53
"""Transaction and client ids are integers in [0, 2^53]: exact in every reader's floats."""


def id_column(frame: pd.DataFrame, column: str, path: str | Path) -> np.ndarray:
    """``frame[column]`` as int64 ids, or a TraceError naming the file, row (0-based data
    row, as :mod:`netlock.trace` counts) and field of the first value that is not a whole
    number in [0, 2^53]."""
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(np.float64)
    bad = ~(np.isfinite(values) & (values >= 0) & (values <= MAX_ID)
            & (values == np.floor(values)))
    if bad.any():
        row = int(np.argmax(bad))
        value = frame[column].iloc[row]
        shown = repr(value) if isinstance(value, str) else str(value)
        raise TraceError(f"{path}: row {row}: {column}: must be a whole number in "
                         f"[0, 2^53], got {shown}")
    return values.astype(np.int64)
