"""``notebooks/memory-vs-think-time.ipynb`` runs end to end at its small scale."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient

from tests.sim.helpers import ROOT

NOTEBOOK = ROOT / "notebooks" / "memory-vs-think-time.ipynb"


def test_notebook_reproduces_figure_14_at_small_scale(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source = f'SCALE = "small"\nWORKERS = 2\nOUT = {str(tmp_path / "out")!r}'
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    assert (tmp_path / "out" / "fig14a.png").stat().st_size > 1000
    assert (tmp_path / "out" / "fig14b.png").stat().st_size > 1000
    assert (tmp_path / "out" / "fig14a" / "results.parquet").exists()
