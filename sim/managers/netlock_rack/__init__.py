"""NetLock as a lock manager of the simulated rack: switch, lock servers, control plane."""

from sim.managers.netlock_rack.manager import NetLockManager

__all__ = ["NetLockManager"]
