"""What each compared design's own source reports, reproduced as a trend on the same rack:
rdma-lock-management.md's Figures 1a, 1b and 3, declock.md's spinlock comparison, DSLR's
first-come-first-served grants, DrTM's writer starvation and NetChain's retries.

``run_peer("fig1b", "full", out)`` runs one claim's simulations (simpy; one seed), checks
the trend its source states (:class:`~sim.paper.figure.Check`, never a fitted number) and
draws it; ``small`` is what the test suite runs, ``full`` what the notebook stores. The RDMA
designs run with ``manager`` defaults, which are ``configs/testbed/rdma.yaml``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure as MplFigure

from netlock import atomic, plotstyle
from netlock.config import load_config
from sim.engine import EXCLUSIVE
from sim.simulate_simpy import simulate

from . import plotting as p
from .experiment_file import CONFIG_DIR
from .figure import Check, falling, rising

SCALES = {"small": {"sim.duration_s": 0.004, "sim.warmup_s": 0.001},
          "full": {"sim.duration_s": 0.02, "sim.warmup_s": 0.002}}
RACK = {"clients.machines": 10, "servers.count": 1}
"""One lock server, as in rdma-lock-management.md's experiments; its client processes are
spread over ten client machines."""
SEED_CLIENTS = 40
"""rdma-lock-management.md: "our experiment with 40 clients"; Figure 1b fixes them at 40."""
SEED_ITEMS = 100
"""Figure 1a: "100 lock items being shared among multiple clients"."""
NAMES = {"server-tcp": "server-centric, TCP", "server-rdma": "server-centric, RDMA S/R",
         "rdma-cas": "client-centric, RDMA CAS/FAA", "declock": "DecLock", "dslr": "DSLR",
         "drtm": "DrTM", "netchain": "NetChain", "netlock": "NetLock"}


@dataclass
class PeerResult:
    """One source's claim: the runs' table, its checks, and its figure."""

    name: str
    title: str
    table: pd.DataFrame
    checks: list[Check]
    figure: MplFigure
    required: bool = True
    """Whether the model reproduces the claim (tests and the notebook require its checks);
    claims it does not reproduce are reported with why (:data:`NOT_REPRODUCED`)."""

    @property
    def holds(self) -> bool:
        return all(c.holds for c in self.checks)


_OVERRIDES: ContextVar[tuple[tuple[str, Any], ...]] = ContextVar("peer_overrides", default=())
"""Dotted keys set on every run of a claim, after the claim's own (:func:`overriding`)."""


@contextmanager
def overriding(sets: dict[str, Any]) -> Iterator[None]:
    """Run the claims inside with ``sets`` (dotted keys) applied last to each of their runs:
    how :mod:`sim.paper.sensitivity` asks whether a claim hinges on one parameter."""
    token = _OVERRIDES.set(tuple({**dict(_OVERRIDES.get()), **sets}.items()))
    try:
        yield
    finally:
        _OVERRIDES.reset(token)


def simulate_point(scale: str, base: str = "micro-exclusive",
                   **sets: Any) -> dict[str, Any]:
    """One simpy run of ``configs/<base>.yaml`` on :data:`RACK` with ``sets`` (dotted keys
    written with ``__``), then any :func:`overriding` keys: its summary and its request and
    transaction tables (``requests``, ``txns``)."""
    overrides = {**SCALES[scale], **RACK, **{k.replace("__", "."): v for k, v in sets.items()},
                 **dict(_OVERRIDES.get())}
    config = load_config(CONFIG_DIR / f"{base}.yaml", {k: str(v) for k, v in overrides.items()})
    result = simulate(config)
    return {**result.summary, "requests": result.requests, "txns": result.txns}


def _row(kind: str, out: dict[str, Any], **values: Any) -> dict[str, Any]:
    return {"manager": kind, **values, "throughput_rps": out["throughput_rps"],
            "latency_mean_us": out["latency_us"]["mean"],
            "latency_p99_us": out["latency_us"]["p99"], "retries": out["retries"],
            "violations": out["violations"], "stalled": out["stalled"]}


