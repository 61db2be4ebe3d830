"""NetLock: the in-switch lock manager model (wire format, data plane, lock server, plans, config).

This package is the single home of NetLock's rules. ``sim``, ``planner`` and ``hwrunner``
import it; it imports none of them.
"""

__version__ = "0.1.0"
