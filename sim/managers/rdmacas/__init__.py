"""Client-centric RDMA CAS/FAA locks (rdma-lock-management, section 4)."""

from sim.managers.rdmacas.manager import RdmaCasManager

__all__ = ["RdmaCasManager"]
