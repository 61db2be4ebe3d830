"""The seed's Figure 4 / Figure 5 experiment: ECMP against LBP as the largest background flow
grows (section 4.2), repeated over seeds, and its figure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from netlock import plotstyle
from sim.netstore.config import NetStoreConfig, netstore_config_from_dict

COLORS = {"ecmp": "#D55E00", "lbp": "#0072B2"}
LABELS = {"ecmp": "ECMP (baseline)", "lbp": "LBP (NetStore)"}


def _point(doc: dict[str, Any]) -> dict[str, Any]:
    from sim.netstore.run import simulate_netstore

    cfg = netstore_config_from_dict(doc)
    s = simulate_netstore(cfg)
    return {"max_kb": cfg.background.max_kb, "routing": cfg.netstore.routing,
            "seed": cfg.sim.seed, "txn_mean_ms": s["txn_completion_ms"]["mean"],
            "txn_p99_ms": s["txn_completion_ms"]["p99"], "transactions": s["transactions"],
            "unfinished": s["unfinished"], "bg_mean_ms": s["background"]["completion_ms_mean"],
            "core_utilisation": s["utilisation"]["agg_core"], "violations": s["violations"],
            "stalled": s["stalled"], "wall_s": s["wall_s"]}


def background_sweep(base: NetStoreConfig, max_kbs: Sequence[float],
                     routings: Sequence[str] = ("ecmp", "lbp"), seeds: Sequence[int] = (1,),
                     workers: int = 1,
                     progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """One run per (max background flow size, routing, seed) on ``base``: a row each. The
    same seed gives every routing the same arrivals, keys and background flows."""
    docs = []
    for kb in max_kbs:
        for seed in seeds:
            for routing in routings:
                doc = base.to_dict()
                doc["background"]["max_kb"] = float(kb)
                doc["sim"]["seed"] = int(seed)
                doc["netstore"]["routing"] = routing
                docs.append(doc)
    rows = []
    if workers <= 1:
        for i, doc in enumerate(docs):
            rows.append(_point(doc))
            if progress is not None:
                progress(i + 1, len(docs))
    else:
        with ProcessPoolExecutor(workers) as pool:
            for i, row in enumerate(pool.map(_point, docs)):
                rows.append(row)
                if progress is not None:
                    progress(i + 1, len(docs))
    return pd.DataFrame(rows)


def reductions(table: pd.DataFrame) -> pd.DataFrame:
    """Per max background flow size: mean completion time per routing (over seeds) and
    LBP's reduction of it against ECMP (a fraction; > 0 is better)."""
    means = table.pivot_table(index="max_kb", columns="routing", values="txn_mean_ms",
                              aggfunc="mean")
    means["lbp_reduction"] = 1.0 - means["lbp"] / means["ecmp"]
    return means


def plot_background_sweep(table: pd.DataFrame, path: str | Path) -> Path:
    """Mean transaction completion time by routing, LBP's reduction, and the background
    flows' completion time, against the largest background flow (PNG)."""
    with plotstyle.styled():
        fig = plotstyle.figure(width=10.0, height=3.4)
        ax_txn, ax_red, ax_bg = fig.subplots(1, 3)
        for routing, rows in table.groupby("routing"):
            by = rows.groupby("max_kb")["txn_mean_ms"]
            mean = by.mean()
            ax_txn.errorbar(mean.index, mean.values * 1e3,
                            yerr=[(mean - by.min()).values * 1e3, (by.max() - mean).values * 1e3],
                            marker="o", capsize=3, color=COLORS.get(routing),
                            label=LABELS.get(routing, routing))
        ax_txn.set_xlabel("largest background flow (KB)")
        ax_txn.set_ylabel("mean transaction completion (us)")
        ax_txn.set_title("Figure 4: ECMP vs LBP", loc="left")
        plotstyle.from_zero(ax_txn)
        ax_txn.legend(loc="lower right")
        red = reductions(table)["lbp_reduction"]
        ax_red.bar(red.index.astype(float), red.values, width=0.6 * np.min(np.diff(
            np.r_[0.0, red.index.astype(float)])), color=COLORS["lbp"])
        ax_red.set_xlabel("largest background flow (KB)")
        ax_red.set_ylabel("LBP's reduction vs ECMP")
        ax_red.set_title("completion time saved by LBP", loc="left")
        plotstyle.percent(ax_red)
        ax_red.set_ylim(0, max(0.5, float(red.max()) * 1.2))
        bg = table[table.routing == "ecmp"].groupby("max_kb")["bg_mean_ms"].mean()
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
