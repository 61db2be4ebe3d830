"""The parts of a rack both engines build the same way from a config.

The transactions the clients run, each client's share of its machine's NIC, and the switch
data plane with its tenants' quotas: the simpy engine (:mod:`sim.simpy_model`) and the fast engine
(:mod:`sim.fast.fast_model`) each wrap these in their own state, so they are made here once.
"""

from __future__ import annotations

import numpy as np

from netlock.client import SEND_WINDOW_US
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


def rx_cores_per_client(n_clients: int, n_machines: int, rx_cores: int) -> int:
    """The receiving cores each open-loop context sends its releases through: its machine's
    ``rx_cores`` split among the contexts of the busiest machine (at least one). Chosen: a
    context's grants reach cores of its own, so each context depends only on its own
    packets (as its NIC share); the authors' RSS spreads every context's grants over all
    six."""
    per_machine = -(-n_clients // n_machines)
    return max(1, rx_cores // per_machine)


def send_window_phases(start_rng: np.random.Generator, n_clients: int) -> list[float]:
    """Where each open-loop context's first send window starts, us: uniform over one window
    (drawn after the contexts' start phases, in both engines). Each of the authors' TX
    cores counts its ms from its own start (``client.c`` line 363), and the client
    processes are started one machine after another over ssh (``console.py``
    ``run_client``): their phases are not known; chosen: uniform."""
    return start_rng.uniform(0.0, SEND_WINDOW_US, n_clients).tolist()


def switch_dataplane(cfg: Config, locks_expected: int = 0) -> SwitchDataPlane:
    """An empty switch of ``cfg``'s geometry with its tenants' quotas (requests per quota
    window, at least one), quota policy and release check; ``locks_expected`` (the plan's
    entries about to be installed) only chooses how its empty registers are made."""
    max_tenant = max(t.id for t in cfg.tenants)
    dataplane = SwitchDataPlane(cfg.geometry, max_tenants=max(64, max_tenant + 1),
                                quota_policy=cfg.switch.quota_action,
                                release_check=cfg.switch.release_check,
                                locks_expected=locks_expected)
    for tenant in cfg.tenants:
        if tenant.quota_rps > 0:
            per_window = tenant.quota_rps * cfg.switch.quota_window_us / 1e6
            dataplane.set_tenant_quota(tenant.id, max(1, round(per_window)))
    return dataplane
