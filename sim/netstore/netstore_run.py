"""One NetStore run (the seed's section 4.1 experiment) on the flow-level fabric model.

Every host runs a transactional client, a data server, and a background client. A client's
transactions (Poisson arrivals) go to its local data server, the coordinator, which asks the
controller for the locks of all their operations at once; as each lock is granted the
operation's data crosses the fabric on the path the controller chose (a read from the key's
home server to the coordinator, a write the other way; no transfer when the key is local).
With network-aware caching (:mod:`sim.netstore.nac`) a read may instead hit the coordinator's
own cache or come from a current replica nearer than the home server. The transaction
completes when its last operation has, and then releases its locks (strict
2PL). Background clients ask servers in another pod for flows of uniform size, which ECMP
routes. Control messages (lock requests, grants, releases, 2PC votes) are small against the
6 KB operations and are not modelled: the fabric model carries data only, with no
propagation or queueing delay beyond max-min sharing, so a transaction's completion time is
its lock wait plus the transfer time of its slowest operation.

Results: completion times of the transactions that arrived in the measured window, the
background flows' completion times, mean link utilisation by layer, and the independent
checks (:func:`sim.core.safety.count_violations` over the lock uses; ``stalled``: requests still
waiting at the end on a key that no transaction was using).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sim.core.safety import count_violations
from sim.fabric.fluid import FluidNetwork
from sim.fabric.topology import FatTree
from sim.netstore.config import NetStoreConfig
from sim.netstore.controller import Controller
from sim.netstore.nac import NetworkAwareCache
from sim.workloads.zipf import ZipfSampler

Progress = Callable[[float, float], None]


@dataclass
class _Op:
    txn: _Txn
    key: int
    exclusive: bool
    granted_at: float = math.nan
    released_at: float = math.nan
    path: np.ndarray | None = None
    version: int = 0


@dataclass
class _Txn:
    id: int
    host: int
    arrival: float
    measured: bool
    ops: dict[int, _Op] = field(default_factory=dict)
    pending: int = 0
    done_at: float = math.nan


@dataclass
class _Background:
    start: float
    nbytes: float
    path: np.ndarray
    measured: bool


def build_fabric(cfg: NetStoreConfig) -> FatTree:
    f = cfg.fabric
    return FatTree(pods=f.pods, tors_per_pod=f.tors_per_pod, hosts_per_tor=f.hosts_per_tor,
                   aggs_per_pod=f.aggs_per_pod, core_uplinks_per_agg=f.core_uplinks_per_agg,
                   link_bps=f.link_gbps * 1e9)


class _Run:
    """The event loop's state: arrivals, the controller, the fabric's flows."""

    def __init__(self, cfg: NetStoreConfig) -> None:
        self.cfg = cfg
        self.fabric = build_fabric(cfg)
        streams = [np.random.default_rng(s)
                   for s in np.random.SeedSequence(cfg.sim.seed).spawn(6)]
        self.rng_txn, self.rng_key, self.rng_bg, self.rng_bg_route, rng_route, rng_nac = streams
        self.controller = Controller(self.fabric, cfg.netstore.routing, rng_route)
        ns = cfg.netstore
        self.nac = (NetworkAwareCache(self.fabric, ns.controller_cache_entries,
                                      ns.server_cache_entries,
                                      rng_nac)
                    if ns.nac else None)
        self.net = FluidNetwork(self.fabric.capacity_bps)
        self.keys = ZipfSampler(cfg.workload.keys, cfg.workload.zipf)
        self.window = (cfg.sim.warmup_s, cfg.sim.warmup_s + cfg.sim.duration_s)
        self.txns: list[_Txn] = []
        self.open: dict[int, _Txn] = {}
        self.flows: dict[int, _Op | _Background] = {}
        self.flow_ids = itertools.count()
        self.bg_done: list[float] = []
        self.layer_bytes = np.zeros(3)
        self.granted = 0
        self.remote = 0

    def in_window(self, t: float) -> bool:
        return self.window[0] <= t < self.window[1]

    def arrive(self, t: float) -> None:
        w = self.cfg.workload
        host = int(self.rng_txn.integers(self.fabric.hosts))
        txn = _Txn(len(self.txns), host, t, self.in_window(t))
        self.txns.append(txn)
        self.open[txn.id] = txn
        while len(txn.ops) < w.ops_per_txn:
            key = int(self.keys.sample(self.rng_key, 1)[0])
            if key not in txn.ops:
                exclusive = bool(self.rng_key.random() < w.write_fraction)
                txn.ops[key] = _Op(txn, key, exclusive)
        txn.pending = len(txn.ops)
        for op in list(txn.ops.values()):
            if self.controller.locks.request(txn.id, op.key, op.exclusive):
                self.start(op, t)

    def start(self, op: _Op, t: float) -> None:
        op.granted_at = t
        self.granted += 1
        home = op.key % self.fabric.hosts
        coordinator = op.txn.host
        source = home
        if self.nac is not None:
            source, op.version = self.nac.on_grant(op.key, op.exclusive, coordinator, home)
        if source == coordinator:
            self.finish(op, t)
            return
        self.remote += 1
        nbytes = self.cfg.workload.op_bytes
        src, dst = (coordinator, home) if op.exclusive else (source, coordinator)
        op.path = self.controller.route(src, dst, nbytes)
        self.launch(op, op.path, nbytes)

    def launch(self, owner: _Op | _Background, path: np.ndarray, nbytes: float) -> None:
        fid = next(self.flow_ids)
        self.flows[fid] = owner
        self.net.add(fid, path, nbytes)
        self.layer_bytes += nbytes * np.bincount(self.fabric.link_layer[path], minlength=3)

    def finish(self, op: _Op, t: float) -> None:
        txn = op.txn
        txn.pending -= 1
        if txn.pending:
            return
        txn.done_at = t
        del self.open[txn.id]
        for held in txn.ops.values():
            held.released_at = t
            if held.path is not None:
                self.controller.forget(held.path, self.cfg.workload.op_bytes)
            for other in self.controller.locks.release(txn.id, held.key):
                self.start(self.open[other].ops[held.key], t)

    def background(self, t: float) -> None:
        b, hosts = self.cfg.background, self.fabric.hosts
        client = int(self.rng_bg.integers(hosts))
        if b.cross_pod:
            per_pod = hosts // self.fabric.pods
            pod = int(self.rng_bg.integers(self.fabric.pods - 1))
            pod += pod >= self.fabric.pod_of(client)
            server = pod * per_pod + int(self.rng_bg.integers(per_pod))
        else:
            server = int(self.rng_bg.integers(hosts - 1))
            server += server >= client
        nbytes = self.rng_bg.uniform(b.min_kb, b.max_kb) * 1000.0
        paths = self.fabric.paths(server, client)
        path = paths[int(self.rng_bg_route.integers(len(paths)))]
        self.controller.announce(path, nbytes)
        self.launch(_Background(t, nbytes, path, self.in_window(t)), path, nbytes)

    def flow_over(self, fid: int, t: float) -> None:
        owner = self.flows.pop(fid)
        if isinstance(owner, _Op):
            if self.nac is not None and not owner.exclusive:
                self.nac.on_read_done(owner.key, owner.txn.host, owner.version)
            self.finish(owner, t)
            return
        self.controller.forget(owner.path, owner.nbytes)
        if owner.measured:
            self.bg_done.append(t - owner.start)


def simulate_netstore(cfg: NetStoreConfig, progress: Progress | None = None) -> dict[str, Any]:
    """Run ``cfg`` and return its summary (the ``netlock netstore --json`` object)."""
    wall = time.perf_counter()
    run = _Run(cfg)
    hosts = run.fabric.hosts
    txn_gap = cfg.workload.txn_interarrival_ms / 1e3 / hosts
    bg_gap = cfg.background.interarrival_ms / 1e3 / hosts
    end_txn = run.window[1]
    hard_end = end_txn + cfg.sim.drain_s
    next_txn = run.rng_txn.exponential(txn_gap)
    next_bg = run.rng_bg.exponential(bg_gap)
    events = 0
    now = 0.0
    while True:
        t_flow = run.net.next_finish()
        now = min(next_txn, next_bg, t_flow)
        if now > hard_end or (now >= end_txn and not _measured_open(run)):
            now = min(now, hard_end)
            break
        events += 1
        run.net.advance(now)
        if now == t_flow:
            for fid in run.net.pop_finished():
                run.flow_over(fid, now)
        elif now == next_txn:
            run.arrive(now)
            nxt = now + run.rng_txn.exponential(txn_gap)
            next_txn = nxt if nxt < end_txn else math.inf
        else:
            run.background(now)
            next_bg = now + run.rng_bg.exponential(bg_gap)
        if progress is not None and events % 2000 == 0:
            progress(now, hard_end)
    return _summary(run, cfg, now, events, time.perf_counter() - wall)


def _measured_open(run: _Run) -> bool:
    return any(t.measured for t in run.open.values())


def _summary(run: _Run, cfg: NetStoreConfig, end: float, events: int,
             wall_s: float) -> dict[str, Any]:
    measured = [t for t in run.txns if t.measured]
    done = np.array([t.done_at - t.arrival for t in measured if not math.isnan(t.done_at)])
    ms = done * 1e3
    ops = [op for t in run.txns for op in t.ops.values()]
    used = [op for op in ops if not math.isnan(op.granted_at)]
    violations = count_violations(
        np.array([op.key for op in used]), np.array([int(op.exclusive) for op in used]),
        np.array([op.granted_at for op in used]),
        np.array([end if math.isnan(op.released_at) else op.released_at for op in used]))
    in_use = {op.key for op in used if math.isnan(op.released_at)}
    stalled = sum(1 for op in ops if math.isnan(op.granted_at) and op.key not in in_use)
    layers = np.bincount(run.fabric.link_layer, minlength=3) * run.fabric.link_bps
    utilisation = run.layer_bytes * 8.0 / (layers * max(end, 1e-12))
    bg = np.array(run.bg_done) * 1e3
    return {
        "routing": cfg.netstore.routing,
        "nac": cfg.netstore.nac,
        "sim_time_s": end,
        "measured_s": cfg.sim.duration_s,
        "transactions": len(done),
        "unfinished": len(measured) - len(done),
        "tps": len(done) / cfg.sim.duration_s,
        "granted": run.granted,
        "remote_ops": run.remote,
        "cache": {"local_hits": run.nac.local_hits if run.nac else 0,
                  "replica_reads": run.nac.replica_reads if run.nac else 0},
        "txn_completion_ms": _stats(ms),
        "background": {"flows": len(bg), **{f"completion_ms_{k}": v
                                             for k, v in _stats(bg).items()}},
        "utilisation": {"host_tor": float(utilisation[0]), "tor_agg": float(utilisation[1]),
                        "agg_core": float(utilisation[2])},
        "violations": violations,
        "stalled": stalled,
        "events": events,
        "rate_recomputes": run.net.recomputes,
        "wall_s": wall_s,
    }


def _stats(values: np.ndarray) -> dict[str, float]:
    if len(values) == 0:
        return {"mean": math.nan, "p50": math.nan, "p99": math.nan}
    return {"mean": float(values.mean()), "p50": float(np.percentile(values, 50)),
            "p99": float(np.percentile(values, 99))}
