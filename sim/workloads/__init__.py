"""Workload generators shared by the simulator and ``netlock trace gen``.

A :class:`WorkloadGenerator` yields transactions as sorted, distinct lock ids with modes; the
microbenchmark (:class:`MicroWorkload`), DSLR's TPC-C (:class:`TpccDslr`) and the TPC-C
NewOrder sketch (:class:`TpccNewOrder`) implement it, and :func:`workload_from_config`
picks one from a config.
"""

from sim.workloads.base import EXCLUSIVE, SHARED, TxnBatch, WorkloadGenerator
from sim.workloads.factory import workload_from_config
from sim.workloads.micro import MicroWorkload
from sim.workloads.tpcc import TpccLockSpace, TpccNewOrder, TpccTable, nurand
from sim.workloads.tpcc_dslr import TpccDslr
from sim.workloads.zipf import ZipfSampler

__all__ = [
    "EXCLUSIVE",
    "SHARED",
    "MicroWorkload",
    "TpccDslr",
    "TpccLockSpace",
    "TpccNewOrder",
    "TpccTable",
    "TxnBatch",
    "WorkloadGenerator",
    "ZipfSampler",
    "nurand",
    "workload_from_config",
]
