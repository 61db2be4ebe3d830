"""Whether a DPDK core's RX rings drop a packet: the lock server's receive bound, written once.

The authors' lock server gives each lcore ``NC_RX_QUEUE_PER_LCORE`` = 4 RX queues of
``NC_NB_RXD`` = 128 descriptors (netx-repo/NetLock ``dpdk_code/lock_server_code/include/
util.h`` lines 68, 70, 570 and 614: ``rte_eth_rx_queue_setup(portid, i, NC_NB_RXD, ...)``).
A packet that finds its queue's ring full is dropped by the NIC. The model serves a core's
packets in arrival order (busy until ``core_free``), so the packets waiting on a core are
its unfinished work over one packet's service time; a core holds at most ``ring`` of them
(its queues' descriptors together: RSS spreads a core's packets over its four queues,
chosen: as one ring of their sum). This bounds what an open loop offered over a server's
capacity can queue: the excess is dropped, as on the testbed, instead of growing without
bound.
"""

from __future__ import annotations

from netlock.dataplane._kernel_jit import jitable


@jitable
def ring_full(core_free_us: float, now_us: float, service_us: float, ring: int) -> bool:
    """Whether a packet reaching a core at ``now_us`` finds its RX ring full: the core is
    busy until ``core_free_us`` with packets of ``service_us`` each, and holds at most
    ``ring`` (0: no bound)."""
    return ring > 0 and core_free_us - now_us >= ring * service_us
