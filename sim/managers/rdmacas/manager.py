"""The pure client-centric RDMA lock (Chung and Zamanian, "Using RDMA for Lock Management",
section 4): the server only holds a 64-bit word per lock, the high half the exclusive
owner's id, the low half the number of shared requests.

- **exclusive**: CAS (0|0) -> (id|0); on failure wait ``backoff_us`` and CAS again;
- **shared**: FAA +1 on the low half; granted when the returned high half is 0, otherwise
  wait ``backoff_us`` and READ the high half until it is 0 (the increment stays, so writers
  wait for the readers that wait);
- **release**: exclusive WRITEs 0 to the high half, shared FAAs -1.

A spinning request whose transaction was given up stops (a waiting reader first takes its
increment back). Nothing orders the spinners: whoever's CAS lands first wins.
"""

from __future__ import annotations

from typing import Any

from sim.engine import EXCLUSIVE, Req
from sim.managers.context import ClientLibraryManager, ManagerContext
from sim.managers.rdma import CAS, FAA, READ, WRITE


class RdmaCasManager(ClientLibraryManager):
    """Lock words ``[owner, shared count]`` on the lock servers, spun on by the clients."""

    kind = "rdma-cas"

    def __init__(self, ctx: ManagerContext) -> None:
        super().__init__(ctx)
        self.backoff = ctx.config.manager.rdma_cas.backoff_us
        self.words: dict[int, list[int]] = {}
        self.cas_failures = 0
        self.polls = 0

    def word(self, lock: int) -> list[int]:
        found = self.words.get(lock)
        if found is None:
            found = self.words[lock] = [0, 0]
        return found

    def acquire(self, req: Req) -> None:
        if req.mode == EXCLUSIVE:
            self.verb(req, CAS, self._cas, self._cas_done)
        else:
            self.verb(req, FAA, self._faa, self._shared_done, 1)

    def _cas(self, req: Req) -> tuple[int, int]:
        word = self.word(req.lock)
        old = (word[0], word[1])
        if old == (0, 0):
            word[0] = req.client.cid + 1
        return old

    def _cas_done(self, old: tuple[int, int], req: Req) -> None:
        if old == (0, 0):
            self.grant(req)
        elif self.alive(req):
            self.cas_failures += 1
            self.engine.call_later(self.backoff, self._retry_cas, req)

    def _retry_cas(self, req: Req) -> None:
        if self.alive(req):
            self.verb(req, CAS, self._cas, self._cas_done)

    def _faa(self, req: Req, delta: int) -> tuple[int, int]:
        word = self.word(req.lock)
        old = (word[0], word[1])
        word[1] += delta
        return old

    def _read(self, req: Req) -> tuple[int, int]:
        word = self.word(req.lock)
        return word[0], word[1]

    def _shared_done(self, old: tuple[int, int], req: Req, *_: Any) -> None:
        if old[0] == 0:
            self.grant(req)
        elif self.alive(req):
            self.polls += 1
            self.engine.call_later(self.backoff, self._poll, req)
        else:
            self.verb(req, FAA, self._faa, _ignore, -1)

    def _poll(self, req: Req) -> None:
        if self.alive(req):
            self.verb(req, READ, self._read, self._shared_done)
        else:
            self.verb(req, FAA, self._faa, _ignore, -1)

    def release(self, req: Req) -> None:
        if req.mode == EXCLUSIVE:
            self.verb(req, WRITE, self._clear, _ignore)
        else:
            self.verb(req, FAA, self._faa, _ignore, -1)

    def _clear(self, req: Req) -> None:
        self.word(req.lock)[0] = 0

    def stats(self) -> dict[str, Any]:
        return {**super().stats(), "cas_failures": self.cas_failures, "polls": self.polls}


def _ignore(*_: Any) -> None:
    """A completion nothing waits for."""
