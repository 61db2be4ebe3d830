"""The system under test: one SwitchDataPlane and one LockServer wired as in a rack.

Actions are routed synchronously: TO_SERVER, OVERFLOW and NOTIFY_SERVER go to the server;
its PUSH_BACKs re-enter the switch in order; GRANT, DROP and DEFER are what clients see.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np

from netlock.dataplane import SwitchDataPlane
from netlock.dataplane.registers import S_CLIENT, S_GRANTED, S_TXN, SLOT_GRANTED, register_name
from netlock.geometry import RegisterArray, SwitchGeometry
from netlock.lockserver import LockServer
from netlock.packets import Action, ActionKind, LockRequest, Mode, Op
from netlock.timeless_rack import TimelessRack


def small_geometry(priorities: int) -> SwitchGeometry:
    """18 slots in four arrays (sizes 5, 5, 4, 4) on stages 1-4."""
    sizes = (5, 5, 4, 4)
    return SwitchGeometry(tuple(RegisterArray(stage=1 + i, size=s) for i, s in enumerate(sizes)),
                          stages=8, priorities=priorities)


def region_layout(geometry: SwitchGeometry, locks: int = 4) -> dict[int, list[tuple[int, int]]]:
    """Regions ``[(left, right)]`` per class for locks ``0..locks-1``; small capacities
    so that queues overflow, and class 0's lock 1 spans two slot arrays."""
    layout: dict[int, list[tuple[int, int]]] = {lock: [] for lock in range(locks)}
    for first, last in geometry.priority_ranges:
        width = last - first + 1
        caps = (2, 4, 1, 2) if width >= 10 else (2, 3, 1, 2) if width >= 8 else (1, 1, 1, 1)
        at = first
        for lock in range(locks):
            layout[lock].append((at, at + caps[lock] - 1))
            at += caps[lock]
    return layout


class System:
    """One switch and one lock server (a :class:`TimelessRack`) with a clock; actions come back
    without their source."""

    def __init__(self, geometry: SwitchGeometry, trace_capacity: int = 0) -> None:
        self.passes: list[int] = []
        self.rack = TimelessRack(SwitchDataPlane(geometry, trace_capacity=trace_capacity),
                         [LockServer()], lambda lock_id: 0, packet_passes=self.passes)
        self.switch = self.rack.switch
        self.server = self.rack.servers[0]
        self.now = 0

        self.slot_of: dict[tuple[int, int, int], int] = {}
        """The slot of each switch grant seen, by (lock, txn, client): what its client
        knows and names in the release."""

    def send(self, req: LockRequest) -> list[Action]:
        """A client's packet reaches the switch; returns what clients see, in order.

        A release without a slot names its grant's (as a client does)."""
        if req.op == Op.RELEASE and req.slot == -1:
            req = replace(req, slot=self.slot_of.get((req.lock_id, req.txn_id, req.client_id),
                                                     -1))
        return self._seen([d.action for d in self.rack.send(req, self.now)])

    def route(self, actions: list[Action]) -> list[Action]:
        """Deliver actions produced outside a packet (control plane, server)."""
        return self._seen([d.action for d in self.rack.route(actions, self.now)])

    def expire(self, lease_us: int) -> list[Action]:
        return self._seen([d.action for d in self.rack.expire(self.now, lease_us)])

    def _seen(self, actions: list[Action]) -> list[Action]:
        for a in actions:
            if a.kind == ActionKind.GRANT:
                r = a.request
                self.slot_of[(r.lock_id, r.txn_id, r.client_id)] = r.slot
        return actions


def assert_one_access_per_pass(trace: np.ndarray) -> None:
    """Each pass touched every register array at one index at most."""
    seen: dict[tuple[int, int], int] = {}
    for pass_no, reg, index in trace.tolist():
        first = seen.setdefault((pass_no, reg), index)
        assert first == index, (
            f"pass {pass_no} touched {register_name(reg)} at {first} and at {index}")


S, X = Mode.SHARED, Mode.EXCLUSIVE


def acq(lock: int, txn: int, mode: Mode, priority: int = 0, tenant: int = 0) -> LockRequest:
    """An acquire of ``lock`` by transaction (and client) ``txn``."""
    return LockRequest(Op.ACQUIRE, mode, lock, txn, txn, tenant=tenant, priority=priority)


def rel(lock: int, txn: int, mode: Mode, priority: int = 0,
        switch: SwitchDataPlane | None = None) -> LockRequest:
    """A release of ``lock`` by transaction (and client) ``txn``; with ``switch``, naming
    the slot of its grant there (what the client learned from the grant), else no slot."""
    return LockRequest(Op.RELEASE, mode, lock, txn, txn, priority=priority,
                       slot=-1 if switch is None else granted_slot(switch, lock, txn))


def granted_slot(switch: SwitchDataPlane, lock: int, txn: int) -> int:
    """The slot of ``lock``'s region holding the grant of transaction (and client) ``txn``
    in ``switch``, or -1."""
    i = switch.lock_index(lock)
    for region in switch.occupancy(lock) if i >= 0 else []:
        for k in range(region["left"], region["right"] + 1):
            row = switch.slots[k]
            if row[S_GRANTED] == SLOT_GRANTED and row[S_TXN] == txn and row[S_CLIENT] == txn:
                return k
    return -1


def kinds(actions: list[Action]) -> list[tuple[str, int]]:
    """``(kind, txn)`` per action, for compact assertions."""
    return [(a.kind.name, a.request.txn_id) for a in actions]


def scripted_run(seed: int, steps: int) -> list[list]:
    """A deterministic random workload on a two-class System; returns every observable
    (client-visible actions with their passes, and the final counters) as plain lists."""
    rng = random.Random(seed)
    geometry = small_geometry(2)
    system = System(geometry)
    for lock, regions in region_layout(geometry).items():
        if lock < 3:
            for c, (left, right) in enumerate(regions):
                system.switch.install(lock, c, left, right)
    held: list[LockRequest] = []
    log: list[list] = []
    txn = 0
    for _ in range(steps):
        system.now += rng.randint(0, 30)
        roll = rng.random()
        if roll < 0.5 or not held:
            txn += 1
            seen = system.send(acq(rng.randrange(5), txn, rng.choice([S, X]), rng.randrange(2)))
        elif roll < 0.95:
            seen = system.send(held.pop(rng.randrange(len(held))).release())
        else:
            system.now += 500
            seen = system.expire(400)
            held.clear()
        held += [a.request for a in seen if a.kind == ActionKind.GRANT]
        log.append([[a.kind.name, a.request.txn_id, a.request.priority] for a in seen]
                   + [system.passes[-1] if system.passes else 0])
    log.append({k: v.tolist() for k, v in system.switch.counters().items()})
    return log
