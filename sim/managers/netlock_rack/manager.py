"""NetLock as a lock manager of the simulated rack: switch + lock servers + control plane.

Routing (paper section 4.1): every packet reaches the ToR switch first; the switch grants
or queues requests of the locks it owns, forwards the others to the lock server owning the
lock's partition, overflows full queues to that server (which only buffers them) and
notifies it when a queue drains so it pushes requests back. Servers grant the locks they
serve; their answers travel server -> switch -> client (two hops). In the one-RTT mode
(``one_rtt``, for workloads that read data) a switch grant travels through the database
server holding the data (two more hops), so the client gets lock and data together; a
lock server is its partition's database server, so its grants carry the data already.

Control plane: a lease sweep every ``lease.sweep_us`` on the switch and the servers,
per-tenant quota windows, and the failures of ``failures`` (see :mod:`.failures`).
"""

from __future__ import annotations

from typing import Any

from netlock.config import Config
from netlock.dataplane.registers import R_COUNT
from netlock.lockserver.request_path import FORGET_COPY, SEND_GRANT, SEND_PUSH_BACK, answer
from netlock.plan import Plan
from sim.core.allocation import Partition
from sim.core.parts import switch_dataplane
from sim.core.run_spec import unanswered_cutoff_us
from sim.engine import ACQUIRE, Engine, Req
from sim.managers.netlock_rack.inflight import ByRid
from sim.managers.netlock_rack.servers import ServerNode
from sim.managers.netlock_rack.switch_pipeline import SwitchNode
from sim.network import Network

SWITCH, SERVER = 0, 1


