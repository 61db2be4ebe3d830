"""The capacity notebook runs end to end at small scale; its cells assert that a frontier
rack meets the target, predicted beside simulated, and that an unreachable target names
the clients as what binds."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient

from tests.sim.helpers import ROOT

NOTEBOOK = ROOT / "notebooks" / "capacity.ipynb"


def test_capacity_notebook_runs_at_small_scale_and_shows_its_frontier(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source = f'SCALE = "small"\nWORKERS = 1\nOUT = {str(tmp_path)!r}'
    NotebookClient(nb, timeout=600, startup_timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    assert (tmp_path / "capacity-frontier.png").read_bytes()[:4] == b"\x89PNG"
    shown = [c for c in nb.cells if c.cell_type == "code" and "show(png)" in c.source]
    assert shown and any("image/png" in o.get("data", {}) for o in shown[0].outputs)
