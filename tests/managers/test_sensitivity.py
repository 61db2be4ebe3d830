"""The parameters without a checked source: which claims each one's runs depend on, that a
claim's runs really take the value asked for, and (slow) which conclusions flip inside the
range :data:`sim.paper.sensitivity.FACTORS` spans."""

from __future__ import annotations

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

import sim.paper.peers as peers
from netlock.config import default_config
from sim.paper.sensitivity import FACTORS, FIGURES, HINGES, UNSOURCED, flips
from tests.sim.helpers import ROOT


def test_every_claim_named_exists_and_every_parameter_is_a_config_key():
    base = default_config()
    for parameter in UNSOURCED:
        assert parameter.assumed(base) > 0
        for claim in parameter.claims:
            assert claim in peers.PEERS or claim in FIGURES
    assert {key for key, _ in HINGES} <= {p.key for p in UNSOURCED}


def test_overriding_reaches_every_run_of_a_claim_and_ends_with_the_block(monkeypatch):
    seen: list[float] = []

    def fake(config):
        seen.append(config.manager.rdma.atomic_us)
        raise StopIteration

    monkeypatch.setattr(peers, "simulate", fake)
    with peers.overriding({"manager.rdma.atomic_us": 1.11}), pytest.raises(StopIteration):
        peers.simulate_point("small", manager__kind="rdma-cas", manager__rdma__atomic_us=9)
    with pytest.raises(StopIteration):
        peers.simulate_point("small", manager__kind="rdma-cas")
    assert seen == [1.11, default_config().manager.rdma.atomic_us]


def test_a_flip_is_a_check_whose_outcome_differs_from_the_assumed_values():
    rows = [{"parameter": "k", "factor": f, "claim": "c", "check": "x", "holds": h}
            for f, h in zip(FACTORS, (False, True, True), strict=True)]
    table = pd.DataFrame(rows)
    table["same"] = table["holds"] == table.loc[table["factor"] == 1.0, "holds"].item()
    assert flips(table)["factor"].tolist() == [FACTORS[0]]


@pytest.mark.slow
def test_the_notebook_finds_only_the_documented_hinges_at_small_scale(tmp_path):
    """The notebook on every peer claim at small scale (Figures 10 and 11 take minutes a
    value; the stored notebook runs them at full scale): it asserts that what flips is what
    :data:`HINGES` documents; here the DecLock claim must flip (the check can fail) and no
    check may fail at the assumed value."""
    nb = nbformat.read(ROOT / "notebooks" / "rdma-sensitivity.ipynb", as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source = (f'SCALE = "small"\nWORKERS = 1\nOUT = {str(tmp_path)!r}\n'
                     f"CLAIMS = {sorted(peers.PEERS)!r}")
    NotebookClient(nb, timeout=900, startup_timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    table = pd.read_csv(tmp_path / "sensitivity.csv")
    assert set(table["claim"]) == {c for p in UNSOURCED for c in p.claims if c in peers.PEERS}
    assert table.loc[table["factor"] == 1.0, "holds"].all()
    flipped = set(zip(table.loc[~table["same"], "parameter"],
                      table.loc[~table["same"], "claim"], strict=True))
    assert ("manager.rdma.atomic_us", "declock") in flipped <= HINGES
