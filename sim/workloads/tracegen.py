"""Synthetic workload traces from the workload generators: the trace ``netlock trace gen``
writes (:func:`generate_trace`) and the simulator's warm-up trace (:func:`warmup_trace`).

The trace's format, reader and writer are :mod:`netlock.trace`; this module draws its rows.

Timing model (offered load, no lock waiting): every client runs closed-loop transactions.
A transaction of m locks (in canonical order) starting at ``t0`` requests lock j at
``t0 + j * request_gap_us``; all its locks are granted one round trip later, held for the
think time, and released together at ``t0 + (m - 1) * request_gap_us + hold`` with
``hold = hold_us + N(0, jitter_us)`` (clipped at 0; ``hold_us`` is the client's round
trip and think time, :meth:`netlock.config.Config.hold_time_us`). The client's next
transaction starts at that release, or later if ``rate_rps`` caps the client's request
rate. Clients start at random phases within one hold time. Requests are not delayed by
conflicts, so overlapping intervals on a lock measure the concurrent demand the switch
queue must hold (c_i), which is what the planner needs. For the same reason the rates are
demand, not what the rack carries: when exclusive locks conflict, clients wait and send
less (``netlock plan --config`` scales r_i to the closed-loop rate, ``planner/offered.py``).

Rows are sorted by ``t_request`` and cut at exactly ``requests`` rows, taken from the
span every client has covered. Times are rounded to whole nanoseconds, so CSV and Parquet
hold the same values and CSV stays compact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netlock.config import Config
from netlock.errors import ConfigError
from netlock.trace import Trace
from sim.workloads.base import WorkloadGenerator
from sim.workloads.factory import workload_from_config

WARMUP_REQUESTS = 200_000
MIN_TXNS_PER_CLIENT = 8


@dataclass(frozen=True)
class TraceTiming:
    """Per-client timing; all in microseconds except ``rate_rps`` (0 = no cap)."""

    hold_us: float = 5.0
    """A request's mean hold (:meth:`netlock.config.Config.hold_time_us`)."""
    jitter_us: float = 0.5
    request_gap_us: float = 0.0556
    rate_rps: float = 0.0


def trace_timing(config: Config) -> TraceTiming:
    """The trace generator's timing from the config's network, clients and workload."""
    return TraceTiming(hold_us=config.hold_time_us(),
                       jitter_us=config.network.jitter_us,
                       request_gap_us=1e6 / config.clients.rate_rps,
                       rate_rps=config.workload.rate_rps)


def trace_from_config(cfg: Config, requests: int, seed: int | None = None,
                      workload: WorkloadGenerator | None = None) -> dict[str, np.ndarray]:
    """The trace ``netlock trace gen`` writes for ``cfg``: its workload, clients, tenants
    and timing (:func:`trace_timing`); ``seed`` defaults to ``sim.seed``. The columns are
    written by :func:`netlock.trace.write_trace`."""
    workload = workload if workload is not None else workload_from_config(cfg)
    rng = np.random.default_rng(cfg.sim.seed if seed is None else seed)
    tenants = np.array(cfg.client_tenants, dtype=np.int64)
    start_s = {t.id: t.start_s for t in cfg.tenants}
    with_tenants = len(cfg.tenants) > 1 or any(t.priority for t in cfg.tenants)
    return generate_trace(
        workload, cfg.workload.clients, requests, trace_timing(cfg), rng,
        client_tenant=tenants if with_tenants else None,
        tenant_priority={t.id: t.priority for t in cfg.tenants} if with_tenants else None,
        client_start_s=np.array([start_s[t] for t in tenants.tolist()]))


