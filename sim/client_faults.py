"""What a simpy client does on a network that duplicates or reorders packets
(:class:`sim.network.Faults`): it sends each packet with its own delay draw, and the network
may add a copy or hold the packet back. A mixin of :class:`sim.clients.Client`, apart from
the lossless and lossy paths that nearly every run takes."""

from __future__ import annotations

from typing import Any

from netlock.client import BURST_US, starts_burst
from sim.client_inputs import SimpyRack
from sim.engine import Req
from sim.network import Faults, Machine, Network


class FaultyLinks:
    """The client's packets over faulty links; the attributes are :class:`sim.clients.Client`'s."""

    __slots__ = ()

    machine: Machine
    network: Network
    faults: Faults
    rack: SimpyRack
    tx_us: float
    grant_handlers: list
    deliver_at: Any

    def send_faulty(self, packets: list[Req], now: float) -> None:
        """:meth:`send_burst` over a network that duplicates or reorders: each packet
        draws its delay, then its fault; a held-back packet travels alone, outside the
        burst and the link's order; a copy follows its packet one hop delay later."""
        machine = self.machine
        gap = machine.gap_us
        t = machine.free_at
        if t < now + self.tx_us:
            t = now + self.tx_us
        hop = self.network.hop
        draw = self.faults.draw
        handlers = self.rack.packet_handlers
        up = machine.up
        first = prev = None
        start = last = delay = 0.0
        run = (sum(1 for req in packets if not req.op) - 1) * gap
        sent = 0
        for req in packets:
            acquire = not req.op
            if first is not None and starts_burst(start, t, acquire, sent, run, BURST_US):
                self.deliver_at(first, handlers, up.arrival(last + delay))
                first = None
            d = hop()
            if d >= 0:
                copy, extra = draw()
                if copy:
                    self.send_copy(req, t + d, handlers)
                req.follow = None
                if extra > 0:
                    self.faults.reordered += 1
                    self.deliver_at(req, handlers, t + d + extra)
                else:
                    if first is None:
                        first = req
                        start = t
                        delay = d
                    else:
                        prev.follow = req
                    prev = req
                    last = t
            if acquire:
                t += gap
                sent += 1
        machine.free_at = t
        if first is not None:
            self.deliver_at(first, handlers, up.arrival(last + delay))

    def send_copy(self, req: Req, after: float, handlers: list) -> None:
        """The network's copy of ``req`` (whose own arrival, link order aside, is
        ``after``): one more hop delay later, outside the link's order."""
        faults = self.faults
        d = self.network.hop()
        if d < 0:
            return
        _, extra = faults.draw()
        faults.copies += 1
        if extra > 0:
            faults.reordered += 1
        twin = req.copy()
        twin.follow = None
        self.deliver_at(twin, handlers, after + d + extra)

    def receive_faulty(self, req: Req, t: float) -> None:
        """A grant that would reach this client at ``t`` crosses a faulty down link."""
        copy, extra = self.faults.draw()
        if copy:
            self.send_copy(req, t, self.grant_handlers)
        if extra > 0:
            self.faults.reordered += 1
            self.deliver_at(req, self.grant_handlers, t + extra)
            return
        self.deliver_at(req, self.grant_handlers, self.machine.down.arrival(t))
