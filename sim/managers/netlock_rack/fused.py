"""One compiled call for the packets a client sends back to back: a release, then an acquire.

Both packets come from one client, so they share its id, tenant and priority.

No rule lives here: the two packets go through :func:`netlock.dataplane.kernels.release`
and :func:`netlock.dataplane.kernels.acquire` in that order, exactly as two separate calls
would. Calling a compiled function from Python costs about a microsecond whatever it does,
so doing both in one call is the single largest saving of the engine's hot path.
Its compiled code embeds the kernels', so its numba cache is dropped when they change
(numba's own cache would keep the old rules).
``res`` receives ``(rows of the release, its passes, rows of the acquire, its passes)``;
the release's actions are the first rows of ``out``, the acquire's follow them. The return
value is 1 for the common outcome, which the caller then needs not read: both locks are in
the switch, the release took one pass and granted nothing, the acquire took one pass and
was granted at once.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from netlock.dataplane import kernels
from netlock.dataplane._kernel_jit import JIT_ENABLED, drop_stale_cache, kernel, kernel_sources
from netlock.dataplane.kernels import GRANT
from netlock.dataplane.registers import C_PASSES, O_KIND

if JIT_ENABLED:
    drop_stale_cache(Path(__file__).resolve().parent,
                     [Path(__file__).resolve(), *kernel_sources()])


@kernel
def release_then_acquire(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray,
                         tenants: np.ndarray, ctl: np.ndarray, trace: np.ndarray | None,
                         out: np.ndarray, res: np.ndarray, client: int, tenant: int,
                         priority: int, i1: int, lock1: int, mode1: int, txn1: int,
                         slot1: int, i2: int, lock2: int, mode2: int, txn2: int,
                         now_us: int) -> int:
    n1 = kernels.release(locks, regions, slots, ctl, trace, out, i1, lock1, mode1, txn1, client,
                         tenant, priority, slot1, now_us)
    res[0] = n1
    res[1] = ctl[C_PASSES]
    res[2] = kernels.acquire(locks, regions, slots, tenants, ctl, trace, out[n1:], i2, lock2,
                             mode2, txn2, client, tenant, priority, 0, now_us)
    res[3] = ctl[C_PASSES]
    common = (i1 >= 0 and i2 >= 0 and n1 == 0 and res[1] == 1 and res[2] == 1
              and res[3] == 1 and out[0, O_KIND] == GRANT)
    return 1 if common else 0


def entry_point(dispatcher: object, *example: object) -> object:
    """The compiled function behind a numba dispatcher, called without type dispatch.

    Compiles for the types of ``example`` first. Falls back to the dispatcher itself when
    numba is disabled or does not expose its compiled entry points.
    """
    if not hasattr(dispatcher, "overloads"):
        return dispatcher
    dispatcher(*example)
    import numba

    compiled = dispatcher.overloads.get(tuple(numba.typeof(a) for a in example))
    return getattr(compiled, "entry_point", dispatcher)
