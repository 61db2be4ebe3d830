"""DSLR (Yoon, Chowdhury and Mozafari, SIGMOD'18): Lamport's bakery on a 64-bit word.

One word per lock on its lock server, four 16-bit fields (the authors' harness,
``rdma_2pc`` ``d2lm_lock_client.cc``): exclusive and shared *counters* (releases so far) and
exclusive and shared *maxima* (tickets handed out).

- **acquire**: one FAA +1 on the mode's maximum; the old word is the ticket. Exclusive is
  granted when both counters equal the ticket's maxima, shared when the exclusive counter
  does (every earlier writer is done); otherwise the client polls with READ, at once again
  after each reply. Requests are granted first-come first-served;
- **release**: FAA +1 on the mode's counter;
- **overflow**: once either maximum is at ``counter_limit`` the word is frozen: an FAA
  that returns it is taken back (FAA -1) and its request polls until the word is reset;
  the client that drew the last ticket (limit - 1) resets the word to 0 with a CAS once
  it reads it idle (every ticket released) or stuck (the lease rule below, per ticket
  outstanding: dead holders never release), whatever became of its own request, and
  only when no overflowed +1 is still to be taken back (:mod:`sim.managers.dslr.word`);
- **lease recovery**: a waiter whose READs show the counters unchanged for 2 x
  ``lease_us`` per request ahead of it CASes the counters past its own ticket (a holder
  that died, or a deadlock) and fails; its transaction is retried. Grants therefore carry a
  lease of 2 x ``lease_us``: a live holder stops using the lock before anyone may reset it.

Its clients take locks one at a time, as the DSLR authors' harness does
(``src/new_proto4/lock_simulator.cc`` ``LockSimulator::run``, lines 98-200: ``Lock`` of
request i, wait for its future, then i + 1; lines 249-283: ``Unlock`` from the last down,
each awaited; a failure reverts the held locks the same way, ``RevertLocks`` lines 304-327,
then backs off and restarts at the first lock).
"""

from __future__ import annotations

from typing import Any

from sim.engine import EXCLUSIVE, Req
from sim.managers.context import ClientLibraryManager, ManagerContext
from sim.managers.dslr import word as w
from sim.managers.rdma import CAS, FAA, READ


class Ticket:
    """A request's place in the bakery and what its polls saw."""

    __slots__ = ("seen", "since", "sm", "xm")

    def __init__(self, xm: int, sm: int, now: float) -> None:
        self.xm = xm
        self.sm = sm
        self.seen = (-1, -1)
        self.since = now


class Resetter:
    """The last ticket's client: the frozen word's true maxima, and what its polls saw."""

    __slots__ = ("maxima", "seen", "since")

    def __init__(self, maxima: tuple[int, int], now: float) -> None:
        self.maxima = maxima
        self.seen = (-1, -1)
        self.since = now


