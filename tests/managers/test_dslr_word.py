"""DSLR's lock-word rules (``sim.managers.dslr.word``) against a FIFO reader-writer queue.

Clients act on one word in any interleaving hypothesis picks: acquire (FAA), take an
overflowed +1 back, poll (READ), release (FAA), reset the word (READ, then CAS), die
holding the lock, recover past dead holders (CAS). Each verb's effect is the rule's, and
the client decides on what the verb returned, as the manager's library does.

The oracle knows nothing of counters: a list of requests in the order their FAAs drew
tickets. A request may hold the lock exactly when every request ahead of it in that list
is shared and so is it, or none is ahead (first come, first served). A dead holder stays
in the list until a recovery passes it or the last ticket's client resets the frozen word;
either is taken only once every holder ahead is dead (a recovery by the first live waiter
behind dead holders: the waiter whose lease clock, 2 x lease per request ahead, runs out
first).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.managers.dslr import word as w

NEW, TAKING_BACK, OVERFLOWED, WAITING, HOLDING, DONE, DEAD = range(7)


@dataclass(eq=False)
class Request:
    exclusive: bool
    state: int = NEW
    xm: int = 0
    sm: int = 0
    reset_duty: bool = False
    maxima: tuple[int, int] = (0, 0)
    reset_seen: w.Word | None = None


class Bakery:
    """One lock word, its clients, and the oracle's queue."""

    def __init__(self, modes: list[bool], limit: int, deaths: bool = True) -> None:
        self.deaths = deaths
        self.word: w.Word = w.RESET
        self.limit = limit
        self.requests = [Request(exclusive) for exclusive in modes]
        self.queue: list[Request] = []
        self.grants = 0
        self.resets = 0

    # --- the oracle ------------------------------------------------------------------

    def may_hold(self, r: Request) -> bool:
        ahead = self.queue[:self.queue.index(r)]
        return not ahead or (not r.exclusive and not any(q.exclusive for q in ahead))

    def check_safe(self) -> None:
        holders = [r for r in self.requests if r.state == HOLDING]
        writers = sum(r.exclusive for r in holders)
        assert writers == 0 or len(holders) == 1, "conflicting holders"

    # --- the clients' verbs, each through the rule -------------------------------------

    def acquire(self, r: Request) -> None:
        old = self.word
        self.word = w.faa(old, w.max_field(r.exclusive), 1)
        if w.overflowed(old, self.limit):
            r.state = TAKING_BACK
            return
        if w.last_ticket(old, r.exclusive, self.limit):
            r.reset_duty = True
            r.maxima = w.frozen_maxima(old, r.exclusive, self.limit)
        r.xm, r.sm = old[w.X_MAX], old[w.S_MAX]
        self.queue.append(r)
        r.state = WAITING
        self.decide(r, old)

    def take_back(self, r: Request) -> None:
        self.word = w.faa(self.word, w.max_field(r.exclusive), -1)
        r.state = OVERFLOWED

    def poll_reset(self, r: Request) -> None:
        if not w.overflowed(self.word, self.limit):
            r.state = NEW

    def decide(self, r: Request, seen: w.Word) -> None:
        """What the library does with the word a FAA, READ or failed CAS returned."""
        if w.turn_came(seen, r.exclusive, r.xm, r.sm):
            assert r in self.queue and self.may_hold(r), "granted out of FIFO order"
            r.state = HOLDING
            self.grants += 1
            self.check_safe()
        elif w.passed_by(seen, r.xm, r.sm):
            assert r not in self.queue, "a live request was passed"
            r.state = NEW
        else:
            assert not self.may_hold(r), "a request the queue grants waits"

    def release(self, r: Request) -> None:
        self.word = w.faa(self.word, w.counter_field(r.exclusive), 1)
        self.queue.remove(r)
        r.state = DONE

    def die(self, r: Request) -> None:
        """The holder's client stops (its lease ends); it never releases."""
        r.state = DEAD

    def can_recover(self, r: Request) -> bool:
        i = self.queue.index(r)
        return i > 0 and all(q.state == DEAD for q in self.queue[:i])

    def recover(self, r: Request) -> None:
        seen = self.word
        self.word = w.cas(seen, seen, w.recovered(seen, r.exclusive, r.xm, r.sm))
        i = self.queue.index(r)
        del self.queue[:i + 1]
        r.state = NEW
        assert w.passed_by(self.word, r.xm, r.sm), "the recovery does not pass itself"

    def reset_read(self, r: Request) -> None:
        """The last ticket's client reads the word: it may reset it when every ticket is
        released, or when the counters stood still for its lease clock (here: every
        ticket outstanding is a dead holder's), and no overflowed +1 is on its way."""
        word = self.word
        stuck = all(q.state == DEAD for q in self.queue)
        ready = w.settled(word, r.maxima) and (w.idle(word) or stuck)
        r.reset_seen = word if ready else None

    def reset_cas(self, r: Request) -> None:
        seen = r.reset_seen
        assert seen is not None
        old, self.word = self.word, w.cas(self.word, seen, w.RESET)
        r.reset_seen = None
        if old == seen:
            assert all(q.state == DEAD for q in self.queue), "reset under a live ticket"
            self.queue.clear()
            r.reset_duty = False
            self.resets += 1

    # --- scheduling --------------------------------------------------------------------

    def moves(self, draining: bool) -> list:
        moves = []
        for r in self.requests:
            if r.state == NEW and not draining:
                moves.append((self.acquire, r))
            elif r.state == TAKING_BACK:
                moves.append((self.take_back, r))
            elif r.state == OVERFLOWED:
                moves.append((self.poll_reset, r))
            elif r.state == WAITING:
                moves.append((self.decide_now, r))
                if self.can_recover(r):
                    moves.append((self.recover, r))
            elif r.state == HOLDING:
                moves.append((self.release, r))
                if self.deaths and not draining:
                    moves.append((self.die, r))
            if r.reset_duty:
                moves.append((self.reset_cas if r.reset_seen else self.reset_read, r))
        return moves

    def decide_now(self, r: Request) -> None:
        self.decide(r, self.word)


