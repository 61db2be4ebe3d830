"""One NetLock rack without time: a switch and its lock servers wired as in Algorithm 1.

A request reaches the switch; TO_SERVER, OVERFLOW and NOTIFY_SERVER actions go to the lock
server owning the lock; that server's PUSH_BACKs re-enter the switch in order; GRANT, DROP
and DEFER are what clients see. Delivery is synchronous and lossless, which is what trace
replay, the demo and protocol tests need; the simulator adds latency, loss and failures
around the same switch and server objects.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from netlock.dataplane import SwitchDataPlane
from netlock.lockserver import LockServer
from netlock.packets import Action, ActionKind, LockRequest
from netlock.plan import Plan

CLIENT_KINDS = frozenset({ActionKind.GRANT, ActionKind.DROP, ActionKind.DEFER})


@dataclass(frozen=True)
class Delivered:
    """A client-visible action and who produced it (``"switch"`` or ``"server"``)."""

    action: Action
    source: str


@dataclass
class RackTally:
    """Counts over a rack's lifetime: packets and passes at the switch, actions by kind."""

    switch_packets: int = 0
    switch_passes: int = 0
    actions: Counter = field(default_factory=Counter)
    grants: Counter = field(default_factory=Counter)

    @property
    def passes_per_packet(self) -> float:
        return self.switch_passes / self.switch_packets if self.switch_packets else 0.0


class TimelessRack:
    """A switch data plane and ``servers``; ``server_of(lock_id)`` names a lock's server."""

    def __init__(self, switch: SwitchDataPlane, servers: Sequence[LockServer],
                 server_of: Callable[[int], int], packet_passes: list[int] | None = None) -> None:
        self.switch = switch
        self.servers = list(servers)
        self.server_of = server_of
        self.tally = RackTally()
        self.packet_passes = packet_passes
        """When a list is given, every switch packet's pass count is appended to it."""

    @classmethod
    def from_plan(cls, plan: Plan, servers: int | None = None) -> TimelessRack:
        """A fresh rack with ``plan``'s regions installed and its partition as routing."""
        switch = SwitchDataPlane(plan.geometry)
        for row in plan.entries.rows():
            switch.install(row["lock_id"], row["priority"], row["left"], row["right"])
        count = max(servers or plan.servers, 1)
        return cls(switch, [LockServer() for _ in range(count)],
                   lambda lock_id: int(plan.server_of([lock_id], count)[0]))

    def send(self, req: LockRequest, now_us: int) -> list[Delivered]:
        """A client's packet reaches the switch; what clients see, in order."""
        seen: list[Delivered] = []
        self._run(deque([req]), seen, now_us)
        return seen

    def route(self, actions: Sequence[Action], now_us: int) -> list[Delivered]:
        """Deliver actions made outside a packet (lease sweeps, control plane)."""
        pending: deque[LockRequest] = deque()
        seen: list[Delivered] = []
        self._deliver(actions, "switch", pending, seen, now_us)
        self._run(pending, seen, now_us)
        return seen

    def expire(self, now_us: int, lease_us: int) -> list[Delivered]:
        """The control plane's lease sweep on the switch and every server."""
        seen = self.route(self.switch.expire(now_us, lease_us), now_us)
        for server in self.servers:
            pending: deque[LockRequest] = deque()
            self._deliver(server.expire(now_us, lease_us), "server", pending, seen, now_us)
            self._run(pending, seen, now_us)
        return seen

    def _run(self, pending: deque[LockRequest], seen: list[Delivered], now_us: int) -> None:
        while pending:
            outcome = self.switch.process(pending.popleft(), now_us)
            self.tally.switch_packets += 1
            self.tally.switch_passes += outcome.passes
            if self.packet_passes is not None:
                self.packet_passes.append(outcome.passes)
            self._deliver(outcome.actions, "switch", pending, seen, now_us)

    def _deliver(self, actions: Sequence[Action], source: str, pending: deque[LockRequest],
                 seen: list[Delivered], now_us: int) -> None:
        for action in actions:
            self.tally.actions[action.kind.name] += 1
            if action.kind in CLIENT_KINDS:
                if action.kind == ActionKind.GRANT:
                    self.tally.grants[source] += 1
                seen.append(Delivered(action, source))
            elif action.kind == ActionKind.PUSH_BACK:
                pending.append(action.request)
            else:
                server = self.servers[self.server_of(action.request.lock_id)]
                self._deliver(server.handle(action, now_us), "server", pending, seen, now_us)


