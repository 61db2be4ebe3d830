"""The NetStore notebook runs end to end at small scale; its cells assert the seed's trend on
what they ran and show the figure. Slow (a kernel and six short runs): the same trend is
asserted in the default suite by test_trend.py."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

from tests.sim.helpers import ROOT


@pytest.mark.slow
def test_notebook_runs_at_small_scale_and_shows_its_figure(tmp_path):
    nb = nbformat.read(ROOT / "notebooks" / "netstore-4.2-background.ipynb", as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source = f'SCALE = "small"\nWORKERS = 1\nOUT = {str(tmp_path)!r}'
    NotebookClient(nb, timeout=600, startup_timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    assert (tmp_path / "netstore-background.png").stat().st_size > 10_000
    shown = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
             if "image/png" in o.get("data", {})]
    assert len(shown) == 1
