"""DecLock (Zhang et al., "DecLock: A Case of Decoupled Locking for Disaggregated Memory"):
the lock's state stays on the memory node (here: the lock server), ownership moves
between compute nodes (the clients) by messages.

Per lock, the memory node holds a header word, changed only by FAA, and a ring of queue
entries:

- **acquire**: one FAA on the header takes the next place in the lock's FIFO queue; the
  old header says whether the request is compatible with everyone ahead (nobody ahead, or
  a shared request behind shared holders only). Compatible: granted. Otherwise the client
  WRITEs its entry (who, which mode) into the ring at its place and waits;
- **release**: an FAA on the header and a READ of the ring, posted together (one round
  trip); when the releaser was the last holder, the header hands the lock to the next
  entry (or the run of shared entries at the head) and the releaser notifies them
  directly, client to client. A ring entry not written yet (its WRITE is still on the
  way) is read again until it is there.

No request spins on the memory node, so its RNIC serves only these few verbs per lock
request, in FIFO order.
"""

from __future__ import annotations

from typing import Any

from sim.engine import Req
from sim.managers.context import ClientLibraryManager, ManagerContext
from sim.managers.declock.queue import Entry, LockQueue
from sim.managers.rdma import FAA, READ, WRITE


class DecLockManager(ClientLibraryManager):
    """DecLock's headers and rings on the lock servers, driven from the clients' library."""

    kind = "declock"

    def __init__(self, ctx: ManagerContext) -> None:
        super().__init__(ctx)
        self.queues: dict[int, LockQueue] = {}
        self.notifications = 0
        self.rereads = 0

    def queue(self, lock: int) -> LockQueue:
        found = self.queues.get(lock)
        if found is None:
            found = self.queues[lock] = LockQueue()
        return found

    def acquire(self, req: Req) -> None:
        self.verb(req, FAA, self._enqueue, self._enqueued)

    def _enqueue(self, req: Req) -> tuple[Entry, bool]:
        """The FAA: the entry, and whether the old header made it a holder at once (a
        releaser may hand it the lock before this answer is back: it then notifies)."""
        entry = self.queue(req.lock).enqueue(req)
        return entry, entry.held

    def _enqueued(self, answer: tuple[Entry, bool], req: Req) -> None:
        entry, granted = answer
        if granted:
            self.grant(req)
        else:
            self.verb(req, WRITE, _write_entry, _ignore, entry)

    def release(self, req: Req) -> None:
        self.verb(req, FAA, self._leave, self._handed, READ)

    def _leave(self, req: Req, _: int) -> list[Entry]:
        """The FAA, and the READ of the ring posted with it (it occupies the RNIC too)."""
        self.fabric.nodes[self.node(req.lock)].execute(self.env.now, READ, req.lock)
        return self.queue(req.lock).leave(req)

    def _handed(self, group: list[Entry], req: Req, _: int) -> None:
        missing = [entry for entry in group if not entry.written]
        for entry in group:
            if entry.written:
                self.notifications += 1
                self.fabric.message(req.client.cid, entry.req.client.cid, self.grant,
                                    entry.req)
        if missing:
            self.rereads += 1
            self.verb(req, READ, _ring, self._handed, missing)

    def stats(self) -> dict[str, Any]:
        return {**super().stats(), "notifications": self.notifications,
                "rereads": self.rereads}


def _write_entry(req: Req, entry: Entry) -> None:
    entry.written = True


def _ring(req: Req, missing: list[Entry]) -> list[Entry]:
    """Read the ring entries still missing: the same entries, now perhaps written."""
    return missing


def _ignore(*_: Any) -> None:
    """A completion nothing waits for."""
