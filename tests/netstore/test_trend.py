"""The seed's section 4.2 trend at small scale (64 hosts as in 4.1, 3 s measured): LBP is
about as fast as ECMP when background flows are small, and cuts the mean transaction
completion time when they are large; the cut grows with the background flows; network-aware
caching cuts it further and sends fewer operations across the fabric."""

from __future__ import annotations

import pytest

from sim.netstore.config import load_netstore_config
from sim.netstore.ecmp_vs_lbp import background_sweep, plot_background_sweep, reductions
from tests.sim.helpers import CONFIGS


@pytest.fixture(scope="module")
def table():
    base = load_netstore_config(CONFIGS / "netstore-lbp.yaml",
                                {"sim.duration_s": "3", "sim.warmup_s": "2"})
    return background_sweep(base, [1000, 12000])


def test_lbp_matches_ecmp_on_small_flows_and_wins_on_large_ones(table):
    red = reductions(table)["lbp_vs_ecmp"]
    assert abs(red[1000]) < 0.1
    assert red[12000] > 0.1
    assert red[12000] > red[1000] + 0.1


def test_nac_cuts_completion_times_further_with_fewer_remote_operations(table):
    assert (reductions(table)["lbp+nac_vs_lbp"] > 0.05).all()
    remote = table.groupby("variant")["remote_ops"].sum()
    assert remote["lbp+nac"] < 0.95 * remote["lbp"]
    assert (table[table.variant == "lbp+nac"].local_hits > 0).all()


def test_runs_are_safe_live_and_complete(table):
    assert (table.violations == 0).all()
    assert (table.stalled == 0).all()
    assert (table.unfinished == 0).all()
    assert (table.transactions > 3000).all()


def test_background_flows_take_longer_when_larger(table):
    bg = table.groupby("max_kb")["bg_mean_ms"].mean()
    assert bg[12000] > 5 * bg[1000]


def test_the_figure_is_written(table, tmp_path):
    png = plot_background_sweep(table, tmp_path / "netstore.png")
    assert png.stat().st_size > 10_000
