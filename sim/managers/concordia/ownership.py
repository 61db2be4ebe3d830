"""Concordia's ownership migration (FAST'21, section 5.2.2) as a pure function of one
epoch's hotness: which cache blocks move into the switch and which the shadow node sends
back to their home agents.

A block's *hotness* in an epoch is the number of cache agents its coherence requests were
multicast to (a request multicast to n agents adds n). At the end of an epoch each home
agent picks its own top-k hottest blocks (hotness above 0) and asks the switch to take
them (ADD-TO-SWITCH); the shadow node, which knows the hotness of the blocks the switch
already owns, makes room when the switch's TAG array is full by sending the coldest of them
back (REMOVE-FROM-SWITCH), and only for a block hotter than the one it evicts. A block
moves only while its lock is free: the home agent (or the switch) must take its write lock
first, and a block whose lock is held waits for a later epoch. The TAG array is modelled
by its capacity; the seed's set-associative slots and their hash collisions, which the
shadow node also resolves by evicting the coldest block in the way, are not.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class OwnershipChange:
    """One epoch's moves: blocks added to the switch, and blocks removed from it."""

    added: tuple[int, ...]
    removed: tuple[int, ...]


def top_k(hotness: dict[int, int], k: int) -> list[int]:
    """The ``k`` hottest blocks with hotness above 0, hottest first (ties: lower block)."""
    hot = [(-h, b) for b, h in hotness.items() if h > 0]
    return [b for _, b in heapq.nsmallest(k, hot)]


def plan_epoch(home_hotness: Iterable[dict[int, int]], switch_hotness: dict[int, int],
               in_switch: set[int], capacity: int, k: int,
               movable: Callable[[int], bool]) -> OwnershipChange:
    """The moves at an epoch's end. ``home_hotness``: per home agent, the hotness of the
    blocks it owns; ``switch_hotness``: of the blocks the switch owns (``in_switch``);
    ``movable(block)``: whether the block's lock is free where it is now."""
    candidates = sorted(((home.get(b, 0), b) for home in home_hotness
                         for b in top_k(home, k) if movable(b)), key=lambda x: (-x[0], x[1]))
    room = capacity - len(in_switch)
    coldest = sorted((switch_hotness.get(b, 0), b) for b in in_switch if movable(b))
    added: list[int] = []
    removed: list[int] = []
    for heat, block in candidates:
        if room <= 0:
            if len(removed) == len(coldest) or coldest[len(removed)][0] >= heat:
                break
            removed.append(coldest[len(removed)][1])
            room += 1
        added.append(block)
        room -= 1
    return OwnershipChange(tuple(added), tuple(removed))
