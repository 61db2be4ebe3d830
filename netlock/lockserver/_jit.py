"""The lock-server kernels' compile options and numba cache.

The kernels are compiled with :func:`netlock.dataplane._jit.kernel`, as the switch's are.
They inline the constants of this package's modules and the rules they share with the switch
(:mod:`netlock.dataplane.rules`, :mod:`netlock.packets`), which numba's cache does not track,
so this package's cache is dropped whenever any of those sources changes.
"""

from __future__ import annotations

from pathlib import Path

from netlock.dataplane._jit import JIT_ENABLED, drop_stale_cache, kernel, kernel_sources

__all__ = ["JIT_ENABLED", "kernel", "lockserver_sources"]


def lockserver_sources() -> list[Path]:
    """The files whose content the compiled lock-server kernels depend on."""
    here = Path(__file__).resolve().parent
    return [*sorted(here.glob("*.py")), *kernel_sources()]


if JIT_ENABLED:
    drop_stale_cache(Path(__file__).resolve().parent, lockserver_sources())
