"""``netlock paper``: one figure end to end from the command line, its files and JSON; bad
figure names and scales; and the figures' checks fail on tables that contradict the paper.

The figures' experiments themselves run at small scale in ``test_paper_notebooks.py``."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from netlock.errors import ConfigError
from sim.paper import names
from sim.paper.cli import register
from sim.paper.experiment_file import load_experiment
from sim.paper.experiments import figure, figure_problem, write_index
from tests.sim.helpers import ROOT


def paper_app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    app.command("noop", hidden=True)(lambda: None)
    return app


def invoke(*args: str):
    return CliRunner().invoke(paper_app(), ["paper", *args])


def test_one_figure_writes_csv_png_json_and_prints_one_json_object(tmp_path):
    result = invoke("fig12a", "--scale", "small", "--out", str(tmp_path), "--workers", "1",
                    "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["figure"] == "fig12a" and doc["scale"] == "small" and doc["holds"]
    assert {"t_s", "tenant", "granted_rps", "tenants[1].priority"} <= set(doc["points"][0])
    assert [c["holds"] for c in doc["checks"]] == [True] * len(doc["checks"])
    assert doc == json.loads((tmp_path / "fig12a.json").read_text()) | {"wall_s": doc["wall_s"]}
    assert len(pd.read_csv(tmp_path / "fig12a.csv")) == len(doc["points"])
    assert (tmp_path / "fig12a.png").read_bytes()[:4] == b"\x89PNG"
    index = (tmp_path / "README.md").read_text()
    assert "![fig12a](fig12a.png)" in index and "netlock paper fig12a --scale small" in index
    assert doc["provenance"]["command"].startswith("netlock paper fig12a")
    assert set(doc["files_sha256"]) == {"fig12a.csv", "fig12a.png"}
    assert "Incomplete" not in index


def test_a_figure_whose_files_are_not_its_jsons_is_marked_incomplete(tmp_path):
    """A run killed after writing a figure's CSV but before its JSON leaves the old JSON
    beside a new CSV: the index says so instead of showing them as one figure."""
    assert invoke("fig12a", "--scale", "small", "--out", str(tmp_path), "--workers",
                  "1").exit_code == 0
    doc = json.loads((tmp_path / "fig12a.json").read_text())
    assert figure_problem(tmp_path, doc) is None
    (tmp_path / "fig12a.csv").write_text("another,run\n1,2\n")
    assert figure_problem(tmp_path, doc) == ("fig12a.csv is not the one this JSON was "
                                             "written with")
    index = write_index(tmp_path).read_text()
    assert ("**Incomplete**: fig12a.csv is not the one this JSON was written with (an "
            "interrupted run?): rerun `netlock paper fig12a`.") in index
    (tmp_path / "fig12a.csv").unlink()
    assert figure_problem(tmp_path, doc) == "fig12a.csv is missing"


@pytest.mark.parametrize("args, message", [
    (["fig99"], "unknown figure 'fig99'"),
    (["fig8a", "--scale", "huge"], "--scale: expected one of small, full"),
    (["fig8a", "--set", "nosuch.key=1"], "--set nosuch.key: unknown key 'nosuch'"),
    (["fig8a", "--set", "nosuchkey"], "--set 'nosuchkey': expected KEY=VALUE"),
])
def test_bad_figure_or_scale_is_one_line_and_exit_2(args, message):
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.stderr and result.stderr.count("\n") == 1


def test_set_overrides_every_point_and_the_recorded_command_says_so(monkeypatch, tmp_path):
    import sim.paper.experiments as experiments

    seen = {}

    def fake_points(experiment, workers, progress=None, max_wall_s=None):
        seen["atomic"] = {p.config.manager.rdma.atomic_us for p in experiment.points}
        raise typer.Exit(0)

    monkeypatch.setattr(experiments, "run_points", fake_points)
    result = invoke("fig10", "--set", "manager.rdma.atomic_us=1.1", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert seen["atomic"] == {1.1}
    from sim.paper.provenance import made
    assert made("fig10", "full", 1, {"manager.rdma.atomic_us": "1.1"})["command"] == (
        "netlock paper fig10 --scale full --workers 1 --set manager.rdma.atomic_us=1.1")


def test_an_out_folder_that_cannot_be_made_is_one_line_before_any_run(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("keep")
    result = invoke("fig13", "--out", str(blocker / "figs"))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "--out" in result.stderr and "cannot create the folder" in result.stderr
    assert blocker.read_text() == "keep"


def test_every_figure_has_an_experiment_file_with_both_scales():
    for name in names():
        for scale in ("small", "full"):
            experiment = load_experiment(name, scale)
            assert experiment.points, (name, scale)
    assert names()[:6] == ["fig8a", "fig8b", "fig8cd", "fig9", "fig10", "fig11"]


def test_an_experiment_file_error_names_the_file_and_field(tmp_path):
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "fig8a.yaml").write_text(
        f"config: {ROOT / 'configs' / 'micro-shared.yaml'}\n"
        "small:\n  grid: {workload.locks: 7}\n")
    with pytest.raises(ConfigError, match=r"fig8a.yaml: small.grid: workload.locks: expected"):
        load_experiment("fig8a", "small", tmp_path)


def held(name: str, table: pd.DataFrame) -> list[bool]:
    return [c.holds for c in figure(name).checks(table)]


def test_fig15_checks_fail_when_the_stopped_switch_grants_or_never_recovers():
    t = [0.001 * i for i in range(30)]
    good = [10.0 if (s < 0.01 or s >= 0.02) else 0.0 for s in t]
    frame = lambda rates: pd.DataFrame({"t_s": t, "tenant": 0, "granted_rps": rates,  # noqa: E731
                                        "fail_s": 0.01, "restart_s": 0.02,
                                        "violations": 0, "stalled": 0})
    assert all(held("fig15", frame(good)))
    leaky = [r if not 0.012 < s < 0.018 else 1.0 for s, r in zip(t, good, strict=True)]
    assert held("fig15", frame(leaky))[0] is False
    stuck = [r if s < 0.02 else 2.0 for s, r in zip(t, good, strict=True)]
    assert held("fig15", frame(stuck))[1] is False


def test_fig14b_checks_fail_when_random_grows_or_knapsack_is_flat():
    def frame(knapsack, random):
        rows = [{"switch.slots": s, "policy.allocation": p, "throughput_rps": v,
                 "violations": 0, "stalled": 0}
                for p, values in (("knapsack", knapsack), ("random", random))
                for s, v in zip((0, 1000, 100000), values, strict=True)]
        return pd.DataFrame(rows)

    assert all(held("fig14b", frame([10, 15, 15.2], [10, 10, 10.1])))
    assert held("fig14b", frame([10, 10, 10.2], [10, 10, 10.1]))[0] is False
    assert held("fig14b", frame([10, 15, 15.2], [10, 12, 14]))[1] is False
    # Knapsack only reaches its maximum with the whole memory, not a small fraction of it.
    saturating = figure("fig14b").checks(frame([10, 12, 15], [10, 10, 10.1]))[2]
    assert saturating.holds is False and "100,000 of 100,000 slots" in saturating.detail
    # Flat: memory does not matter, so there is no maximum to reach.
    assert held("fig14b", frame([15, 15, 15.1], [10, 10, 10.1]))[2] is False


def test_fig13_checks_fail_when_random_is_worse_on_average_than_at_the_tail_or_hits_its_cap():
    def frame(random_p99):
        return pd.DataFrame([
            {"policy.allocation": "knapsack", "switch_rps": 9.0, "throughput_rps": 10.0,
             "latency_mean_us": 10.0, "latency_p99_us": 20.0, "latency_p999_us": 30.0,
             "sent_per_ms_per_machine": 400.0, "violations": 0, "stalled": 0},
            {"policy.allocation": "random", "switch_rps": 1.0, "throughput_rps": 5.0,
             "latency_mean_us": 20.0, "latency_p99_us": random_p99, "latency_p999_us": 90.0,
             "sent_per_ms_per_machine": random_sent, "violations": 0, "stalled": 0}])

    random_sent = 250.0
    assert all(held("fig13", frame(80.0)))
    tail = figure("fig13").checks(frame(30.0))[3]
    assert tail.holds is False and "mean 2.00x, p99 1.50x" in tail.detail
    random_sent = 3200.0
    cap = figure("fig13").checks(frame(80.0))[4]
    assert cap.holds is False and "sent 3,200 packets per ms" in cap.detail
    # Both tails at the attempt timeout: the check says so and where the tails part.
    random_sent = 250.0
    timed_out = frame(19.0).assign(tail_q=0.98, latency_tail_us=[15.0, 45.0])
    tail = figure("fig13").checks(timed_out)[3]
    assert tail.holds is False
    assert "above p98 a run's latency reaches half the attempt timeout" in tail.detail
    assert tail.detail.endswith("at p98: 3.00x")


def test_fig9_saturation_check_fails_when_the_server_has_headroom():
    from sim.paper.micro_figures import _fig9_checks

    def frame(server_rps, busy, switch_rps=50e6):
        return pd.DataFrame([
            {"workload": "exclusive, 10,000 locks", "servers.cores": c,
             "manager": manager, "throughput_rps": rps, "server_capacity_rps": 2.25e6 * c,
             "switch_capacity_rps": 2e9, "server_busy": b, "violations": 0, "stalled": 0}
            for c in (1, 8)
            for manager, rps, b in (("lock switch", switch_rps, float("nan")),
                                    ("lock server", server_rps * c, busy))])

    assert all(c.holds for c in _fig9_checks(frame(2.2e6, 0.97)))
    unsaturated = _fig9_checks(frame(1.0e6, 0.45))[1]
    assert unsaturated.holds is False and "1 cores 45%" in unsaturated.detail
    assert "completing 44%, 44% of capacity" in unsaturated.detail
    busy_switch = _fig9_checks(frame(2.2e6, 0.97, switch_rps=1.7e9))[1]
    assert busy_switch.holds is False and "switch at 85.00%" in busy_switch.detail


def test_fig12a_checks_fail_without_a_priority_effect():
    rows = [{"tenants[1].priority": p, "t_s": 0.001 * i, "tenant": tenant,
             "granted_rps": 0.0 if tenant == 1 and i < 2 else 5.0,
             "violations": 0, "stalled": 0}
            for p in (1, 0) for i in range(10) for tenant in (0, 1)]
    assert held("fig12a", pd.DataFrame(rows))[:2] == [True, False]


def test_safety_or_liveness_failures_fail_every_figure_check():
    rows = pd.DataFrame({"clients.machines": [1, 12], "throughput_rps": [1.0, 12.0],
                         "latency_p50_us": [5.0, 5.0], "violations": [0, 1], "stalled": [0, 0]})
    assert held("fig8a", rows) == [True, True, False]


def test_fig8a_is_required_and_its_checks_fail_when_shared_locks_cap():
    """The table the model gave before the even split (docs/paper at 3ab9ca2: ten of the 12
    shared locks held to about 2.2 M requests/s each by the overflow protocol) fails both of
    Figure 8a's checks, and a failing check of Figure 8a fails ``netlock paper``."""
    machines = [1, 2, 3, 4, 6, 8, 10, 12]
    capped = pd.DataFrame({"clients.machines": machines,
                           "throughput_rps": [10e6, 20e6, 30e6, 40e6, 60e6, 80e6, 92.5e6, 42.3e6],
                           "latency_p50_us": [6.59, 6.60, 6.60, 6.60, 6.60, 6.60, 6.63, 134.18],
                           "violations": 0, "stalled": 0})
    assert held("fig8a", capped) == [False, False, True]
    flat = capped.assign(throughput_rps=[m * 10e6 for m in machines], latency_p50_us=6.6)
    assert held("fig8a", flat) == [True, True, True]
    assert figure("fig8a").required


