"""DSLR (Yoon, Chowdhury and Mozafari, SIGMOD'18): Lamport's bakery on a 64-bit word.

One word per lock on its lock server, four 16-bit fields (the authors' harness,
``rdma_2pc`` ``d2lm_lock_client.cc``): exclusive and shared *counters* (releases so far) and
exclusive and shared *maxima* (tickets handed out).

- **acquire**: one FAA +1 on the mode's maximum; the old word is the ticket. Exclusive is
  granted when both counters equal the ticket's maxima, shared when the exclusive counter
  does (every earlier writer is done); otherwise the client polls with READ, at once again
  after each reply. Requests are granted first-come first-served;
- **release**: FAA +1 on the mode's counter;
- **overflow**: a ticket at ``counter_limit`` is taken back (FAA -1) and the request polls
  until the word is reset; the holder of the last ticket (limit - 1) resets the word to 0
  with a CAS the first time it reads it idle (every ticket released);
- **lease recovery**: a waiter whose READs show the counters unchanged for 2 x
  ``lease_us`` per request ahead of it CASes the counters past its own ticket (a holder
  that died, or a deadlock) and fails; its transaction is retried. Grants therefore carry a
  lease of 2 x ``lease_us``: a live holder stops using the lock before anyone may reset it.
"""

from __future__ import annotations

from typing import Any

from sim.engine import EXCLUSIVE, Req
from sim.managers.context import ClientLibraryManager, ManagerContext
from sim.managers.rdma import CAS, FAA, READ

X_CNT, S_CNT, X_MAX, S_MAX = range(4)
Word = tuple[int, int, int, int]


class Ticket:
    """A request's place in the bakery and what its polls saw."""

    __slots__ = ("seen", "since", "sm", "xm")

    def __init__(self, xm: int, sm: int, now: float) -> None:
        self.xm = xm
        self.sm = sm
        self.seen = (-1, -1)
        self.since = now


def turn_came(word: Word, exclusive: bool, xm: int, sm: int) -> bool:
    """Whether the ticket (xm, sm) may hold the lock given the word's counters."""
    if exclusive:
        return word[X_CNT] == xm and word[S_CNT] == sm
    return word[X_CNT] == xm


def passed_by(word: Word, xm: int, sm: int) -> bool:
    """Whether a reset moved the counters past the ticket (xm, sm): it will never be
    granted."""
    return word[X_CNT] > xm or word[S_CNT] > sm


class DslrManager(ClientLibraryManager):
    """DSLR's lock words on the lock servers, driven from the clients' library."""

    kind = "dslr"

    def __init__(self, ctx: ManagerContext) -> None:
        super().__init__(ctx)
        d = ctx.config.manager.dslr
        self.lease_us = d.lease_us
        self.limit = d.counter_limit
        self.words: dict[int, list[int]] = {}
        self.tickets: dict[int, Ticket] = {}
        self.resetters: set[int] = set()
        self.polls = 0
        self.overflows = 0
        self.resets = 0
        self.recoveries = 0

    def word(self, lock: int) -> list[int]:
        found = self.words.get(lock)
        if found is None:
            found = self.words[lock] = [0, 0, 0, 0]
        return found

    def _faa(self, req: Req, field: int, delta: int) -> Word:
        word = self.word(req.lock)
        old = (word[0], word[1], word[2], word[3])
        word[field] += delta
        return old

    def _read(self, req: Req) -> Word:
        word = self.word(req.lock)
        return word[0], word[1], word[2], word[3]

    def _cas(self, req: Req, expected: Word, new: Word) -> Word:
        word = self.word(req.lock)
        old = (word[0], word[1], word[2], word[3])
        if old == expected:
            word[:] = new
        return old

    def acquire(self, req: Req) -> None:
        field = X_MAX if req.mode == EXCLUSIVE else S_MAX
        self.verb(req, FAA, self._faa, self._ticket, field, 1)

    def _ticket(self, old: Word, req: Req, field: int, delta: int) -> None:
        if old[field] >= self.limit:
            self.overflows += 1
            self.verb(req, FAA, self._faa, self._wait_reset, field, -1)
            return
        if old[field] + 1 == self.limit:
            self.resetters.add(req.rid)
        self.tickets[req.rid] = Ticket(old[X_MAX], old[S_MAX], self.env._now)
        self._check(old, req)

    def _wait_reset(self, old: Word, req: Req, *_: Any) -> None:
        """Poll until the overflowed maximum has been reset, then take a ticket again."""
        field = X_MAX if req.mode == EXCLUSIVE else S_MAX
        if old[field] < self.limit:
            self.acquire(req)
        else:
            self.polls += 1
            self.verb(req, READ, self._read, self._wait_reset)

    def _check(self, word: Word, req: Req) -> None:
        t = self.tickets[req.rid]
        if turn_came(word, req.mode == EXCLUSIVE, t.xm, t.sm):
            self.grant(req, 2.0 * self.lease_us)
            return
        if passed_by(word, t.xm, t.sm):
            self._fail(req)
            return
        now = self.env._now
        counters = (word[X_CNT], word[S_CNT])
        if counters != t.seen:
            t.seen = counters
            t.since = now
        ahead = max(1, (t.xm - word[X_CNT]) + (t.sm - word[S_CNT]))
        if now - t.since >= 2.0 * self.lease_us * ahead:
            past = ((t.xm + 1, t.sm) if req.mode == EXCLUSIVE else (t.xm, t.sm + 1))
            new = (past[0], past[1], word[X_MAX], word[S_MAX])
            self.verb(req, CAS, self._cas, self._recovered, word, new)
            return
        self.polls += 1
        self.verb(req, READ, self._read, self._check)

    def _recovered(self, old: Word, req: Req, expected: Word, new: Word) -> None:
        if old == expected:
            self.recoveries += 1
            self._fail(req)
        else:
            self._check(old, req)

    def _fail(self, req: Req) -> None:
        self.tickets.pop(req.rid, None)
        self.resetters.discard(req.rid)
        self.deny(req)

    def release(self, req: Req) -> None:
        self.tickets.pop(req.rid, None)
        field = X_CNT if req.mode == EXCLUSIVE else S_CNT
        self.verb(req, FAA, self._faa, self._released, field, 1)

    def _released(self, old: Word, req: Req, field: int, delta: int) -> None:
        if req.rid in self.resetters:
            self.verb(req, READ, self._read, self._try_reset)

    def _try_reset(self, old: Word, req: Req, *_: Any) -> None:
        """The last ticket's holder resets the word once it is idle (all tickets done)."""
        if old[X_CNT] == old[X_MAX] and old[S_CNT] == old[S_MAX]:
            self.verb(req, CAS, self._cas, self._try_reset_done, old, (0, 0, 0, 0))
        else:
            self.verb(req, READ, self._read, self._try_reset)

    def _try_reset_done(self, old: Word, req: Req, expected: Word, new: Word) -> None:
        if old == expected:
            self.resets += 1
            self.resetters.discard(req.rid)
        else:
            self._try_reset(old, req)

    def stats(self) -> dict[str, Any]:
        return {**super().stats(), "polls": self.polls, "overflows": self.overflows,
                "resets": self.resets, "recoveries": self.recoveries}
