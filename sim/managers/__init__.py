"""Lock managers the simulated clients can run against: NetLock and the designs it is
compared with, one package each, all behind :class:`sim.managers.interface.LockManager`."""

from sim.managers.interface import LockManager

__all__ = ["LockManager"]