def test_figure_8_checks_fail_when_the_overflow_server_drops_requests():
    """Figure 8's runs have no lock server in the authors' harness and their client never
    resends: a table whose run dropped requests at the model's overflow server fails its
    "safe, live and loses no request" check (fig8a knapsack at full scale: 958,584)."""
    machines = [1, 12]
    rows = pd.DataFrame({"clients.machines": machines, "throughput_rps": [10e6, 120e6],
                         "latency_p50_us": 6.6, "violations": 0, "stalled": 0,
                         "dropped": [0, 958_584]})
    assert held("fig8a", rows) == [True, True, False]
    assert held("fig8b", rows) == [True, True, False]
    assert held("fig8a", rows.assign(dropped=0)) == [True, True, True]


def test_rising_and_falling_allow_only_their_slack():
    from sim.paper.figure import falling, rising

    assert rising([1.0, 2.0, 1.99, 3.0]) and not rising([1.0, 2.0, 1.9])
    assert falling([600.0, 200.0, 5.42, 5.34, 5.4]) and not falling([5.0, 5.3])


def test_fig8cd_checks_fail_when_latency_rises_with_the_locks():
    rows = pd.DataFrame({"workload.locks": [1, 10, 100], "throughput_rps": [1.0, 5.0, 10.0],
                         "latency_mean_us": [600.0, 50.0, 5.0], "violations": 0, "stalled": 0})
    assert held("fig8cd", rows) == [True, True, True]
    rows["latency_mean_us"] = [600.0, 700.0, 5.0]
    assert held("fig8cd", rows)[1] is False


