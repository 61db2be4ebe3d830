"""The simpy engine's TX bursts: packets a core sends wait in its burst until the burst is
full or its drain timer fires, by :mod:`netlock.lockserver.txburst`'s steps (which the fast
engine applies to its arrays). Used by the lock servers' cores and by the open-loop
client's receiving cores, which send the same way (``enqueue_pkt`` in the authors' server
and client)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from netlock.lockserver.txburst import FULL, OPENED, TX_DUE, TX_SEQ, close, drain, new_row, send


class TxBursts:
    """The TX bursts of the cores whose rows are ``rows`` (lists starting with
    :mod:`netlock.lockserver.txburst`'s columns; an int: that many cores of their own):
    ``burst`` packets at most, drained at the first tick of ``drain_us`` after a burst
    opens. ``schedule(t, fn, *args)`` runs ``fn`` at time ``t`` (us); ``send(packets, t)``
    takes a burst leaving at ``t``."""

    __slots__ = ("buffers", "burst", "drain_us", "rows", "schedule", "send")

    def __init__(self, rows: list[list[float]] | int, burst: int, drain_us: float,
                 schedule: Callable[..., Any],
                 send: Callable[[list[Any], float], None]) -> None:
        self.rows = [new_row() for _ in range(rows)] if isinstance(rows, int) else rows
        self.burst = burst
        self.drain_us = drain_us
        self.schedule = schedule
        self.send = send
        self.buffers: list[list[Any]] = [[] for _ in self.rows]

    def add(self, core: int, packet: Any, t: float) -> None:
        """Core ``core`` sends ``packet`` at ``t`` (us): into its burst."""
        row = self.rows[core]
        late, late_at, _, outcome = send(row, t, self.burst, self.drain_us)
        buffer = self.buffers[core]
        if late:
            self.buffers[core] = []
            self.send(buffer, late_at)
            buffer = self.buffers[core]
        if outcome == FULL:
            self.buffers[core] = []
            buffer.append(packet)
            self.send(buffer, t)
            return
        buffer.append(packet)
        if outcome == OPENED:
            self.schedule(row[TX_DUE], self.drain, core, int(row[TX_SEQ]))

    def drain(self, core: int, seq: int) -> None:
        """Core ``core``'s drain timer fires for its burst ``seq``."""
        row = self.rows[core]
        if drain(row, seq):
            buffer, self.buffers[core] = self.buffers[core], []
            self.send(buffer, row[TX_DUE])

    def drop(self) -> None:
        """Every core's waiting packets are lost (the host failed)."""
        for core, row in enumerate(self.rows):
            self.buffers[core] = []
            close(row)
