"""The Python side of running a rack in fast-engine state (built by
:func:`sim.fast.rack_build.assemble`).

:class:`FastModel` runs the compiled loop (:mod:`sim.fast.loop`) and serves its requests for
more randomness or room: the clients' next transactions (drawn from the workload in batches
with each client's own stream), the next block of hop delays, larger arrays, and fresh
chunks for the recorder's rows; after the run it hands out the recorded tables.
"""

from __future__ import annotations

import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from netlock.config import Config
from netlock.config.derived import most_locks_per_txn
from netlock.errors import ConfigError
from netlock.lockserver.server_state import ensure_room
from netlock.plan import Plan
from sim.core.ahead import DrawAhead, Worker
from sim.core.allocation import CoarseWorkload
from sim.core.draws import BLOCK, draw_faults, draw_hops
from sim.core.rows import Columns
from sim.fast import chunks, client_rows, lock_table
from sim.fast import heap as fheap
from sim.fast.loop import NEEDS_SERVICE, run
from sim.fast.state import (
    CF_TXN_START,
    CI_NEED,
    CI_TX_N,
    CI_TX_NEXT,
    CI_TX_OFF,
    I_FAULTY,
    I_OPEN_LIMIT,
    I_ROOM_HOPS,
    I_ROOM_LOCKS,
    I_ROOM_REQUESTS,
    I_ROOM_ROWS,
    K_FAULT,
    K_FREE,
    K_HANDBACKS,
    K_HOP,
    K_NEED_TXN,
    K_TXNS,
    K_USES,
    RackArrays,
    grown_pool,
)
from sim.workloads import TxnBatch, WorkloadGenerator

if TYPE_CHECKING:
    import pandas as pd

HOP_BLOCKS = 32
"""Hop delays kept drawn ahead, in blocks of ``sim.core.draws.BLOCK``."""
DRAW_AHEAD = False
"""Whether a worker thread draws hop delays and transactions ahead of need
(:mod:`sim.core.ahead`); without it the loop draws them when it runs out (same values).
Off: with as many processes as cores (a sweep, ``netlock paper --workers``), runs were
faster without the thread, which then competes with the other process for a core
(2 processes on 2 shared cores, medians of 6 runs each way: micro-exclusive 0.05 s, loop
and results 3.84-4.48 s wall without against 4.51-4.75 s with; TPC-C low 0.15 s 2.92
against 3.93 s; CPU 5-15 % less without); ``netlock bench`` measures it again
(:mod:`sim.fast_bench_process`). Alone on an idle machine the thread made a TPC-C run's
loop about 11 % shorter in wall time (docs/benchmarks.md)."""
ROW_CHUNK = 1 << 17
"""Recorder rows per chunk. The engine writes its rows straight into a chunk, which becomes
part of the results when full (chunks are recycled between runs: :mod:`sim.fast.chunks`)."""


def max_locks(config: Config, workload: WorkloadGenerator) -> int:
    """The most locks one transaction takes: the config's answer
    (:func:`netlock.config.derived.most_locks_per_txn`), or a replayed trace's longest
    transaction (merging locks into coarse locks never adds any)."""
    most = most_locks_per_txn(config)
    if most is not None:
        return most
    while isinstance(workload, CoarseWorkload):
        workload = workload.inner
    return int(workload.max_locks_per_txn)


def check_supported(config: Config) -> None:
    """The fast engine models NetLock without failures: refuse other lock managers and
    configs that inject failures."""
    kind = config.manager.kind
    if kind != "netlock":
        raise ConfigError(f"{config.source}: manager.kind: the fast engine models NetLock "
                          f"only; run manager.kind={kind} with --engine simpy")
    f = config.failures
    if f.switch_fail_s is not None or f.server_failures:
        raise ConfigError(f"{config.source}: failures: the fast engine does not model switch "
                          f"or lock-server failures; run this config with --engine simpy")


