"""The NetLock client's transaction rules, as the authors' DPDK client applies them.

A client machine runs transaction contexts (each TX core replays its own contexts). A
context runs one transaction at a time (netlock-repo ``dpdk_code/client_code/client.c``):

- it sends **all** the transaction's acquires back to back, in one burst, without waiting
  for grants (:func:`starts_burst`);
- once every acquire is granted it thinks, then sends all the releases, and starts the
  next transaction;
- an attempt of several locks not fully granted within :func:`attempt_timeout_us` of its
  start releases the locks it holds (this is how deadlocks between transactions resolve)
  and, after a random back-off of :func:`backoff_slots` slots, sends the same transaction
  again; a one-lock attempt cannot deadlock and waits for its grant for a lease (the
  authors' microbenchmark client applies no transaction timeout; the paper's clients
  "retry when the leases expire");
- grants that reach an attempt already given up are released at once;
- the network may duplicate packets (:func:`grant_verdict`): a second copy of a grant the
  context already holds (same request, same switch slot) is ignored, and a grant of a
  duplicated acquire (same request, another slot: the switch queued the request twice) is
  handed back at once naming its own slot, never the slot the context uses.

The microbenchmark clients are **open loop** instead (``clients.send_limit_per_ms`` > 0;
``client.c`` ``np_client_tx_write_loop``, lines 389-648): a context sends its next one-lock
request without waiting for grants, at most ``wpkts_send_limit_ms`` per millisecond
(:func:`open_loop_send_at`); in SYNCHRONOUS mode it skips a request for a lock it already
has a request on (:func:`open_loop_skips`); the RX core releases each lock when its grant
arrives (``client.c`` lines 915-921), and a lost request is never sent again
(``loss_timeout``, line 380, is declared and never read).

These are the rules both simulation engines apply; each keeps its own bookkeeping of
requests. They are plain functions over integers and floats (:func:`jitable`): numba compiles
them into the compiled engine's loop, while the simpy engine and ``netlock config check``
(the lease rule, :mod:`netlock.config.derived`) run them as written, without numba.
Times are microseconds (us).
"""

from __future__ import annotations

import math

from netlock.dataplane._kernel_jit import jitable

MASK32 = 0xFFFFFFFF
NOT_HELD = -2
"""``held_slot`` of :func:`grant_verdict` when the context holds no grant of the request
(a switch grant's slot is >= 0, a lock server's grant has slot -1)."""
USE, IGNORE, HAND_BACK = 0, 1, 2
"""What a context does with a grant (:func:`grant_verdict`)."""
BURST_US = 0.1
"""Packets a client machine's NIC sends within this many us of each other travel as one
burst (one switch pass and one link delay for the group; modelled, unsourced), and so do
an attempt's acquires however long its NIC share takes to send them (:func:`starts_burst`)."""
SEND_WINDOW_US = 1000.0
"""The open-loop send cap's window: ``client.c`` resets its packet counter every ms
(``ms_tsc = rte_get_tsc_hz() / 1000``, lines 362 and 394-397)."""
SKIP_LIMIT = 1024
"""Most trace entries an open-loop context skips (:func:`open_loop_skips`) before it gives
up a send slot: the C loop spins through skips at no modelled cost; a bound keeps a context
whose every lock is busy from spinning forever in the model (chosen)."""


@jitable
def attempt_timeout_us(locks: int, timeout_us: float, think_us: float,
                       lease_us: float) -> float:
    """How long an attempt of ``locks`` locks may wait for its grants: for several locks
    the client's timeout, and at least two think times (``max(timeout_slot, think_time *
    2)`` in the authors' client); for one lock, which cannot deadlock, a lease (only a lost
    packet keeps it waiting that long).

    A one-lock request given up while queued still holds its place in the queue (NetLock
    has no cancel), so timing it out behind a long queue only lengthens the queue.
    """
    if locks > 1:
        return max(timeout_us, 2.0 * think_us)
    return lease_us


@jitable
def starts_burst(open_us: float, now_us: float, acquire: bool, sent: int, run_us: float,
                 burst_us: float) -> bool:
    """Whether a packet a context sends at ``now_us`` starts a new burst instead of joining
    the one that opened at ``open_us`` (us): it does when it leaves more than ``burst_us``
    after it.

    An attempt's acquires leave together, in one burst: the authors' TPC-C client puts
    them in its TX buffer one by one and hands the buffer to the NIC in one
    ``rte_eth_tx_burst`` once it holds the transaction's ``locks_per_txn`` packets
    (``dpdk_code/client_code/include/util.h`` ``acquire_enqueue_pkt``, lines 363-371, called
    for every acquire at ``client.c`` line 638), so they cross the link back to back, with
    one delay. The NIC share paces them (one per gap), so the attempt's first acquire
    (``sent`` = 0 of its acquires sent before it) leaves, for this rule, when the last one
    does, ``run_us`` later; the acquires after it never start a burst. Releases sent before
    them (a commit's) keep their own burst when the acquires would leave too late to join
    it."""
    if acquire and sent > 0:
        return False
    leaves_us = now_us + run_us if acquire else now_us
    return leaves_us - open_us > burst_us


