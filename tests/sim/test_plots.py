"""Figures a researcher would publish: titles, human axis labels with units, readable
scales (M req/s, no "1e7" offset), legends off the data, magnitudes from 0; and
``netlock plot`` on a ``netlock sim --out`` folder, end to end."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from netlock import plotstyle
from sim.plots import METRICS, metric_figure
from sim.runplots import FIGURES
from tests.sim.helpers import CONFIGS, SHORT


def sweep_table() -> pd.DataFrame:
    return pd.DataFrame({
        "switch.slots": [0, 2000, 0, 2000],
        "workload.think_time_us": [0.0, 0.0, 10.0, 10.0],
        "throughput_rps": [1.2e7, 2.1e7, 1.1e7, 1.9e7],
        "tps": [1.2e7, 2.1e7, 1.1e7, 1.9e7],
        "latency_p99_us": [40.0, 12.0, 60.0, 30.0],
        "switch_share": [0.0, 0.7, 0.0, 0.6],
    })


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: m.column)
def test_sweep_figures_read_as_published_figures(metric):
    with plotstyle.styled():
        fig = metric_figure(sweep_table(), "switch.slots", "workload.think_time_us", metric)
        FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    assert fig.get_suptitle().startswith(metric.title)
    assert ax.get_xlabel() == "switch memory (slots)"
    assert "switch.slots" not in ax.get_xlabel() and "(" in ax.get_ylabel()
    assert ax.yaxis.get_offset_text().get_text() == "", "no 1e7 above the axis"
    assert ax.get_ylim()[0] == 0
    legend = ax.get_legend()
    assert legend.get_title().get_text() == "think time (us)"
    renderer = fig.canvas.get_renderer()
    assert legend.get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1, \
        "the legend sits outside the data"
    if metric.column == "throughput_rps":
        assert ax.get_ylabel() == "granted lock requests (M req/s)"
        assert {t.get_text() for t in ax.get_yticklabels()} >= {"0", "10", "20"}


def test_axis_labels_name_keys_with_units():
    assert plotstyle.axis_label("workload.think_time_us") == "think time (us)"
    assert plotstyle.axis_label("clients.timeout_us") == "timeout (us)"
    assert plotstyle.axis_label("servers.rate_rps") == "lock-server rate (req/s)"
    assert plotstyle.axis_label("workload.shared_fraction") == "shared fraction"


def test_netlock_plot_draws_a_sim_result_folder(run, tmp_path):
    out = tmp_path / "run"
    done = run("sim", CONFIGS / "micro-contended.yaml", *SHORT, "--set", "switch.slots=150",
               "--out", out, "--format", "csv")
    assert done.exit_code == 0, done.output
    plotted = run("plot", out, "--json")
    assert plotted.exit_code == 0, plotted.output
    doc = json.loads(plotted.stdout)
    assert [p.rsplit("/", 1)[-1] for p in doc["plots"]] == list(FIGURES)
    for name in FIGURES:
        assert (out / name).stat().st_size > 10_000
    elsewhere = run("plot", out, "--out", tmp_path / "figs")
    assert elsewhere.exit_code == 0 and (tmp_path / "figs" / "split.png").exists()


def test_netlock_plot_of_a_folder_without_a_run_is_one_line(run, tmp_path):
    done = run("plot", tmp_path)
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.strip() == (f"netlock: error: {tmp_path}: not a result folder of "
                                   f"netlock sim --out (no summary.json)")
