"""The rack network: per-hop delay with jitter, per-packet loss, and client NIC send limits.

A hop is one link traversal through the ToR (client -> switch, switch -> lock server, ...).
Its delay is half the client-switch-client round trip plus normal noise of standard
deviation ``jitter_us`` (clipped at zero); every hop independently loses the packet with
probability ``loss``. Draws are made in blocks from a numpy generator (:mod:`sim.core.draws`,
as the fast engine draws them) and handed out as Python floats, a lost packet being encoded
as a negative delay, so a hop costs one list pop.

Each direction of each cable is a :class:`Link`: packets on it arrive in the order they were
sent (noise never reorders a cable). The switch and the lock servers keep the overflow
protocol (overflow, notify, push-back) on reliable hops: NetLock's count of requests held
at a server assumes none of them vanishes, so those hops see delay but no loss.

:class:`Faults` adds duplication and reordering on the client<->switch hops, the ones every
acquire, grant and release crosses (switch<->server hops keep the loss model above: a copy
or an overtaking packet in the overflow protocol would break the switch's count of what a
server buffers and the one FIFO order of q1 + q2). A packet such a hop delivers is, with
probability ``duplicate``, delivered again one independent hop delay later (the copy may be
lost or reordered itself, never copied again); with probability ``reorder`` it is held back
by an exponential extra delay of mean ``reorder_delay_us`` and leaves its cable's FIFO
order (it neither waits for the packets ahead of it nor holds up those behind). Fault draws
come from their own stream, one per delivered packet, so a run without faults draws exactly
what it drew before, and both engines, handling packets in the same order, draw the same
faults.
"""

from __future__ import annotations

import numpy as np

from sim.core.draws import BLOCK, draw_faults, draw_hops


class Network:
    """Hop delays (us) and losses for one run, from its own random stream."""

    def __init__(self, rtt_us: float, jitter_us: float, loss: float,
                 rng: np.random.Generator, faults: Faults | None = None) -> None:
        self.half_rtt_us = rtt_us / 2.0
        self.jitter_us = jitter_us
        self.loss = loss
        self.rng = rng
        self.faults = faults if faults is not None and faults.on else None
        """Duplication and reordering of client<->switch hops; None when off."""
        self.lost = 0
        self.block: list[float] = []
        """Drawn hop delays, next at the end; hot paths may pop it directly (when it is not
        empty) and must then count a negative draw in ``lost`` themselves."""

    def _refill(self) -> None:
        delay = np.empty(BLOCK)
        draw_hops(self.rng, self.half_rtt_us, self.jitter_us, self.loss, delay)
        self.block.extend(delay[::-1].tolist())

    def _draw(self) -> float:
        if not self.block:
            self._refill()
        return self.block.pop()

    def hop(self) -> float:
        """Delay of one hop in us, or a negative number when the packet is lost."""
        if not self.block:
            self._refill()
        delay = self.block.pop()
        if delay < 0:
            self.lost += 1
        return delay

    def reliable_hop(self) -> float:
        """Delay of one hop that cannot lose the packet (us)."""
        delay = self._draw()
        return delay if delay >= 0 else self.half_rtt_us

    def path(self, hops: int) -> float:
        """Delay of ``hops`` consecutive hops in us, negative when any of them loses it."""
        total = 0.0
        for _ in range(hops):
            delay = self.hop()
            if delay < 0:
                return -1.0
            total += delay
        return total

    def reliable_path(self, hops: int) -> float:
        """Delay of ``hops`` hops for traffic the model does not subject to loss (data reads)."""
        return sum(self.reliable_hop() for _ in range(hops))


class Faults:
    """Duplication and reordering of client<->switch hops (module notes), from one stream.

    ``draw()`` gives the next packet's ``(duplicated, extra_us)``.
    """

    def __init__(self, duplicate: float, reorder: float, reorder_delay_us: float,
                 rng: np.random.Generator) -> None:
        self.duplicate = duplicate
        self.reorder = reorder
        self.reorder_delay_us = reorder_delay_us
        self.rng = rng
        self.on = duplicate > 0 or reorder > 0
        self.copies = 0
        self.reordered = 0
        self._copy: list[bool] = []
        self._extra: list[float] = []

    def draw(self) -> tuple[bool, float]:
        if not self._copy:
            copy = np.empty(BLOCK, dtype=bool)
            extra = np.empty(BLOCK)
            draw_faults(self.rng, self.duplicate, self.reorder, self.reorder_delay_us,
                        copy, extra)
            self._copy = copy[::-1].tolist()
            self._extra = extra[::-1].tolist()
        return self._copy.pop(), self._extra.pop()


class Link:
    """One direction of one cable: packets arrive in the order they were sent."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last = 0.0

    def arrival(self, t: float) -> float:
        """When a packet that would arrive at ``t`` does arrive: not before its predecessor."""
        if t < self.last:
            return self.last
        self.last = t
        return t


class Machine:
    """A client process's share of its machine's NIC: at most ``rate_rps`` lock requests
    per second leave it.

    A lock request is an acquire and its release; the acquire takes ``1 / rate_rps`` of the
    sender's time and the release rides free, so a client can release and ask again at
    once. Acquires wait for the NIC in the order they are sent (busy-until time, no
    events). ``up`` and ``down`` are the client's FIFO links to and from the switch.
    """

    __slots__ = ("down", "free_at", "gap_us", "up")

    def __init__(self, rate_rps: float) -> None:
        self.gap_us = 1e6 / rate_rps
        self.free_at = 0.0
        self.up = Link()
        self.down = Link()

