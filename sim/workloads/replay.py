"""Replay of a recorded trace (docs/formats.md format) as the clients' transactions.

The trace's rows are grouped into transactions by ``txn_id`` (a lock appearing twice in one
transaction is requested once, exclusive if any row is), ordered by their first
``t_request``. Trace client ``k`` is played by simulated client ``k % workload.clients``;
each client replays its transactions in that order.

``workload.replay: timed`` (the default) keeps the trace's timing (:func:`replay_timing`):
a transaction starts no earlier than its recorded start and holds its locks for its
recorded hold, and a client stops when its transactions are done (the run's measured window
then ends with the trace's last commit, :mod:`sim.core.result`). ``loop`` drops the
timestamps: the clients run closed loop (``workload.think_time_us``) and start over when
they run out, so the trace says what is locked together and the model says how fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from netlock.errors import TraceError
from netlock.trace import read_trace, trace_format
from sim.workloads.base import TxnBatch, as_client_ids

if TYPE_CHECKING:
    import pandas as pd

NONE_LEFT = np.inf
"""The start of a client's transaction past its last one: never."""


def replay_timing(first_s: np.ndarray, last_s: np.ndarray, release_s: np.ndarray,
                  round_trip_us: float) -> tuple[np.ndarray, np.ndarray]:
    """Each transaction's earliest start and hold in a timed replay (us), from its rows'
    first and last ``t_request`` and last ``t_release`` (s).

    Start: its first ``t_request`` less the trace's first ``t_request`` (the replay's time 0
    is the trace's first request). Hold, from its last grant to its release: its last
    ``t_release`` less its last ``t_request``, less ``round_trip_us``, the client's round trip
    (:attr:`netlock.config.Config.client_rtt_us`), at least 0. The recorded interval from
    a request to the release holds the request's trip to the lock manager and the grant's
    way back (the trace generator's ``hold_time_us`` counts that round trip), which the
    simulator models itself, and any wait the recorded run had (so a trace recorded under
    contention gets holds too long by its waits). Uncontended, the replayed transaction then
    releases when the recorded one did: start + its requests' NIC gaps + the round trip +
    the hold = its last ``t_release``.
    """
    start_us = (first_s - first_s.min()) * 1e6 if len(first_s) else first_s * 1e6
    hold_us = np.maximum((release_s - last_s) * 1e6 - round_trip_us, 0.0)
    return start_us, hold_us


