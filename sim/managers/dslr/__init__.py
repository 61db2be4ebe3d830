"""DSLR (SIGMOD'18): decentralized, starvation-free locks by RDMA fetch-and-add tickets."""

from sim.managers.dslr.manager import DslrManager

__all__ = ["DslrManager"]
