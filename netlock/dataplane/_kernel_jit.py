"""The ``kernel`` decorator: numba ``njit(cache=True)`` when available, identity otherwise.

Kernels are plain functions over int64 numpy arrays and scalars, so the same source runs
compiled (the default) or as ordinary Python (``NETLOCK_NOJIT=1``, or numba missing), and
compiled kernels can be called from other numba functions such as the fast engine's loop.

numba is imported by the first kernel compiled, not by this module: importing numba takes
about half a second, and what only reads constants or :func:`jitable` rules (``netlock
config check``) never needs it.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from types import ModuleType
from typing import TypeVar

F = TypeVar("F", bound=Callable)

JIT_ENABLED: bool = find_spec("numba") is not None and os.environ.get("NETLOCK_NOJIT") != "1"
_JITABLE: list[Callable] = []


@cache
def _numba() -> ModuleType:
    """numba, imported once, with this package's stale cache dropped and every
    :func:`jitable` rule made callable from compiled code."""
    import numba

    _blas_check_deferred()
    drop_stale_cache(Path(__file__).resolve().parent, kernel_sources())
    for func in _JITABLE:
        _register_jitable(func)
    return numba


def _blas_check_deferred() -> None:
    """Import ``numba.np.arraymath`` without its BLAS check importing ``scipy.linalg``.

    numba's first compile or cache load imports ``numba.np.arraymath``, whose import asks
    whether a BLAS is there by importing ``scipy.linalg.cython_blas``: the whole
    ``scipy.linalg`` package, which imports ``numpy.f2py`` and ``numpy.testing`` (about
    0.15 CPU s, an eighth of a tiny fast run's; issue 32). Its answer only picks how compiled
    ``np.correlate``/``np.convolve`` of floats multiply (BLAS or a loop). Here it is
    answered by whether scipy is installed (what the import finds, without importing it);
    numba's own check (``ensure_blas``, scipy's integer width) still runs when compiled code
    first calls a linear-algebra function. Nothing of this project does."""
    if "numba.np.arraymath" in sys.modules or find_spec("scipy") is None:
        return
    from numba.np import linalg

    ensure_blas = linalg.ensure_blas
    linalg.ensure_blas = _blas_found
    try:
        from numba.np import arraymath
    finally:
        linalg.ensure_blas = ensure_blas
    arraymath.ensure_blas = ensure_blas


def _blas_found() -> None:
    """Stands in for numba's ``ensure_blas`` while ``numba.np.arraymath`` imports."""


def _register_jitable(func: Callable) -> None:
    from numba.extending import register_jitable

    register_jitable(func)


def jitable(func: F) -> F:
    """``func`` itself, plain Python, which compiled code (kernels, the fast engine's loop)
    may call: numba compiles it into its callers (``numba.extending.register_jitable``).

    For rules over scalars that compiled code and plain Python both apply (the client's
    transaction rules, :mod:`netlock.client`): Python callers run the source as written,
    without importing numba (``netlock config check`` reads them), and run it faster than
    a call into compiled code from Python (about 1 us) would.
    """
    if JIT_ENABLED:
        _JITABLE.append(func)
        if _numba.cache_info().currsize:
            _register_jitable(func)
    return func


def kernel(func: F) -> F:
    """Compile ``func`` with ``numba.njit(cache=True)`` unless the JIT is disabled.

    Kernels never allocate arrays, so they are compiled without numba's reference-counting
    runtime (``_nrt=False``): otherwise every call between kernels that passes arrays pays
    atomic increments and decrements that numba cannot prune across branches, about 3x
    the cost of a whole acquire + release (numba issue 2350).
    """
    if JIT_ENABLED:
        return one_signature(_numba().njit(cache=True, _nrt=False)(func))
    return func


def kernel_nogil(func: F) -> F:
    """:func:`kernel` that lets go of the GIL while it runs: for compiled passes called from
    Python that run long (the fast engine's event loop, the safety checker's), so that
    another thread runs meanwhile. Not for the short kernels called per packet from
    Python: releasing and taking back the GIL would add to each call."""
    if JIT_ENABLED:
        return one_signature(_numba().njit(cache=True, _nrt=False, nogil=True)(func))
    return func


def kernel_inline(func: F) -> F:
    """:func:`kernel`, inlined into its callers by numba (the lock servers' ``step_kernel``
    and the fast engine's ``fast_jit_inline`` are this one). For the passes every acquire or
    release runs (``_release_head``, ``_dequeue_head``, ``_grant_waiting``). A call between
    compiled functions passes each array argument as about seven machine words through the
    stack; inlining these three gave the fast engine's loop +28 % requests/s on the
    microbenchmark (3.96 -> 5.07 M/s, A/B medians of 5 runs x 2, same results)."""
    if JIT_ENABLED:
        return one_signature(_numba().njit(cache=True, _nrt=False, inline="always")(func))
    return func


def one_signature(dispatcher: F) -> F:
    """``dispatcher``, compiled once per argument types when called from compiled code.

    numba compiles a function called from compiled code once for every combination of
    constants its callers pass (``push(h, t, E_GRANT, a, 0)`` and ``push(h, t, E_TIMER, a,
    0)`` are two functions, each typed, lowered and optimised), which made about a fifth of
    the fast engine's cold compile. Typing such a call with the constants' plain types
    compiles one function instead; callers inlined into at the machine-code level still see
    the constants.
    """
    template = dispatcher.get_call_template

    def get_call_template(args: tuple, kws: dict) -> tuple:
        unliteral = _numba().types.unliteral
        return template(tuple(unliteral(a) for a in args),
                        {k: unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def kernel_sources() -> list[Path]:
    """The files whose content the compiled kernels depend on."""
    here = Path(__file__).resolve().parent
    return [*sorted(here.glob("*.py")), here.parent / "packets.py", here.parent / "client.py",
            here.parent / "txn_context.py", here.parent / "server_lookup.py"]


def drop_stale_cache(package: Path, sources: list[Path]) -> None:
    """Empty the numba cache of directory ``package`` when any of ``sources`` changed.

    numba's cache only notices edits to a function's own file, but kernels inline the
    constants, rules and compile options of sibling modules (and ``netlock.packets``).
    Packages that compile their own loops around the kernels can call this with their
    files plus :func:`kernel_sources`.
    """
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()
    cache = package / "__pycache__"
    stamp = cache / "kernels.sources.sha256"
    if stamp.is_file() and stamp.read_text() == digest:
        return
    try:
        cache.mkdir(exist_ok=True)
        for old in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
            old.unlink(missing_ok=True)
        stamp.write_text(digest)
    except OSError:
        return
