"""Large arrays of racks that are gone, kept for the next rack of a process that needs the same.

A switch about to take a large plan has its empty register rows written afresh
(:func:`netlock.dataplane.registers.new_state`: 26 MB for the paper's two-class geometry,
the largest part of a TPC-C run's setup with its plan cached, issue 32), and the fast
engine's dense lock table is 16 MB of zeros. A process that runs racks one after the other
(a sweep's worker, ``netlock bench``, a notebook) can give a gone rack's arrays back with
what it wrote in them; the next rack that needs arrays of the same key takes them and
clears only that part, to the same contents as fresh ones.

A set is taken only when nothing else refers to any of its arrays any more (a caller that
kept a rack's arrays, or a view of them, keeps them to itself): the spares' own references
are then the only ones Python counts.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Hashable

import numpy as np


class Spares:
    """At most ``kept`` sets of arrays, each under a key with a note of what was written in
    them (the oldest dropped first)."""

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self._sets: list[tuple[Hashable, tuple[np.ndarray, ...], object]] = []
        self._lock = threading.Lock()

    def give_back(self, key: Hashable, arrays: tuple[np.ndarray, ...], note: object) -> None:
        """Keep ``arrays`` (a rack's, now gone) for a later :meth:`take` of ``key``; ``note``
        says what the rack wrote in them."""
        with self._lock:
            self._sets.append((key, tuple(arrays), note))
            del self._sets[:-self.kept]

    def take(self, key: Hashable, rank: Callable[[object], object] | None = None
             ) -> tuple[tuple[np.ndarray, ...], object] | None:
        """A set kept under ``key`` that nothing else refers to, removed from the spares,
        with its note; None when there is none. With ``rank``, only a set whose note it
        ranks (not None) and the highest ranked of those (the oldest among equals)."""
        with self._lock:
            best, best_rank = None, None
            for k, (kept_key, arrays, note) in enumerate(self._sets):
                if kept_key != key:
                    continue
                ranked = 0 if rank is None else rank(note)
                if ranked is not None and (best is None or ranked > best_rank) and \
                        _alone(arrays):
                    best, best_rank = k, ranked
            if best is None:
                return None
            _, arrays, note = self._sets.pop(best)
            return arrays, note

    def clear(self) -> None:
        """Drop every kept set."""
        with self._lock:
            self._sets.clear()


def _references(arrays: tuple[np.ndarray, ...]) -> list[int]:
    return [sys.getrefcount(array) for array in arrays]


_ALONE = _references((np.empty(0),))[0]
"""What :func:`_references` counts for an array that only its tuple refers to."""


def _alone(arrays: tuple[np.ndarray, ...]) -> bool:
    """Whether the tuple holding ``arrays`` is all that refers to them."""
    return all(count == _ALONE for count in _references(arrays))