def test_fig10_checks_compare_netlock_with_every_peer():
    def frame(netlock_tps):
        rows = [{"workload.warehouses": w, "manager.kind": k, "tps": tps, "retries": r,
                 "txn_latency_mean_us": lat, "txn_latency_p99_us": 2 * lat,
                 "violations": 1 if k == "drtm" else 0, "stalled": 0}
                for w in (10, 1)
                for k, tps, r, lat in (("netlock", netlock_tps, 10, 40.0),
                                       ("dslr", 300.0, 0, 50.0), ("drtm", 350.0, 90, 45.0),
                                       ("netchain", 200.0, 900, 60.0))]
        return pd.DataFrame(rows)

    from sim.paper.comparison import _checks

    def prepared(t):
        t["contention"] = ["low" if w > 1 else "high" for w in t["workload.warehouses"]]
        return t

    assert all(c.holds for c in _checks(prepared(frame(400.0))))
    beaten = [c for c in _checks(prepared(frame(320.0))) if not c.holds]
    assert [c.claim.split(":")[1].strip() for c in beaten] == [
        "NetLock's transaction throughput beats DSLR, DrTM, NetChain",
        "NetLock improves throughput and tail latency over each system (ratios > 1)"] * 2
    ratios = next(c for c in beaten if "ratios" in c.claim)
    assert "DrTM: throughput 0.91x, p99 1.12x" in ratios.detail


