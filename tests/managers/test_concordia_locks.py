"""Concordia's lock rule (sim.managers.concordia.locks) against an independent oracle: a
reader-writer lock kept as sets of holding events, where a copy of a request or an unlock
changes nothing. Any sequence of lock and unlock packets, with duplicates, must get the
oracle's answers, and the 16-bit word must always say what the holders are."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.managers.concordia.locks import (
    FAILED,
    GRANTED,
    READERS,
    STALE,
    WRITER,
    RwLocks,
    try_lock,
)
from sim.managers.concordia.ownership import plan_epoch, top_k


class Oracle:
    """Per block: the events holding it and in which mode; events that unlocked."""

    def __init__(self) -> None:
        self.readers: dict[int, set[int]] = {}
        self.writer: dict[int, int] = {}
        self.done: set[int] = set()

    def lock(self, block: int, event: int, exclusive: bool) -> int:
        if event in self.done:
            return STALE
        readers = self.readers.setdefault(block, set())
        if self.writer.get(block) == event or event in readers:
            return GRANTED
        if exclusive:
            if readers or block in self.writer:
                return FAILED
            self.writer[block] = event
            return GRANTED
        if block in self.writer:
            return FAILED
        readers.add(event)
        return GRANTED

    def unlock(self, block: int, event: int) -> None:
        self.done.add(event)
        self.readers.get(block, set()).discard(event)
        if self.writer.get(block) == event:
            del self.writer[block]


# An event is (block, mode); packets name an event and whether they lock or unlock it.
EVENTS = st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=8)


@st.composite
def packets(draw):
    events = draw(EVENTS)
    ops = draw(st.lists(st.tuples(st.integers(0, len(events) - 1), st.booleans()),
                        max_size=60))
    return events, ops


@settings(max_examples=300, deadline=None)
@given(packets())
def test_lock_and_unlock_copies_match_a_reader_writer_oracle(case):
    events, ops = case
    locks, oracle = RwLocks(), Oracle()
    for event, is_lock in ops:
        block, exclusive = events[event]
        if is_lock:
            assert locks.lock(block, event, exclusive) == oracle.lock(block, event, exclusive)
        else:
            locks.unlock(block, event, exclusive)
            oracle.unlock(block, event)
        for b in range(3):
            word = locks.word(b)
            assert bool(word & WRITER) == (b in oracle.writer)
            assert (word & READERS > 0) == bool(oracle.readers.get(b))
            assert locks.idle(b) == (b not in oracle.writer and not oracle.readers.get(b))
    for event, (block, exclusive) in enumerate(events):
        locks.unlock(block, event, exclusive)
    assert all(locks.idle(b) for b in range(3))


def test_a_copied_read_request_counts_twice_and_its_unlock_takes_both_back():
    locks = RwLocks()
    assert locks.lock(7, 1, False) == GRANTED
    assert locks.lock(7, 1, False) == GRANTED
    assert locks.lock(7, 2, False) == GRANTED
    assert locks.word(7) == 3
    locks.unlock(7, 1, False)
    assert locks.word(7) == 1
    assert locks.lock(7, 3, True) == FAILED
    assert not locks.unlock(7, 1, False)
    assert locks.word(7) == 1


def test_the_word_has_one_writer_bit_and_fifteen_reader_bits():
    assert try_lock(0, True) == 0x8000
    assert try_lock(0x8000, False) is None
    assert try_lock(0x7FFE, False) == 0x7FFF
    assert try_lock(0x7FFF, False) is None
    assert try_lock(1, True) is None


# --- ownership migration (section 5.2.2) -------------------------------------------------

def test_each_home_agent_moves_its_top_k_and_cold_blocks_stay():
    homes = [{1: 5, 2: 9, 3: 0, 4: 1}, {10: 7, 11: 2}]
    assert top_k(homes[0], 2) == [2, 1]
    moves = plan_epoch(homes, {}, set(), capacity=100, k=2, movable=lambda b: True)
    assert sorted(moves.added) == [1, 2, 10, 11] and moves.removed == ()


def test_a_full_switch_evicts_its_coldest_only_for_hotter_blocks():
    moves = plan_epoch([{1: 9, 2: 3}], {50: 4, 51: 1}, {50, 51}, capacity=2, k=5,
                       movable=lambda b: True)
    assert moves.added == (1,) and moves.removed == (51,)


def test_blocks_whose_lock_is_held_do_not_move():
    moves = plan_epoch([{1: 9, 2: 8}], {50: 0}, {50}, capacity=1, k=5,
                       movable=lambda b: b != 1)
    assert moves.added == (2,) and moves.removed == (50,)
