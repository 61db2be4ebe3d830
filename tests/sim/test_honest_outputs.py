"""What a run reports cannot hide a failure or mislead: ``stalled`` in the text table,
latency null for a run that grants nothing, figures in the format their name says, sweep
plots with readable axes, a plan that does not fit its switch or workload named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from typer.testing import CliRunner

from netlock import plotstyle
from netlock.cli.app import app
from netlock.errors import ConfigError
from netlock.plan_io import load_plan
from sim.core.metrics import Latency
from sim.planfit import plan_fit_warning
from sim.plots import METRICS, metric_figure
from tests.sim.helpers import CONFIGS, SHORT, config


def test_the_sim_table_shows_stalled(run):
    result = run("sim", CONFIGS / "micro-exclusive.yaml", *SHORT, "--engine", "simpy")
    assert result.exit_code == 0, result.output
    assert "stalled" in result.stdout and "waits past the stall bound" in result.stdout


def test_no_grant_means_no_latency():
    assert Latency.of(np.zeros(0)).to_dict() == {"mean": None, "p50": None, "p99": None,
                                                 "p999": None}
    assert Latency.of(np.array([2.0, 4.0])).p50 == 3.0


@pytest.mark.parametrize(("name", "magic"), [("f.png", b"\x89PNG"), ("f.pdf", b"%PDF"),
                                             ("f.svg", b"<?xml")])
def test_figures_are_written_in_the_format_their_name_says(tmp_path, name, magic):
    fig = Figure()
    fig.subplots().plot([0, 1], [0, 1])
    plotstyle.save(fig, tmp_path / name)
    assert (tmp_path / name).read_bytes().startswith(magic)


def test_an_unknown_figure_format_is_refused_before_any_work(tmp_path):
    with pytest.raises(ConfigError, match=r"\.png, \.pdf or \.svg"):
        plotstyle.figure_format(tmp_path / "plan.jpeg")
    result = CliRunner().invoke(app, ["plan", str(tmp_path / "missing.parquet"), "--out",
                                      str(tmp_path / "p.yaml"), "--plot",
                                      str(tmp_path / "p.txt")])
    assert result.exit_code == 2
    assert "p.txt" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "p.yaml").exists()


def _table(x_key, xs):
    n = len(xs)
    return pd.DataFrame({x_key: xs, "throughput_rps": np.linspace(1e6, 2e6, n),
                         "tps": np.linspace(1e6, 2e6, n),
                         "latency_p99_us": [None] + [10.0] * (n - 1),
                         "switch_share": np.linspace(0, 1, n)})


def _drawn(table, x_key, metric, **kw):
    with plotstyle.styled():
        fig = metric_figure(table, x_key, None, metric, **kw)
        FigureCanvasAgg(fig).draw()
    return fig.axes[0]


def test_memory_spanning_decades_is_drawn_on_a_log_scale():
    ax = _drawn(_table("switch.slots", [0, 1000, 10000, 100000]), "switch.slots", METRICS[0])
    assert ax.get_xscale() == "symlog"
    ax = _drawn(_table("switch.slots", [1000, 2000]), "switch.slots", METRICS[0])
    assert ax.get_xscale() == "linear"


def test_categorical_keys_are_labelled_points_and_missing_latency_is_left_out():
    table = _table("manager.kind", ["netlock", "dslr", "server-tcp"])
    ax = _drawn(table, "manager.kind", METRICS[0])
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == sorted(["netlock", "dslr", "server-tcp"])
    latency = next(m for m in METRICS if m.column == "latency_p99_us")
    ax = _drawn(table, "manager.kind", latency)
    drawn = [line for line in ax.get_lines() if len(line.get_xdata())]
    assert sum(len(line.get_xdata()) for line in drawn) == 2, "the no-grant point is not 0"


def test_a_plan_larger_than_switch_slots_is_refused(plan_file):
    from sim.simulate_simpy import simulate

    slots = load_plan(plan_file).summary.slots_used
    assert slots > 0
    with pytest.raises(ConfigError, match=r"switch\.slots"):
        simulate(config("micro-exclusive", policy__plan=plan_file, switch__slots=slots - 1,
                        sim__duration_s=0.0005, sim__warmup_s=0.0001))


def test_a_plan_for_another_workload_is_named(plan_file):
    plan = load_plan(plan_file)
    same = config("micro-exclusive", policy__plan=plan_file, workload__zipf=0.99)
    assert plan_fit_warning(same, plan) is None
    uniform = config("micro-exclusive", policy__plan=plan_file)
    assert "predicts" in plan_fit_warning(uniform, plan)
    fewer = config("micro-exclusive", policy__plan=plan_file, workload__locks=100,
                   workload__zipf=0.99)
    assert "outside this workload's 100 lock ids" in plan_fit_warning(fewer, plan)


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plan")
    runner = CliRunner()
    cfg = str(CONFIGS / "micro-exclusive.yaml")
    trace = tmp / "t.parquet"
    out = runner.invoke(app, ["trace", "gen", "micro", "--config", cfg, "--out", str(trace),
                              "--requests", "20000", "--set", "workload.zipf=0.99"])
    assert out.exit_code == 0, out.output
    plan = tmp / "plan.yaml"
    out = runner.invoke(app, ["plan", str(trace), "--config", cfg, "--slots", "600",
                              "--out", str(plan), "--set", "workload.zipf=0.99"])
    assert out.exit_code == 0, out.output
    return plan
