"""Whether a plan file fits the workload a config runs: a plan made for another workload
(other lock ids, another skew) is accepted by the simulator, but its switch serves the wrong
locks. :func:`plan_fit_warning` says so in one line, from a sample of the workload's own
transactions, before the run."""

from __future__ import annotations

import numpy as np

from netlock.config import Config
from netlock.plan import Plan
from sim.core.parts import client_workload

SAMPLE_TXNS = 2000
"""Transactions drawn to estimate the share of requests the plan's switch locks get."""
FIT_RATIO = 0.5
"""Warn when the sample's switch share is below this fraction of the plan's prediction."""


def plan_fit_warning(config: Config, plan: Plan) -> str | None:
    """One line when ``plan`` looks made for another workload than ``config``'s, else None:
    lock ids beyond the workload's lock space, or a sampled share of requests on the plan's
    switch locks under ``FIT_RATIO`` of the share the plan predicted."""
    if config.workload.kind == "trace" or len(plan.entries.lock_id) == 0:
        return None
    workload = client_workload(config)
    ids = np.unique(plan.entries.lock_id)
    outside = int((ids >= workload.n_locks).sum())
    where = f"policy.plan {config.policy.plan}"
    if outside:
        return (f"{where}: {outside:,} of its {len(ids):,} switch locks are outside this "
                f"workload's {workload.n_locks:,} lock ids: it was made for another workload")
    summary = plan.summary
    predicted = summary.switch_rps / summary.total_rps if summary.total_rps > 0 else 0.0
    rng = np.random.default_rng(0)
    clients = np.arange(SAMPLE_TXNS) % max(config.workload.clients, 1)
    batch = workload.sample_txns(SAMPLE_TXNS, rng, clients)
    sampled = float(np.isin(batch.lock_ids, ids).mean()) if len(batch.lock_ids) else 0.0
    if predicted > 0 and sampled < FIT_RATIO * predicted:
        return (f"{where}: predicts {predicted:.0%} of requests on its switch locks, this "
                f"workload sends them {sampled:.0%}: it was made for another workload")
    return None