def generate_trace(workload: WorkloadGenerator, clients: int, requests: int, timing: TraceTiming,
                   rng: np.random.Generator, client_tenant: np.ndarray | None = None,
                   tenant_priority: dict[int, int] | None = None,
                   client_start_s: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The trace's columns (docs/formats.md), ``requests`` rows sorted by ``t_request``.

    ``client_tenant[c]`` is client ``c``'s tenant and ``tenant_priority`` maps a tenant to
    its priority class; when given, ``tenant`` and ``priority`` columns are added.
    ``client_start_s[c]`` delays client ``c``'s first transaction (s).
    """
    if clients < 1 or requests < 1:
        raise ValueError(f"need clients >= 1 and requests >= 1, got {clients} and {requests}")
    clock = rng.uniform(0.0, max(timing.hold_us, timing.request_gap_us), clients) * 1e-6
    if client_start_s is not None:
        clock = clock + np.asarray(client_start_s, dtype=np.float64)
    parts: list[dict[str, np.ndarray]] = []
    have, txns = 0, 0
    mean_size = float(workload.sample_txns(min(4 * clients, 256), rng).sizes.mean())
    while have < requests:
        rounds = max(1, int(np.ceil((requests - have) * 1.05 / mean_size / clients)))
        part, after = _batch(workload, clients, rounds, clock, timing, rng, txns)
        if np.all(after <= clock):
            raise ConfigError("the trace would never advance in time: a client's transactions "
                              "take no time (a hold time of 0 us: network.rtt_us, "
                              "clients.tx_us, clients.rx_us and workload.think_time_us all 0, "
                              "and one lock per transaction) and workload.rate_rps is 0; set "
                              "workload.rate_rps or give requests a hold time")
        clock = after
        txns += rounds * clients
        parts.append(part)
        have = sum(int(np.count_nonzero(p["t_request"] < clock.min())) for p in parts)
    cols = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
    cut = clock.min()
    keep = np.flatnonzero(cols["t_request"] < cut)
    keep = keep[np.argsort(cols["t_request"][keep], kind="stable")][:requests]
    out = {name: values[keep] for name, values in cols.items()}
    for name in ("t_request", "t_release"):
        out[name] = np.round(out[name], 9)
    if client_tenant is not None:
        tenant = np.asarray(client_tenant, dtype=np.int64)[out["client_id"]]
        out["tenant"] = tenant
        if tenant_priority:
            lut = np.zeros(max(tenant_priority) + 1, dtype=np.int64)
            for t, p in tenant_priority.items():
                lut[t] = p
            out["priority"] = lut[tenant]
    return out


def _batch(workload: WorkloadGenerator, clients: int, rounds: int, clock: np.ndarray,
           timing: TraceTiming, rng: np.random.Generator,
           first_txn: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``rounds`` transactions per client continuing from ``clock`` (s)."""
    n = rounds * clients
    batch = workload.sample_txns(n, rng, np.tile(np.arange(clients), rounds))
    sizes = batch.sizes
    gap = timing.request_gap_us * 1e-6
    hold = np.maximum(timing.hold_us + rng.normal(0.0, timing.jitter_us, n), 0.0) * 1e-6 \
        if timing.jitter_us > 0 else np.full(n, timing.hold_us * 1e-6)
    busy = (sizes - 1) * gap + hold
    cycle = busy if timing.rate_rps <= 0 else np.maximum(busy, sizes / timing.rate_rps)
    per_round = cycle.reshape(rounds, clients)
    start = (clock + np.cumsum(per_round, axis=0) - per_round).reshape(-1)
    txn = batch.txn_index()
    position = np.arange(len(txn)) - np.repeat(batch.offsets[:-1], sizes)
    part = {
        "lock_id": batch.lock_ids,
        "mode": batch.modes,
        "t_request": start[txn] + position * gap,
        "t_release": (start + busy)[txn],
        "client_id": batch.client_ids[txn],
        "txn_id": first_txn + txn,
    }
    return part, clock + per_round.sum(axis=0)


def warmup_trace(workload: WorkloadGenerator, config: Config, priorities: list[int],
                 fetch_hops: int, rng: np.random.Generator) -> tuple[Trace, np.ndarray]:
    """The simulator's synthetic warm-up trace (:mod:`sim.core.pilot`) and the client behind
    each of its requests: every client runs its transactions back to back.

    Its timing differs from :func:`generate_trace`'s, as it stands for the simulated rack
    rather than for offered demand: a transaction of n locks takes them one client round
    trip apart (the clients' sequential acquisition), holds them all until it has read its
    data (``fetch_hops`` hops) and thought, and releases them together; the next one starts
    then, without jitter or a NIC cap. Clients start at random phases.
    """
    clients = config.workload.clients
    probe = workload.sample_txns(16, rng)
    per_txn = max(1.0, float(probe.sizes.mean()))
    per_client = max(MIN_TXNS_PER_CLIENT, int(WARMUP_REQUESTS / (clients * per_txn)))
    client_ids = np.repeat(np.arange(clients, dtype=np.int64), per_client)
    batch = workload.sample_txns(len(client_ids), rng, client_ids)
    sizes = batch.sizes
    step_us = max(config.client_rtt_us, 1e-3)
    tail_us = config.read_us(fetch_hops) + config.workload.think_time_us
    length_us = sizes * step_us + tail_us
    owner_of_txn = batch.client_ids
    phase = rng.uniform(0.0, float(length_us.mean()), clients)
    txn_start = np.empty(len(sizes))
    txn_end = np.empty(len(sizes))
    for c in range(clients):
        own = np.flatnonzero(owner_of_txn == c)
        ends = phase[c] + np.cumsum(length_us[own])
        txn_end[own] = ends
        txn_start[own] = np.r_[phase[c], ends[:-1]]
    txn = batch.txn_index()
    k = np.arange(len(txn)) - batch.offsets[txn]
    t_request = (txn_start[txn] + k * step_us) * 1e-6
    t_release = txn_end[txn] * 1e-6
    owners = owner_of_txn[txn]
    trace = Trace(source="warm-up trace", lock_id=batch.lock_ids.astype(np.int64),
                  mode=batch.modes.astype(np.int8), t_request=t_request, t_release=t_release,
                  priority=np.asarray(priorities, dtype=np.int64)[owners])
    return trace, owners
