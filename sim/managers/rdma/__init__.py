"""RDMA NICs and the fabric the client-side RDMA lock managers issue their verbs on."""

from sim.managers.rdma.fabric import ATOMIC_VERBS, CAS, FAA, READ, SEND, WRITE, Fabric, Rnic

__all__ = ["ATOMIC_VERBS", "CAS", "FAA", "READ", "SEND", "WRITE", "Fabric", "Rnic"]
