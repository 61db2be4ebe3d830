"""When a DPDK core's TX burst leaves: the lock server's send batching, written once.

The authors' lock server (netx-repo/NetLock ``dpdk_code/lock_server_code``) puts every grant
and push-back it sends through ``enqueue_pkt`` (``include/util.h`` lines 352-361): the packet
joins its core's TX buffer, which goes out (``send_pkt_burst``) when it holds
``NC_MAX_BURST_SIZE`` = 32 packets (``util.h`` line 66), or when the core's drain timer fires
(``server.c`` lines 375 and 498-500: every 10 us, on a fixed grid, whether or not a full burst
left in between). A packet therefore leaves when its burst fills or at the first drain tick
at or after it entered, whichever is first.

A core's state is one float64 row ``tx[server, core]`` (``TX_*`` columns): the packets in
its open burst, the drain tick that burst leaves at unless it fills first (us), and a
sequence number naming the open burst (a drain event scheduled for an earlier burst finds a
different number and does nothing). Drain ticks are multiples of ``drain_us`` from time 0
(the cores' timer phases are not known; chosen: aligned). An engine calls, for each packet a
core sends at ``t`` (when the core is done with the packet that caused it; ``t`` never
decreases on one core):

1. :func:`overdue`: the open burst left at its tick before ``t``: send its packets at
   ``row[TX_DUE]``, then :func:`close`;
2. :func:`add`: ``FULL`` (send the buffered packets and this one at ``t``, then
   :func:`close`), ``OPENED`` (the first of a burst: schedule a drain at ``row[TX_DUE]`` for
   ``row[TX_SEQ]``) or ``JOINED``;

and at a drain event for sequence ``seq``, :func:`drains`: whether the open burst is that
one (send at its tick, then :func:`close`). ``burst`` <= 1 or ``drain_us`` <= 0 turns the
batching off: every packet is ``FULL`` on its own and leaves at ``t``.
"""

from __future__ import annotations

import math

import numpy as np

from netlock.lockserver._server_jit import kernel, step_kernel

TX_COUNT, TX_DUE, TX_SEQ = range(3)
N_TX = 3

JOINED, OPENED, FULL = range(3)


def new_cores(servers: int, cores: int) -> np.ndarray:
    """The TX state of ``servers`` x ``cores`` cores, every buffer empty: shape
    (servers, cores, N_TX)."""
    return np.zeros((servers, cores, N_TX))


@step_kernel
def drain_tick(t: float, drain_us: float) -> float:
    """The first drain tick at or after ``t`` (us)."""
    return math.ceil(t / drain_us) * drain_us


@step_kernel
def overdue(tx: np.ndarray, s: int, c: int, t: float) -> bool:
    """Whether the open burst of server ``s``'s core ``c`` left at its drain tick before a
    packet entering at ``t``."""
    return tx[s, c, TX_COUNT] > 0 and t > tx[s, c, TX_DUE]


@step_kernel
def add(tx: np.ndarray, s: int, c: int, t: float, burst: int, drain_us: float) -> int:
    """A packet enters the buffer of server ``s``'s core ``c`` at ``t`` (us): FULL, OPENED
    or JOINED (see the module docstring). Call :func:`overdue` first. ``tx[s, c, TX_COUNT]``
    counts the buffered packets, this one included, until :func:`close`."""
    tx[s, c, TX_COUNT] += 1
    if burst <= 1 or drain_us <= 0 or tx[s, c, TX_COUNT] >= burst:
        return FULL
    if tx[s, c, TX_COUNT] == 1:
        tx[s, c, TX_DUE] = drain_tick(t, drain_us)
        return OPENED
    return JOINED


@step_kernel
def close(tx: np.ndarray, s: int, c: int) -> None:
    """The open burst was sent: the buffer is empty and the next burst has a new number."""
    tx[s, c, TX_COUNT] = 0
    tx[s, c, TX_SEQ] += 1


@kernel
def drains(tx: np.ndarray, s: int, c: int, seq: int) -> bool:
    """A drain event for burst ``seq`` of server ``s``'s core ``c`` fires: whether that
    burst is still open (send its packets at ``tx[s, c, TX_DUE]``, then :func:`close`)."""
    return tx[s, c, TX_COUNT] > 0 and tx[s, c, TX_SEQ] == seq
