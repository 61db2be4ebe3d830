"""The rack of a config as fast-engine state, ready to run from time 0 (:func:`assemble`).

:func:`assemble` mirrors :func:`sim.simpy_model.assemble`: the same random streams spawned from
the seed in the same order (network, client start phases, probes, one per client), the same
switch data plane with the plan installed, the same clients and NIC shares, the same timing
parameters, in the arrays of :class:`sim.fast.state.RackArrays`;
:class:`sim.fast.fast_model.FastModel` runs it.
"""

from __future__ import annotations

import math

import numpy as np

from netlock.client import BURST_US, SEND_WINDOW_US
from netlock.config import Config
from netlock.dataplane import SwitchDataPlane
from netlock.lockserver import txburst
from netlock.lockserver.request_path import N_CORE
from netlock.lockserver.server_state import new_server_state
from netlock.plan import Plan
from netlock.txn_context import next_send
from sim.core.allocation import Partition
from sim.core.draws import BLOCK, fault_rng
from sim.core.parts import (
    client_workload,
    nic_shares_rps,
    rx_cores_per_client,
    send_window_phases,
    switch_dataplane,
)
from sim.core.rows import HANDBACK_DTYPE, TXN_DTYPE, USE_DTYPE
from sim.core.run_spec import RunSpec, run_spec, unanswered_cutoff_us
from sim.fast import chunks, client_rows, lock_table
from sim.fast import heap as fheap
from sim.fast.fast_model import HOP_BLOCKS, ROW_CHUNK, FastModel, max_locks
from sim.fast.state import (
    CF_DEADLINE,
    CF_GAP,
    CF_NEXT_START,
    CF_TIMER_AT,
    CF_WINDOW,
    CI_FOLD_KEY,
    CI_NEED,
    CI_PRIORITY,
    CI_TENANT,
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
    K_HOP,
    K_NEED_TXN,
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
    new_pool,
    txn_batch,
)


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
