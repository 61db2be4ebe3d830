"""DecLock's per-lock queue on the memory node (pure): the header's FAA rules for taking a
place and leaving it, and to whom a leaving holder hands the lock. The manager changes a
lock's queue only through this class; the property tests drive it against a FIFO
reader-writer queue."""

from __future__ import annotations

from collections import deque

from sim.engine import EXCLUSIVE, SHARED, Req


class Entry:
    """One place in a lock's queue: its request, whether its ring entry is written, and
    whether it holds the lock."""

    __slots__ = ("held", "mode", "req", "written")

    def __init__(self, req: Req, held: bool) -> None:
        self.req = req
        self.mode = req.mode
        self.held = held
        self.written = False


class LockQueue:
    """One lock's header and ring on the memory node."""

    __slots__ = ("entries", "exclusive", "holders")

    def __init__(self) -> None:
        self.entries: deque[Entry] = deque()
        self.holders = 0
        self.exclusive = 0
        """Exclusive entries in the queue (held or waiting)."""

    def enqueue(self, req: Req) -> Entry:
        """The acquire's FAA: take the next place; granted at once when compatible."""
        compatible = not self.entries or (req.mode == SHARED and self.exclusive == 0)
        entry = Entry(req, compatible)
        self.entries.append(entry)
        self.holders += compatible
        self.exclusive += req.mode == EXCLUSIVE
        return entry

    def leave(self, req: Req) -> list[Entry]:
        """The release's FAA: drop ``req``'s place; the entries it hands the lock to."""
        for entry in self.entries:
            if entry.req is req:
                self.entries.remove(entry)
                break
        else:
            return []
        self.holders -= 1
        self.exclusive -= entry.mode == EXCLUSIVE
        if self.holders or not self.entries:
            return []
        head = self.entries[0]
        group = [head]
        if head.mode == SHARED:
            group = []
            for entry in self.entries:
                if entry.mode != SHARED:
                    break
                group.append(entry)
        for entry in group:
            entry.held = True
        self.holders += len(group)
        return group
