"""The lock-server kernels' compile options and numba cache.

The kernels are compiled with :func:`netlock.dataplane._kernel_jit.kernel`, as the switch's are.
They inline the constants of this package's modules and the rules they share with the switch
(:mod:`netlock.dataplane.compatibility`, :mod:`netlock.packets`), which numba's cache does
not track, so this package's cache is dropped whenever any of those sources changes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from netlock.dataplane._kernel_jit import (
    JIT_ENABLED,
    drop_stale_cache,
    kernel,
    kernel_inline,
    kernel_sources,
)

__all__ = ["JIT_ENABLED", "entry_point", "kernel", "lockserver_sources", "step_kernel"]

F = TypeVar("F", bound=Callable)


def step_kernel(func: F) -> F:
    """:func:`kernel`, inlined by numba into the kernels that call it.

    For the storage steps under the rules (a queue push, a holder lookup, an action row): a
    call passes the whole state, a dozen arrays of several machine words each, which costs
    more than such a step; inlined, the request path of the fast engine's lock servers runs
    about as fast as when the state had fewer arrays. :func:`netlock.lockserver.kernels.grant`
    is one too: every request and release a server serves ends in it. Called from Python
    they are ordinary compiled functions.
    """
    return kernel_inline(func)


def entry_point(dispatcher: F, *example: object) -> F:
    """The compiled ``dispatcher`` for the argument types of ``example``, called from Python
    without numba's type dispatch (``dispatcher`` itself when the JIT is off).

    Dispatch types every argument on every call: for a ``ServerState`` (a tuple of arrays)
    that costs several microseconds, about ten times the call itself. The entry point
    trusts its arguments instead: pass the example's types (same dtypes, dimensions and C
    layout for arrays; ints for ints, floats for floats). Compiles without calling.
    """
    if not JIT_ENABLED:
        return dispatcher
    from netlock.dataplane._kernel_jit import _numba

    types = tuple(_numba().typeof(a) for a in example)
    dispatcher.compile(types)  # type: ignore[attr-defined]
    return dispatcher.overloads[types].entry_point  # type: ignore[attr-defined]


def lockserver_sources() -> list[Path]:
    """The files whose content the compiled lock-server kernels depend on."""
    here = Path(__file__).resolve().parent
    return [*sorted(here.glob("*.py")), *kernel_sources()]


if JIT_ENABLED:
    drop_stale_cache(Path(__file__).resolve().parent, lockserver_sources())
