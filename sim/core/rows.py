"""The rows both engines record and the transactions a simpy client draws at once: what a
run allocates per grant and per client, in a module without pandas or the engines, so that
the memory estimate (:mod:`sim.footprint`, read by ``netlock config check``) takes them from
here as the engines do. :mod:`sim.core.metrics` holds the statistics over these rows.
"""

from __future__ import annotations

import numpy as np

TXN_BATCH = 512
"""Transactions a simpy client (:mod:`sim.client_inputs`) draws from the workload at once."""
USE_FIELDS = ("t_us", "latency_us", "tenant", "source", "lock", "mode", "end_us", "client",
              "asked_us")
"""One row per granted request, written when the client stops using the lock: when the
grant arrived, how long after the request was made, the tenant, which lock-manager
component granted it, the lock and mode, when the use ended, the client, and when its
transaction first asked for the lock (its first attempt's start)."""
TXN_FIELDS = ("t_us", "latency_us", "tenant", "locks", "client")
"""One row per committed transaction: commit time, latency from its first attempt, tenant,
lock count, client."""
USE_DTYPE = np.dtype([("t_us", np.float64), ("latency_us", np.float64), ("tenant", np.int32),
                      ("source", np.int8), ("lock", np.int64), ("mode", np.int8),
                      ("end_us", np.float64), ("client", np.int32), ("asked_us", np.float64)])
"""The type of each ``USE_FIELDS`` column in results (packed: one row is 50 bytes)."""
TXN_DTYPE = np.dtype([("t_us", np.float64), ("latency_us", np.float64), ("tenant", np.int32),
                      ("locks", np.int32), ("client", np.int32)])
"""The type of each ``TXN_FIELDS`` column in results."""
HANDBACK_DTYPE = np.dtype([("t_us", np.float64), ("lock", np.int64)])
"""One row per grant that reached a client no longer waiting for it (its attempt given up):
when it arrived and the lock. The lock manager did grant the lock then (the client hands it
back at once); the liveness checker counts that instant as the lock granted."""
