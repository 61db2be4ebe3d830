"""The lock-compatibility rules shared by the switch kernels and the lock server.

Both sides grant in FIFO order per priority class, highest class (0) first, and stop at
the first waiting request that cannot be granted: a waiting request blocks everything
behind it, in its own class and in every lower class. What may be granted next depends
only on the lock's current holders, which is what :func:`compatible` decides.
"""

from __future__ import annotations

from netlock.dataplane._kernel_jit import kernel
from netlock.packets import EXCLUSIVE


@kernel
def compatible(mode: int, shared_holders: int, exclusive_holders: int) -> bool:
    """Whether a request of ``mode`` may join the current holders of its lock.

    Exclusive needs a free lock; shared needs no exclusive holder.
    """
    if mode == EXCLUSIVE:
        return shared_holders == 0 and exclusive_holders == 0
    return exclusive_holders == 0


@kernel
def effective_class(class_mask: int, priority: int, classes: int) -> int:
    """The priority class whose queue serves a request of ``priority`` at a switch lock.

    ``class_mask`` has bit ``c`` set when the lock owns a queue region in class ``c``.
    A request uses its own class when the lock has a region there, else the nearest
    lower class (larger index), else the nearest higher one; -1 when the mask is empty.
    """
    for c in range(max(priority, 0), classes):
        if (class_mask >> c) & 1:
            return c
    for c in range(min(priority, classes) - 1, -1, -1):
        if (class_mask >> c) & 1:
            return c
    return -1
