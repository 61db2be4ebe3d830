"""NetLock as a lock manager of the simulated rack: switch, lock servers, control plane."""

from sim.managers.netlock.manager import NetLockManager

__all__ = ["NetLockManager"]
