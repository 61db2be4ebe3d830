"""The server-centric lock manager (Chung and Zamanian, "Using RDMA for Lock Management",
section 3): lock servers keep a FIFO queue per lock and grant in order, shared requests
together while no exclusive holder is in the way. Request, grant and release are one
message each, and the server acknowledges each release with one more ("the corresponding
request is popped from the queue after the server acknowledges the release request"):
four messages per lock on the server's CPU. The client library blocks on it as on the
grant (the seed's clients use "blocking read and write"): a client's acquires sent after
releases leave only when every acknowledgement is back, so a lock costs a client two
round trips. (A release the network lost is not waited for: its transport's
retransmission is not modelled.)

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
from sim.managers.context import SERVER, SOURCES, ManagerContext
from sim.managers.interface import each_packet
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
        self.acks_due: dict[int, int] = {}
        """Per client: releases whose acknowledgement it still waits for."""
        self.blocked: dict[int, list[Req]] = {}
        """Per client: acquires it sends once those acknowledgements are back."""
        self.packet_handlers = [self.on_packets]
        self.granted = 0
        self.acks = 0

    def on_packets(self, first: Req) -> None:
        now = self.env.now
        for req in each_packet(first):
            cid = req.client.cid
            if req.op == ACQUIRE and self.acks_due.get(cid, 0) > 0:
                self.blocked.setdefault(cid, []).append(req)
            elif self.send(req, now) and req.op != ACQUIRE:
                self.acks_due[cid] = self.acks_due.get(cid, 0) + 1

    def send(self, req: Req, at_tor: float) -> bool:
        """``req``, at the ToR at ``at_tor``, goes on to its lock server; False if lost."""
        hop = self.network.hop()
        if hop < 0:
            return False
        server = self.servers[req.lock % len(self.servers)]
        arrival = server.up.arrival(at_tor + hop)
        self.engine.call_at(arrival, self.on_message, server, req)
        return True

    def on_ack(self, client: Any) -> None:
        """A release's acknowledgement reached ``client`` (after its receive processing);
        with the last one in, its blocked acquires leave (made now, through its NIC)."""
        cid = client.cid
        self.acks_due[cid] -= 1
        if self.acks_due[cid] > 0:
            return
        now = self.env.now
        leave = now + client.tx_us
        for req in self.blocked.pop(cid, ()):
            req.t_created = now
            hop = self.network.hop()
            if hop >= 0:
                self.send(req, leave + hop)

    def on_message(self, server: Server, req: Req) -> None:
        now = self.env.now
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
        if acks:
            self.acks += 1
            t = server.down.arrival(done + self.network.reliable_hop())
            self.engine.call_at(t + self.network.reliable_hop() + req.client.rx_us,
                                self.on_ack, req.client)

    def start(self) -> None:
        """No control plane: the design has no leases."""

    def stats(self) -> dict[str, Any]:
        return {"granted": self.granted, "acks": self.acks,
                "server_messages": [s.messages for s in self.servers],
                "server_busy_us": [s.busy_us for s in self.servers],
                "lost_packets": self.network.lost}
