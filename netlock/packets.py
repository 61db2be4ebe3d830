"""NetLock's request and action values: what flows into and out of the switch and servers.

These are the model-level values. :mod:`netlock.wire` encodes them as packets; the data
plane (:mod:`netlock.dataplane`) and lock server (:mod:`netlock.lockserver`) consume
requests and emit actions. Timestamps are integer microseconds (us).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import IntEnum


class Op(IntEnum):
    ACQUIRE = 0
    RELEASE = 1


class Mode(IntEnum):
    SHARED = 0
    EXCLUSIVE = 1


ACQUIRE, RELEASE = int(Op.ACQUIRE), int(Op.RELEASE)
SHARED, EXCLUSIVE = int(Mode.SHARED), int(Mode.EXCLUSIVE)
"""The codes as plain ints, for arrays and compiled kernels (numba reads them as globals)."""


class ActionKind(IntEnum):
    """What the switch or a lock server does with a request."""

    GRANT = 0
    """Grant the lock to the request's client (and transaction)."""
    TO_SERVER = 1
    """Forward to the lock server owning the lock; that server queues and grants it."""
    OVERFLOW = 2
    """Forward to the lock server marked overflow: it only buffers the request (q2)."""
    NOTIFY_SERVER = 3
    """The switch queue of (lock, priority) drained: the server may push back ``count``."""
    DROP = 4
    """The request is discarded (``reason`` says why); the client recovers by lease/retry."""
    DEFER = 5
    """Over the tenant quota: the client is told to retry after the quota window."""
    PUSH_BACK = 6
    """A lock server sends a buffered (q2) request back to the switch queue."""


class DropReason(IntEnum):
    NONE = 0
    STALE_RELEASE = 1
    QUOTA = 2
    NOT_HELD = 3
    FAILED = 4
    DUPLICATE = 5
    """A lock server got an acquire whose (txn, client) already waits or holds there: a copy
    the network made."""


@dataclass(frozen=True, slots=True)
class LockRequest:
    """One lock request packet's content.

    ``overflow`` marks a request the switch sent to a server only to be buffered;
    ``push_back`` marks a buffered request the server returns to the switch queue.
    """

    op: Op
    mode: Mode
    lock_id: int
    txn_id: int
    client_id: int
    tenant: int = 0
    priority: int = 0
    timestamp_us: int = 0
    overflow: bool = False
    push_back: bool = False
    slot: int = -1
    """The switch queue slot that granted this request (set on a switch's GRANT, carried by
    the release, which names it for the switch's owner check); -1 when none."""

    def release(self) -> LockRequest:
        """The release matching this acquire."""
        return replace(self, op=Op.RELEASE, overflow=False, push_back=False)


@dataclass(frozen=True, slots=True)
class Action:
    """One outcome of processing a request: ``kind`` applied to ``request``.

    ``count`` carries the free-slot count of a NOTIFY_SERVER; ``reason`` explains a DROP.
    """

    kind: ActionKind
    request: LockRequest
    count: int = 0
    reason: DropReason = DropReason.NONE
