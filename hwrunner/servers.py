"""The lock servers' part in moving locks, as the push sees it.

A push tells the lock servers when a lock leaves the switch (``take_over``), asks them to
stop granting a lock that is about to enter and to say when its holders are gone
(``begin_move_in`` / ``ready_to_move_in``), collects the requests they keep queued for it
(``hand_over``: the switch starts in overflow mode with that many server-held requests) and,
once the lock is mapped, lets them push those requests back (``admit``).

:class:`NoLockServers` is for a switch whose servers are idle or managed elsewhere;
:class:`LocalLockServers` drives in-process :class:`netlock.lockserver.LockServer` objects
beside an emulated switch (tests, demo).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from netlock.lockserver import LockServer
from netlock.packets import Action, ActionKind


class LockServers(Protocol):
    def take_over(self, lock_ids: np.ndarray) -> None: ...

    def begin_move_in(self, lock_ids: np.ndarray) -> None: ...

    def ready_to_move_in(self, lock_ids: np.ndarray) -> np.ndarray: ...

    def hand_over(self, lock_ids: np.ndarray) -> np.ndarray: ...

    def admit(self, lock_ids: np.ndarray) -> None: ...


class NoLockServers:
    """Servers with nothing queued for the moving locks: every step succeeds at once."""

    def take_over(self, lock_ids: np.ndarray) -> None:
        return None

    def begin_move_in(self, lock_ids: np.ndarray) -> None:
        return None

    def ready_to_move_in(self, lock_ids: np.ndarray) -> np.ndarray:
        return np.ones(len(lock_ids), dtype=bool)

    def hand_over(self, lock_ids: np.ndarray) -> np.ndarray:
        return np.zeros(len(lock_ids), dtype=np.int64)

    def admit(self, lock_ids: np.ndarray) -> None:
        return None


class LocalLockServers:
    """In-process lock servers; their actions go to ``sink`` at time ``now_us()``.

    ``server_of`` maps lock ids to server numbers (the plan's partition); ``outbox`` returns
    the switch's pending control-plane actions (NOTIFY_SERVER after a lock arrives).
    """

    def __init__(self, servers: Sequence[LockServer], server_of: Callable[[np.ndarray], np.ndarray],
                 sink: Callable[[list[Action]], None], now_us: Callable[[], int],
                 outbox: Callable[[], list[Action]]) -> None:
        self.servers = servers
        self.server_of = server_of
        self.sink = sink
        self.now_us = now_us
        self.outbox = outbox

    def _each(self, lock_ids: np.ndarray) -> list[tuple[int, LockServer]]:
        owners = self.server_of(np.asarray(lock_ids, dtype=np.int64))
        return [(int(x), self.servers[int(s)]) for x, s in zip(lock_ids, owners, strict=True)]

    def take_over(self, lock_ids: np.ndarray) -> None:
        for lock, server in self._each(lock_ids):
            self.sink(server.take_over(lock, self.now_us()))

    def begin_move_in(self, lock_ids: np.ndarray) -> None:
        for lock, server in self._each(lock_ids):
            server.begin_move_in(lock)

    def ready_to_move_in(self, lock_ids: np.ndarray) -> np.ndarray:
        return np.array([server.ready_to_move_in(lock) for lock, server in self._each(lock_ids)],
                        dtype=bool)

    def hand_over(self, lock_ids: np.ndarray) -> np.ndarray:
        return np.array([server.hand_over(lock, (0,), 1)[0]
                         for lock, server in self._each(lock_ids)], dtype=np.int64)

    def admit(self, lock_ids: np.ndarray) -> None:
        wanted = set(np.asarray(lock_ids).tolist())
        kept = []
        for action in self.outbox():
            lock = action.request.lock_id
            if action.kind == ActionKind.NOTIFY_SERVER and lock in wanted:
                server = self.servers[int(self.server_of(np.array([lock]))[0])]
                self.sink(server.handle(action, self.now_us()))
            else:
                kept.append(action)
        self.sink(kept)