def _series(table: pd.DataFrame, kind: str, x: str) -> pd.DataFrame:
    return table[table["manager"] == kind].sort_values(x)


def _lines(table: pd.DataFrame, x: str, title: str, xlabel: str) -> MplFigure:
    fig, (ax,) = p.axes(title, xlabel, "throughput (M locks/s)")
    for kind, marker in zip(dict.fromkeys(table["manager"]), p.markers(), strict=False):
        t = _series(table, kind, x)
        ax.plot(t[x], t["throughput_rps"], marker=marker, label=NAMES[kind])
    p.millions(ax)
    p.legend(ax)
    return fig


def _bars(table: pd.DataFrame, columns: list[tuple[str, str]], title: str) -> MplFigure:
    fig, panels = p.axes(title, "", columns[0][1], ncols=len(columns), width=3.6)
    names = [NAMES[k] for k in table["manager"]]
    for ax, (column, label) in zip(panels, columns, strict=True):
        ax.bar(names, table[column], color=[f"C{i}" for i in range(len(names))])
        ax.set_ylabel(label)
        ax.tick_params(axis="x", labelrotation=15)
    return fig


def _safe(table: pd.DataFrame) -> Check:
    violations = int(table["violations"].sum())
    return Check("every run is safe", violations == 0, f"violations {violations}")


# --- rdma-lock-management.md ----------------------------------------------------------------

def fig1a(scale: str) -> PeerResult:
    clients = [10, SEED_CLIENTS] if scale == "small" else [5, 10, 20, 30, SEED_CLIENTS]
    rows = [_row(kind, simulate_point(scale, manager__kind=kind, workload__clients=n,
                                      workload__locks=SEED_ITEMS), clients=n)
            for kind in ("server-tcp", "server-rdma") for n in clients]
    t = pd.DataFrame(rows)
    tcp = _series(t, "server-tcp", "clients")["throughput_rps"].to_numpy()
    sr = _series(t, "server-rdma", "clients")["throughput_rps"].to_numpy()
    checks = [
        Check(f"with {SEED_CLIENTS} clients on {SEED_ITEMS} items, RDMA send/receive beats "
              "TCP by a large factor (the seed: 1.4 M against 40,880 locks/s)",
              sr[-1] > 3 * tcp[-1] > 0,
              f"S/R {sr[-1]:,.0f}, TCP {tcp[-1]:,.0f} locks/s ({sr[-1] / tcp[-1]:.1f}x)"),
        Check("S/R scales with the clients; TCP tapers off (grows less)",
              rising(list(sr)) and sr[-1] / sr[0] > tcp[-1] / tcp[0],
              f"{clients[0]} -> {clients[-1]} clients: S/R x{sr[-1] / sr[0]:.2f}, "
              f"TCP x{tcp[-1] / tcp[0]:.2f}"),
        _safe(t),
    ]
    return PeerResult("fig1a", "rdma-lock-management Figure 1a: throughput vs clients", t,
                      checks, _lines(t, "clients", "Server-centric lock manager, 100 items",
                                     "client processes"))


def fig1b(scale: str) -> PeerResult:
    items = [SEED_CLIENTS, 4, 1] if scale == "small" else [SEED_CLIENTS, 20, 10, 4, 2, 1]
    rows = [_row(kind, simulate_point(scale, manager__kind=kind,
                                      workload__clients=SEED_CLIENTS, workload__locks=n),
                 items=n, contention_rate=1 - n / SEED_CLIENTS)
            for kind in ("server-tcp", "server-rdma") for n in items]
    t = pd.DataFrame(rows)
    tcp = _series(t, "server-tcp", "contention_rate")["throughput_rps"].to_numpy()
    sr = _series(t, "server-rdma", "contention_rate")["throughput_rps"].to_numpy()
    checks = [
        Check("throughput falls as the contention rate (1 - items / clients) rises, over "
              "TCP and over S/R", falling(list(tcp)) and falling(list(sr)),
              f"TCP {tcp[0]:,.0f} -> {tcp[-1]:,.0f}, S/R {sr[0]:,.0f} -> {sr[-1]:,.0f} "
              f"locks/s from {items[0]} items to {items[-1]}"),
        Check("S/R stays above TCP at every contention rate", bool(np.all(sr > tcp)),
              ", ".join(f"{a / b:.1f}x" for a, b in zip(sr, tcp, strict=True))),
        _safe(t),
    ]
    return PeerResult("fig1b", "rdma-lock-management Figure 1b: throughput vs contention", t,
                      checks, _lines(t, "contention_rate",
                                     f"Server-centric lock manager, {SEED_CLIENTS} clients",
                                     "contention rate (1 - items / clients)"))


