"""NetChain (NSDI'18) used as a lock service."""

from sim.managers.netchain.manager import NetChainManager

__all__ = ["NetChainManager"]
