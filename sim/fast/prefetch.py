"""Cache prefetch hints for compiled code (``llvm.prefetch``): performance only, no effect
on results.

The switch state of a large rack does not fit in the CPU caches and a request's kernels
walk a chain of dependent loads (lock table -> lock and queue rows -> queue slot). The
engine knows which lock a packet is for long before the switch handles it (when the client
sends it) and asks for its rows then, and for its queue slot one event ahead
(:mod:`sim.fast.loop`; also asking for the request row of the event after next, found by
comparing the heap root's children at every event, cost TPC-C low 4 % of its loop and gave
the microbenchmark nothing: 0.961 and 0.996 without it, 6 pairs each, the request rows in
flight being few enough to stay in the cache). Each client reads its batch of transactions
front to back, but between two of its transactions every other client takes one, so the
line a client needs next has long left the cache: it is asked for a few transactions ahead.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from netlock.dataplane._kernel_jit import JIT_ENABLED
from netlock.dataplane.registers import R_HEAD, R_TAIL
from netlock.lockserver import hashmap
from sim.fast._fast_jit import fast_jit_inline
from sim.fast.state import CI_PRIORITY, RI_CLIENT, RI_LOCK, RI_OP, RackArrays

TXN_AHEAD = 16
"""How many transactions (and locks) ahead of a client's next one to fetch its batch."""


def _prefetch_codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
    arrty = signature.args[0]
    ary = context.make_array(arrty)(context, builder, args[0])
    zero = context.get_constant(types.intp, 0)
    inds = [*args[1:], *([zero] * (arrty.ndim - len(args) + 1))]
    ptr = cgutils.get_item_pointer2(context, builder, data=ary.data,
                                    shape=cgutils.unpack_tuple(builder, ary.shape),
                                    strides=cgutils.unpack_tuple(builder, ary.strides),
                                    layout=arrty.layout, inds=inds)
    i8p = builder.bitcast(ptr, ir.IntType(8).as_pointer())
    i32 = ir.IntType(32)
    fnty = ir.FunctionType(ir.VoidType(), [i8p.type, i32, i32, i32])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
    builder.call(fn, [i8p, i32(0), i32(3), i32(1)])
    return context.get_dummy_value()


@intrinsic
def _prefetch_row(typingctx: Any, arr: Any, row: Any) -> Any:
    return types.void(arr, row), _prefetch_codegen


@intrinsic
def _prefetch_plane_row(typingctx: Any, arr: Any, plane: Any, row: Any) -> Any:
    return types.void(arr, plane, row), _prefetch_codegen


if JIT_ENABLED:
    prefetch_row = _prefetch_row
    prefetch_plane_row = _prefetch_plane_row
else:
    def prefetch_row(arr: object, row: int) -> None:
        """Ask for row ``row`` of 2-D ``arr`` to be brought into the cache."""

    def prefetch_plane_row(arr: object, plane: int, row: int) -> None:
        """Ask for ``arr[plane, row]`` of 3-D ``arr`` (or cell ``arr[plane, row]`` of 2-D
        ``arr``) to be brought into the cache."""


@fast_jit_inline
def warm_switch_rows(r: RackArrays, h: int) -> None:
    """Request ``h`` is on its way to the switch: fetch its lock's rows, or for a lock id
    above the dense table, the lock table's cells its lookup starts at (TPC-C: 95 % of
    requests. Looking such a lock up one event ahead to fetch its rows too made no
    difference: 0.05 s loops 2.08 against 2.10 CPU s, medians of 9)."""
    lock = r.ri[h, RI_LOCK]
    if lock >= r.table_dense.shape[0]:
        k = hashmap.home(r.table_keys, lock)
        prefetch_row(r.table_keys, k)
        prefetch_row(r.table_values, k)
        return
    i = r.table_dense[lock] - 1
    if i >= 0:
        prefetch_row(r.sw_locks, i)
        prefetch_plane_row(r.sw_regions, _queue_class(r, h), i)


@fast_jit_inline
def warm_switch_slot(r: RackArrays, h: int) -> None:
    """Request ``h`` is the switch's next packet: fetch the queue slot it will use (for a
    lock in the dense table)."""
    lock = r.ri[h, RI_LOCK]
    if lock >= r.table_dense.shape[0]:
        return
    i = r.table_dense[lock] - 1
    if i >= 0:
        k = r.sw_regions[_queue_class(r, h), i, R_HEAD if r.ri[h, RI_OP] else R_TAIL]
        if k >= 0:
            prefetch_row(r.sw_slots, k)


@fast_jit_inline
def warm_server_cell(r: RackArrays, lock: int) -> None:
    """A request is on its way to its lock server: fetch the server map's cells its
    lookup starts at."""
    k = hashmap.home(r.srv.keys, lock)
    prefetch_row(r.srv.keys, k)
    prefetch_row(r.srv.values, k)


@fast_jit_inline
def _queue_class(r: RackArrays, h: int) -> int:
    """The switch queue class of request ``h``."""
    return min(r.ci[r.ri[h, RI_CLIENT], CI_PRIORITY], r.sw_regions.shape[0] - 1)


@fast_jit_inline
def warm_txns(r: RackArrays, c: int, t: int, off: int) -> None:
    """Client ``c`` takes transaction ``t`` of its batch, whose locks start at ``off``:
    fetch the batch's lines ``TXN_AHEAD`` transactions further on."""
    prefetch_plane_row(r.tx_size, c, min(t + TXN_AHEAD, r.tx_size.shape[1] - 1))
    ahead = min(off + TXN_AHEAD, r.tx_lock.shape[1] - 1)
    prefetch_plane_row(r.tx_lock, c, ahead)
    prefetch_plane_row(r.tx_mode, c, ahead)
