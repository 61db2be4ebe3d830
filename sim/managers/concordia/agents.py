"""What Concordia keeps per cache block besides its lock, and the home agents' CPUs.

**Global metadata** (FAST'21, 5.1.1): a block's copyset (the memory nodes holding a copy,
a bitmap) and its global status. A write leaves the writer the only holder (Modified); a
read adds the reader (Shared). A coherence request is forwarded to the other nodes of the
copyset (invalidations for a write; the data provider and the other sharers for a read,
Table 3): their number is the request's multicast fan-out, which is also the block's
hotness for ownership migration (5.2.2). An empty copyset (Unshared) sends the request to
the home agent, which supplies the data from global memory; a copyset holding only the
requester is answered at once.

**Home agents** (5.1.1, 5.2): one per memory node, a software thread that handles the
coherence requests of the blocks it owns with the same lock rule as the switch; every
message it receives or sends costs one of its cores ``message_us``.
"""

from __future__ import annotations

import heapq

from sim.managers.concordia.locks import RwLocks


class Metadata:
    """Copysets (bitmaps over memory nodes) and global status of every block touched."""

    __slots__ = ("copyset",)

    def __init__(self) -> None:
        self.copyset: dict[int, int] = {}

    def event(self, block: int, node: int, exclusive: bool) -> tuple[int, bool]:
        """Apply a coherence event of ``node`` on ``block``: its multicast fan-out (other
        holders reached) and whether the block was Unshared (the home agent sends data)."""
        cs = self.copyset.get(block, 0)
        me = 1 << node
        fanout = (cs & ~me).bit_count()
        self.copyset[block] = me if exclusive else cs | me
        return fanout, cs == 0


class HomeAgent:
    """One memory node's home agent: the locks of the blocks it owns, this epoch's hotness
    of those blocks, and its cores (busy-until times, us)."""

    def __init__(self, cores: int, message_us: float) -> None:
        self.locks = RwLocks()
        self.hotness: dict[int, int] = {}
        self.cores = [0.0] * cores
        self.message_us = message_us
        self.messages = 0

    def work(self, now: float, messages: int) -> float:
        """The earliest free core handles ``messages`` messages arriving at ``now``; when
        it is done (us)."""
        start = max(heapq.heappop(self.cores), now)
        done = start + messages * self.message_us
        heapq.heappush(self.cores, done)
        self.messages += messages
        return done