@dataclass
class FastModel:
    """One rack in fast-engine state, with what the Python side needs to serve it."""

    config: Config
    rack: RackArrays
    workload: WorkloadGenerator
    client_rngs: list[np.random.Generator]
    net_rng: np.random.Generator
    fault_rng: np.random.Generator
    txn_batch: int
    plan: Plan
    hold_us: float
    now_us: float = 0.0
    open_waits: list[tuple[int, float, float]] = field(default_factory=list)
    """After :meth:`close`: ``(lock, asked_us, end_us)`` of each lock a transaction still
    waited for (for the liveness checker)."""
    use_chunks: list[np.ndarray] = field(default_factory=list)
    txn_chunks: list[np.ndarray] = field(default_factory=list)
    handback_chunks: list[np.ndarray] = field(default_factory=list)
    owned: list[np.ndarray] = field(default_factory=list)
    """Every recorder chunk this model took (:mod:`sim.fast.chunks`), given back when it
    is gone."""
    worker: Worker = field(default_factory=Worker)
    """Draws the hop delays and, when the workload allows it, the transactions ahead of
    need (:mod:`sim.core.ahead`)."""
    hop_blocks: DrawAhead[np.ndarray] = field(init=False)
    txn_draws: list[DrawAhead[TxnBatch]] = field(init=False)
    """Per client: its batches, drawn ahead unless the workload's clients share state (the
    batches must then be drawn in the order the clients need them)."""

    def __post_init__(self) -> None:
        self.owned += [self.rack.uses, self.rack.txns, self.rack.handbacks]
        weakref.finalize(self, chunks.give_back, self.owned)
        r = self.rack
        weakref.finalize(self, lock_table.give_back, self.config.geometry, r.sw_locks,
                         r.sw_regions, r.sw_slots, r.sw_ctl, r.table_dense)
        weakref.finalize(self, self.worker.close)
        net = self.config.network
        worker = self.worker if DRAW_AHEAD else None
        self.hop_blocks = DrawAhead(partial(hop_block, self.net_rng, net.rtt_us / 2.0,
                                            net.jitter_us, net.loss), worker)
        ahead = worker if getattr(self.workload, "clients_independent", False) else None
        # Each client's ids as a read-only row of one broadcast view: writing them (4096 per
        # client in the microbenchmarks, 4 MB) was 0.6 ms of a 5 ms setup (issue 32).
        ids = np.broadcast_to(np.arange(len(self.client_rngs), dtype=np.int64)[:, None],
                              (len(self.client_rngs), self.txn_batch))
        self.txn_draws = [DrawAhead(partial(self.workload.sample_txns, self.txn_batch, rng,
                                            ids[c]), ahead)
                          for c, rng in enumerate(self.client_rngs)]

    # --- running -----------------------------------------------------------------------------

    def advance(self, until_us: float) -> None:
        """Run the events before ``until_us``."""
        while run(self.rack, until_us) == NEEDS_SERVICE:
            self.serve()
        self.now_us = until_us

    def close(self, end_us: float) -> None:
        """Record the uses still open as ending at ``end_us``, and the locks transactions
        still wait for (``open_waits``: lock, asked_us, end_us)."""
        r = self.rack
        self._room_rows(r.ci.shape[0] * (max_locks(self.config, self.workload) + 1))
        waiting = np.empty((r.cur_lock.size, 2), dtype=np.int64)
        n = client_rows.close(r, end_us, waiting)
        clients, locks = waiting[:n, 0], waiting[:n, 1]
        self.open_waits = list(zip(locks.tolist(), r.cf[clients, CF_TXN_START].tolist(),
                                   [end_us] * n, strict=True))
        self.worker.close()

    def serve(self) -> None:
        r = self.rack
        if r.cnt[K_NEED_TXN]:
            for c in np.flatnonzero(r.ci[:, CI_NEED]).tolist():
                self.refill_txns(c)
            r.cnt[K_NEED_TXN] = 0
        if len(r.hops) - r.cnt[K_HOP] < r.pi[I_ROOM_HOPS]:
            self.refill_hops()
        if r.pi[I_FAULTY] and len(r.faults) - r.cnt[K_FAULT] < r.pi[I_ROOM_HOPS]:
            self.refill_faults()
        room = int(r.pi[I_ROOM_REQUESTS])
        if r.pi[I_OPEN_LIMIT]:
            room += len(r.ri) - int(r.cnt[K_FREE])
        r = grown_pool(self.rack, 2 * room)
        r = r._replace(heap=fheap.grown_heap(r.heap, 2 * room),
                       srv=ensure_room(r.srv, 2 * int(r.pi[I_ROOM_LOCKS]), 2 * room, 0))
        self.rack = r
        self._room_rows(int(r.pi[I_ROOM_ROWS]))

    def _room_rows(self, rows: int) -> None:
        """Room for ``rows`` more rows in each recorder table: a table's chunk with less
        room is kept as it is (part of the results) and the engine goes on in a new one."""
        r = self.rack
        fresh = {}
        for name, k, done in (("uses", K_USES, self.use_chunks),
                              ("txns", K_TXNS, self.txn_chunks),
                              ("handbacks", K_HANDBACKS, self.handback_chunks)):
            table = getattr(r, name)
            n = int(r.cnt[k])
            if len(table) - n < rows:
                done.append(table[:n])
                r.cnt[k] = 0
                fresh[name] = chunks.take(max(ROW_CHUNK, rows), table.dtype)
                self.owned.append(fresh[name])
        if fresh:
            self.rack = r._replace(**fresh)

    def _columns(self, done: list[np.ndarray], current: np.ndarray, k: int) -> Columns:
        """Every row of a recorder table, copied (results never point into a chunk), one
        contiguous column per field. Chunk by chunk, each chunk's fields one after the
        other while it is in the CPU's cache: field by field over all chunks read the whole
        table from memory once per field (42 M rows, TPC-C's simulated second: 2.4 -> 1.6 s).
        A second thread copies the later half of the chunks meanwhile (NumPy lets go of the
        GIL while it copies): 0.27 -> 0.14 s for a 0.2 s TPC-C run's 8.6M rows."""
        parts = [*done, current[:self.rack.cnt[k]]]
        at = np.cumsum([0, *map(len, parts)]).tolist()
        columns = {name: np.empty(at[-1], dtype=current.dtype[name])
                   for name in current.dtype.names}
        half = len(parts) // 2
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="netlock-frame") as pool:
            later = pool.submit(copy_rows, parts[half:], at[half], columns)
            copy_rows(parts[:half], 0, columns)
            later.result()
        return Columns(columns, at[-1])

    @property
    def granted(self) -> int:
        return sum(map(len, self.use_chunks)) + int(self.rack.cnt[K_USES])

    @property
    def committed(self) -> int:
        return sum(map(len, self.txn_chunks)) + int(self.rack.cnt[K_TXNS])

    # --- randomness ---------------------------------------------------------------------------

    def refill_txns(self, c: int) -> None:
        """Client ``c``'s next batch of transactions, from its own stream (drawn ahead when
        the workload's clients draw independently)."""
        r = self.rack
        (batch,) = self.txn_draws[c].take(1)
        n_locks = len(batch.lock_ids)
        if n_locks > r.tx_lock.shape[1]:
            width = max(n_locks, 2 * r.tx_lock.shape[1])
            lock = np.zeros((r.tx_lock.shape[0], width), dtype=np.int64)
            mode = np.zeros((r.tx_lock.shape[0], width), dtype=np.int8)
            self.rack = r = r._replace(tx_lock=lock, tx_mode=mode)
        r.tx_lock[c, :n_locks] = batch.lock_ids
        r.tx_mode[c, :n_locks] = batch.modes
        r.tx_size[c, :len(batch)] = batch.sizes
        if batch.start_us is not None and batch.hold_us is not None:
            r.tx_start[c, :len(batch)] = batch.start_us
            r.tx_hold[c, :len(batch)] = batch.hold_us
        r.ci[c, CI_TX_NEXT] = 0
        r.ci[c, CI_TX_OFF] = 0
        r.ci[c, CI_TX_N] = len(batch)
        r.ci[c, CI_NEED] = 0

    def refill_hops(self) -> None:
        """Drop the whole blocks of hop delays already used, moving the rest to the front,
        and draw as many new blocks after them (block boundaries stay where
        :class:`sim.network.Network` has them, so lossy draws come out the same). On demand
        they are drawn in place, not into a fresh block then copied in."""
        r = self.rack
        done = int(r.cnt[K_HOP]) // BLOCK * BLOCK
        keep = len(r.hops) - done
        r.hops[:keep] = r.hops[done:]
        if self.hop_blocks.ahead:
            for at, block in zip(range(keep, len(r.hops), BLOCK),
                                 self.hop_blocks.take(done // BLOCK), strict=True):
                r.hops[at:at + BLOCK] = block
        else:
            net = self.config.network
            draw_hops(self.net_rng, net.rtt_us / 2.0, net.jitter_us, net.loss, r.hops[keep:])
        r.cnt[K_HOP] -= done

    def refill_faults(self) -> None:
        """Drop the whole blocks of fault draws already used and draw as many new blocks,
        one at a time as :class:`sim.network.Faults` draws them."""
        r = self.rack
        done = int(r.cnt[K_FAULT]) // BLOCK * BLOCK
        keep = len(r.faults) - done
        r.faults[:keep] = r.faults[done:]
        net = self.config.network
        for at in range(keep, len(r.faults), BLOCK):
            block = r.faults[at:at + BLOCK]
            copy = np.empty(BLOCK, dtype=bool)
            extra = np.empty(BLOCK)
            draw_faults(self.fault_rng, net.duplicate, net.reorder, net.reorder_delay_us,
                        copy, extra)
            block[:, 0] = copy
            block[:, 1] = extra
        r.cnt[K_FAULT] -= done

    # --- results ------------------------------------------------------------------------------

    def requests_columns(self) -> Columns:
        """Granted requests, typed as :meth:`sim.recorder.Recorder.requests_columns` types
        them."""
        return self._columns(self.use_chunks, self.rack.uses, K_USES)

    def txns_columns(self) -> Columns:
        """Committed transactions, typed as :meth:`sim.recorder.Recorder.txns_columns` types
        them."""
        return self._columns(self.txn_chunks, self.rack.txns, K_TXNS)

    def handbacks_columns(self) -> Columns:
        """Stale grants, typed as :meth:`sim.recorder.Recorder.handbacks_columns` types
        them."""
        return self._columns(self.handback_chunks, self.rack.handbacks, K_HANDBACKS)

    def requests_frame(self) -> pd.DataFrame:
        """:meth:`requests_columns` as a DataFrame."""
        return self.requests_columns().frame()

    def txns_frame(self) -> pd.DataFrame:
        """:meth:`txns_columns` as a DataFrame."""
        return self.txns_columns().frame()


def copy_rows(parts: list[np.ndarray], at: int, columns: dict[str, np.ndarray]) -> None:
    """Copy the rows of ``parts`` into ``columns`` from row ``at`` on, chunk by chunk."""
    for part in parts:
        for name, column in columns.items():
            column[at:at + len(part)] = part[name]
        at += len(part)


def hop_block(rng: np.random.Generator, half_rtt_us: float, jitter_us: float,
              loss: float) -> np.ndarray:
    """The next ``BLOCK`` hop delays of stream ``rng`` (:func:`sim.core.draws.draw_hops`)."""
    block = np.empty(BLOCK)
    draw_hops(rng, half_rtt_us, jitter_us, loss, block)
    return block
