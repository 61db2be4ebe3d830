"""DSLR's and DrTM's clients take locks one at a time (the DSLR authors' harness,
``LockSimulator::run``): one acquire outstanding per client, each sent after the grant
before it; releases in reverse order, one outstanding, each sent when the one before it is
done; NetLock's client still sends all its acquires back to back."""

from __future__ import annotations

import pytest

from sim.core.result import stalled_waits
from sim.core.run_spec import stall_bound_us
from sim.engine import SHARED
from sim.managers.context import ClientLibraryManager
from sim.managers.dslr.manager import DslrManager
from sim.simpy_model import build
from sim.simulate_simpy import summarise
from tests.sim.helpers import config

SMALL = {"workload__clients": 8, "workload__locks": 40, "workload__mode": "mixed",
         "workload__locks_per_txn": 3, "sim__duration_s": 0.001, "sim__warmup_s": 0.0}


def run(kind: str, monkeypatch: pytest.MonkeyPatch):
    """Run ``kind`` on a small 3-lock microbenchmark; the model, its result, and per client
    its releases (request id, releases then outstanding) in the order they reached the
    manager."""
    log: dict[int, list[tuple[int, int]]] = {}
    outstanding: dict[int, int] = {}
    model = build(config("micro-exclusive", manager__kind=kind, **SMALL))
    release, released = type(model.manager).release, ClientLibraryManager.released

    def watched_release(self, req):
        cid = req.client.cid
        outstanding[cid] = outstanding.get(cid, 0) + 1
        log.setdefault(cid, []).append((req.rid, outstanding[cid]))
        if kind == "drtm" and req.mode == SHARED:
            outstanding[cid] -= 1  # DrTM's shared locks have nothing to release
        return release(self, req)

    def watched_released(self, old, req, *args):
        outstanding[req.client.cid] -= 1
        return released(self, old, req, *args)

    monkeypatch.setattr(type(model.manager), "release", watched_release)
    monkeypatch.setattr(ClientLibraryManager, "released", watched_released)
    model.run()
    return model, summarise(model, 0.0), log


@pytest.mark.parametrize("kind", ["dslr", "drtm"])
def test_one_acquire_and_one_release_outstanding_per_client(kind, monkeypatch):
    model, result, log = run(kind, monkeypatch)
    uses = result.requests.assign(sent=result.requests["t_us"] - result.requests["latency_us"])
    uses = uses.sort_values(["client", "sent"])
    assert result.summary["violations"] == 0 and result.summary["stalled"] == 0
    assert result.summary["tps"] > 0 and len(uses) > 20
    for _, mine in uses.groupby("client"):
        sent = mine["sent"].to_numpy()
        granted = mine["t_us"].to_numpy()
        # the next acquire is sent no earlier than the grant before it arrived
        assert (sent[1:] >= granted[:-1] - 1e-9).all()
    assert log and all(depth == 1 for releases in log.values() for _, depth in releases)
    for client in model.clients:
        assert client.sequential


def test_releases_go_last_acquired_first(monkeypatch):
    _, result, log = run("dslr", monkeypatch)
    assert result.summary["tps"] > 0
    for releases in log.values():
        rids = [rid for rid, _ in releases]
        # a transaction's requests have consecutive ids: released in descending order
        runs = [rids[i] - rids[i + 1] for i in range(len(rids) - 1)
                if abs(rids[i] - rids[i + 1]) < 3]
        assert runs and all(step > 0 for step in runs)


def test_netlock_clients_still_send_every_acquire_at_once():
    model = build(config("micro-exclusive", **SMALL))
    model.run()
    uses = summarise(model, 0.0).requests
    assert not any(client.sequential for client in model.clients)
    sent = uses.assign(sent=uses["t_us"] - uses["latency_us"]).round({"sent": 6})
    assert sent.duplicated(["client", "sent"]).any()


def test_a_lock_is_waited_for_from_when_its_acquire_is_sent():
    """At one warehouse DSLR's transactions queue for milliseconds on the warehouse row,
    longer than the stall bound; their later locks, idle meanwhile, are not asked for yet
    (measured at 8 ms simulated: 40 such waits counted stalled from the transaction's
    start, 0 from each acquire's send)."""
    cfg = config("tpcc-high", manager__kind="dslr", sim__engine="simpy",
                 sim__duration_s=0.008, sim__warmup_s=0.0)
    model = build(cfg)
    model.run()
    result = summarise(model, 0.0)
    bound = stall_bound_us(cfg)
    assert (result.requests["latency_us"] > bound).any()
    assert result.summary["stalled"] == 0 and result.summary["violations"] == 0
    from_txn_start = stalled_waits(result.requests, model.recorder.open_waits,
                                   model.recorder.handbacks_frame(), bound)
    assert from_txn_start > 0


def test_a_lost_acquire_stalls_though_its_attempt_is_given_up(monkeypatch):
    """DSLR never answers client 0's first acquire; its attempt is given up after the
    one-at-a-time timeout (here twice the stall bound) and retried: the wait that ended
    with the attempt, on a lock nobody else uses, is stalled."""
    cfg = config("micro-exclusive", manager__kind="dslr", workload__clients=8,
                 workload__locks=100_000, workload__locks_per_txn=3,
                 sim__duration_s=0.008, sim__warmup_s=0.0)
    bound = stall_bound_us(cfg)
    acquire = DslrManager.acquire
    lost: list[int] = []

    def losing_acquire(self, req):
        if req.client.cid == 0 and not lost:
            lost.append(req.lock)
            return None
        return acquire(self, req)

    monkeypatch.setattr(DslrManager, "acquire", losing_acquire)
    monkeypatch.setattr(DslrManager, "attempt_timeout_us", 2 * bound)
    model = build(cfg)
    model.run()
    result = summarise(model, 0.0)
    assert lost and model.clients[0].aborts == 1
    assert result.summary["stalled"] == 1