@jitable
def _mix32(x: int) -> int:
    """A 32-bit integer hash (xor-shift-multiply); every product fits in int64."""
    x = ((x ^ (x >> 16)) * 0x45D9F3B) & MASK32
    x = ((x ^ (x >> 16)) * 0x45D9F3B) & MASK32
    return x ^ (x >> 16)


@jitable
def backoff_slots(seed: int, client: int, abort: int, slots: int) -> int:
    """The back-off before a context's ``abort``-th retry, in slots: uniform over
    ``0 .. slots - 1`` (``rand() % 10`` slots of 30 us in the authors' client).

    A hash of (seed, client, abort) rather than a random stream, so that both engines draw
    the same back-off without sharing a generator, and a context's back-offs do not depend
    on what other contexts do.
    """
    h = _mix32(seed & MASK32)
    h = _mix32(h ^ (client & MASK32))
    h = _mix32(h ^ (abort & MASK32))
    return h % slots


@jitable
def longest_hold_us(locks: int, timeout_us: float, think_us: float, read_us: float) -> float:
    """The longest a live client holds a lock of an attempt of up to ``locks`` locks (us):
    with several, the first grant can come right after the attempt starts and the last one
    just before the attempt timeout; then it reads its data (``read_us``) and thinks. A
    lease must be longer, or slow transactions retry."""
    return attempt_timeout_us(locks, timeout_us, think_us, 0.0) + read_us + think_us


@jitable
def grant_verdict(waiting: bool, held_slot: int, slot: int) -> int:
    """What a context does with a grant of one of its requests that arrives: ``USE`` it,
    ``IGNORE`` it, or ``HAND_BACK`` (release it at once, naming ``slot``, if its lease
    runs).

    ``waiting``: the context's current attempt is not fully granted and the grant is for
    one of its requests; ``held_slot``: the slot of the grant of that request the context
    already holds (:data:`NOT_HELD` if none). A grant it already holds under the same slot
    is a duplicated grant packet: releasing it would free the lock the context is using
    (or, with the switch's release check off, another holder), so it is ignored. A grant
    of the same request under another slot is the switch granting a duplicated acquire:
    it is handed back, so the copy does not hold the lock until its lease ends. A grant
    for a request the context does not wait for (attempt given up, transaction done) is
    handed back as before.
    """
    if held_slot == NOT_HELD:
        return USE if waiting else HAND_BACK
    return IGNORE if held_slot == slot else HAND_BACK


@jitable
def open_loop_send_at(ready_us: float, window_us: float, sent: int,
                      limit_per_ms: int) -> tuple[float, float, int]:
    """When an open-loop context sends its next request (``client.c`` lines 394-408, 642):
    ``ready_us`` is the earliest its TX core can (its last send plus its NIC gap, us);
    ``window_us`` the start of the ms window its last send fell in and ``sent`` the packets
    it sent in that window. Windows follow each other every :data:`SEND_WINDOW_US` from the
    first one's start (the TX core's ``next_ms_tsc`` starts at its own start time, so each
    context's windows have their own phase). A window that already saw ``limit_per_ms``
    packets sends no more: the request waits for the next window. Returns the send time,
    the start of its window and the packets sent in that window counting this one."""
    if ready_us >= window_us + SEND_WINDOW_US:
        window_us += math.floor((ready_us - window_us) / SEND_WINDOW_US) * SEND_WINDOW_US
        sent = 0
    t = ready_us
    if sent >= limit_per_ms:
        window_us += SEND_WINDOW_US
        t = window_us
        sent = 0
    return t, window_us, sent + 1


@jitable
def open_loop_skips(skip_held: bool, busy: int) -> bool:
    """Whether an open-loop context skips the next trace request instead of sending it: in
    SYNCHRONOUS mode (``skip_held``; ``client.c`` lines 471-476, ``-ms``) when it already
    has a request on that lock not yet granted (``busy`` > 0: set when the acquire is sent,
    line 634, cleared when its grant arrives, line 920). A skip sends nothing and does not
    count against the send cap."""
    return skip_held and busy > 0
