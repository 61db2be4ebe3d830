"""The parts of a rack both engines build the same way from a config.

The transactions the clients run, each client's share of its machine's NIC, and the switch
data plane with its tenants' quotas: the simpy engine (:mod:`sim.model`) and the fast engine
(:mod:`sim.fast.model`) each wrap these in their own state, so they are made here once.
"""

from __future__ import annotations

from netlock.config import Config
from netlock.dataplane import SwitchDataPlane
from sim.core.allocation import CoarseWorkload
from sim.workloads import WorkloadGenerator
from sim.workloads.factory import make_workload


def client_workload(config: Config) -> WorkloadGenerator:
    """The transactions the clients run: the workload, with its locks merged into coarse
    locks when ``policy.coarse_group`` > 1."""
    workload = make_workload(config)
    group = config.policy.coarse_group
    return CoarseWorkload(workload, group) if group > 1 else workload


def nic_shares_rps(n_clients: int, n_machines: int, rate_rps: float) -> list[float]:
    """Each client's share of its machine's NIC (lock requests/s): clients are spread
    round-robin over the machines and a machine's ``rate_rps`` is split evenly among the
    client processes it runs."""
    per_machine = [len(range(m, n_clients, n_machines)) for m in range(n_machines)]
    return [rate_rps / per_machine[c % n_machines] for c in range(n_clients)]


def switch_dataplane(cfg: Config) -> SwitchDataPlane:
    """An empty switch of ``cfg``'s geometry with its tenants' quotas (requests per quota
    window, at least one), quota policy and release check."""
    max_tenant = max(t.id for t in cfg.tenants)
    dataplane = SwitchDataPlane(cfg.geometry, max_tenants=max(64, max_tenant + 1),
                                quota_policy=cfg.switch.quota_action,
                                release_check=cfg.switch.release_check)
    for tenant in cfg.tenants:
        if tenant.quota_rps > 0:
            per_window = tenant.quota_rps * cfg.switch.quota_window_us / 1e6
            dataplane.set_tenant_quota(tenant.id, max(1, round(per_window)))
    return dataplane
