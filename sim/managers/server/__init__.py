"""The server-centric lock manager over TCP or RDMA send/receive."""

from sim.managers.server.manager import ServerCentricManager

__all__ = ["ServerCentricManager"]
