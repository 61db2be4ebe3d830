"""The Concordia notebook runs end to end at small scale; its cells assert the
experiments' checks (sim.experiments.concordia) and show every figure."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient

from tests.sim.helpers import ROOT

NOTEBOOK = ROOT / "notebooks" / "concordia.ipynb"


def test_concordia_notebook_runs_at_small_scale_and_shows_its_figures(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source = f'SCALE = "small"\nWORKERS = 1\nOUT = {str(tmp_path)!r}'
    NotebookClient(nb, timeout=600, startup_timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "concordia-migration.png", "concordia-sharing.png"]
    shown = [c for c in nb.cells if c.cell_type == "code" and "show(" in c.source
             and "def show" not in c.source]
    assert len(shown) == 2
    for cell in shown:
        assert any("image/png" in o.get("data", {}) for o in cell.outputs), cell.source