def drain(bakery: Bakery, choices: list[int]) -> None:
    """Run without dying, every client taking a step each round (in an order the choices
    rotate), until every live request and a latecomer has held the lock and released it
    (failed and overflowed ones acquire again); a request left waiting is a liveness
    failure."""
    bakery.requests.append(Request(exclusive=True))
    for k in range(300):
        if all(r.state in (DONE, DEAD) for r in bakery.requests):
            return
        for r in bakery.requests:
            if r.state == NEW:
                bakery.acquire(r)
        moves = bakery.moves(draining=True)
        assert moves, "nothing can move, yet requests wait"
        turn = choices[k % len(choices)] % len(moves)
        for move, r in moves[turn:] + moves[:turn]:
            if (move, r) in bakery.moves(draining=True):
                move(r)
    raise AssertionError("requests still wait after 300 rounds: not every waiter is granted")


MODES = st.lists(st.booleans(), min_size=1, max_size=7)
STEPS = st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=120)


def run(modes: list[bool], limit: int, deaths: bool, steps: list[int],
        drain_choices: list[int]) -> Bakery:
    bakery = Bakery(modes, limit, deaths)
    for step in steps:
        moves = bakery.moves(draining=False)
        if not moves:
            break
        move, r = moves[step % len(moves)]
        move(r)
    drain(bakery, drain_choices)
    assert all(r.state in (DONE, DEAD) for r in bakery.requests)
    return bakery


@settings(max_examples=200, deadline=None)
@given(modes=MODES, limit=st.integers(min_value=2, max_value=6), steps=STEPS,
       drain_choices=STEPS)
def test_fifo_no_conflict_and_every_waiter_granted_across_resets_and_dead_holders(
        modes, limit, steps, drain_choices):
    run(modes, limit, True, steps, drain_choices)


@settings(max_examples=200, deadline=None)
@given(modes=MODES, steps=STEPS, drain_choices=STEPS)
def test_fifo_no_conflict_and_every_waiter_granted_across_dead_holders(
        modes, steps, drain_choices):
    """(A counter limit the run never reaches: recoveries alone.)"""
    run(modes, 1 << 15, True, steps, drain_choices)


def test_a_dead_holder_is_passed_and_the_next_waiter_granted():
    bakery = Bakery([True, True, False], limit=100)
    first, second, third = bakery.requests
    for r in bakery.requests:
        bakery.acquire(r)
    assert first.state == HOLDING and second.state == third.state == WAITING
    bakery.die(first)
    assert bakery.can_recover(second) and not bakery.can_recover(third)
    bakery.recover(second)
    bakery.decide_now(third)
    assert third.state == HOLDING


def test_the_word_freezes_at_the_limit_and_the_last_ticket_resets_it():
    bakery = Bakery([True, True, False], limit=2)
    first, second, late = bakery.requests
    bakery.acquire(first)
    bakery.acquire(second)
    assert second.reset_duty
    bakery.acquire(late)
    assert late.state == TAKING_BACK
    bakery.take_back(late)
    for r in (first, second):
        bakery.decide_now(r)
        bakery.release(r)
    bakery.reset_read(second)
    bakery.reset_cas(second)
    assert bakery.word == w.RESET and bakery.resets == 1
    bakery.poll_reset(late)
    assert late.state == NEW


def test_a_ticket_is_never_drawn_against_a_maximum_past_the_limit():
    """A shared request whose FAA lands while an overflowed exclusive +1 is on its way back
    would wait for an exclusive counter one past the last ticket: it waits for the reset
    instead, and is granted after it."""
    bakery = Bakery([True, True, True, False], limit=2, deaths=False)
    first, second, over, reader = bakery.requests
    for r in (first, second, over, reader):
        bakery.acquire(r)
    assert over.state == TAKING_BACK and reader.state == TAKING_BACK
    drain(bakery, [0])
    assert reader.state == DONE and bakery.resets >= 1