@dataclass(frozen=True)
class ReplayResult:
    """What replaying a trace through a rack did (counts of requests and actions)."""

    requests: int
    granted: int
    granted_by_switch: int
    granted_by_server: int
    overflowed: int
    to_server: int
    pushed_back: int
    dropped: int
    switch_packets: int
    switch_passes: int
    max_passes: int
    ungranted: int

    @property
    def passes_per_packet(self) -> float:
        return self.switch_passes / self.switch_packets if self.switch_packets else 0.0

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["passes_per_packet"] = self.passes_per_packet
        return out


def replay_trace(rack: TimelessRack, lock_id: Sequence[int], mode: Sequence[int],
                 t_request: Sequence[float], t_release: Sequence[float],
                 txn_id: Sequence[int], client_id: Sequence[int]) -> ReplayResult:
    """Replay trace rows (times in s) through ``rack`` in time order.

    Each row's acquire is sent at ``t_request``; its release at ``t_release`` if it has been
    granted by then, otherwise as soon as the grant arrives (a queued request's hold is
    cut short, since the trace did not wait for it). Every request ends granted and
    released unless the rack drops it; the result counts what happened on the way.
    """
    from netlock.packets import Mode, Op

    n = len(lock_id)
    events = sorted([(float(t_request[i]), 0, i) for i in range(n)]
                    + [(float(t_release[i]), 1, i) for i in range(n)])
    requests = [LockRequest(Op.ACQUIRE, Mode(int(mode[i])), int(lock_id[i]), int(txn_id[i]),
                            int(client_id[i])) for i in range(n)]
    row_of = {(r.lock_id, r.txn_id, r.client_id): i for i, r in enumerate(requests)}
    granted_req: dict[int, LockRequest] = {}
    release_due = [False] * n
    released = [False] * n
    before = RackTally(rack.tally.switch_packets, rack.tally.switch_passes,
                       Counter(rack.tally.actions), Counter(rack.tally.grants))
    max_passes = 0
    queue: deque[tuple[int, LockRequest]] = deque()

    def settle(seen: list[Delivered]) -> None:
        for item in seen:
            if item.action.kind != ActionKind.GRANT:
                continue
            req = item.action.request
            row = row_of[(req.lock_id, req.txn_id, req.client_id)]
            granted_req[row] = req
            if release_due[row] and not released[row]:
                queue.append((row, req.release()))

    for t, kind, i in events:
        now_us = int(t * 1e6)
        if kind == 0:
            passes_before = rack.tally.switch_passes
            settle(rack.send(requests[i], now_us))
            max_passes = max(max_passes, rack.tally.switch_passes - passes_before)
        elif i in granted_req:
            queue.append((i, granted_req[i].release()))
        else:
            release_due[i] = True
        while queue:
            row, rel = queue.popleft()
            if released[row]:
                continue
            released[row] = True
            passes_before = rack.tally.switch_passes
            settle(rack.send(rel, now_us))
            max_passes = max(max_passes, rack.tally.switch_passes - passes_before)
    actions = rack.tally.actions - before.actions
    grants = rack.tally.grants - before.grants
    return ReplayResult(
        requests=n, granted=len(granted_req), granted_by_switch=grants["switch"],
        granted_by_server=grants["server"], overflowed=actions["OVERFLOW"],
        to_server=actions["TO_SERVER"], pushed_back=actions["PUSH_BACK"],
        dropped=actions["DROP"] + actions["DEFER"],
        switch_packets=rack.tally.switch_packets - before.switch_packets,
        switch_passes=rack.tally.switch_passes - before.switch_passes,
        max_passes=max_passes, ungranted=n - len(granted_req))
