"""``fast_jit``: how the fast engine's loops are compiled.

``numba.njit(cache=True, _nrt=False)``: the engine's functions never allocate arrays (every
array is made in Python and passed in), so numba's reference counting is left out, as for
the data-plane kernels they call (see :mod:`netlock.dataplane._kernel_jit`). With the JIT disabled
(``NETLOCK_NOJIT=1``) they run as plain Python, slowly but with the same results.

numba's cache only notices edits to a function's own file; the engine inlines constants of
its sibling modules and of the data-plane and lock-server kernels, so the cache of this
package is dropped whenever any of those sources changes.
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
    kernel_nogil,
)
from netlock.lockserver._server_jit import lockserver_sources

F = TypeVar("F", bound=Callable)


def fast_jit(func: F) -> F:
    """Compile ``func`` for the fast engine (identity when the JIT is disabled): with the
    kernels' options (:func:`netlock.dataplane._kernel_jit.kernel`)."""
    return kernel(func)


def fast_jit_nogil(func: F) -> F:
    """:func:`fast_jit` for the event loop's entry from Python, which also lets go of the
    GIL while it runs: a worker thread draws the next randomness meanwhile
    (:mod:`sim.core.ahead`)."""
    return kernel_nogil(func)


def fast_jit_inline(func: F) -> F:
    """:func:`fast_jit`, inlined into its callers by numba.

    For the per-request path: a call between compiled functions passes the whole
    :class:`sim.fast.state.RackArrays` (a few hundred machine words), which costs more than the
    work of most of these functions.
    """
    return kernel_inline(func)


def inlined(func: F) -> F:
    """A compiled function (a data-plane kernel, the heap's push, a client or switch step)
    compiled again with :func:`fast_jit_inline`, for call sites on the per-request path: the
    source, and so the rule, stays in one place; only where the machine code goes differs. A
    call passes every array argument as machine words (~60 for a kernel): inlining the kernels
    gave +15 % requests/s on the microbenchmark, the heap's pop and push a few % more."""
    return fast_jit_inline(getattr(func, "py_func", func))


COMPILED_MODULES = ("_fast_jit", "heap", "state", "records", "client_sends", "client_txns",
                    "client_rows", "rack_arrays", "loop", "prefetch", "open_loop_rows")


def engine_sources() -> list[Path]:
    """The files whose content the compiled engine depends on."""
    here = Path(__file__).resolve().parent
    return [*(here / f"{name}.py" for name in COMPILED_MODULES), *lockserver_sources()]


if JIT_ENABLED:
    drop_stale_cache(Path(__file__).resolve().parent, engine_sources())


def cache_is_cold() -> bool:
    """Whether the next fast-engine run compiles the engine (numba's cache holds no main
    loop yet, as on a fresh clone or after its sources changed): minutes, once."""
    cache = Path(__file__).resolve().parent / "__pycache__"
    return JIT_ENABLED and not any(cache.glob("loop.run-*.nbi"))