def test_fig10_ratio_check_fails_when_a_peer_has_the_shorter_tail():
    from sim.paper.comparison import ratio_check

    t = pd.DataFrame({"tps": [400.0, 300.0], "txn_latency_p99_us": [80.0, 60.0]},
                     index=["netlock", "dslr"])
    check = ratio_check("low", t, ["dslr"])
    assert check.holds is False and check.detail == "DSLR: throughput 1.33x, p99 0.75x"


def test_the_committed_full_scale_figures_are_complete_and_traceable():
    """docs/paper holds every figure at full scale with its command and commit, and each
    figure's CSV is its JSON's points."""
    out = ROOT / "docs" / "paper"
    for name in names():
        doc = json.loads((out / f"{name}.json").read_text())
        assert doc["scale"] == "full" and doc["provenance"]["commit"] not in ("", "unknown")
        assert re.fullmatch(rf"netlock paper {name} --scale full( --workers \d+)?",
                            doc["provenance"]["command"])
        assert len(pd.read_csv(out / f"{name}.csv")) == len(doc["points"])
        assert (out / f"{name}.png").stat().st_size > 10_000
        assert f"![{name}]({name}.png)" in (out / "README.md").read_text()
        assert doc["files_sha256"] and figure_problem(out, doc) is None, name


def test_only_required_figures_fail_the_command(monkeypatch, tmp_path):
    from sim.paper import cli
    from sim.paper.experiments import FigureResult
    from sim.paper.figure import Check

    def fake(name, *args, **kwargs):
        return FigureResult(figure(name), "small", pd.DataFrame({"x": [1]}), {},
                            [Check("a claim", False, "detail")], 0.0, [], {})

    monkeypatch.setattr(cli, "run_figure", fake)
    monkeypatch.setattr(cli, "write_index", lambda out: None)
    assert invoke("fig11", "--out", str(tmp_path)).exit_code == 0
    assert invoke("fig14a", "--out", str(tmp_path)).exit_code == 1


