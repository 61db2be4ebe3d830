"""The rack of a config as fast-engine state, and the Python side of running it.

:func:`assemble` mirrors :func:`sim.simpy_model.assemble`: the same random streams spawned from the
seed in the same order (network, client start phases, probes, one per client), the same
switch data plane with the plan installed, the same clients and NIC shares, the same
timing parameters. :class:`FastModel` runs the compiled loop (:mod:`sim.fast.loop`) and
serves its requests for more randomness or room: the clients' next transactions (drawn from
the workload in batches with each client's own stream), the next block of hop delays,
larger arrays, and fresh chunks for the recorder's rows.
"""

from __future__ import annotations

import math
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from netlock.client import BURST_US, SEND_WINDOW_US
from netlock.config import Config
from netlock.config.derived import most_locks_per_txn
from netlock.dataplane import SwitchDataPlane
from netlock.errors import ConfigError
from netlock.lockserver import txburst
from netlock.lockserver.request_path import N_CORE
from netlock.lockserver.server_state import ensure_room, new_server_state
from netlock.plan import Plan
from netlock.txn_context import next_send
from sim.core.ahead import DrawAhead, Worker
from sim.core.allocation import CoarseWorkload, Partition
from sim.core.draws import BLOCK, draw_faults, draw_hops, fault_rng
from sim.core.parts import (
    client_workload,
    nic_shares_rps,
    rx_cores_per_client,
    send_window_phases,
    switch_dataplane,
)
from sim.core.rows import HANDBACK_DTYPE, TXN_DTYPE, USE_DTYPE, Columns
from sim.core.run_spec import RunSpec, run_spec, unanswered_cutoff_us
from sim.fast import chunks, client_rows, lock_table
from sim.fast import heap as fheap
from sim.fast.loop import NEEDS_SERVICE, run
from sim.fast.state import (
    CF_DEADLINE,
    CF_GAP,
    CF_NEXT_START,
    CF_TIMER_AT,
    CF_TXN_START,
    CF_WINDOW,
    CI_FOLD_KEY,
    CI_NEED,
    CI_PRIORITY,
    CI_TENANT,
    CI_TX_N,
    CI_TX_NEXT,
    CI_TX_OFF,
    E_BEGIN,
    E_OPEN,
    E_QUOTA,
    E_SWEEP,
    I_BACKOFF_SLOTS,
    I_CL_BURST,
    I_CL_CORES,
    I_CORES,
    I_EXTRA_HOPS,
    I_FAST,
    I_FAULTY,
    I_FETCH_HOPS,
    I_INSTANT,
    I_LEASE_MGR,
    I_LOSSY,
    I_OPEN_LIMIT,
    I_ROOM_HOPS,
    I_ROOM_LOCKS,
    I_ROOM_REQUESTS,
    I_ROOM_ROWS,
    I_RX_RING,
    I_SEED,
    I_SERVERS,
    I_SKIP_HELD,
    I_TIMED,
    I_TX_BURST,
    K_FAULT,
    K_FREE,
    K_HANDBACKS,
    K_HOP,
    K_NEED_TXN,
    K_TXNS,
    K_USES,
    N_CF,
    N_CI,
    N_CNT,
    N_PF,
    N_PI,
    N_SF,
    P_BACKOFF_SLOT,
    P_BURST,
    P_CL_DRAIN,
    P_GAP_PER_LOCK,
    P_HALF_RTT,
    P_LEASE_CLIENT,
    P_OL_CUTOFF,
    P_PASS_GAP,
    P_PASS_US,
    P_QUOTA_WINDOW,
    P_RX,
    P_SERVICE_US,
    P_SWEEP,
    P_THINK,
    P_TIMEOUT,
    P_TX,
    P_TX_DRAIN,
    RackArrays,
    grown_pool,
    new_pool,
    txn_batch,
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


def new_switch(config: Config, plan: Plan) -> SwitchDataPlane:
    """The switch both engines build (:func:`sim.core.parts.switch_dataplane`), with the
    plan installed."""
    e = plan.entries
    dp = switch_dataplane(config, len(e.lock_id))
    if len(e.lock_id):
        dp.install_many(e.lock_id, e.priority, e.left, e.right)
    return dp


def assemble(config: Config, plan: Plan, partition: Partition, seed_key: object,
             hold_us: float) -> FastModel:
    """The rack of ``config`` with a given plan, ready to run from time 0.

    No randomness is drawn yet: the hop delays and every client's transactions are flagged
    as used up, so the first :meth:`FastModel.advance` draws them (a run's cost includes
    drawing its workload, as the plain simpy baseline's does)."""
    streams = np.random.SeedSequence(seed_key).spawn(3 + config.workload.clients)
    net_rng, start_rng, _probe_rng = (np.random.default_rng(s) for s in streams[:3])
    workload = client_workload(config)
    longest = max_locks(config, workload)
    spec = run_spec(config)
    pi = int_params(config, spec, partition, longest)
    rack = RackArrays(**switch_arrays(config, plan, workload.n_locks),
                **server_arrays(config, partition, pi), **client_arrays(config, spec, longest),
                **event_arrays(config, pi, longest), pf=float_params(config, spec), pi=pi)
    model = FastModel(config=config, rack=rack, workload=workload,
                      client_rngs=[np.random.default_rng(s) for s in streams[3:]],
                      net_rng=net_rng, fault_rng=fault_rng(seed_key),
                      txn_batch=txn_batch(longest), plan=plan, hold_us=hold_us)
    schedule_start(rack, config, start_rng)
    return model


def float_params(config: Config, spec: RunSpec) -> np.ndarray:
    """The rack's float parameters (``P_*``: us, except the gaps derived from rates)."""
    wl, cl, sw = config.workload, config.clients, config.switch
    pf = np.zeros(N_PF)
    pf[P_HALF_RTT] = config.network.rtt_us / 2.0
    pf[P_PASS_US] = sw.pass_us
    pf[P_PASS_GAP] = 1e6 / sw.rate_pps
    pf[P_THINK] = wl.think_time_us
    pf[P_LEASE_CLIENT] = spec.client_lease_us
    pf[P_TIMEOUT] = cl.timeout_us
    pf[P_BACKOFF_SLOT] = cl.backoff_slot_us
    pf[P_GAP_PER_LOCK] = spec.gap_per_lock_us
    pf[P_SWEEP] = config.lease.sweep_us
    pf[P_QUOTA_WINDOW] = sw.quota_window_us
    pf[P_SERVICE_US] = config.servers.packet_us
    pf[P_TX_DRAIN] = config.servers.tx_drain_us
    pf[P_CL_DRAIN] = cl.tx_drain_us
    pf[P_OL_CUTOFF] = unanswered_cutoff_us(config)
    pf[P_BURST] = BURST_US
    pf[P_TX] = cl.tx_us
    pf[P_RX] = cl.rx_us
    return pf


def int_params(config: Config, spec: RunSpec, partition: Partition,
               longest: int) -> np.ndarray:
    """The rack's integer parameters (``I_*``): flags, counts, and the room the Python side
    keeps ahead of the loop (sized by the requests ``longest``-lock transactions can have
    in flight)."""
    n, net, servers = config.workload.clients, config.network, config.servers
    per_request = n * (longest + 2)
    timed = config.workload.timed_replay
    instant = config.workload.think_time_us <= 0 and spec.fetch_hops == 0 and not timed
    faulty = net.duplicate > 0 or net.reorder > 0
    pi = np.zeros(N_PI, dtype=np.int64)
    pi[I_LOSSY] = int(net.loss > 0 or faulty)
    pi[I_FAULTY] = int(faulty)
    pi[I_FETCH_HOPS] = spec.fetch_hops
    pi[I_EXTRA_HOPS] = spec.grant_extra_hops
    pi[I_SERVERS] = servers.count
    pi[I_LEASE_MGR] = round(config.lease.us)
    pi[I_INSTANT] = int(instant)
    pi[I_TIMED] = int(timed)
    pi[I_FAST] = int(instant and spec.gap_per_lock_us <= 0)
    pi[I_CORES] = servers.cores
    pi[I_TX_BURST] = servers.tx_burst
    pi[I_ROOM_HOPS] = 16 * per_request + 4096 + 4 * servers.tx_burst
    pi[I_ROOM_REQUESTS] = 4 * per_request + 256 + 2 * servers.tx_burst
    pi[I_ROOM_ROWS] = client_rows.uses_per_event(n, longest)
    pi[I_ROOM_LOCKS] = per_request + 64
    pi[I_SEED] = config.sim.seed
    pi[I_BACKOFF_SLOTS] = config.clients.backoff_slots
    pi[I_OPEN_LIMIT] = config.clients.send_limit_per_ms
    pi[I_SKIP_HELD] = int(config.clients.skip_held)
    pi[I_RX_RING] = servers.rx_ring
    pi[I_CL_CORES] = rx_cores_per_client(n, config.clients.machines, config.clients.rx_cores)
    pi[I_CL_BURST] = config.clients.tx_burst
    return pi


def switch_arrays(config: Config, plan: Plan, n_locks: int) -> dict[str, np.ndarray]:
    """The switch's registers with the plan installed, and its lock table
    (:func:`sim.fast.lock_table.lock_table`)."""
    dp = new_switch(config, plan)
    locks, regions, slots, tenants, ctl, _trace, out = dp.arrays()
    table_dense, table_keys, table_values = lock_table.lock_table(locks, ctl, n_locks)
    return {"sw_locks": locks, "sw_regions": regions, "sw_slots": slots, "sw_tenants": tenants,
            "sw_ctl": ctl, "sw_out": out, "table_dense": table_dense,
            "table_keys": table_keys, "table_values": table_values, "sw_f": np.zeros(1),
            "sw_drops": np.zeros(8, dtype=np.int64)}


def server_arrays(config: Config, partition: Partition,
                  pi: np.ndarray) -> dict[str, np.ndarray]:
    """The lock servers' state, CPU cores and counters, and the partition of lock ids. The
    state recycles idle locks' rows (nothing here reads the servers' per-lock counters), so
    it stays as large as the locks in use, not every lock a long TPC-C run meets."""
    servers = config.servers
    count = max(servers.count, 1)
    return {"srv": new_server_state(servers.count, config.geometry.priorities,
                                    locks=4 * pi[I_ROOM_LOCKS],
                                    nodes=2 * int(pi[I_ROOM_REQUESTS]), recycle=True),
            "srv_f": np.zeros((count, N_SF)),
            "srv_cores": txburst.new_cores(count, servers.cores, N_CORE),
            "tx_buf": np.zeros((count, servers.cores, servers.tx_burst, 2), dtype=np.int64),
            "part_his": partition.his, "part_owners": partition.owners}


def client_arrays(config: Config, spec: RunSpec, longest: int) -> dict[str, np.ndarray]:
    """Each client's tenant, priority and NIC gap, and room for its locks and its batch of
    transactions (with their starts and holds when a trace is replayed timed)."""
    n, cl = config.workload.clients, config.clients
    timed = config.workload.timed_replay
    ci = np.zeros((n, N_CI), dtype=np.int64)
    ci[:, CI_TENANT] = list(config.client_tenants)
    ci[:, CI_PRIORITY] = spec.priorities
    ci[:, CI_FOLD_KEY] = -1
    cf = np.zeros((n, N_CF))
    cf[:, CF_GAP] = [1e6 / rate for rate in nic_shares_rps(n, cl.machines, cl.rate_rps)]
    cf[:, CF_DEADLINE] = math.inf
    cf[:, CF_TIMER_AT] = math.inf
    cf[:, CF_WINDOW] = -1.0
    batch = txn_batch(longest)
    busy_locks = config.workload.locks if cl.send_limit_per_ms and cl.skip_held else 1
    cores = rx_cores_per_client(n, cl.machines, cl.rx_cores)
    return {"ci": ci, "cf": cf, "held": np.zeros((n, longest), dtype=np.int64),
            "held_txn": np.zeros((n, longest), dtype=np.int64),
            "cur_lock": np.zeros((n, longest), dtype=np.int64),
            "cur_mode": np.zeros((n, longest), dtype=np.int64),
            "tx_lock": np.zeros((n, batch * longest), dtype=np.int64),
            "tx_mode": np.zeros((n, batch * longest), dtype=np.int8),
            "tx_size": np.zeros((n, batch), dtype=np.int32),
            "tx_start": np.zeros((n, batch if timed else 1)),
            "tx_hold": np.zeros((n, batch if timed else 1)),
            "burst": np.zeros(max(2 * longest + 2, cl.tx_burst), dtype=np.int64),
            "busy": np.zeros((n, busy_locks), dtype=np.int8),
            "cl_tx": txburst.new_cores(n, cores),
            "cl_tx_buf": np.zeros((n, cores, cl.tx_burst), dtype=np.int64)}


def event_arrays(config: Config, pi: np.ndarray, longest: int) -> dict[str, np.ndarray]:
    """The request pool, event heap, counters, drawn randomness and recorder chunks."""
    room = int(pi[I_ROOM_REQUESTS])
    ri, rf, free = new_pool(2 * room)
    cnt = np.zeros(N_CNT, dtype=np.int64)
    cnt[K_FREE] = len(free)
    drawn = 2 * pi[I_ROOM_HOPS] // BLOCK + 2
    rows = max(ROW_CHUNK, client_rows.uses_per_event(config.workload.clients, longest))
    return {"ri": ri, "rf": rf, "free": free, "cnt": cnt,
            "hops": np.empty(max(HOP_BLOCKS, drawn) * BLOCK),
            "faults": np.zeros((drawn * BLOCK if pi[I_FAULTY] else 0, 2)),
            "heap": fheap.new_heap(2 * room), "uses": chunks.take(rows, USE_DTYPE),
            "txns": chunks.take(rows, TXN_DTYPE), "handbacks": chunks.take(rows, HANDBACK_DTYPE)}


def schedule_start(rack: RackArrays, config: Config, start_rng: np.random.Generator) -> None:
    """Flag the drawn randomness as used up and schedule each client's start (its tenant's
    start plus a random phase within half a round trip), the first lease sweep and, with
    quotas, the first quota window."""
    n = config.workload.clients
    rack.cnt[K_HOP] = len(rack.hops)
    rack.cnt[K_FAULT] = len(rack.faults)
    rack.ci[:, CI_NEED] = 1
    rack.cnt[K_NEED_TXN] = n
    start_s = {t.id: t.start_s for t in config.tenants}
    phase = start_rng.uniform(0.0, config.network.rtt_us / 2.0, n)
    windows = (send_window_phases(start_rng, n) if config.clients.send_limit_per_ms
               else [0.0] * n)
    for c, (tenant, offset) in enumerate(zip(config.client_tenants, phase.tolist(),
                                             strict=True)):
        start = start_s[tenant] * 1e6 + offset
        rack.cf[c, CF_NEXT_START] = start
        if config.clients.send_limit_per_ms:
            rack.cf[c, CF_WINDOW] = windows[c] - SEND_WINDOW_US
            fheap.push(rack.heap, next_send(rack.ci[c], rack.cf[c], start,
                                            config.clients.send_limit_per_ms), E_OPEN, c, 0)
        else:
            fheap.push(rack.heap, start, E_BEGIN, c, 0)
    fheap.push(rack.heap, config.lease.sweep_us, E_SWEEP, 0, 0)
    if any(t.quota_rps > 0 for t in config.tenants):
        fheap.push(rack.heap, config.switch.quota_window_us, E_QUOTA, 0, 0)
