"""Which lock server owns a lock: the one rule the plan, both simulation engines and the
timeless rack apply.

A rack partitions lock ids over its lock servers either by hash (id modulo the server
count) or by contiguous ranges (a plan's ``partition``, balancing the load the switch leaves
to the servers). A range partition is given as its ranges' upper bounds ``his``
(ascending, inclusive) and the server of each range ``owners``; an id above the last bound
belongs to the last range. A plan made for more lock servers than the rack has folds its
servers onto the rack's (server modulo the count), so any plan runs on any rack.
"""

from __future__ import annotations

import numpy as np

from netlock.dataplane._kernel_jit import kernel

NO_RANGES = np.zeros(0, dtype=np.int64)
"""``his`` and ``owners`` of a hash partition."""


@kernel
def owning_server(lock: int, his: np.ndarray, owners: np.ndarray, servers: int) -> int:
    """The lock server (0 .. ``servers`` - 1) owning ``lock``: by range when ``his`` holds
    ranges (int64 arrays), else by hash."""
    if his.shape[0] == 0:
        return lock % servers
    i = np.searchsorted(his, lock)
    if i >= owners.shape[0]:
        i = owners.shape[0] - 1
    return owners[i] % servers


@kernel
def owning_servers(lock_ids: np.ndarray, his: np.ndarray, owners: np.ndarray, servers: int,
                   out: np.ndarray) -> None:
    """:func:`owning_server` of each of ``lock_ids``, into ``out``."""
    for i in range(lock_ids.shape[0]):
        out[i] = owning_server(lock_ids[i], his, owners, servers)
