"""A multi-rooted tree (NetStore, section 2 and Figure 1): pods of top-of-rack (ToR) and
aggregation switches, joined by core switches.

Every ToR links to every aggregation switch of its pod; aggregation switch ``a`` of every pod
links to the same ``core_uplinks_per_agg`` core switches (those of "plane" ``a``), so two
hosts in different pods have ``aggs_per_pod * core_uplinks_per_agg`` shortest paths, two
hosts of one pod under different ToRs ``aggs_per_pod``, and two hosts under one ToR one.
Oversubscription follows from the counts: ``hosts_per_tor / aggs_per_pod`` at the ToRs and
``tors_per_pod / core_uplinks_per_agg`` at the aggregation layer, with every link of one
capacity. Links are directed: each cable is two links, one per direction, each with the
full capacity (bits/s).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class FatTree:
    """The switches, directed links and shortest paths of a multi-rooted tree."""

    pods: int
    tors_per_pod: int
    hosts_per_tor: int
    aggs_per_pod: int
    core_uplinks_per_agg: int
    link_bps: float
    _index: dict[tuple[str, str], int] = field(init=False, repr=False, compare=False)
    _paths: dict[tuple[int, int], np.ndarray] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[tuple[str, str], int] = {}

        def cable(a: str, b: str) -> None:
            index[(a, b)] = len(index)
            index[(b, a)] = len(index)

        for host in range(self.hosts):
            cable(self._host(host), self._tor(self.tor_of(host)))
        for pod in range(self.pods):
            for t in range(self.tors_per_pod):
                for a in range(self.aggs_per_pod):
                    cable(self._tor(pod * self.tors_per_pod + t), self._agg(pod, a))
            for a in range(self.aggs_per_pod):
                for c in range(self.core_uplinks_per_agg):
                    cable(self._agg(pod, a), self._core(a, c))
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_paths", {})

    @property
    def hosts(self) -> int:
        return self.pods * self.tors_per_pod * self.hosts_per_tor

    @property
    def links(self) -> int:
        """Directed links."""
        return len(self._index)

    @cached_property
    def capacity_bps(self) -> np.ndarray:
        """Capacity of each directed link, bits/s."""
        return np.full(self.links, float(self.link_bps))

    @cached_property
    def link_layer(self) -> np.ndarray:
        """Per directed link: 0 host-ToR, 1 ToR-aggregation, 2 aggregation-core."""
        layer = np.zeros(self.links, dtype=np.int64)
        for (a, b), i in self._index.items():
            kinds = {a[0], b[0]}
            layer[i] = 2 if "c" in kinds else 1 if kinds == {"t", "a"} else 0
        return layer

    def link(self, a: str, b: str) -> int:
        """The directed link from node ``a`` to node ``b`` (names as ``h3``, ``t0``, ``a1.0``,
        ``c0.1``)."""
        return self._index[(a, b)]

    def tor_of(self, host: int) -> int:
        return host // self.hosts_per_tor

    def pod_of(self, host: int) -> int:
        return host // (self.hosts_per_tor * self.tors_per_pod)

    def paths(self, src: int, dst: int) -> np.ndarray:
        """Every shortest path from host ``src`` to host ``dst``: one row of directed link
        indices per path, all rows of one length (0 columns when ``src == dst``)."""
        found = self._paths.get((src, dst))
        if found is None:
            found = self._paths[(src, dst)] = self._build_paths(src, dst)
        return found

    def _build_paths(self, src: int, dst: int) -> np.ndarray:
        if src == dst:
            return np.zeros((1, 0), dtype=np.int64)
        hs, hd = self._host(src), self._host(dst)
        ts, td = self._tor(self.tor_of(src)), self._tor(self.tor_of(dst))
        if ts == td:
            return np.array([[self.link(hs, ts), self.link(ts, hd)]], dtype=np.int64)
        ps, pd = self.pod_of(src), self.pod_of(dst)
        rows = []
        for a in range(self.aggs_per_pod):
            up, down = self._agg(ps, a), self._agg(pd, a)
            if ps == pd:
                rows.append([self.link(hs, ts), self.link(ts, up), self.link(up, td),
                             self.link(td, hd)])
                continue
            for c in range(self.core_uplinks_per_agg):
                core = self._core(a, c)
                rows.append([self.link(hs, ts), self.link(ts, up), self.link(up, core),
                             self.link(core, down), self.link(down, td), self.link(td, hd)])
        return np.array(rows, dtype=np.int64)

    @staticmethod
    def _host(host: int) -> str:
        return f"h{host}"

    @staticmethod
    def _tor(tor: int) -> str:
        return f"t{tor}"

    @staticmethod
    def _agg(pod: int, a: int) -> str:
        return f"a{pod}.{a}"

    @staticmethod
    def _core(a: int, c: int) -> str:
        return f"c{a}.{c}"
