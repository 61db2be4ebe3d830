"""The NetStore controller's read/write lock table (section 2.2).

Every key has a queue of lock requests in the order the controller received them; a
transaction's requests are all enqueued when it arrives, so queues are ordered by
transaction arrival, which the seed uses to rule out deadlock (no transaction waits for a
later one). The head of a queue holds the lock; a run of shared requests at the head hold it
together; an exclusive request holds it only at the head. Strict 2PL: a transaction
releases its locks when it commits, never earlier.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class _Queued:
    txn: int
    exclusive: bool
    granted: bool = False


class NetStoreLockTable:
    """Per-key FIFO queues of shared and exclusive requests."""

    def __init__(self) -> None:
        self._queues: dict[int, list[_Queued]] = {}

    def request(self, txn: int, key: int, exclusive: bool) -> bool:
        """Enqueue ``txn``'s request for ``key``; True when it is granted at once."""
        queue = self._queues.setdefault(key, [])
        if any(q.txn == txn for q in queue):
            raise ValueError(f"transaction {txn} already asked for key {key}")
        entry = _Queued(txn, exclusive)
        queue.append(entry)
        return entry in self._grant(queue)

    def release(self, txn: int, key: int) -> list[int]:
        """``txn`` gives up its granted lock on ``key``; the transactions granted ``key`` as a
        result, in queue order."""
        queue = self._queues.get(key, [])
        held = next((q for q in queue if q.txn == txn and q.granted), None)
        if held is None:
            raise ValueError(f"transaction {txn} holds no lock on key {key}")
        queue.remove(held)
        granted = [q.txn for q in self._grant(queue)]
        if not queue:
            del self._queues[key]
        return granted

    def holders(self, key: int) -> list[tuple[int, bool]]:
        """``(txn, exclusive)`` of the holders of ``key``."""
        return [(q.txn, q.exclusive) for q in self._queues.get(key, []) if q.granted]

    def waiting(self) -> list[tuple[int, int]]:
        """``(txn, key)`` of every request not granted yet."""
        return [(q.txn, key) for key, queue in self._queues.items()
                for q in queue if not q.granted]

    @staticmethod
    def _grant(queue: list[_Queued]) -> list[_Queued]:
        """Mark the head run of the queue granted; return the entries newly granted."""
        new = []
        for i, q in enumerate(queue):
            if q.exclusive and i > 0:
                break
            if not q.granted:
                q.granted = True
                new.append(q)
            if q.exclusive:
                break
        return new
