"""Deterministic lock traffic through an emulated switch and in-process lock servers.

Clients run closed loops -- acquire a lock (shared or exclusive), hold it a few ticks,
release it, think, repeat -- through :class:`~netlock.dataplane.SwitchDataPlane` and
:class:`~netlock.lockserver.LockServer`; requests for locks the switch does not own go to the
server its partition table names. Packets are delivered in order within a tick, so no packet
is in flight while a push step runs, but a tick of traffic runs between any two operations of
a push (:class:`SimPacer`). ``hot`` locks, when set, get ``hot_share`` of the acquires.
An independent checker counts safety violations (an exclusive holder beside any other
holder), duplicated grants (a grant to a request that already has one) and, once traffic
stops, lost requests (an acquire never granted). :class:`SimPacer` lets a push wait in
simulated time while the traffic runs.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from hwrunner.emulator import EmulatedSwitch
from hwrunner.server_handover import LocalLockServers
from netlock.lockserver import LockServer
from netlock.packets import Action, ActionKind, LockRequest, Mode, Op
from netlock.plan import Plan

TICK_US = 10


@dataclass
class Client:
    client_id: int
    txn: int = 0
    state: str = "idle"  # idle -> waiting -> holding -> idle
    lock: int = -1
    mode: Mode = Mode.SHARED
    until_us: int = 0
    slot: int = -1
    """The switch slot of its grant, which its release names (-1: granted by a server)."""
    stuck: bool = False
    """A client that never releases (to make a drain time out)."""


@dataclass
class Checker:
    holders: dict[int, dict[tuple[int, int], Mode]] = field(default_factory=dict)
    violations: int = 0
    duplicates: int = 0
    grants: int = 0
    anomalies: list[str] = field(default_factory=list)

    def granted(self, req: LockRequest) -> None:
        held = self.holders.setdefault(req.lock_id, {})
        key = (req.txn_id, req.client_id)
        if key in held:
            self.duplicates += 1
            return
        modes = set(held.values())
        if held and (req.mode == Mode.EXCLUSIVE or Mode.EXCLUSIVE in modes):
            self.violations += 1
        held[key] = req.mode
        self.grants += 1

    def released(self, req: LockRequest) -> None:
        self.holders.get(req.lock_id, {}).pop((req.txn_id, req.client_id), None)


class Traffic:
    """Clients, two kinds of lock managers, and a checker, advanced tick by tick."""

    def __init__(self, switch: EmulatedSwitch, plan: Plan, locks: list[int], clients: int,
                 seed: int = 1, servers: int = 2) -> None:
        self.switch = switch
        self.plan = plan
        self.locks = locks
        self.hot: list[int] = []
        self.hot_share = 0.0
        self.rng = random.Random(seed)
        self.now_us = 0
        self.clients = [Client(c) for c in range(clients)]
        self.by_txn: dict[tuple[int, int], Client] = {}
        self.servers = [LockServer() for _ in range(servers)]
        self.checker = Checker()
        self.acquires = 0
        self.running = True
        self.packets: deque[tuple[str, object]] = deque()

    # --- routing -------------------------------------------------------------------------

    def server_of(self, lock_ids: np.ndarray) -> np.ndarray:
        """The switch's partition table decides; before it has entries, the plan does."""
        routed = self.switch.server_of(lock_ids)
        return np.where(routed >= 0, routed, self.plan.server_of(lock_ids))

    def server(self, lock: int) -> LockServer:
        return self.servers[int(self.server_of(np.array([lock]))[0])]

    def deliver(self, actions: list[Action]) -> None:
        for action in actions:
            self.packets.append(("action", action))
        self._drain_packets()

    def _to_switch(self, req: LockRequest) -> None:
        self.packets.append(("switch", req))
        self._drain_packets()

    def _drain_packets(self) -> None:
        while self.packets:
            kind, item = self.packets.popleft()
            if kind == "switch":
                out = self.switch.dataplane.process(item, self.now_us)  # type: ignore[arg-type]
                self.packets.extend(("action", a) for a in out.actions)
                continue
            action: Action = item  # type: ignore[assignment]
            req = action.request
            if action.kind == ActionKind.GRANT:
                self._granted(req)
            elif action.kind in (ActionKind.TO_SERVER, ActionKind.OVERFLOW,
                                 ActionKind.NOTIFY_SERVER):
                out = self.server(req.lock_id).handle(action, self.now_us)
                self.packets.extend(("action", a) for a in out)
            elif action.kind == ActionKind.PUSH_BACK:
                self.packets.append(("switch", req))
            else:
                self.checker.anomalies.append(f"{action.kind.name} {action.reason.name} {req}")

    def _granted(self, req: LockRequest) -> None:
        self.checker.granted(req)
        client = self.by_txn.get((req.txn_id, req.client_id))
        if client is None or client.state != "waiting" or client.lock != req.lock_id:
            self.checker.anomalies.append(f"grant nobody waits for: {req}")
            return
        client.state = "holding"
        client.slot = req.slot
        client.until_us = self.now_us + TICK_US * self.rng.randint(1, 3)

    # --- time ----------------------------------------------------------------------------

    def tick(self) -> None:
        self.now_us += TICK_US
        for client in self.clients:
            if client.state == "holding" and self.now_us >= client.until_us and not client.stuck:
                req = LockRequest(Op.RELEASE, client.mode, client.lock, client.txn,
                                  client.client_id, slot=client.slot)
                self.checker.released(req)
                client.state = "idle"
                client.until_us = self.now_us + TICK_US * self.rng.randint(0, 2)
                self._to_switch(req)
            elif client.state == "idle" and self.running and self.now_us >= client.until_us:
                client.txn += 1
                hot = bool(self.hot) and self.rng.random() < self.hot_share
                client.lock = self.rng.choice(self.hot if hot else self.locks)
                client.mode = Mode.EXCLUSIVE if self.rng.random() < 0.6 else Mode.SHARED
                client.state = "waiting"
                self.by_txn[(client.txn, client.client_id)] = client
                self.acquires += 1
                self._to_switch(LockRequest(Op.ACQUIRE, client.mode, client.lock, client.txn,
                                            client.client_id, timestamp_us=self.now_us))

    def request(self, lock: int, mode: Mode = Mode.EXCLUSIVE) -> None:
        """A new client acquires ``lock`` now (then behaves like the others)."""
        client = Client(len(self.clients), txn=1, state="waiting", lock=lock, mode=mode)
        self.clients.append(client)
        self.by_txn[(client.txn, client.client_id)] = client
        self.acquires += 1
        self._to_switch(LockRequest(Op.ACQUIRE, mode, lock, client.txn, client.client_id,
                                    timestamp_us=self.now_us))

    def run(self, ticks: int) -> None:
        for _ in range(ticks):
            self.tick()

    def finish(self, max_ticks: int = 20_000) -> None:
        """Stop new acquires and run until every client is idle (or give up)."""
        self.running = False
        for client in self.clients:
            client.stuck = False
        for _ in range(max_ticks):
            if all(c.state == "idle" for c in self.clients):
                return
            self.tick()

    @property
    def waiting(self) -> int:
        return sum(c.state == "waiting" for c in self.clients)

    def lock_servers(self) -> LocalLockServers:
        return LocalLockServers(self.servers, self.server_of, self.deliver,
                                lambda: self.now_us, self.switch.take_outbox)


class SimPacer:
    """Push time is simulated time; waiting runs the traffic."""

    def __init__(self, traffic: Traffic) -> None:
        self.traffic = traffic

    def now(self) -> float:
        return self.traffic.now_us / 1e6

    def wait(self, seconds: float) -> None:
        self.traffic.run(max(1, int(seconds * 1e6 / TICK_US)))
