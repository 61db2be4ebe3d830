"""The lock servers' part in moving locks, as the push sees it.

A push tells the lock servers when a lock leaves the switch (``take_over``), asks them to
stop granting a lock that is about to enter and to say when its holders are gone
(``begin_move_in`` / ``ready_to_move_in``), collects the requests they keep queued for it
(``hand_over``: the switch starts in overflow mode with that many server-held requests),
tells them when its lock-table entry exists (``mapped``: what reached them in between is sent
to the switch again, now counted) and lets them push their queue back (``admit``).

When the partition gives lock-id ranges to other servers (:class:`~planner.migrate.ServerMove`)
the old server stops granting them and the new one holds them back (``begin_transfer``) until
the old one has no holders left (``transfer_ready``); after the partition table changes, the
old server's queues, buffers and resident locks go to the new one (``finish_transfer``), or,
on a rollback before that, both go back to normal (``cancel_transfer``).

:class:`NoLockServers` is for lock servers the push cannot reach (a real switch's): it
refuses partition changes unless told the servers are idle. :class:`LocalLockServers` drives
in-process :class:`netlock.lockserver.LockServer` objects beside an emulated switch (tests,
demo). Either reports per-lock counters of the locks the servers serve (``counters``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from netlock.errors import TargetError
from netlock.lockserver import LockServer
from netlock.packets import Action, ActionKind
from planner.migrate import ServerMove

COUNTER_COLUMNS = ("lock_id", "requests", "peak_occupancy")


def no_counters() -> dict[str, np.ndarray]:
    return {c: np.zeros(0, dtype=np.int64) for c in COUNTER_COLUMNS}


class LockServers(Protocol):
    can_transfer: bool
    """Whether the push may change the partition (move server state between servers)."""

    def take_over(self, lock_ids: np.ndarray) -> None: ...

    def begin_move_in(self, lock_ids: np.ndarray) -> None: ...

    def ready_to_move_in(self, lock_ids: np.ndarray) -> np.ndarray: ...

    def hand_over(self, lock_ids: np.ndarray) -> np.ndarray: ...

    def mapped(self, lock_ids: np.ndarray) -> None: ...

    def admit(self, lock_ids: np.ndarray) -> None: ...

    def begin_transfer(self, moves: Sequence[ServerMove]) -> None: ...

    def transfer_ready(self, moves: Sequence[ServerMove]) -> np.ndarray: ...

    def finish_transfer(self, moves: Sequence[ServerMove]) -> None: ...

    def cancel_transfer(self, moves: Sequence[ServerMove]) -> None: ...

    def counters(self, reset: bool = False) -> dict[str, np.ndarray]:
        """Per lock served at the servers (sorted by id): ``COUNTER_COLUMNS`` as int64."""
        ...


class NoLockServers:
    """Lock servers the push cannot reach, assumed to hold nothing for the locks that move.

    They cannot hand queues to each other, so a partition change is refused unless ``idle``
    (the operator has drained the servers whose ranges move).
    """

    def __init__(self, idle: bool = False) -> None:
        self.can_transfer = idle

    def take_over(self, lock_ids: np.ndarray) -> None:
        return None

    def begin_move_in(self, lock_ids: np.ndarray) -> None:
        return None

    def ready_to_move_in(self, lock_ids: np.ndarray) -> np.ndarray:
        return np.ones(len(lock_ids), dtype=bool)

    def hand_over(self, lock_ids: np.ndarray) -> np.ndarray:
        return np.zeros(len(lock_ids), dtype=np.int64)

    def mapped(self, lock_ids: np.ndarray) -> None:
        return None

    def admit(self, lock_ids: np.ndarray) -> None:
        return None

    def begin_transfer(self, moves: Sequence[ServerMove]) -> None:
        return None

    def transfer_ready(self, moves: Sequence[ServerMove]) -> np.ndarray:
        return np.ones(len(moves), dtype=bool)

    def finish_transfer(self, moves: Sequence[ServerMove]) -> None:
        return None

    def cancel_transfer(self, moves: Sequence[ServerMove]) -> None:
        return None

    def counters(self, reset: bool = False) -> dict[str, np.ndarray]:
        return no_counters()


class LocalLockServers:
    """In-process lock servers; their actions go to ``sink`` at time ``now_us()``.

    ``server_of`` maps lock ids to server numbers (the partition the switch routes by now);
    ``outbox`` returns the switch's pending control-plane actions (NOTIFY_SERVER after a lock
    arrives).
    """

    can_transfer = True

    def __init__(self, servers: Sequence[LockServer], server_of: Callable[[np.ndarray], np.ndarray],
                 sink: Callable[[list[Action]], None], now_us: Callable[[], int],
                 outbox: Callable[[], list[Action]]) -> None:
        self.servers = servers
        self.server_of = server_of
        self.sink = sink
        self.now_us = now_us
        self.outbox = outbox

    def _server(self, number: int) -> LockServer:
        if not 0 <= number < len(self.servers):
            raise TargetError(f"lock server {number}: only {len(self.servers)} lock servers run "
                              "beside this switch")
        return self.servers[number]

    def _each(self, lock_ids: np.ndarray) -> list[tuple[int, LockServer]]:
        owners = self.server_of(np.asarray(lock_ids, dtype=np.int64))
        return [(int(x), self._server(int(s))) for x, s in zip(lock_ids, owners, strict=True)]

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
        return np.array([server.hand_over(lock, (0,), 1, until_mapped=True)[0]
                         for lock, server in self._each(lock_ids)], dtype=np.int64)

    def mapped(self, lock_ids: np.ndarray) -> None:
        for lock, server in self._each(lock_ids):
            self.sink(server.mapped(lock))

    def admit(self, lock_ids: np.ndarray) -> None:
        wanted = set(np.asarray(lock_ids).tolist())
        kept = []
        for action in self.outbox():
            lock = action.request.lock_id
            if action.kind == ActionKind.NOTIFY_SERVER and lock in wanted:
                server = self._server(int(self.server_of(np.array([lock]))[0]))
                self.sink(server.handle(action, self.now_us()))
            else:
                kept.append(action)
        self.sink(kept)

    def begin_transfer(self, moves: Sequence[ServerMove]) -> None:
        for m in moves:
            self._server(m.dest).begin_arrival(m.lo, m.hi)
            self._server(m.source).begin_move_out(m.lo, m.hi)

    def transfer_ready(self, moves: Sequence[ServerMove]) -> np.ndarray:
        return np.array([self._server(m.source).holders_in(m.lo, m.hi) == 0 for m in moves],
                        dtype=bool)

    def finish_transfer(self, moves: Sequence[ServerMove]) -> None:
        for m in moves:
            try:
                handoff = self._server(m.source).hand_off(m.lo, m.hi)
            except ValueError as exc:
                raise TargetError(f"locks {m.lo}..{m.hi}: {exc}") from None
            self.sink(self._server(m.dest).adopt(handoff, m.lo, m.hi, self.now_us()))

    def cancel_transfer(self, moves: Sequence[ServerMove]) -> None:
        for m in moves:
            self.sink(self._server(m.dest).cancel_arrival(m.lo, m.hi, self.now_us()))
            self.sink(self._server(m.source).cancel_move_out(m.lo, m.hi, self.now_us()))

    def counters(self, reset: bool = False) -> dict[str, np.ndarray]:
        parts = [server.counters() for server in self.servers]
        if reset:
            for server in self.servers:
                server.reset_counters()
        ids = np.concatenate([p["lock_id"] for p in parts])
        if not len(ids):
            return no_counters()
        locks, inverse = np.unique(ids, return_inverse=True)
        requests = np.zeros(len(locks), dtype=np.int64)
        peak = np.zeros(len(locks), dtype=np.int64)
        np.add.at(requests, inverse, np.concatenate([p["requests"] for p in parts]))
        np.maximum.at(peak, inverse, np.concatenate([p["peak_occupancy"] for p in parts]))
        return {"lock_id": locks, "requests": requests, "peak_occupancy": peak}
