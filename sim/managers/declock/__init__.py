"""DecLock: cooperative queue-notify locking for disaggregated memory."""

from sim.managers.declock.manager import DecLockManager

__all__ = ["DecLockManager"]
