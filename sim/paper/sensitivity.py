"""Whether a claim hinges on a parameter no published measurement gives.

Two of the RDMA testbed's parameters (``configs/testbed/rdma.yaml``) have no source that
could be checked: the time an RDMA atomic holds its address in the target NIC
(``manager.rdma.atomic_us``) and a two-sided RDMA message's CPU cost on a lock server
(``manager.server.rdma_message_us``). Rather than tune them, every claim that depends on one
is rerun with it divided and multiplied by :data:`FACTORS`' spread, and each of the claim's
checks is compared with its outcome at the assumed value: a conclusion that flips inside
that range is the parameter's, not the design's. The claims are the compared designs' own
(:mod:`sim.paper.peers`) and the paper's Figures 10 and 11 (:mod:`sim.paper.comparison`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from netlock.config import Config, default_config

from .experiments import run_figure
from .figure import Check
from .peers import PEERS, overriding, run_peer

FACTORS = (1 / 3, 1.0, 3.0)
"""The assumed value divided by three, itself, and times three: wide enough to cover the
estimates the config's comments discuss for each parameter (a PCIe round trip or two for
an atomic; a few hundred cycles to a few thousand for a message), narrow enough to keep
the parameter's meaning."""


@dataclass(frozen=True)
class Unsourced:
    """A parameter without a checked source, and the claims whose runs depend on it."""

    key: str
    claims: tuple[str, ...]
    """Peer claims (:data:`sim.paper.peers.PEERS`) and paper figures (``fig10``,
    ``fig11``) whose designs use the parameter."""

    def assumed(self, config: Config) -> float:
        """The value the testbed profile assumes (the schema's default)."""
        value: Any = config
        for part in self.key.split("."):
            value = getattr(value, part)
        return float(value)


UNSOURCED = (
    Unsourced("manager.rdma.atomic_us",
              ("fig3", "declock", "dslr-fcfs", "drtm-writers", "fig10", "fig11")),
    Unsourced("manager.server.rdma_message_us", ("fig1a", "fig1b", "fig3")),
)
FIGURES = ("fig10", "fig11")

HINGES = {("manager.rdma.atomic_us", "declock")}
"""(parameter, claim) pairs whose outcome flips inside :data:`FACTORS`' range (measured at
full scale, notebooks/rdma-sensitivity.ipynb). declock.md's spinlock collapse is contention
on the memory node's NIC, so it is made of the atomic's time in that NIC: at a third of the
assumed 0.37 us spinlocks still fall (96 K -> 70 K locks/s from 40 to 120 clients) but stay
above DecLock's 66 K; at three times DecLock's p99 at 120 clients (1,987 us, its waiters
handing over one by one) meets the spinlocks' (1,979 us). Every check of Figures 10 and 11
(Figure 11's low-contention p99 was a near tie while NetLock's transactions deadlocked and
waited out their attempt timeout; with an attempt's acquires in one burst it is 123 us
against DSLR's 2,038-2,331 us at every value), Figures 1a, 1b and 3, DSLR's FCFS and
DrTM's writers hold across the range."""


def claim_checks(claim: str, scale: str, sets: dict[str, Any], workers: int = 1) -> list[Check]:
    """The checks of ``claim`` (a peer claim or a comparison figure) at ``scale`` with
    ``sets`` (dotted keys) applied to every run."""
    if claim in FIGURES:
        return run_figure(claim, scale, workers, overrides=sets).checks
    if claim not in PEERS:
        raise ValueError(f"unknown claim {claim!r}")
    with overriding(sets):
        return run_peer(claim, scale).checks


def sensitivity(scale: str = "small", parameters: tuple[Unsourced, ...] = UNSOURCED,
                factors: tuple[float, ...] = FACTORS, workers: int = 1,
                progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """One row per parameter, factor, claim and check: the value run, whether the check
    holds, and whether that is its outcome at the assumed value (``same``; factor 1 must be
    among ``factors``)."""
    if 1.0 not in factors:
        raise ValueError("factors must include 1.0, the assumed value")
    base = default_config()
    rows = []
    for parameter in parameters:
        assumed = parameter.assumed(base)
        for claim in parameter.claims:
            for factor in factors:
                value = round(assumed * factor, 6)
                if progress is not None:
                    progress(f"{parameter.key}={value:g}: {claim}")
                for check in claim_checks(claim, scale, {parameter.key: value}, workers):
                    rows.append({"parameter": parameter.key, "factor": factor,
                                 "value": value, "claim": claim, "check": check.claim,
                                 "holds": check.holds, "detail": check.detail})
    table = pd.DataFrame(rows)
    at_assumed = (table[table["factor"] == 1.0]
                  .set_index(["parameter", "claim", "check"])["holds"])
    table["same"] = [h == at_assumed[(p, c, k)] for p, c, k, h in
                     zip(table["parameter"], table["claim"], table["check"], table["holds"],
                         strict=True)]
    return table


def flips(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of a :func:`sensitivity` table whose check differs from its outcome at the
    assumed value: the conclusions that hinge on the parameter."""
    return table[~table["same"]]
