"""The seed's Figure 4 / Figure 5 experiment: ECMP against LBP as the largest background flow
grows (section 4.2), repeated over seeds, and its figure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from netlock import plotstyle
from sim.netstore.config import NetStoreConfig, netstore_config_from_dict
from sim.sweep_grid import Point
from sim.sweep_workers import run_each

VARIANTS = ("ecmp", "lbp", "lbp+nac")
"""Figure 4's curves: ECMP, LBP, LBP with network-aware caching."""
COLORS = {"ecmp": "#D55E00", "lbp": "#0072B2", "lbp+nac": "#009E73"}
LABELS = {"ecmp": "ECMP (baseline)", "lbp": "LBP", "lbp+nac": "LBP + NAC"}


def _point(doc: dict[str, Any]) -> dict[str, Any]:
    from sim.netstore.netstore_run import simulate_netstore

    cfg = netstore_config_from_dict(doc)
    s = simulate_netstore(cfg)
    variant = cfg.netstore.routing + ("+nac" if cfg.netstore.nac else "")
    return {"max_kb": cfg.background.max_kb, "variant": variant,
            "seed": cfg.sim.seed, "txn_mean_ms": s["txn_completion_ms"]["mean"],
            "txn_p99_ms": s["txn_completion_ms"]["p99"], "transactions": s["transactions"],
            "unfinished": s["unfinished"], "local_hits": s["cache"]["local_hits"],
            "replica_reads": s["cache"]["replica_reads"], "remote_ops": s["remote_ops"],
            "bg_mean_ms": s["background"]["completion_ms_mean"],
            "core_utilisation": s["utilisation"]["agg_core"], "violations": s["violations"],
            "stalled": s["stalled"], "wall_s": s["wall_s"]}


def background_sweep(base: NetStoreConfig, max_kbs: Sequence[float],
                     variants: Sequence[str] = VARIANTS, seeds: Sequence[int] = (1,),
                     workers: int = 1,
                     progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """One run per (max background flow size, variant, seed) on ``base``: a row each. A
    variant is a routing (``ecmp``, ``lbp``) with ``+nac`` for network-aware caching. The same
    seed gives every variant the same arrivals, keys and background flows."""
    todo = []
    for kb in max_kbs:
        for seed in seeds:
            for variant in variants:
                doc = base.to_dict()
                doc["background"]["max_kb"] = float(kb)
                doc["sim"]["seed"] = int(seed)
                doc["netstore"]["routing"] = variant.split("+")[0]
                doc["netstore"]["nac"] = variant.endswith("+nac")
                todo.append(Point(str(len(todo)), {"max_kb": float(kb), "variant": variant},
                                  int(seed), doc))
    done: dict[str, dict[str, Any]] = {}

    def finished(point: Point, row: dict[str, Any]) -> None:
        done[point.pid] = row
        if progress is not None:
            progress(len(done), len(todo))

    run_each(todo, workers, finished, _point)
    rows = [done[p.pid] for p in todo]
    return pd.DataFrame(rows)


def reductions(table: pd.DataFrame) -> pd.DataFrame:
    """Per max background flow size: mean completion time per variant (over seeds, ms) and
    each variant's reduction of it against ECMP (``<variant>_vs_ecmp``, a fraction; > 0 is
    better)."""
    means = table.pivot_table(index="max_kb", columns="variant", values="txn_mean_ms",
                              aggfunc="mean")
    for variant in [v for v in means.columns if v != "ecmp"]:
        means[f"{variant}_vs_ecmp"] = 1.0 - means[variant] / means["ecmp"]
    if {"lbp", "lbp+nac"} <= set(means.columns):
        means["lbp+nac_vs_lbp"] = 1.0 - means["lbp+nac"] / means["lbp"]
    return means


def plot_background_sweep(table: pd.DataFrame, path: str | Path) -> Path:
    """Mean transaction completion time by variant, the reductions against ECMP, and the background
    flows' completion time, against the largest background flow (PNG)."""
    with plotstyle.styled():
        fig = plotstyle.figure(width=10.0, height=3.4)
        ax_txn, ax_red, ax_bg = fig.subplots(1, 3)
        for variant, rows in table.groupby("variant"):
            by = rows.groupby("max_kb")["txn_mean_ms"]
            mean = by.mean()
            ax_txn.errorbar(mean.index, mean.values * 1e3,
                            yerr=[(mean - by.min()).values * 1e3, (by.max() - mean).values * 1e3],
                            marker="o", capsize=3, color=COLORS.get(variant),
                            label=LABELS.get(variant, variant))
        ax_txn.set_xlabel("largest background flow (KB)")
        ax_txn.set_ylabel("mean transaction completion (us)")
        ax_txn.set_title("Figure 4: ECMP vs NetStore", loc="left")
        plotstyle.from_zero(ax_txn)
        ax_txn.legend(loc="lower right")
        red = reductions(table)
        saved = [v for v in red.columns if v.endswith("_vs_ecmp")]
        xs = red.index.astype(float).to_numpy()
        width = 0.8 * np.min(np.diff(np.r_[0.0, xs])) / max(1, len(saved))
        for i, column in enumerate(saved):
            variant = column.removesuffix("_vs_ecmp")
            ax_red.bar(xs + (i - (len(saved) - 1) / 2) * width, red[column].values, width=width,
                       color=COLORS.get(variant), label=LABELS.get(variant, variant))
        ax_red.set_xlabel("largest background flow (KB)")
        ax_red.set_ylabel("reduction of mean completion vs ECMP")
        ax_red.set_title("completion time saved against ECMP", loc="left")
        plotstyle.percent(ax_red)
        ax_red.set_ylim(min(0.0, float(red[saved].min().min()) * 1.2),
                        max(0.5, float(red[saved].max().max()) * 1.2))
        ax_red.legend(loc="upper left")
        bg = table[table.variant == "ecmp"].groupby("max_kb")["bg_mean_ms"].mean()
        ax_bg.plot(bg.index, bg.values, marker="s", color="0.3")
        ax_bg.set_xlabel("largest background flow (KB)")
        ax_bg.set_ylabel("mean background flow completion (ms)")
        ax_bg.set_title("Figure 5: background flows", loc="left")
        plotstyle.from_zero(ax_bg)
        seeds = table["seed"].nunique()
        fig.suptitle(f"NetStore on a 64-host fat-tree, flow-level max-min model "
                     f"({seeds} seed{'s' if seeds > 1 else ''} per point; bars: min-max)",
                     fontweight="bold", fontsize=10, x=0.01, ha="left")
        return plotstyle.save(fig, path)
