"""The NetStore experiment's config (``configs/netstore-*.yaml``): its own schema, read with
the toolkit's config machinery (``include:``, ``--set`` dotted keys, one-line errors).

Defaults are the seed's section 4.1 setup; ``configs/netstore-lbp.yaml`` says where each
number comes from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from netlock.config.overrides import apply_overrides, parse_override
from netlock.config.schema_keys import key
from netlock.config.typed import Problem, build, to_plain
from netlock.config.yamlio import deep_merge, read_layers
from netlock.errors import ConfigError

ROUTINGS = ("lbp", "ecmp")


@dataclass(frozen=True)
class NetStoreSim:
    duration_s: float = key(60.0, "simulated time whose transactions are measured, s",
                            above=0.0)
    warmup_s: float = key(5.0, "simulated time run first and discarded, s", min=0.0)
    drain_s: float = key(30.0, "time allowed after the measured window for its transactions "
                         "to finish (those still open count as unfinished), s", min=0.0)
    seed: int = key(1, "random seed (arrivals, keys, sizes and ECMP draws)", min=0)


@dataclass(frozen=True)
class NetStoreFabric:
    """A multi-rooted tree (:class:`sim.fabric.topology.FatTree`)."""

    pods: int = key(2, "pods", min=1)
    tors_per_pod: int = key(4, "top-of-rack switches per pod", min=1)
    hosts_per_tor: int = key(8, "hosts (data servers) per top-of-rack switch", min=1)
    aggs_per_pod: int = key(2, "aggregation switches per pod; every ToR links to each", min=1)
    core_uplinks_per_agg: int = key(2, "core links of each aggregation switch", min=1)
    link_gbps: float = key(1.0, "capacity of every link, each direction, Gbit/s", above=0.0)


@dataclass(frozen=True)
class NetStoreWorkload:
    """The transactions: each client on each host sends them to its local data server."""

    txn_interarrival_ms: float = key(50.0, "mean of each client's exponential transaction "
                                     "inter-arrival time, ms", above=0.0)
    ops_per_txn: int = key(1, "operations (distinct keys) per transaction", min=1)
    op_bytes: int = key(6000, "bytes one operation reads or writes", min=1)
    keys: int = key(2_000_000, "keys, sharded round-robin by id over the hosts", min=1)
    zipf: float = key(0.99, "Zipf exponent of key popularity (0 = uniform)", min=0.0)
    write_fraction: float = key(0.01, "fraction of operations that write", min=0.0, max=1.0)


@dataclass(frozen=True)
class Background:
    """Traffic outside NetStore: each host's background client asks for flows to it."""

    interarrival_ms: float = key(1000.0, "mean of each background client's exponential "
                                 "inter-arrival time, ms", above=0.0)
    min_kb: float = key(1.0, "smallest background flow, KB (1 KB = 1000 bytes)", above=0.0)
    max_kb: float = key(8000.0, "largest background flow; sizes are uniform in "
                        "[min_kb, max_kb], KB", above=0.0)
    cross_pod: bool = key(True, "background servers are in another pod than their client")


@dataclass(frozen=True)
class NetStore:
    routing: str = key("lbp", "how the controller picks an operation's path: lbp (least "
                       "bottlenecked path) or ecmp (uniformly among the shortest)",
                       choices=ROUTINGS)
    nac: bool = key(False, "network-aware caching: reads may come from a current replica in "
                    "the reader's own cache, rack or pod (section 3.2)")
    controller_cache_entries: int = key(20_000, "keys the controller's replica directory "
                                        "holds (clock eviction)", min=1)
    server_cache_entries: int = key(20_000, "values each data server caches (random "
                                    "eviction)", min=1)


@dataclass(frozen=True)
class NetStoreConfig:
    """One NetStore run."""

    sim: NetStoreSim = field(default_factory=NetStoreSim)
    fabric: NetStoreFabric = field(default_factory=NetStoreFabric)
    workload: NetStoreWorkload = field(default_factory=NetStoreWorkload)
    background: Background = field(default_factory=Background)
    netstore: NetStore = field(default_factory=NetStore)

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)


def load_netstore_config(path: str | os.PathLike[str],
                         overrides: dict[str, str] | None = None) -> NetStoreConfig:
    """Read a NetStore config (following ``include:``), apply ``--set`` overrides, validate;
    any problem is one :class:`ConfigError` line naming the file and key."""
    path = str(path)
    doc: dict[str, Any] = {}
    for layer in read_layers(path):
        doc = deep_merge(doc, layer.doc)
    return netstore_config_from_dict(doc, path, overrides)


def netstore_config_from_dict(doc: dict[str, Any], source: str = "<dict>",
                              overrides: dict[str, str] | None = None) -> NetStoreConfig:
    """Validate plain data, with ``--set``-style text overrides, into a NetStoreConfig."""
    for name, text in (overrides or {}).items():
        try:
            doc = apply_overrides(doc, {name: parse_override(name, text, NetStoreConfig)},
                                  NetStoreConfig)
        except Problem as problem:
            raise ConfigError(f"{source}: --set {name}: {problem.message}") from None
    try:
        cfg = build(NetStoreConfig, doc)
    except Problem as problem:
        raise ConfigError(f"{source}: {problem}") from None
    if cfg.background.max_kb < cfg.background.min_kb:
        raise ConfigError(f"{source}: background.max_kb: must be >= background.min_kb "
                          f"({cfg.background.min_kb:g}), got {cfg.background.max_kb:g}")
    if cfg.background.cross_pod and cfg.fabric.pods < 2:
        raise ConfigError(f"{source}: background.cross_pod: needs fabric.pods >= 2")
    return cfg
