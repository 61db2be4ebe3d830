"""The NetStore controller (section 2.2): lock server and network manager in one.

It grants locks from its :class:`NetStoreLockTable`, and with each grant picks the path the
operation's data takes (:func:`sim.netstore.lbp.choose_path`), adding the operation's bytes
to the in-transit count of every link on it; the bytes leave the count when the transaction
releases its locks. Background flows announce themselves before and after they run
(section 2.2), so their bytes are counted too, on the path ECMP gave them. The controller
never sees the flows' progress: a flow's bytes stay counted in full until it is over.
"""

from __future__ import annotations

import numpy as np

from sim.fabric.topology import FatTree
from sim.netstore.lbp import choose_path
from sim.netstore.locktable import NetStoreLockTable


class Controller:
    """Locks, per-link bytes in transit, and path choice (``routing``: lbp or ecmp)."""

    def __init__(self, fabric: FatTree, routing: str, rng: np.random.Generator) -> None:
        self.fabric = fabric
        self.routing = routing
        self.locks = NetStoreLockTable()
        self.in_flight_bytes = np.zeros(fabric.links)
        self._rng = rng

    def route(self, src: int, dst: int, nbytes: float) -> np.ndarray:
        """The path (directed links) an operation's ``nbytes`` take from host ``src`` to
        ``dst``, now counted as in transit on it."""
        paths = self.fabric.paths(src, dst)
        row = choose_path(self.routing, paths, self.fabric.capacity_bps,
                          self.in_flight_bytes, self._rng)
        path = paths[row]
        self.in_flight_bytes[path] += nbytes
        return path

    def announce(self, path: np.ndarray, nbytes: float) -> None:
        """A background flow of ``nbytes`` starts on ``path``."""
        self.in_flight_bytes[path] += nbytes

    def forget(self, path: np.ndarray, nbytes: float) -> None:
        """A flow of ``nbytes`` on ``path`` is over (released or ended)."""
        self.in_flight_bytes[path] -= nbytes
