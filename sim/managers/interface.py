"""The interface between the generic rack (clients, network, metrics) and a lock manager.

**Entry.** A client sends its packets -- acquires and releases, as :class:`sim.engine.Req`
objects whose ``op`` says which -- through its NIC; packets leaving together arrive together,
chained by ``req.follow``, at ``packet_handlers[0]`` (an event callback taking the first
packet). In-network designs (NetLock, NetChain, the server designs behind the ToR) are
entered ``entry_hops = 1`` hop away; designs that run in the client's own library (the RDMA
designs, which then issue verbs to the lock servers) are entered at ``entry_hops = 0``.

**Replies.** To each acquire the manager answers, eventually, with one of:

- a **grant**: ``req.client.receive(req, t, granted_at, lease_us=None)`` -- the grant was
  made at ``granted_at`` and reaches the client at ``t``; ``req.source`` is set first to the
  index in ``sources`` of the component that granted it. ``lease_us`` is this grant's lease
  when the design has its own (the client stops using the lock when the shorter of it and
  the rack's lease ends);
- a **denial** (fail-and-retry designs): an event calling ``req.client.on_denied(req)`` at
  its arrival; the client gives the attempt up and retries the transaction after
  ``backoff_us(client)``, the manager's back-off rule when it has one (else the client's);
- a **deferral**: an event calling ``req.client.on_defer(req, wait_us)``: resend later.

A design whose shared locks need no release (DrTM's leases) ignores their releases. Losses,
the clients' leases and retries, and the safety and liveness checkers are the rack's
business; the manager only has to be a lock manager.
"""

from __future__ import annotations

from typing import Any, Protocol

from sim.engine import Req


class LockManager(Protocol):
    """What the rack needs from a lock-manager design."""

    kind: str
    """The ``manager.kind`` that selects it."""
    sources: tuple[str, ...]
    """Names of the components that grant locks; ``sources[0]`` is the fast path."""
    entry_hops: int
    """Hops from a client to the manager's entry point (1: the ToR; 0: the client library)."""
    packet_handlers: list
    """``[handler]``: ``handler(first)`` receives packets that arrived together (an event
    callback; ``first.follow`` chains the rest)."""

    def start(self) -> None:
        """Start the manager's own processes (control plane, failure injection, probes)."""

    def stats(self) -> dict[str, Any]:
        """Manager-specific figures for the result (plain JSON-able values)."""


class BackoffRule(Protocol):
    """A manager's own back-off before an aborted transaction is retried (optional)."""

    def backoff_us(self, client: Any) -> float:
        """The wait before ``client`` retries its current transaction (us)."""


def each_packet(first: Req | None):
    """The packets of a burst in arrival order, unchained as they are handed out."""
    req = first
    while req is not None:
        nxt = req.follow
        req.follow = None
        yield req
        req = nxt
