"""DecLock's lock queue (``sim.managers.declock.queue``) against a FIFO reader-writer queue.

Clients take places (the acquire's FAA) and holders leave (the release's FAA) in any
interleaving hypothesis picks. The oracle is a list of the requests present, in arrival
order: a request may hold exactly when it is first, or it and everyone ahead of it are
shared. After every step the queue's holders must be exactly the oracle's (first come,
first served, never two conflicting holders, nobody left waiting behind a free lock), and
releasing holders until the queue is empty must have granted every request.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.engine import EXCLUSIVE, SHARED
from sim.managers.declock.queue import LockQueue


class Request:
    """A stand-in request: what the queue reads of it is its mode (compared by identity)."""

    def __init__(self, mode: int) -> None:
        self.mode = mode


def oracle_holders(present: list) -> set[int]:
    held = set()
    for i, r in enumerate(present):
        if i == 0 or (r.mode == SHARED and all(q.mode == SHARED for q in present[:i])):
            held.add(id(r))
    return held


def check(queue: LockQueue, present: list, granted: set[int]) -> None:
    holders = {id(e.req) for e in queue.entries if e.held}
    assert holders == oracle_holders(present)
    modes = [e.mode for e in queue.entries if e.held]
    assert EXCLUSIVE not in modes or len(modes) == 1
    assert queue.holders == len(holders)
    granted |= holders


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 100)), max_size=80))
def test_the_queue_grants_like_a_fifo_reader_writer_queue(steps):
    queue, present, granted, made = LockQueue(), [], set(), []
    for arrive, exclusive, pick in steps:
        holders = [e.req for e in queue.entries if e.held]
        if arrive or not holders:
            r = Request(EXCLUSIVE if exclusive else SHARED)
            made.append(r)
            present.append(r)
            queue.enqueue(r)
        else:
            r = holders[pick % len(holders)]
            present.remove(r)
            handed = queue.leave(r)
            assert all(e.held for e in handed)
        check(queue, present, granted)
    while present:
        holders = [e.req for e in queue.entries if e.held]
        assert holders, "requests wait behind a free lock"
        present.remove(holders[0])
        queue.leave(holders[0])
        check(queue, present, granted)
    assert granted == {id(r) for r in made}
    assert queue.holders == queue.exclusive == 0
