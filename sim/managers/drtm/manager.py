"""DrTM (Wei et al., SOSP'15): one 64-bit lock word per lock, changed only by RDMA CAS.

The word is (lock bit, owner, shared-lease end), as the DSLR authors' implementation of
DrTM lays it out (``drtm_lock_client.cc``: bit 63, 8 owner bits, 55 bits of end time):

- **exclusive**: CAS from the value last seen (free at first) to (1, owner, 0). It fails
  while the lock bit is set or a shared lease has not ended; a word whose lease has ended
  is CASed again from the value read;
- **shared**: CAS to (0, 0, now + ``read_lease_us``). A word whose lease has not ended
  grants without a write (the reader shares the standing lease); the lock bit fails it. A
  shared lock needs **no release**: its lease ends by itself. Nothing stops its holder from
  using it longer, and then a writer can hold the lock at the same time -- the safety
  checker counts it (DrTM's readers must finish within the lease);
- a failure aborts the attempt: the client releases what it holds and retries after a
  randomised exponential back-off (:mod:`sim.managers.random_backoff`). There is no queue, so a
  writer can starve while readers keep renewing the lease.

Its clients take locks one at a time, as the DSLR authors' harness drives DrTM
(``src/new_proto4/lock_simulator.cc`` ``LockSimulator::run``: each lock awaited before the
next, lines 98-200; a FAILURE from ``drtm_lock_client.cc`` reverts the held locks one by one
and backs off, lines 154-162; unlocks in reverse, each awaited, skipping DrTM's shared locks,
lines 249-254).
"""

from __future__ import annotations

from typing import Any

from sim.engine import EXCLUSIVE, SHARED, Req
from sim.managers.context import ClientLibraryManager, ManagerContext
from sim.managers.random_backoff import ExponentialBackoff
from sim.managers.rdma import CAS

FREE = (0, 0, 0.0)


class DrtmManager(ClientLibraryManager):
    """DrTM's lock words on the lock servers, driven from the clients' library."""

    kind = "drtm"
    one_at_a_time = True

    def __init__(self, ctx: ManagerContext) -> None:
        super().__init__(ctx)
        d = ctx.config.manager.drtm
        self.read_lease_us = d.read_lease_us
        self.words: dict[int, tuple[int, int, float]] = {}
        self.backoff_us = ExponentialBackoff(ctx.config.sim.seed, d.backoff_base_us,
                                             d.backoff_max_us).backoff_us
        self.recas = 0
        self.shared_without_write = 0

    def acquire(self, req: Req) -> None:
        self.cas(req, FREE)

    def cas(self, req: Req, expected: tuple[int, int, float]) -> None:
        if req.mode == EXCLUSIVE:
            new = (1, req.client.cid + 1, 0.0)
        else:
            new = (0, 0, self.env.now + self.read_lease_us)
        self.verb(req, CAS, self._apply, self._acquired, expected, new)

    def _apply(self, req: Req, expected: tuple, new: tuple) -> tuple[int, int, float]:
        old = self.words.get(req.lock, FREE)
        if old == expected:
            if new == FREE:
                self.words.pop(req.lock, None)
            else:
                self.words[req.lock] = new
        return old

    def _acquired(self, old: tuple[int, int, float], req: Req, expected: tuple,
                  new: tuple) -> None:
        if old == expected:
            self.grant(req)
            return
        locked, _, lease_end = old
        if locked:
            self.deny(req)
        elif lease_end > self.env.now:
            if req.mode == SHARED:
                self.shared_without_write += 1
                self.grant(req)
            else:
                self.deny(req)
        else:
            self.recas += 1
            self.cas(req, old)

    def release(self, req: Req) -> None:
        if req.mode == SHARED:
            req.client.on_released(req)
            return
        self.verb(req, CAS, self._apply, self.released, (1, req.client.cid + 1, 0.0), FREE)

    def stats(self) -> dict[str, Any]:
        return {**super().stats(), "recas": self.recas,
                "shared_without_write": self.shared_without_write}

