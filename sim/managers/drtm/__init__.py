"""DrTM's RDMA lock (SOSP'15) as a lock manager."""

from sim.managers.drtm.manager import DrtmManager

__all__ = ["DrtmManager"]