def fig3(scale: str) -> PeerResult:
    kinds = ("server-tcp", "server-rdma", "rdma-cas")
    t = pd.DataFrame([_row(k, simulate_point(scale, manager__kind=k,
                                             workload__clients=SEED_CLIENTS,
                                             workload__locks=SEED_ITEMS)) for k in kinds])
    rps = dict(zip(t["manager"], t["throughput_rps"], strict=True))
    checks = [
        Check("the client-centric design beats both server-centric ones",
              rps["rdma-cas"] > rps["server-rdma"] > rps["server-tcp"],
              ", ".join(f"{NAMES[k]} {rps[k]:,.0f}" for k in kinds) + " locks/s"),
        _safe(t),
    ]
    return PeerResult("fig3", "rdma-lock-management Figure 3: client- vs server-centric", t,
                      checks, _bars(t, [("throughput_rps", "throughput (locks/s)")],
                                    f"{SEED_CLIENTS} clients, {SEED_ITEMS} items"))


# --- declock.md ------------------------------------------------------------------------------

def declock(scale: str) -> PeerResult:
    clients = [SEED_CLIENTS, 3 * SEED_CLIENTS] if scale == "small" else [
        SEED_CLIENTS, 2 * SEED_CLIENTS, 3 * SEED_CLIENTS]
    kinds = ("rdma-cas", "declock")
    t = pd.DataFrame([_row(k, simulate_point(scale, manager__kind=k, workload__clients=n,
                                             workload__locks=1), clients=n)
                      for k in kinds for n in clients])
    spin, dec = (_series(t, k, "clients") for k in kinds)
    rps = [s["throughput_rps"].to_numpy() for s in (spin, dec)]
    p99 = [s["latency_p99_us"].to_numpy() for s in (spin, dec)]
    checks = [
        Check("on a hot lock, as the clients grow, RDMA CAS spinlocks collapse and DecLock "
              "does not: with the most clients it beats them (the seed: up to 43.37x)",
              rps[1][-1] > rps[0][-1] and falling(list(rps[0])) and rps[0][-1] < rps[0][0],
              f"{clients[0]} -> {clients[-1]} clients: spinlock {rps[0][0]:,.0f} -> "
              f"{rps[0][-1]:,.0f}, DecLock {rps[1][0]:,.0f} -> {rps[1][-1]:,.0f} locks/s"),
        Check("DecLock's p99 latency is below the spinlocks' at every client count (the "
              "seed: cut by up to 98.8%)", bool(np.all(p99[1] < p99[0])),
              ", ".join(f"{n}: {d:.0f} against {s:.0f} us"
                        for n, d, s in zip(clients, p99[1], p99[0], strict=True))),
        _safe(t),
    ]
    return PeerResult("declock", "declock.md: DecLock vs RDMA spinlocks on one hot lock", t,
                      checks, _lines(t, "clients", "One hot lock", "client processes"))


# --- DSLR, DrTM, NetChain ----------------------------------------------------------------

def grant_inversions(requests: pd.DataFrame) -> int:
    """Grants of one lock that went to a request made after one still waiting."""
    ordered = requests.sort_values("t_us")
    made = (ordered["t_us"] - ordered["latency_us"]).to_numpy()
    return int(np.count_nonzero(np.diff(made) < -1e-9))


