"""The interface between the generic rack (clients, network, metrics) and a lock manager.

A lock manager receives request packets at its entry point (for in-network designs, the
ToR switch, one hop from every client) and eventually answers each acquire by delivering
the same :class:`sim.engine.Req` to ``req.client.grant_handlers`` (``engine.deliver``),
after setting ``req.source`` to the index of the component that granted it in
``sources``. It may also ask a client to resend later (``req.client.on_defer``). Losses,
leases, retries and the safety checker are the clients' and the rack's business; the
manager only has to be a lock manager.
"""

from __future__ import annotations

from typing import Any, Protocol

from sim.engine import Req


class LockManager(Protocol):
    """What the rack needs from a lock-manager design."""

    sources: tuple[str, ...]
    """Names of the components that grant locks; ``sources[0]`` is the fast path."""

    def on_acquire(self, req: Req) -> None:
        """An acquire packet reached the manager's entry point (an event callback)."""

    def on_release(self, req: Req) -> None:
        """A release packet reached the manager's entry point (an event callback)."""

    def start(self) -> None:
        """Start the manager's own processes (control plane, failure injection, probes)."""

    def stats(self) -> dict[str, Any]:
        """Manager-specific figures for the result (plain JSON-able values)."""
