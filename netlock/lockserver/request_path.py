"""A lock server's request path, written once: steps over its state rows.

:mod:`.kernels` says what a lock server does with a request; this module is how a packet
reaches those rules and how their answers leave, as steps both simulation engines call over
the server's state: a float row ``sv`` per server (columns ``SV_*``) and a float row per
core (:mod:`.txburst`'s ``TX_*`` columns, then ``C_FREE``). The fast engine passes rows of its
server arrays (their columns start with these), the simpy engine Python lists. Each step
changes the rows and returns what the engine must do; the engine keeps its own requests
(awaiting an answer, by wire id) and buffered packets, draws the network's hops and
schedules events.

The path of a packet the switch sends to a lock server (a request it forwards, overflow, a
release, a notification that a queue drained), as the authors' DPDK server runs it
(netx-repo/NetLock ``dpdk_code/lock_server_code/server.c``):

1. the NIC's RSS hands it to a core by its lock (:func:`netlock.lockserver.rss.rss_core`);
2. :func:`admit`: a request finding the core's RX rings full is dropped
   (:func:`netlock.lockserver.rxring.ring_full`; a notification is taken without that check,
   :func:`serve`); otherwise the core takes it when done with those before it, each packet
   ``servers.packet_us`` (:class:`netlock.config.schema.Servers`): the delay until the core is
   done with it. The server's state changes when the packet arrives (per-lock order is what
   matters: every packet of a lock is on one core) by :func:`netlock.lockserver.kernels.process`
   or :func:`~netlock.lockserver.kernels.notified`; their answers leave when the core is done;
3. :func:`answer`: what each of the kernels' action rows asks of the engine;
4. every grant and push-back the core sends waits in its TX burst
   (:func:`netlock.lockserver.txburst.send` on the core's row; the engine schedules the drain
   it asks for and calls :func:`netlock.lockserver.txburst.drain`); what the server's control
   logic sends (lease sweep, a grace's end, a lock mapped) leaves at once;
5. a grant then travels server -> switch -> client (two hops, the server's down link keeping
   them in order), a push-back one reliable hop to the switch: the engines' network.

Every function is :func:`jitable`: compiled into the fast engine's loop, plain Python in the
simpy engine.
"""

from __future__ import annotations

from typing import Any

from netlock.dataplane._kernel_jit import jitable
from netlock.lockserver.rxring import ring_full
from netlock.lockserver.txburst import N_TX, new_row
from netlock.packets import ActionKind, DropReason

C_FREE = N_TX
"""A core's row: :mod:`.txburst`'s columns, then when the core is done with the packets it
has taken (us)."""
N_CORE = N_TX + 1
SV_PACKETS, SV_BUSY_US, SV_RX_DROPS = range(3)
"""``sv`` columns: packets the server's cores took, the time they spent on them (us), and
requests its RX rings dropped."""
N_SV = 3

SEND_GRANT, SEND_PUSH_BACK, FORGET_COPY, DROP = range(4)
""":func:`answer`'s answers."""

_GRANT = int(ActionKind.GRANT)
_PUSH_BACK = int(ActionKind.PUSH_BACK)
_DUPLICATE = int(DropReason.DUPLICATE)


def new_server(cores: int) -> tuple[list[float], list[list[float]]]:
    """One idle server's ``sv`` row and its cores' rows, as Python lists (the simpy
    engine's; the fast engine's are rows of its arrays, :func:`.txburst.new_cores` of
    width ``N_CORE``)."""
    return [0.0] * N_SV, [new_row(N_CORE) for _ in range(cores)]


@jitable
def serve(sv: Any, core: Any, now: float, service_us: float) -> float:
    """A packet reaches ``core`` at ``now``; the core takes it when done with the packets
    before it, for ``service_us``. Returns the delay until the core is done with it (us)."""
    t = core[C_FREE]
    if t < now:
        t = now
    core[C_FREE] = t + service_us
    sv[SV_PACKETS] += 1
    sv[SV_BUSY_US] += service_us
    return t + service_us - now


@jitable
def admit(sv: Any, core: Any, now: float, service_us: float, ring: int) -> float:
    """A request reaches ``core`` at ``now``: -1 when its RX rings (``ring`` packets, 0: no
    bound) are full and drop it (an acquire dropped is no longer awaited), else
    :func:`serve`'s delay (us)."""
    if ring_full(core[C_FREE], now, service_us, ring):
        sv[SV_RX_DROPS] += 1
        return -1.0
    return serve(sv, core, now, service_us)


@jitable
def answer(kind: int, reason: int) -> int:
    """What the engine does with an action row of the lock server's kernels (its ``A_KIND``
    and ``A_REASON``; the request is named by its wire id ``A_TXN``):

    - ``SEND_GRANT``: the request awaiting it, if one still does, is granted by the server
      (counted) and sent to its client through the core's TX burst;
    - ``SEND_PUSH_BACK``: the wire id goes back to the switch through the TX burst (the
      switch takes it as a push-back when ``A_FLAGS`` has ``FLAG_PUSH_BACK``, else as a new
      acquire);
    - ``FORGET_COPY``: a copy of an acquire the server already queues or holds is dropped:
      the request awaiting an answer under that id is no longer awaited; counted as a drop;
    - ``DROP``: a release dropped (stale, or of a lock not served here); counted."""
    if kind == _GRANT:
        return SEND_GRANT
    if kind == _PUSH_BACK:
        return SEND_PUSH_BACK
    if reason == _DUPLICATE:
        return FORGET_COPY
    return DROP