def test_fig10_mean_check_says_when_a_peers_mean_is_cut_short_by_the_run():
    """A closed loop of 40 contexts at 50,000 TPS spends 800 us per transaction on average
    (Little's law); a measured mean of 590 us covers 74 % of that: the rest is transactions
    the run's end cut off. A peer that is faster on every transaction gets no such note."""
    from sim.paper.comparison import _checks

    def frame(netchain_mean, netchain_tps):
        rows = [{"workload.warehouses": 1, "contention": "high", "manager.kind": k, "tps": tps,
                 "retries": r, "txn_latency_mean_us": lat, "txn_latency_p99_us": 5 * lat,
                 "violations": 0, "stalled": 0, "contexts": 40}
                for k, tps, r, lat in (("netlock", 69_000.0, 10, 630.0),
                                       ("netchain", netchain_tps, 900, netchain_mean))]
        return pd.DataFrame(rows)

    mean = next(c for c in _checks(frame(590.0, 50_000.0)) if "mean" in c.claim)
    assert mean.holds is False
    assert "NetLock 580, NetChain 800 us" in mean.detail
    assert "NetChain's committed transactions cover 74% of its contexts' time" in mean.detail
    faster = next(c for c in _checks(frame(500.0, 80_000.0)) if "mean" in c.claim)
    assert faster.holds is False and "cover" not in faster.detail
    slower = next(c for c in _checks(frame(900.0, 50_000.0)) if "mean" in c.claim)
    assert slower.holds is True and "cover" not in slower.detail


def test_fig12b_checks_fail_when_one_tenants_quota_slows_the_other():
    """Three settings (no quota, both capped, tenant 0 alone capped): the uncapped tenant
    must keep most of its unisolated rate when only the other is capped."""
    def frame(spill_rate):
        rates = {(0, 0): (1_300_000.0, 600_000.0), (500_000.0, 500_000.0): (480_000.0, 470_000.0),
                 (500_000.0, 0): (490_000.0, spill_rate)}
        return pd.DataFrame([
            {"tenants[0].quota_rps": q0, "tenants[1].quota_rps": q1, "t_s": 0.001 * i,
             "tenant": k, "granted_rps": rate[k], "violations": 0, "stalled": 0}
            for (q0, q1), rate in rates.items() for i in range(5) for k in (0, 1)])

    assert all(held("fig12b", frame(590_000.0)))
    checks = figure("fig12b").checks(frame(330_000.0))
    spill = next(c for c in checks if c.claim.startswith("capping one tenant"))
    assert spill.holds is False and "55% of its unisolated 600,000" in spill.detail
    assert "keeps the locks it holds" in spill.detail
    assert [c.holds for c in checks if c is not spill] == [True] * 4


def test_fig14b_knapsack_checks_say_when_the_switch_memory_holds_nothing_asked_for():
    def frame(share):
        return pd.DataFrame([{"switch.slots": s, "policy.allocation": p, "throughput_rps": 9.0,
                              "switch_share": share * s / 100000, "violations": 0, "stalled": 0}
                             for p in ("knapsack", "random") for s in (0, 1000, 100000)])

    unused = figure("fig14b").checks(frame(0.0076))
    assert [c.holds for c in unused] == [False, True, False, True]
    for check in (unused[0], unused[2]):
        assert "with all 100,000 slots the switch grants 0.76% of the requests" in check.detail
    used = figure("fig14b").checks(frame(0.6))
    assert used[0].holds is False and "grants" not in used[0].detail


def test_fig10_mean_check_blames_no_one_when_netlocks_mean_is_cut_short_too():
    from sim.paper.comparison import _checks

    rows = [{"workload.warehouses": 1, "contention": "high", "manager.kind": k, "tps": tps,
             "retries": r, "txn_latency_mean_us": lat, "txn_latency_p99_us": 5 * lat,
             "violations": 0, "stalled": 0, "contexts": 40}
            for k, tps, r, lat in (("netlock", 11_500.0, 10, 1242.0),
                                   ("netchain", 47_000.0, 900, 159.0))]
    mean = next(c for c in _checks(pd.DataFrame(rows)) if "mean" in c.claim)
    assert mean.holds is False and "cover" not in mean.detail
    assert "NetLock 3478, NetChain 851 us" in mean.detail