def dslr_fcfs(scale: str) -> PeerResult:
    one_lock = dict(workload__clients=20, workload__locks=1, network__jitter_us=0.0,
                    workload__think_time_us=5)
    rows = []
    for kind in ("dslr", "rdma-cas"):
        out = simulate_point(scale, manager__kind=kind, **one_lock)
        rows.append({**_row(kind, out), "grants": len(out["requests"]),
                     "inversions": grant_inversions(out["requests"])})
    t = pd.DataFrame(rows).set_index("manager", drop=False)
    checks = [
        Check("DSLR grants one lock first come, first served",
              t.loc["dslr", "grants"] > 100 and t.loc["dslr", "inversions"] == 0,
              f"out-of-order grants: DSLR {t.loc['dslr', 'inversions']} of "
              f"{t.loc['dslr', 'grants']:,}, spinlock {t.loc['rdma-cas', 'inversions']} of "
              f"{t.loc['rdma-cas', 'grants']:,}"),
        _safe(t),
    ]
    return PeerResult("dslr-fcfs", "DSLR: first come, first served on one lock",
                      t.reset_index(drop=True), checks,
                      _bars(t, [("inversions", "grants out of arrival order")],
                            "20 clients, one lock"))


def writer_txns(requests: pd.DataFrame, txns: pd.DataFrame) -> pd.DataFrame:
    """The committed transactions (``txns``) with ``writer``: whether any of their locks
    is exclusive. A transaction is known by its client and its first attempt's start,
    which its row (``t_us - latency_us``) and each of its granted requests' rows
    (``asked_us``) record alike (within float rounding)."""
    modes = (requests.assign(writer=requests["mode"].to_numpy() == EXCLUSIVE)
             .groupby(["client", "asked_us"], as_index=False)["writer"].any()
             .sort_values("asked_us"))
    committed = txns.assign(asked_us=txns["t_us"] - txns["latency_us"]).sort_values("asked_us")
    joined = pd.merge_asof(committed, modes, on="asked_us", by="client",
                           direction="nearest", tolerance=1e-6)
    if joined["writer"].isna().any():
        raise ValueError("a committed transaction has no granted request")
    return joined.astype({"writer": bool})


def _txn_row(kind: str, out: dict[str, Any], window: tuple[float, float]) -> dict[str, Any]:
    """Writers' and readers' committed share and transaction latency (from the first
    attempt: a retried transaction's whole wait) in the measured window."""
    t = writer_txns(out["requests"], out["txns"])
    t = t[(t["t_us"] >= window[0]) & (t["t_us"] < window[1])]
    w, r = (t.loc[t["writer"] == f, "latency_us"].to_numpy() for f in (True, False))
    return {**_row(kind, out), "txns": len(t), "writer_share": len(w) / max(len(t), 1),
            "writer_p50_us": float(np.median(w)) if len(w) else float("nan"),
            "writer_p99_us": float(np.percentile(w, 99)) if len(w) else float("nan"),
            "reader_p50_us": float(np.median(r)) if len(r) else float("nan"),
            "reader_p99_us": float(np.percentile(r, 99)) if len(r) else float("nan")}


WRITE_FRACTION = 0.1
"""The read-heavy load of the writer-starvation check: 10% of transactions write."""


