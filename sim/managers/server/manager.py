"""The server-centric lock manager (Chung and Zamanian, "Using RDMA for Lock Management",
section 3): lock servers keep a FIFO queue per lock and grant in order, shared requests
together while no exclusive holder is in the way. Request, grant and release are one
message each, and the server acknowledges each release with one more ("the corresponding
request is popped from the queue after the server acknowledges the release request"):
four messages per lock on the server's CPU. The model's clients do not wait for that
acknowledgement (the rack's client rules send a release and move on).

The queue rules are the lock server's of :mod:`netlock.lockserver` (a FIFO queue per lock
with that compatibility rule). What differs is the transport's cost on the server's CPU:
every message, received or sent, costs a core ``message_us`` -- kernel TCP
(``manager.server.tcp_message_us``) or RDMA send/receive, whose NIC moves the bytes
(``rdma_message_us``; the server's RNIC also executes each SEND at its verb rate). Any core
takes any message (a thread per connection). Packets reach a server through the ToR (two
hops from the client), and so do its grants.
"""

from __future__ import annotations

import heapq
from typing import Any

from netlock.lockserver import LockServer
from netlock.packets import ActionKind, LockRequest, Mode, Op
from sim.engine import ACQUIRE, Req
from sim.managers.base import each_packet
from sim.managers.context import SERVER, SOURCES, ManagerContext
from sim.managers.rdma import SEND, Rnic
from sim.network import Link

OPS = (Op.ACQUIRE, Op.RELEASE)
MODES = (Mode.SHARED, Mode.EXCLUSIVE)


class Server:
    """One lock server: its queues, its cores (busy-until times) and, over RDMA, its RNIC."""

    def __init__(self, cores: int, message_us: float, nic: Rnic | None) -> None:
        self.state = LockServer()
        self.cores = [0.0] * cores
        self.message_us = message_us
        self.nic = nic
        self.up = Link()
        self.down = Link()
        self.messages = 0
        self.busy_us = 0.0

    def work(self, now: float, messages: int) -> float:
        """The earliest free core handles ``messages`` messages arriving at ``now``; when
        it is done (us)."""
        start = heapq.heappop(self.cores)
        if start < now:
            start = now
        if self.nic is not None:
            for _ in range(messages):
                start = max(start, self.nic.execute(now, SEND, 0))
        done = start + messages * self.message_us
        heapq.heappush(self.cores, done)
        self.messages += messages
        self.busy_us += messages * self.message_us
        return done


class ServerCentricManager:
    """FIFO lock queues on the lock servers, reached by messages over TCP or RDMA S/R."""

    sources = SOURCES
    entry_hops = 1

    def __init__(self, ctx: ManagerContext, transport: str) -> None:
        cfg = ctx.config
        self.kind = f"server-{transport}"
        self.engine = ctx.engine
        self.env = ctx.engine.env
        self.network = ctx.network
        sc = cfg.manager.server
        message_us = sc.tcp_message_us if transport == "tcp" else sc.rdma_message_us
        self.servers = [Server(cfg.servers.cores, message_us,
                               Rnic(cfg.manager.rdma) if transport == "rdma" else None)
                        for _ in range(cfg.servers.count)]
        self.pending: dict[int, Req] = {}
        self.packet_handlers = [self.on_packets]
        self.granted = 0

    def on_packets(self, first: Req) -> None:
        now = self.env._now
        for req in each_packet(first):
            hop = self.network.hop()
            if hop < 0:
                continue
            server = self.servers[req.lock % len(self.servers)]
            arrival = server.up.arrival(now + hop)
            self.engine.call_at(arrival, self.on_message, server, req)

    def on_message(self, server: Server, req: Req) -> None:
        now = self.env._now
        lreq = LockRequest(OPS[req.op], MODES[req.mode], req.lock, req.rid, req.client.cid,
                           timestamp_us=int(now))
        if req.op == ACQUIRE:
            self.pending[req.rid] = req
        grants = [self.pending.pop(a.request.txn_id) for a in server.state.process(lreq,
                                                                                  int(now))
                  if a.kind == ActionKind.GRANT]
        acks = 0 if req.op == ACQUIRE else 1
        done = server.work(now, 1 + acks + len(grants))
        for granted in grants:
            first, second = self.network.hop(), self.network.hop()
            self.granted += 1
            if first >= 0 and second >= 0:
                granted.source = SERVER
                t = server.down.arrival(done + first) + second
                granted.client.receive(granted, t, now)

    def start(self) -> None:
        """No control plane: the design has no leases."""

    def stats(self) -> dict[str, Any]:
        return {"granted": self.granted,
                "server_messages": [s.messages for s in self.servers],
                "server_busy_us": [s.busy_us for s in self.servers],
                "lost_packets": self.network.lost}
