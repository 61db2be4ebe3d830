"""The simpy engine's TX bursts: packets a core sends wait in its burst until the burst is
full or its drain timer fires, by :mod:`netlock.lockserver.txburst`'s rule (the one the
fast engine applies to its arrays). Used by the lock servers' cores and by the open-loop
client's receiving cores, which send the same way (``enqueue_pkt`` in the authors' server
and client)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from netlock.lockserver import txburst
from netlock.lockserver._server_jit import entry_point


class TxBursts:
    """The TX bursts of ``cores`` cores: ``burst`` packets at most, drained ``drain_us``
    after a burst opens. ``schedule(t, fn, *args)`` runs ``fn`` at time ``t`` (us);
    ``send(packets, t)`` takes a burst leaving at ``t``."""

    __slots__ = ("_add", "_close", "_drains", "_overdue", "buffers", "burst", "drain_us",
                 "schedule", "send", "tx")

    def __init__(self, cores: int, burst: int, drain_us: float,
                 schedule: Callable[..., Any],
                 send: Callable[[list[Any], float], None]) -> None:
        self.burst = burst
        self.drain_us = drain_us
        self.schedule = schedule
        self.send = send
        self.tx = tx = txburst.new_cores(1, cores)
        self.buffers: list[list[Any]] = [[] for _ in range(cores)]
        # Called per packet: the compiled rules without type dispatch (the types are fixed).
        self._overdue = entry_point(txburst.overdue, tx, 0, 0, 0.0)
        self._add = entry_point(txburst.add, tx, 0, 0, 0.0, 0, 0.0)
        self._close = entry_point(txburst.close, tx, 0, 0)
        self._drains = entry_point(txburst.drains, tx, 0, 0, 0)

    def add(self, core: int, packet: Any, t: float) -> None:
        """Core ``core`` sends ``packet`` at ``t`` (us): into its burst."""
        tx = self.tx
        if self._overdue(tx, 0, core, t):
            self._flush(core, float(tx[0, core, txburst.TX_DUE]))
        self.buffers[core].append(packet)
        outcome = self._add(tx, 0, core, t, self.burst, self.drain_us)
        if outcome == txburst.FULL:
            self._flush(core, t)
        elif outcome == txburst.OPENED:
            self.schedule(float(tx[0, core, txburst.TX_DUE]), self.drain, core,
                          int(tx[0, core, txburst.TX_SEQ]))

    def drain(self, core: int, seq: int) -> None:
        """Core ``core``'s drain timer fires for its burst ``seq``."""
        if self._drains(self.tx, 0, core, seq):
            self._flush(core, float(self.tx[0, core, txburst.TX_DUE]))

    def drop(self) -> None:
        """Every core's waiting packets are lost (the host failed)."""
        for core, _ in enumerate(self.buffers):
            self.buffers[core] = []
            self._close(self.tx, 0, core)

    def _flush(self, core: int, t: float) -> None:
        packets, self.buffers[core] = self.buffers[core], []
        self._close(self.tx, 0, core)
        self.send(packets, t)
