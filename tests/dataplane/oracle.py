"""A reference lock table, written independently of the switch and the lock server.

Per lock: one unbounded FIFO list per priority class and a set of holders. A request may
be granted when every request ahead of it (earlier in its class, or in any higher class)
is granted, and it is compatible with the holders: exclusive needs no holder at all,
shared needs no exclusive holder. Modes are the strings "S" and "X"; requests are any
hashable keys.
"""

from __future__ import annotations


class OracleLock:
    def __init__(self) -> None:
        self.queues: dict[int, list[tuple[object, str]]] = {}
        self.holders: dict[object, str] = {}


class Oracle:
    def __init__(self) -> None:
        self.locks: dict[int, OracleLock] = {}
        self.where: dict[object, int] = {}

    def arrive(self, key: object, lock: int, mode: str, cls: int) -> None:
        assert mode in ("S", "X")
        entry = self.locks.setdefault(lock, OracleLock())
        entry.queues.setdefault(cls, []).append((key, mode))
        self.where[key] = lock

    def grantable(self, lock: int) -> list[object]:
        """The requests that could be granted now, in the order they must be granted."""
        entry = self.locks.get(lock)
        if entry is None:
            return []
        shared = sum(1 for m in entry.holders.values() if m == "S")
        exclusive = len(entry.holders) - shared
        found = []
        for cls in sorted(entry.queues):
            for key, mode in entry.queues[cls]:
                ok = (shared == 0 and exclusive == 0) if mode == "X" else exclusive == 0
                if not ok:
                    return found
                found.append(key)
                if mode == "X":
                    exclusive += 1
                else:
                    shared += 1
        return found

    def grant(self, key: object) -> None:
        """The system granted ``key``: it must be the next request the oracle would grant."""
        lock = self.where[key]
        nxt = self.grantable(lock)
        assert nxt and nxt[0] == key, (
            f"lock {lock}: granted {key!r} but the next grantable requests are {nxt!r}")
        entry = self.locks[lock]
        for queue in entry.queues.values():
            for pos, (k, mode) in enumerate(queue):
                if k == key:
                    del queue[pos]
                    entry.holders[key] = mode
                    return

    def withdraw(self, key: object) -> None:
        """A waiting request is lost (its client gives it up)."""
        for queue in self.locks[self.where[key]].queues.values():
            for pos, (k, _) in enumerate(queue):
                if k == key:
                    del queue[pos]
                    return
        raise AssertionError(f"{key!r} is not waiting")

    def release(self, key: object) -> None:
        del self.locks[self.where[key]].holders[key]

    def expire_all(self) -> int:
        """Every holder's lease runs out; returns how many holders there were."""
        n = 0
        for entry in self.locks.values():
            n += len(entry.holders)
            entry.holders.clear()
        return n

    def holders(self, lock: int) -> dict[object, str]:
        entry = self.locks.get(lock)
        return dict(entry.holders) if entry else {}

    def waiting(self, lock: int) -> list[tuple[object, int]]:
        """Waiting requests of ``lock`` as ``(key, class)``."""
        entry = self.locks.get(lock)
        if entry is None:
            return []
        return [(k, cls) for cls in sorted(entry.queues) for k, _ in entry.queues[cls]]