class DslrManager(ClientLibraryManager):
    """DSLR's lock words on the lock servers, driven from the clients' library; the words
    change only by the rules of :mod:`sim.managers.dslr.word`."""

    kind = "dslr"

    one_at_a_time = True

    def __init__(self, ctx: ManagerContext) -> None:
        super().__init__(ctx)
        d = ctx.config.manager.dslr
        self.lease_us = d.lease_us
        self.limit = d.counter_limit
        self.words: dict[int, w.Word] = {}
        self.tickets: dict[int, Ticket] = {}
        self.resetters: dict[int, Resetter] = {}
        self.polls = 0
        self.overflows = 0
        self.resets = 0
        self.recoveries = 0

    def _faa(self, req: Req, field: int, delta: int) -> w.Word:
        old = self.words.get(req.lock, w.RESET)
        self.words[req.lock] = w.faa(old, field, delta)
        return old

    def _read(self, req: Req) -> w.Word:
        return self.words.get(req.lock, w.RESET)

    def _cas(self, req: Req, expected: w.Word, new: w.Word) -> w.Word:
        old = self.words.get(req.lock, w.RESET)
        self.words[req.lock] = w.cas(old, expected, new)
        return old

    def acquire(self, req: Req) -> None:
        self.verb(req, FAA, self._faa, self._ticket, w.max_field(req.mode == EXCLUSIVE), 1)

    def _ticket(self, old: w.Word, req: Req, field: int, delta: int) -> None:
        exclusive = req.mode == EXCLUSIVE
        if w.overflowed(old, self.limit):
            self.overflows += 1
            self.verb(req, FAA, self._faa, self._wait_reset, field, -1)
            return
        if w.last_ticket(old, exclusive, self.limit):
            self.resetters[req.rid] = Resetter(w.frozen_maxima(old, exclusive, self.limit),
                                               self.env.now)
            self.verb(req, READ, self._read, self._try_reset)
        self.tickets[req.rid] = Ticket(old[w.X_MAX], old[w.S_MAX], self.env.now)
        self._check(old, req)

    def _wait_reset(self, old: w.Word, req: Req, *_: Any) -> None:
        """Poll until the frozen word has been reset, then take a ticket again."""
        if w.overflowed(old, self.limit):
            self.polls += 1
            self.verb(req, READ, self._read, self._wait_reset)
        else:
            self.acquire(req)

    def _check(self, word: w.Word, req: Req) -> None:
        t = self.tickets[req.rid]
        exclusive = req.mode == EXCLUSIVE
        if w.turn_came(word, exclusive, t.xm, t.sm):
            self.grant(req, 2.0 * self.lease_us)
            return
        if w.passed_by(word, t.xm, t.sm):
            self._fail(req)
            return
        now = self.env.now
        counters = (word[w.X_CNT], word[w.S_CNT])
        if counters != t.seen:
            t.seen = counters
            t.since = now
        if now - t.since >= 2.0 * self.lease_us * w.ahead(word, t.xm, t.sm):
            self.verb(req, CAS, self._cas, self._recovered, word,
                      w.recovered(word, exclusive, t.xm, t.sm))
            return
        self.polls += 1
        self.verb(req, READ, self._read, self._check)

    def _recovered(self, old: w.Word, req: Req, expected: w.Word, new: w.Word) -> None:
        if old == expected:
            self.recoveries += 1
            self._fail(req)
        else:
            self._check(old, req)

    def _fail(self, req: Req) -> None:
        """``req`` will never be granted: its transaction is retried."""
        self.tickets.pop(req.rid, None)
        self.deny(req)

    def release(self, req: Req) -> None:
        self.tickets.pop(req.rid, None)
        self.verb(req, FAA, self._faa, self.released, w.counter_field(req.mode == EXCLUSIVE),
                  1)

    def _try_reset(self, old: w.Word, req: Req, *_: Any) -> None:
        """The last ticket's client, from the moment it drew it and whatever becomes of
        its request, resets the frozen word once every ticket is released, or once the
        counters have stood still for 2 x ``lease_us`` per ticket outstanding (holders
        that died or overstayed their lease never release: the lease rule of waiters),
        and only when no overflowed +1 is still to be taken back."""
        r = self.resetters[req.rid]
        now = self.env.now
        counters = (old[w.X_CNT], old[w.S_CNT])
        if counters != r.seen:
            r.seen = counters
            r.since = now
        stuck = now - r.since >= 2.0 * self.lease_us * w.outstanding(old)
        if w.settled(old, r.maxima) and (w.idle(old) or stuck):
            self.verb(req, CAS, self._cas, self._try_reset_done, old, w.RESET)
        else:
            self.verb(req, READ, self._read, self._try_reset)

    def _try_reset_done(self, old: w.Word, req: Req, expected: w.Word, new: w.Word) -> None:
        if old == expected:
            self.resets += 1
            del self.resetters[req.rid]
        else:
            self._try_reset(old, req)

    def stats(self) -> dict[str, Any]:
        return {**super().stats(), "polls": self.polls, "overflows": self.overflows,
                "resets": self.resets, "recoveries": self.recoveries}
