"""DSLR's lock-word rules, as pure functions of the 64-bit word (four 16-bit fields).

A word is ``(x_cnt, s_cnt, x_max, s_max)``: exclusive and shared *counters* (releases so
far) and exclusive and shared *maxima* (tickets handed out). A request's ticket is the
pair of maxima its FAA returned, ``(xm, sm)``: the exclusive and shared requests whose
FAAs came before it. Every verb the manager posts changes the word only through these
functions, and the property tests drive them against a FIFO reader-writer queue.
"""

from __future__ import annotations

X_CNT, S_CNT, X_MAX, S_MAX = range(4)
Word = tuple[int, int, int, int]
RESET: Word = (0, 0, 0, 0)


def max_field(exclusive: bool) -> int:
    """The field an acquire's FAA +1 takes its ticket from."""
    return X_MAX if exclusive else S_MAX


def counter_field(exclusive: bool) -> int:
    """The field a release's FAA +1 counts on."""
    return X_CNT if exclusive else S_CNT


def faa(word: Word, field: int, delta: int) -> Word:
    """The word after an FAA of ``delta`` on ``field`` (the FAA returns ``word``)."""
    new = list(word)
    new[field] += delta
    return new[0], new[1], new[2], new[3]


def cas(word: Word, expected: Word, new: Word) -> Word:
    """The word after a CAS (the CAS returns ``word``)."""
    return new if word == expected else word


def overflowed(old: Word, limit: int) -> bool:
    """Whether the acquire whose FAA returned ``old`` drew no ticket: a maximum is at
    ``limit`` (either: a ticket taken while the other mode's maximum is past its last one
    would wait for a counter that never gets there). It takes its +1 back and polls until
    the word is reset."""
    return old[X_MAX] >= limit or old[S_MAX] >= limit


def last_ticket(old: Word, exclusive: bool, limit: int) -> bool:
    """Whether the acquire whose FAA returned ``old`` drew the last ticket before the word
    froze (:func:`overflowed`): its client resets the word (:func:`frozen_maxima`)."""
    return old[max_field(exclusive)] + 1 == limit


def frozen_maxima(old: Word, exclusive: bool, limit: int) -> tuple[int, int]:
    """The tickets handed out when the last ticket froze the word, ``(x_max, s_max)``:
    no ticket is drawn after it, so the last ticket's FAA knows them exactly, however
    many overflowed +1s are on their way back."""
    return (limit, old[S_MAX]) if exclusive else (old[X_MAX], limit)


def settled(word: Word, maxima: tuple[int, int]) -> bool:
    """Whether the frozen word's maxima are back at ``maxima``: no overflowed +1 is still
    to be taken back, so a CAS of this very word to :data:`RESET` loses none."""
    return (word[X_MAX], word[S_MAX]) == maxima


def idle(word: Word) -> bool:
    """Every ticket handed out has been released."""
    return word[X_CNT] == word[X_MAX] and word[S_CNT] == word[S_MAX]


def turn_came(word: Word, exclusive: bool, xm: int, sm: int) -> bool:
    """Whether the ticket (xm, sm) may hold the lock given the word's counters: an
    exclusive request once every earlier request is released, a shared one once every
    earlier exclusive one is."""
    if exclusive:
        return word[X_CNT] == xm and word[S_CNT] == sm
    return word[X_CNT] == xm


def passed_by(word: Word, xm: int, sm: int) -> bool:
    """Whether a recovery moved the counters past the ticket (xm, sm): it will never be
    granted."""
    return word[X_CNT] > xm or word[S_CNT] > sm


def outstanding(word: Word) -> int:
    """Tickets handed out and not released (at least 1, as :func:`ahead`)."""
    return max(1, (word[X_MAX] - word[X_CNT]) + (word[S_MAX] - word[S_CNT]))


def ahead(word: Word, xm: int, sm: int) -> int:
    """Requests ahead of the ticket (xm, sm) not yet released (at least 1: the recovery
    clock runs for one lease even when the counters are about to pass)."""
    return max(1, (xm - word[X_CNT]) + (sm - word[S_CNT]))


def recovered(word: Word, exclusive: bool, xm: int, sm: int) -> Word:
    """The word a recovery CASes in: counters past every request ahead of the ticket
    (xm, sm) and past the ticket itself (its request fails; its transaction retries)."""
    past = (xm + 1, sm) if exclusive else (xm, sm + 1)
    return past[0], past[1], word[X_MAX], word[S_MAX]