class TraceWorkload:
    """Transactions of a trace file, per simulated client, in trace order; with ``start_us``
    and ``hold_us`` (per transaction, :func:`replay_timing`) a timed replay, else a loop."""

    def __init__(self, lock_ids: np.ndarray, modes: np.ndarray, offsets: np.ndarray,
                 owners: np.ndarray, clients: int, source: str,
                 start_us: np.ndarray | None = None, hold_us: np.ndarray | None = None,
                 txn_ids: np.ndarray | None = None) -> None:
        self.source = source
        self._locks = lock_ids
        self._modes = modes
        self._offsets = offsets
        self._start = start_us
        self._hold = hold_us
        self._txn_ids = txn_ids
        self._n_locks = int(lock_ids.max()) + 1 if len(lock_ids) else 1
        self._by_client = [np.flatnonzero(owners == c) for c in range(clients)]
        self._cursor = [0] * clients
        empty = [c for c, txns in enumerate(self._by_client) if len(txns) == 0]
        if empty:
            raise TraceError(f"{source}: simulated client {empty[0]} gets no transaction "
                             f"(the trace has fewer client_ids than workload.clients = "
                             f"{clients}); lower workload.clients")

    @classmethod
    def from_file(cls, path: str | Path, clients: int,
                  round_trip_us: float | None = None) -> TraceWorkload:
        """The trace at ``path`` for ``clients`` clients: a timed replay whose holds leave out
        a ``round_trip_us`` round trip (:func:`replay_timing`), or with None a loop."""
        import pandas as pd

        trace = read_trace(path)
        columns = ["client_id", "txn_id"]
        if trace_format(Path(path)) == "csv":
            ids = pd.read_csv(path, usecols=columns)
        else:
            ids = pd.read_parquet(path, columns=columns)
        frame = pd.DataFrame({"txn": id_column(ids, "txn_id", path),
                              "client": id_column(ids, "client_id", path),
                              "lock": trace.lock_id, "mode": trace.mode,
                              "t": trace.t_request, "release": trace.t_release})
        first = frame.groupby("txn")["t"].transform("min")
        frame = frame.assign(first=first)
        merged = (frame.groupby(["first", "txn", "lock"], sort=True)
                  .agg(mode=("mode", "max"), client=("client", "first")).reset_index())
        starts = np.flatnonzero(np.r_[True, merged["txn"].to_numpy()[1:]
                                      != merged["txn"].to_numpy()[:-1]])
        offsets = np.r_[starts, len(merged)].astype(np.int64)
        owners = merged["client"].to_numpy()[starts] % clients
        txn_ids = merged["txn"].to_numpy()[starts]
        start_us = hold_us = None
        if round_trip_us is not None:
            per_txn = frame.groupby("txn").agg(first=("t", "min"), last=("t", "max"),
                                               release=("release", "max")).loc[txn_ids]
            start_us, hold_us = replay_timing(per_txn["first"].to_numpy(),
                                              per_txn["last"].to_numpy(),
                                              per_txn["release"].to_numpy(), round_trip_us)
        return cls(merged["lock"].to_numpy(np.int64), merged["mode"].to_numpy(np.int8),
                   offsets, owners, clients, str(path), start_us, hold_us, txn_ids)

    @property
    def n_locks(self) -> int:
        return self._n_locks

    @property
    def timed(self) -> bool:
        """Whether the replay keeps the trace's timing (else it loops)."""
        return self._start is not None

    @property
    def transactions(self) -> int:
        return len(self._offsets) - 1

    @property
    def max_locks_per_txn(self) -> int:
        """The most locks one of the trace's transactions takes (the config cannot say)."""
        return int(np.diff(self._offsets).max()) if len(self._offsets) > 1 else 1

    def longest_hold(self) -> tuple[float, int]:
        """A timed replay's longest hold (us) and the ``txn_id`` of a transaction holding
        that long."""
        if self._hold is None or len(self._hold) == 0:
            return 0.0, -1
        k = int(np.argmax(self._hold))
        return float(self._hold[k]), int(self._txn_ids[k])

    def next_txn(self, client_id: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        batch = self.sample_txns(1, rng, np.array([client_id]))
        return batch.txn(0)

    def sample_txns(self, n: int, rng: np.random.Generator,
                    client_ids: np.ndarray | None = None) -> TxnBatch:
        """The next ``n`` transactions of the given clients, in each client's trace order;
        timed, past a client's last transaction its last again, never to start
        (``start_us`` = :data:`NONE_LEFT`)."""
        clients = as_client_ids(n, client_ids) % len(self._by_client)
        picks = np.empty(n, dtype=np.int64)
        done = np.zeros(n, dtype=bool)
        timed = self._start is not None
        for j, c in enumerate(clients.tolist()):
            own = self._by_client[c]
            k = self._cursor[c]
            if timed and k >= len(own):
                picks[j] = own[-1]
                done[j] = True
            else:
                picks[j] = own[k % len(own)]
            self._cursor[c] = k + 1
        sizes = self._offsets[picks + 1] - self._offsets[picks]
        offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
        index = np.concatenate([np.arange(self._offsets[p], self._offsets[p + 1])
                                for p in picks.tolist()]) if n else np.zeros(0, np.int64)
        start_us = hold_us = None
        if self._start is not None and self._hold is not None:
            start_us = np.where(done, NONE_LEFT, self._start[picks])
            hold_us = self._hold[picks]
        return TxnBatch(lock_ids=self._locks[index], modes=self._modes[index],
                        offsets=offsets, client_ids=clients, start_us=start_us,
                        hold_us=hold_us)

    def describe(self) -> str:
        how = ("replayed as recorded (timed)" if self.timed
               else "looped closed-loop (timestamps dropped)")
        return (f"trace replay of {self.source}: {self.transactions} transactions over "
                f"{self._n_locks} lock ids, {how}")


def replay_transactions(workload: object) -> int | None:
    """A timed replay's transactions in all (its run ends when they have all committed),
    looked up through a wrapper's ``inner`` (coarse locks); None for any other workload."""
    inner = getattr(workload, "inner", workload)
    if isinstance(inner, TraceWorkload) and inner.timed:
        return inner.transactions
    return None


MAX_ID = 2**53
"""Transaction and client ids are integers in [0, 2^53]: exact in every reader's floats."""


def id_column(frame: pd.DataFrame, column: str, path: str | Path) -> np.ndarray:
    """``frame[column]`` as int64 ids, or a TraceError naming the file, row (0-based data
    row, as :mod:`netlock.trace` counts) and field of the first value that is not a whole
    number in [0, 2^53]."""
    import pandas as pd

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
