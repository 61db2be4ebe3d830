"""NetChain (Jin et al., NSDI'18) as a lock service, as the NetLock paper ran it (6.1).

Each lock is a switch register holding its owner or nothing; a lock request is a
test-and-set that travels the chain of ``chain_length`` switches (head to tail, one
pipeline pass each) and the tail answers. NetChain has exclusive locks only: shared
requests are taken exclusively. A request that finds the register set is refused and the
client retries its transaction after its back-off (NetChain has no queue); a release clears
the register if its owner sends it. There are no lock servers: locks are coarsened
(``policy.coarse_group``) so that the register array (``switch.slots`` registers) holds
them all, and a run reports how many registers it used. There are no leases either: a
lost release leaves its lock set (the liveness checker shows it).
"""

from __future__ import annotations

from typing import Any

from sim.engine import ACQUIRE, Req
from sim.managers.context import SOURCES, SWITCH, ManagerContext
from sim.managers.interface import each_packet


class NetChainManager:
    """Test-and-set registers along a chain of switches."""

    kind = "netchain"
    sources = SOURCES
    entry_hops = 1

    def __init__(self, ctx: ManagerContext) -> None:
        cfg = ctx.config
        self.engine = ctx.engine
        self.env = ctx.engine.env
        self.network = ctx.network
        self.chain = cfg.manager.netchain.chain_length
        self.pass_us = cfg.switch.pass_us
        self.registers: dict[int, int] = {}
        self.capacity = cfg.switch.slots
        self.packet_handlers = [self.on_packets]
        self.granted = 0
        self.denied = 0
        self.seen: set[int] = set()

    def through_chain(self) -> float:
        """From the head switch to the tail's answer leaving it: a pass per switch and a
        hop between neighbours (us)."""
        hops = sum(self.network.reliable_hop() for _ in range(self.chain - 1))
        return self.chain * self.pass_us + hops

    def on_packets(self, first: Req) -> None:
        for req in each_packet(first):
            self.seen.add(req.lock)
            if req.op == ACQUIRE:
                self.test_and_set(req)
            elif self.registers.get(req.lock) == req.rid:
                del self.registers[req.lock]

    def test_and_set(self, req: Req) -> None:
        now = self.env.now
        back = self.network.hop()
        if req.lock not in self.registers:
            self.registers[req.lock] = req.rid
            self.granted += 1
            if back >= 0:
                req.source = SWITCH
                req.client.receive(req, now + self.through_chain() + back, now)
            return
        self.denied += 1
        if back >= 0:
            t = req.client.machine.down.arrival(now + self.through_chain() + back)
            self.engine.call_at(t, req.client.on_denied, req)

    def start(self) -> None:
        """NetChain's lock service runs no control plane."""

    def stats(self) -> dict[str, Any]:
        return {"granted": self.granted, "denied": self.denied,
                "registers_used": len(self.seen), "registers": self.capacity,
                "fits": len(self.seen) <= self.capacity,
                "lost_packets": self.network.lost}
