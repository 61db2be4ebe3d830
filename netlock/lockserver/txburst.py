"""When a DPDK core's TX burst leaves: the lock server's send batching, written once.

The authors' lock server (netx-repo/NetLock ``dpdk_code/lock_server_code``) puts every grant
and push-back it sends through ``enqueue_pkt`` (``include/util.h`` lines 352-361): the packet
joins its core's TX buffer, which goes out (``send_pkt_burst``) when it holds
``NC_MAX_BURST_SIZE`` = 32 packets (``util.h`` line 66), or when the core's drain timer fires
(``server.c`` lines 375 and 498-500: every 10 us, on a fixed grid, whether or not a full burst
left in between). A packet therefore leaves when its burst fills or at the first drain tick
at or after it entered, whichever is first.

A core's state is a row (``TX_*`` columns; a longer row may follow them with columns of its
own, as the lock server's cores do, :mod:`netlock.lockserver.request_path`): the packets in
its open burst, the drain tick that burst leaves at unless it fills first (us), and a
sequence number naming the open burst (a drain event scheduled for an earlier burst finds a
different number and does nothing). Drain ticks are multiples of ``drain_us`` from time 0
(the cores' timer phases are not known; chosen: aligned). The engine keeps the packets
themselves, in arrival order, and calls two steps:

- :func:`send` for each packet a core sends at ``t`` (when the core is done with the packet
  that caused it; ``t`` never decreases on one core): it says which buffered packets leave
  and when, where this one goes, and whether to schedule a drain;
- :func:`drain` at a drain event: how many buffered packets leave at the row's ``TX_DUE``.

``burst`` <= 1 or ``drain_us`` <= 0 turns the batching off: every packet leaves at once.
Every function is :func:`jitable`: compiled into the fast engine's loop, plain Python (over a
list) in the simpy engine.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from netlock.dataplane._kernel_jit import jitable

TX_COUNT, TX_DUE, TX_SEQ = range(3)
N_TX = 3

JOINED, OPENED, FULL = range(3)
""":func:`send`'s outcomes for the packet it was given."""


def new_cores(count: int, cores: int, width: int = N_TX) -> np.ndarray:
    """The TX rows of ``count`` x ``cores`` cores, every buffer empty: shape
    (count, cores, ``width``), ``width`` >= :data:`N_TX`."""
    return np.zeros((count, cores, width))


def new_row(width: int = N_TX) -> list[float]:
    """One core's row, its buffer empty, as a Python list (the simpy engine's)."""
    return [0.0] * width


@jitable
def drain_tick(t: float, drain_us: float) -> float:
    """The first drain tick at or after ``t`` (us)."""
    return math.ceil(t / drain_us) * drain_us


@jitable
def close(row: Any) -> None:
    """The open burst was sent (or lost with its host): the buffer is empty and the next
    burst has a new number."""
    row[TX_COUNT] = 0
    row[TX_SEQ] += 1


@jitable
def send(row: Any, t: float, burst: int, drain_us: float) -> tuple[int, float, int, int]:
    """A core sends a packet at ``t`` (us). Returns ``(late, late_at, slot, outcome)``, which
    the engine follows in order:

    1. ``late`` > 0: the open burst left at its drain tick ``late_at``, before ``t``: the
       ``late`` packets in the buffer leave then (the buffer empties);
    2. the packet joins the buffer at position ``slot`` (0 = first);
    3. ``outcome``: ``FULL``: the buffer's ``slot`` + 1 packets leave at ``t`` (the buffer
       empties); ``OPENED``: the first of a burst: schedule :func:`drain` for
       ``row[TX_SEQ]`` at ``row[TX_DUE]``; ``JOINED``: nothing more."""
    late = 0
    late_at = 0.0
    if row[TX_COUNT] > 0 and t > row[TX_DUE]:
        late = int(row[TX_COUNT])
        late_at = row[TX_DUE]
        close(row)
    slot = int(row[TX_COUNT])
    row[TX_COUNT] += 1
    if burst <= 1 or drain_us <= 0 or row[TX_COUNT] >= burst:
        close(row)
        return late, late_at, slot, FULL
    if slot == 0:
        row[TX_DUE] = drain_tick(t, drain_us)
        return late, late_at, slot, OPENED
    return late, late_at, slot, JOINED


@jitable
def drain(row: Any, seq: int) -> int:
    """A drain event for burst ``seq`` fires: the packets in the buffer that leave at
    ``row[TX_DUE]`` (all of them; 0 when burst ``seq`` already left)."""
    if row[TX_COUNT] > 0 and row[TX_SEQ] == seq:
        n = int(row[TX_COUNT])
        close(row)
        return n
    return 0
