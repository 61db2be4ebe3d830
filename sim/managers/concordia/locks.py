"""Concordia's lock rule (FAST'21, sections 5.1.1 and 5.3.2): a 16-bit reader-writer lock
word per cache block, made idempotent by a scoreboard, as one pure class that the switch's
LCF pipeline and every home agent run (the home agent processes requests "in the same way
as the LCF pipeline", section 5.2).

**The word.** The most significant bit marks a writer, the other 15 bits count readers
(at most 2^15 - 1). A write lock is taken when the word is 0; a read lock when the writer
bit is clear and the count has room. A lock that cannot be taken is a failed ACK: there is
no queue, the requester retries.

**Idempotence.** A retransmitted request must not take a lock twice nor release someone
else's. The *scoreboard* counts the successful acquisitions of an event (one coherence
event: a lock request and its unlock); a request passes when its event's score is above 0,
so a retransmitted write request whose first copy took the lock passes although the word
now refuses it, and a retransmitted read request counts one more reader (score 2). The
unlock subtracts the score from the readers (or clears the writer bit) and resets the
score; an event's unlock executes once (the seed's LAST-UNLOCK). The seed keeps two
scores per requester (odd and even sequence numbers) and the largest unlocked sequence
number, which suffices for its requesters' one event at a time plus one asynchronous
unlock; the toolkit's clients send all of a transaction's acquires at once, so the score
and the executed unlock are kept per event: the same rule, one slot per event in flight.
A lock request whose event was already unlocked is a stale copy and is dropped (the
LAST-UNLOCK array sits before the pipeline, so the lock path can read it).
"""

from __future__ import annotations

WRITER = 0x8000
READERS = 0x7FFF
"""The writer bit and the reader-count field of the 16-bit word."""

GRANTED, FAILED, STALE = 0, 1, 2
"""What a lock request gets: a pass (ACK), a failed ACK, or nothing (a stale copy)."""


def try_lock(word: int, exclusive: bool) -> int | None:
    """The word after taking a write (``exclusive``) or read lock, or None if it is taken."""
    if exclusive:
        return WRITER if word == 0 else None
    if word & WRITER or word & READERS == READERS:
        return None
    return word + 1


def unlock_word(word: int, exclusive: bool, score: int) -> int:
    """The word after an event that took the lock ``score`` times releases it."""
    if score <= 0:
        return word
    if exclusive:
        return word & ~WRITER
    return word - min(score, word & READERS)


class RwLocks:
    """The LOCK array, the scoreboard and the executed unlocks of one owner (the switch or
    one home agent). Blocks and events are ints; absent words are 0."""

    __slots__ = ("scores", "unlocked", "words")

    def __init__(self) -> None:
        self.words: dict[int, int] = {}
        self.scores: dict[int, int] = {}
        self.unlocked: set[int] = set()

    def word(self, block: int) -> int:
        return self.words.get(block, 0)

    def lock(self, block: int, event: int, exclusive: bool) -> int:
        """A lock request of ``event`` on ``block``: GRANTED, FAILED or STALE."""
        if event in self.unlocked:
            return STALE
        new = try_lock(self.words.get(block, 0), exclusive)
        score = self.scores.get(event, 0)
        if new is not None:
            self.words[block] = new
            score += 1
            self.scores[event] = score
        return GRANTED if score > 0 else FAILED

    def unlock(self, block: int, event: int, exclusive: bool) -> bool:
        """``event``'s unlock of ``block``; False when it had already executed."""
        if event in self.unlocked:
            return False
        self.unlocked.add(event)
        score = self.scores.pop(event, 0)
        word = unlock_word(self.words.get(block, 0), exclusive, score)
        if word:
            self.words[block] = word
        else:
            self.words.pop(block, None)
        return True

    def idle(self, block: int) -> bool:
        """Whether nobody holds ``block``'s lock (ownership may then migrate)."""
        return block not in self.words
