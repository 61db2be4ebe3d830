"""Which core of a lock server handles a lock's packets: the NIC's receive-side scaling.

The authors' lock server (netlock-repo ``dpdk_code/lock_server_code/server.c``) spreads
packets over its RX queues, one per core, by the NIC's RSS hash of the packet header, so
every packet of one lock lands on the same core and the locks spread evenly over the
cores. The model stands a multiplicative (Fibonacci) hash of the lock id for the NIC's
Toeplitz hash of the header: what matters is the same core per lock and an even spread, not
which core (the constant is the model's, not the NIC's). Both engines use this one rule.
"""

from __future__ import annotations

from netlock.lockserver._server_jit import kernel

RSS_MULTIPLIER = 0x9E3779B1
"""2^32 / the golden ratio: consecutive lock ids land on well-spread cores."""


@kernel
def rss_core(lock: int, cores: int) -> int:
    """The core (0 .. ``cores`` - 1) handling ``lock``'s packets."""
    return ((lock * RSS_MULTIPLIER) >> 16) % cores
