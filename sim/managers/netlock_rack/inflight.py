"""Requests the lock manager keeps by their wire id while they wait for an answer.

A duplicated acquire reaches the switch (and maybe a lock server) twice under one id: each
copy is its own packet and waits separately. The first copy is kept in a plain dict (the
common case, no copies), later ones in arrival order beside it; taking an id gives the
oldest copy still waiting.
"""

from __future__ import annotations

from collections import deque

from sim.engine import Req


class ByRid:
    """Requests waiting somewhere, by ``rid``; copies of one request wait in arrival order."""

    __slots__ = ("first", "more")

    def __init__(self) -> None:
        self.first: dict[int, Req] = {}
        self.more: dict[int, deque[Req]] = {}

    def put(self, req: Req) -> None:
        if req.rid in self.first:
            self.more.setdefault(req.rid, deque()).append(req)
        else:
            self.first[req.rid] = req

    def take(self, rid: int) -> Req | None:
        """The oldest waiting copy of request ``rid``, removed; None if none waits."""
        req = self.first.pop(rid, None)
        if req is not None and self.more:
            later = self.more.get(rid)
            if later:
                self.first[rid] = later.popleft()
                if not later:
                    del self.more[rid]
        return req

    def clear(self) -> None:
        self.first.clear()
        self.more.clear()

    def __len__(self) -> int:
        return len(self.first) + sum(map(len, self.more.values()))
