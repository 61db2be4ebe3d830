"""RDMA NICs and the one-sided verbs of client-side lock managers.

Every lock server (memory node) and every client machine has one RNIC. A verb leaves the
client machine's RNIC (at most ``verb_rate_ops`` per second), crosses the ToR to the target
RNIC (two hops, client -> switch -> server, as every client-to-server packet of the rack
does), which executes verbs one at a time at the same rate; an atomic (CAS, FAA) also holds
its 8-byte address for ``atomic_us``, so atomics on one address are serialised (a later one
waits for the earlier to finish) while verbs on other addresses overlap it. The completion
crosses the two hops back: a verb costs the same four hops as a request a lock server of
NetLock or of a server-centric design answers. RDMA's reliable connections retransmit, so no
verb is lost.

The target memory changes when the verb reaches the target RNIC (verbs on one address are
executed in arrival order, so that order is the memory's), and the old value travels back
with the completion. Times are us.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from netlock.config.managers import Rdma
from sim.engine import Engine
from sim.network import Network

READ, WRITE, CAS, FAA, SEND = range(5)
ATOMIC_VERBS = (CAS, FAA)
VERB_NAMES = ("read", "write", "cas", "faa", "send")
TO_SERVER_HOPS = 2
"""Hops between a client machine and a lock server: through the ToR (sim.network)."""


class Rnic:
    """One RNIC: a busy-until time for its verb engine and one per atomic address (us)."""

    __slots__ = ("addr_free", "atomic_us", "counts", "free_at", "gap_us")

    def __init__(self, cfg: Rdma) -> None:
        self.gap_us = 1e6 / cfg.verb_rate_ops
        self.atomic_us = cfg.atomic_us
        self.free_at = 0.0
        self.addr_free: dict[int, float] = {}
        self.counts = [0] * len(VERB_NAMES)

    def send(self, t: float) -> float:
        """When a verb posted at ``t`` leaves this RNIC (us)."""
        start = self.free_at if self.free_at > t else t
        self.free_at = start + self.gap_us
        return start

    def execute(self, t: float, verb: int, addr: int) -> float:
        """When a verb arriving at ``t`` is done and its completion leaves (us)."""
        self.counts[verb] += 1
        start = self.free_at if self.free_at > t else t
        self.free_at = start + self.gap_us
        if verb in (CAS, FAA):
            busy = self.addr_free.get(addr, 0.0)
            if busy > start:
                start = busy
            done = start + self.atomic_us
            self.addr_free[addr] = done
            return done
        return start + self.gap_us


class Fabric:
    """The RNICs of one rack: ``nodes`` lock servers and ``machines`` client machines."""

    def __init__(self, engine: Engine, network: Network, cfg: Rdma, nodes: int,
                 machines: int) -> None:
        self.engine = engine
        self.env = engine.env
        self.network = network
        self.nodes = [Rnic(cfg) for _ in range(nodes)]
        self.machines = [Rnic(cfg) for _ in range(machines)]

    def nic_of(self, cid: int) -> Rnic:
        """The RNIC of client process ``cid``'s machine (clients are spread round-robin)."""
        return self.machines[cid % len(self.machines)]

    def verb(self, cid: int, node: int, verb: int, addr: int,
             apply: Callable[..., Any], done: Callable[..., None], *args: Any) -> None:
        """Client ``cid`` posts ``verb`` on ``addr`` of lock server ``node`` now:
        ``apply(*args)`` changes the target memory when the verb gets there and returns
        what the verb reads; ``done(value, *args)`` runs when the completion is back."""
        now = self.env.now
        arrive = self.nic_of(cid).send(now) + self.network.reliable_path(TO_SERVER_HOPS)
        self.engine.call_at(arrive, self._at_target, node, verb, addr, apply, done, args)

    def _at_target(self, node: int, verb: int, addr: int, apply: Callable[..., Any],
                   done: Callable[..., None], args: tuple) -> None:
        now = self.env.now
        value = apply(*args)
        back = (self.nodes[node].execute(now, verb, addr)
                + self.network.reliable_path(TO_SERVER_HOPS))
        self.engine.call_at(back, done, value, *args)

    def message(self, src: int, dst: int, deliver: Callable[..., None], *args: Any) -> None:
        """Client ``src`` sends a message to client ``dst`` (a SEND through the ToR: two
        hops); ``deliver(*args)`` runs on arrival."""
        now = self.env.now
        depart = self.nic_of(src).send(now)
        arrive = depart + self.network.reliable_hop() + self.network.reliable_hop()
        self.nic_of(dst).counts[SEND] += 1
        self.engine.call_at(arrive, deliver, *args)

    def stats(self) -> dict[str, Any]:
        """Verbs each lock server's RNIC executed, by kind."""
        return {f"rnic_{name}": [nic.counts[k] for nic in self.nodes]
                for k, name in enumerate(VERB_NAMES)}
