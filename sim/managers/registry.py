"""The lock managers by ``manager.kind``: each built from a :class:`ManagerContext`."""

from __future__ import annotations

from collections.abc import Callable

from sim.managers.concordia import ConcordiaManager
from sim.managers.context import ManagerContext
from sim.managers.declock import DecLockManager
from sim.managers.drtm import DrtmManager
from sim.managers.dslr import DslrManager
from sim.managers.interface import LockManager
from sim.managers.netchain import NetChainManager
from sim.managers.netlock_rack.manager import NetLockManager
from sim.managers.rdmacas import RdmaCasManager
from sim.managers.server import ServerCentricManager


def _netlock(ctx: ManagerContext) -> LockManager:
    return NetLockManager(ctx.engine, ctx.network, ctx.config, ctx.plan, ctx.partition,
                          grant_extra_hops=ctx.spec.grant_extra_hops)


MANAGERS: dict[str, Callable[[ManagerContext], LockManager]] = {
    "netlock": _netlock,
    "dslr": DslrManager,
    "drtm": DrtmManager,
    "netchain": NetChainManager,
    "server-tcp": lambda ctx: ServerCentricManager(ctx, "tcp"),
    "server-rdma": lambda ctx: ServerCentricManager(ctx, "rdma"),
    "rdma-cas": RdmaCasManager,
    "declock": DecLockManager,
    "concordia": ConcordiaManager,
}


def make_manager(ctx: ManagerContext) -> LockManager:
    """The lock manager ``ctx.config.manager.kind`` names."""
    return MANAGERS[ctx.config.manager.kind](ctx)