class NetLockManager:
    """The NetLock switch and lock servers of one rack, driven by one config and plan."""

    kind = "netlock"
    sources = ("switch", "server")
    entry_hops = 1

    def __init__(self, engine: Engine, network: Network, config: Config, plan: Plan,
                 partition: Partition, grant_extra_hops: int = 0) -> None:
        self.engine = engine
        self.env = engine.env
        self.network = network
        self.cfg = config
        self.plan = plan
        self.partition = partition
        self.grant_extra_hops = grant_extra_hops
        self.lease_us = round(config.lease.us)
        self.switch = self.new_switch()
        self.install_plan(self.switch)
        srv = config.servers
        self.servers = [ServerNode(self, s, srv.cores, srv.packet_us, srv.tx_burst,
                                   srv.tx_drain_us, srv.rx_ring)
                        for s in range(srv.count)]
        self.owner_of = list(range(config.servers.count))
        self.pending = ByRid()
        """Acquires forwarded to lock servers, until granted or pushed back."""
        self.server_grants = 0
        self.server_drops = 0
        self.unanswered_cutoff_us = unanswered_cutoff_us(config)
        self.open_loop_dropped = 0
        """Open-loop acquires sent before that cutoff that an RX ring dropped."""
        self.active = self.switch
        self.backup: SwitchNode | None = None
        """The backup switch while it hands its locks back to the restarted one."""
        self.staying: set[int] = set()
        """Locks the backup still serves during that hand-back."""
        self.packet_handlers = [self.switch.on_packets]
        self.stopped = False
        """The switch is down and drops every packet (``failures.switch_mode`` stop)."""

    # --- construction --------------------------------------------------------------------------

    def new_switch(self) -> SwitchNode:
        cfg = self.cfg
        return SwitchNode(self, switch_dataplane(cfg, len(self.plan.entries.lock_id)),
                          cfg.switch.pass_us, cfg.switch.rate_pps)

    def install_plan(self, node: SwitchNode) -> None:
        """Give every switch-resident lock of the plan its queue regions."""
        entries = self.plan.entries
        node.dp.install_many(entries.lock_id, entries.priority, entries.left, entries.right)
        node.refresh_table()

    def use_switch(self, node: SwitchNode) -> None:
        """Send lock packets to ``node`` from now on (a failover to the backup switch)."""
        self.active = node
        self.packet_handlers[0] = node.on_packets

    def node_for(self, lock: int) -> SwitchNode:
        """The switch serving ``lock`` now."""
        backup = self.backup
        if backup is not None and lock in self.staying:
            return backup
        return self.active

    def drop_packets(self, req: Req) -> None:
        """Packets reaching a stopped switch: all lost."""
        while req is not None:
            self.network.lost += 1
            nxt = req.follow
            req.follow = None
            req = nxt

    def route(self, req: Req) -> None:
        """Packets that arrived together, each to the switch serving its lock (while two
        switches share the locks)."""
        while req is not None:
            nxt = req.follow
            req.follow = None
            self.node_for(req.lock).on_packets(req)
            req = nxt

    def owner(self, lock: int) -> ServerNode:
        """The lock server currently owning ``lock``'s partition."""
        return self.servers[self.owner_of[self.partition.owner(lock)]]

    # --- packets out of the switch -----------------------------------------------------------

    def to_server(self, req: Req, overflow: bool, delay: float, priority: int) -> None:
        """Forward a packet to the lock server owning its lock (to serve, or to buffer).

        ``priority`` is the class the request travels under: its own for requests the
        server serves, and for overflow the class whose switch queue it overflowed (the
        switch's NOTIFY_SERVER names that class when it asks for push-backs)."""
        if not self.servers:
            return
        server = self.owner(req.lock)
        now = self.env.now
        op = req.op
        if op == ACQUIRE:
            self.pending.put(req)
        hop = self.network.reliable_hop() if overflow else self.network.hop()
        if hop >= 0:
            arrival = server.up.arrival(now + delay + hop)
            self.engine.call_at(arrival, server.on_request, req, op, overflow, priority,
                                int(now))

    def notify_server(self, lock: int, priority: int, count: int, delay: float) -> None:
        if not self.servers:
            return
        server = self.owner(lock)
        now = self.env.now
        arrival = server.up.arrival(now + delay + self.network.reliable_hop())
        self.engine.call_at(arrival, server.on_notify, lock, priority, count)

    def defer(self, req: Req, delay: float) -> None:
        hop = self.network.hop()
        if hop >= 0:
            now = self.env.now
            arrival = req.client.machine.down.arrival(now + delay + hop)
            self.engine.call_at(arrival, req.client.on_defer, req,
                               self.cfg.switch.quota_window_us)

    # --- packets out of the servers ----------------------------------------------------------

    def server_answer(self, server: ServerNode, kind: int, reason: int, txn: int,
                      push_back: int, t: float, core: int) -> None:
        """One action row of ``server``'s kernels about wire id ``txn``, from the packet its
        core ``core`` is done with at ``t`` (us; ``core`` < 0: its control logic, sent at
        once): :func:`netlock.lockserver.request_path.answer`."""
        what = answer(kind, reason)
        if what == SEND_GRANT:
            req = self.pending.take(txn)
            if req is None or self.stopped:
                return
            req.source = SERVER
            self.server_grants += 1
            server.send(core, req, t)
        elif what == SEND_PUSH_BACK:
            server.send(core, (txn, push_back), t)
        else:
            if what == FORGET_COPY:
                self.pending.take(txn)
            self.server_drops += 1

    def server_rx_drop(self, req: Req, op: int) -> None:
        """A server's RX rings dropped ``req`` sent as ``op``
        (:mod:`netlock.lockserver.rxring`): an acquire is no longer awaited from it."""
        if op == ACQUIRE:
            taken = self.pending.take(req.rid)
            if taken is not None and taken.t_created < self.unanswered_cutoff_us:
                self.open_loop_dropped += 1

    def server_send(self, server: ServerNode, packet: Req | tuple[int, int],
                    depart: float) -> None:
        """A server's packet leaves it at ``depart`` (us): a grant (the granted request)
        goes to its client through the switch, a push-back (wire id, whether it is one) to
        the switch."""
        now = self.env.now
        if type(packet) is tuple:
            arrival = server.down.arrival(depart + self.network.reliable_hop())
            self.engine.call_at(arrival, self.push_back, *packet)
            return
        first, second = self.network.hop(), self.network.hop()
        if first >= 0 and second >= 0:
            packet.client.receive(packet, server.down.arrival(depart + first) + second, now)

    def push_back(self, txn: int, push_back: int) -> None:
        """A request a server sends back reaches the switch: a push-back from its overflow
        buffer, or (``push_back`` 0) a request it held aside while a lock moved in."""
        req = self.pending.take(txn)
        if req is not None and not self.stopped:
            self.node_for(req.lock).acquire(req, push_back)

    # --- control plane -------------------------------------------------------------------------

    def start(self) -> None:
        self.engine.process(self._lease_sweeps())
        if any(t.quota_rps > 0 for t in self.cfg.tenants):
            self.engine.process(self._quota_windows())

    def _lease_sweeps(self):
        period = self.cfg.lease.sweep_us
        while True:
            yield self.env.timeout(period)
            now_us = int(self.env.now)
            self.active.expire(now_us, self.lease_us)
            if self.backup is not None:
                self.backup.expire(now_us, self.lease_us)
            for server in self.servers:
                if server.alive:
                    server.control(server.state.expire(now_us, self.lease_us))

    def _quota_windows(self):
        while True:
            yield self.env.timeout(self.cfg.switch.quota_window_us)
            self.active.dp.reset_quota_window()
            if self.backup is not None:
                self.backup.dp.reset_quota_window()

    def switch_queue_length(self) -> int:
        """Requests in the active switch's queues now (q1, all locks and classes)."""
        return int(self.active.dp.regions[:, :, R_COUNT].sum())

    def stats(self) -> dict[str, Any]:
        sw = self.active
        faults = self.network.faults
        out = {
            "server_grants": self.server_grants,
            "switch_expired": sw.dp.expired_total,
            "server_expired": sum(s.state.expired_total for s in self.servers),
            "server_packets": [s.packets for s in self.servers],
            "server_busy_us": [s.busy_us for s in self.servers],
            "switch_drops": sw.drops,
            "server_drops": self.server_drops,
            "server_rx_drops": sum(s.rx_drops for s in self.servers),
            "lost_packets": self.network.lost,
            "copied_packets": 0 if faults is None else faults.copies,
            "reordered_packets": 0 if faults is None else faults.reordered,
        }
        if sw.probe is not None:
            out.update(sw.probe.to_dict())
        return out