def drtm_writers(scale: str) -> PeerResult:
    read_heavy = dict(workload__clients=SEED_CLIENTS, workload__locks=4, workload__mode="mixed",
                      workload__shared_fraction=1 - WRITE_FRACTION)
    start = SCALES[scale]["sim.warmup_s"] * 1e6
    window = (start, start + SCALES[scale]["sim.duration_s"] * 1e6)
    rows = [_txn_row(kind, simulate_point(scale, manager__kind=kind, **read_heavy), window)
            for kind in ("dslr", "drtm")]
    t = pd.DataFrame(rows).set_index("manager", drop=False)
    d, r = t.loc["dslr"], t.loc["drtm"]
    checks = [
        Check("under read load DrTM's writers wait far longer than its readers (the tail: "
              "fail-and-retry \"can cause starvation and hence long tail latencies\"), "
              "while DSLR's first-come-first-served queue serves them alike",
              r["writer_p99_us"] > 3 * r["reader_p99_us"]
              and d["writer_p99_us"] < 2 * d["reader_p99_us"],
              f"writers' / readers' p99 transaction latency: DrTM {r['writer_p99_us']:,.0f} / "
              f"{r['reader_p99_us']:,.0f} us, DSLR {d['writer_p99_us']:,.0f} / "
              f"{d['reader_p99_us']:,.0f} us"),
        Check("DrTM's writers wait longer than DSLR's (p99)",
              r["writer_p99_us"] > d["writer_p99_us"],
              f"DrTM {r['writer_p99_us']:,.0f} us, DSLR {d['writer_p99_us']:,.0f} us"),
        _safe(t),
    ]
    return PeerResult("drtm-writers", "DrTM: writers starve under readers",
                      t.reset_index(drop=True), checks, _writers_figure(t))


def _writers_figure(t: pd.DataFrame) -> MplFigure:
    """Readers' and writers' p99 transaction latency side by side per design (log axis:
    DrTM's writers wait orders of magnitude longer), and the writers' share."""
    fig, (tail, share) = p.axes(f"{1 - WRITE_FRACTION:.0%} shared, 4 locks", "",
                                "p99 transaction latency (us)", ncols=2, width=4.2)
    names = [NAMES[k] for k in t["manager"]]
    x = np.arange(len(names))
    for offset, (column, label) in zip((-0.2, 0.2), (("reader_p99_us", "readers"),
                                                     ("writer_p99_us", "writers")), strict=True):
        tail.bar(x + offset, t[column], width=0.4, label=label)
    tail.set_yscale("log")
    tail.set_xticks(x, names)
    p.legend(tail)
    share.bar(names, t["writer_share"], color=[f"C{i}" for i in range(len(names))])
    share.axhline(WRITE_FRACTION, color="0.4", linestyle="--", linewidth=1)
    share.set_ylabel("writers' share of committed transactions")
    return fig


def netchain_retries(scale: str) -> PeerResult:
    rows = [_row(k, simulate_point(scale, "micro-contended", manager__kind=k,
                                   workload__clients=SEED_CLIENTS))
            for k in ("netlock", "netchain")]
    t = pd.DataFrame(rows).set_index("manager", drop=False)
    ours, theirs = int(t.loc["netlock", "retries"]), int(t.loc["netchain", "retries"])
    checks = [
        Check("under contention NetChain's fail-and-retry retries far more than NetLock",
              theirs > 10 * max(ours, 1), f"retries: NetChain {theirs:,}, NetLock {ours:,}"),
        _safe(t),
    ]
    return PeerResult("netchain-retries", "NetChain: retries under contention",
                      t.reset_index(drop=True), checks,
                      _bars(t, [("retries", "transaction retries"),
                                ("throughput_rps", "throughput (locks/s)")],
                            f"{SEED_CLIENTS} clients, 100 locks"))


NOT_REPRODUCED: dict[str, str] = {}
"""Claims the model does not reproduce, and why (their checks are reported, not required)."""

PEERS: dict[str, Callable[[str], PeerResult]] = {
    "fig1a": fig1a, "fig1b": fig1b, "fig3": fig3, "declock": declock,
    "dslr-fcfs": dslr_fcfs, "drtm-writers": drtm_writers, "netchain-retries": netchain_retries}


def run_peer(name: str, scale: str = "small", out: str | Path | None = None) -> PeerResult:
    """Run claim ``name`` at ``scale``; with ``out``, write ``peer-<name>.csv`` and
    ``peer-<name>.png`` there (atomically)."""
    with plotstyle.styled():
        result = PEERS[name](scale)
        result.required = name not in NOT_REPRODUCED
        if out is not None:
            folder = Path(out)
            folder.mkdir(parents=True, exist_ok=True)
            atomic.write_with(folder / f"peer-{name}.csv",
                              lambda tmp: result.table.to_csv(tmp, index=False))
            plotstyle.save(result.figure, folder / f"peer-{name}.png")
    return result
