"""NetLock's switch data plane: the one home of the switch rules (Algorithm 2 and friends).

- :mod:`.rules`: the S/X compatibility and priority-class rules, shared with the lock server;
- :mod:`.layout`: the register arrays and their named columns;
- :mod:`.kernels`: the per-packet pipeline as numba-compatible kernels;
- :mod:`.switch`: :class:`SwitchDataPlane`, the arrays plus lock table and control plane;
- :mod:`.counters`: what it counts, as the control plane reads it (a mixin of it).
"""

from netlock.dataplane._jit import JIT_ENABLED, kernel
from netlock.dataplane.switch import ControlPlaneError, Outcome, SwitchDataPlane

__all__ = ["JIT_ENABLED", "ControlPlaneError", "Outcome", "SwitchDataPlane", "kernel"]
