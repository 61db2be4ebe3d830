"""Lock managers the simulated clients can run against (NetLock now; other designs later)."""

from sim.managers.base import LockManager

__all__ = ["LockManager"]
