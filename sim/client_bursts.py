"""A simpy client's packets onto the network: each goes through its machine's NIC (its share,
:class:`sim.network.Machine`) and its FIFO up link, back to back, grouped into bursts that
travel with one delay draw (:func:`netlock.client.starts_burst`). A mixin of
:class:`sim.clients.Client`; on a network that duplicates or reorders packets it hands them to
:meth:`sim.client_faults.FaultyLinks.send_faulty`. The fast engine's counterpart is
:mod:`sim.fast.client_sends`."""

from __future__ import annotations

from netlock.client import BURST_US, starts_burst
from sim.client_faults import FaultyLinks
from sim.engine import Req


class ClientBursts(FaultyLinks):
    """The client's packets onto its links; the attributes are :class:`sim.clients.Client`'s."""

    __slots__ = ()

    lossy: bool

    def send_burst(self, packets: list[Req], now: float) -> None:
        """Send packets back to back through the NIC at client time ``now``; those leaving
        within ``BURST_US`` of the first of their group (releases and the acquire right
        behind them leave together), and all the attempt's acquires
        (:func:`netlock.client.starts_burst`), travel as one burst: one delay draw, one
        event, each packet still lost on its own, handled at the arrival of the group's last
        packet."""
        if self.faults is not None:
            self.send_faulty(packets, now)
            return
        machine = self.machine
        gap = machine.gap_us
        t = machine.free_at
        if t < now + self.tx_us:
            t = now + self.tx_us
        hop = self.rack.entry_hop
        lossy = self.lossy
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
            d = hop() if lossy or first is None else delay
            if d >= 0:
                req.follow = None
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
