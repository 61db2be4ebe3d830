"""NetLock's switch data plane: the one home of the switch rules (Algorithm 2 and friends).

- :mod:`.compatibility`: the S/X compatibility and priority-class rules, shared with the lock
  server;
- :mod:`.registers`: the register arrays and their named columns (and a gone switch's rows
  kept for the next, :mod:`.spares`, or copied on write from one blank set,
  :mod:`.blank_pages`);
- :mod:`.kernels`: the per-packet pipeline as numba-compatible kernels (:mod:`._kernel_jit`
  compiles them);
- :mod:`.switch`: :class:`SwitchDataPlane`, the arrays plus lock table and control plane;
- :mod:`.batch_install`: the array steps of its batch install (``install_many``);
- :mod:`.counters`: what it counts, as the control plane reads it (a mixin of it).

The switch's names are imported on first use (PEP 562), so that importing a light module of
this package (:mod:`.registers`, :mod:`._kernel_jit`) does not compile the kernels or import
numba.
"""

from typing import Any

from netlock.dataplane._kernel_jit import JIT_ENABLED, kernel

__all__ = ["JIT_ENABLED", "ControlPlaneError", "Outcome", "SwitchDataPlane", "kernel"]
_SWITCH = ("ControlPlaneError", "Outcome", "SwitchDataPlane")


def __getattr__(name: str) -> Any:
    if name in _SWITCH:
        from netlock.dataplane import switch

        return getattr(switch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
