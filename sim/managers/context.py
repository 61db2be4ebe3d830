"""What building a lock manager needs, and the base of managers in the client's library."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from netlock.config import Config
from netlock.plan import Plan
from sim.core.allocation import Partition
from sim.core.run_spec import RunSpec
from sim.engine import ACQUIRE, Engine, Req
from sim.managers.interface import each_packet
from sim.managers.rdma import Fabric
from sim.network import Network

SWITCH, SERVER = 0, 1
SOURCES = ("switch", "server")
"""Every design names its granting components alike, so ``switch_share`` means the same."""


@dataclass(frozen=True)
class ManagerContext:
    """The rack a manager is built into: its clock, network, config and derived run spec;
    ``plan`` and ``partition`` are NetLock's (other designs hash locks over the servers)."""

    engine: Engine
    network: Network
    config: Config
    spec: RunSpec
    plan: Plan
    partition: Partition


class ClientLibraryManager:
    """A lock manager that runs in the client's library and keeps its lock words on the
    lock servers, reached with RDMA verbs (``entry_hops`` = 0): acquires go to
    :meth:`acquire`, releases to :meth:`release`; a lock lives on server ``lock mod
    servers.count``, at address ``lock``."""

    kind = ""
    sources = SOURCES
    entry_hops = 0
    one_at_a_time = False
    """Whether its clients take locks one at a time (:class:`sim.clients.Client`)."""
    attempt_timeout_us = 100_000.0
    """How long a one-at-a-time attempt waits for a lock before it is given up (us): the DSLR
    authors' harness waits 100 ms for a queued lock (``lock_simulator.cc`` line 136) and has
    no other client timeout."""

    def __init__(self, ctx: ManagerContext) -> None:
        cfg = ctx.config
        self.engine = ctx.engine
        self.env = ctx.engine.env
        self.network = ctx.network
        self.cfg = cfg
        self.servers = cfg.servers.count
        self.fabric = Fabric(ctx.engine, ctx.network, cfg.manager.rdma, cfg.servers.count,
                             cfg.clients.machines)
        self.packet_handlers = [self.on_packets]
        self.granted = 0
        self.denied = 0

    def on_packets(self, first: Req) -> None:
        for req in each_packet(first):
            if req.op == ACQUIRE:
                self.acquire(req)
            else:
                self.release(req)

    def acquire(self, req: Req) -> None:
        raise NotImplementedError

    def release(self, req: Req) -> None:
        raise NotImplementedError

    def node(self, lock: int) -> int:
        """The lock server holding ``lock``'s word."""
        return lock % self.servers

    def verb(self, req: Req, verb: int, apply: Any, done: Any, *args: Any) -> None:
        """Post ``verb`` on ``req``'s lock word for its client (see :meth:`Fabric.verb`)."""
        self.fabric.verb(req.client.cid, self.node(req.lock), verb, req.lock, apply, done,
                         req, *args)

    def grant(self, req: Req, lease_us: float | None = None) -> None:
        """The client library learns now that ``req`` holds its lock."""
        req.source = SERVER
        self.granted += 1
        now = self.env.now
        req.client.receive(req, now, now, lease_us)

    def released(self, _old: Any, req: Req, *_: Any) -> None:
        """A release's verb is back: the client learns now that it is done (a client that
        takes locks one at a time sends its next release then)."""
        req.client.on_released(req)

    def deny(self, req: Req) -> None:
        """The client library learns now that ``req`` failed (fail-and-retry designs)."""
        self.denied += 1
        self.engine.call_later(0.0, req.client.on_denied, req)

    def alive(self, req: Req) -> bool:
        """Whether ``req``'s transaction still waits for it (the library knows its own
        transaction; spinning for an attempt given up is pointless)."""
        return req.attempt == req.client.attempt and req.op == ACQUIRE

    def start(self) -> None:
        """Client-side designs run no control plane."""

    def stats(self) -> dict[str, Any]:
        return {"granted": self.granted, "denied": self.denied, **self.fabric.stats()}
