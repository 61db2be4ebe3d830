"""The plan cache (:mod:`sim.core.plan_cache`): keyed by exactly what a plan made on the fly
reads, the same results with and without it, and a broken entry or folder is made again,
never an error."""

from __future__ import annotations

import copy
import pickle

import pytest

from sim.core import pilot, plan_cache
from sim.core.run_spec import run_spec
from sim.fast.simulate_fast import simulate_fast
from sim.simpy_model import start_pilot
from sim.simulate_simpy import simulate
from tests.sim.helpers import config, private_locks_trace

ENGINES = {"simpy": simulate, "fast": simulate_fast}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The cache on, in a fresh folder; a short pilot (this tests the cache, not the pilot);
    nothing kept in the process from earlier tests."""
    monkeypatch.setenv("NETLOCK_PLAN_CACHE", "on")
    monkeypatch.setenv("NETLOCK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(pilot, "PILOT_REQUESTS", 2000)
    monkeypatch.setattr(pilot, "PILOT_TXNS_PER_CLIENT", 5)
    pilot.forget_pilots()
    yield tmp_path / "cache" / "plans"
    pilot.forget_pilots()


def small(**overrides: object):
    settings = dict(workload__clients=12, workload__locks=300, workload__zipf=0.9,
                    switch__slots=120, servers__count=2, sim__warmup_s=0.0002,
                    sim__duration_s=0.0005)
    settings.update(overrides)
    return config("micro-exclusive", **settings)


def leaves(doc: object, path: tuple = ()) -> list[tuple]:
    """Every leaf's path in a config document (list items by index)."""
    if isinstance(doc, dict):
        return [leaf for k, v in doc.items() for leaf in leaves(v, (*path, k))]
    if isinstance(doc, list) and doc:
        return [leaf for i, v in enumerate(doc) for leaf in leaves(v, (*path, i))]
    return [path]


def changed(doc: dict, path: tuple) -> dict:
    """``doc`` with the leaf at ``path`` given another value of its kind."""
    doc = copy.deepcopy(doc)
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    value = parent[path[-1]]
    if isinstance(value, bool):
        parent[path[-1]] = not value
    elif isinstance(value, (int, float)):
        parent[path[-1]] = value * 2 + 1
    elif isinstance(value, list):
        parent[path[-1]] = [*value, 1]
    elif value is None:
        parent[path[-1]] = "x"
    else:
        parent[path[-1]] = f"{value}x"
    return doc


def key(doc: dict, engine: str = "simpy") -> str:
    return plan_cache.key_of(plan_cache.plan_inputs(copy.deepcopy(doc)), engine, {})


@pytest.mark.parametrize("name", ["micro-exclusive", "tpcc-low", "switch-failure",
                                  "tenants-priority"])
def test_every_field_but_the_few_the_plan_does_not_read_is_in_the_key(name):
    doc = config(name).to_dict()
    base = key(doc)
    ignored = {path for path in plan_cache.NOT_PLAN_INPUTS}
    missed, hit = [], []
    for path in leaves(doc):
        same = key(changed(doc, path)) == base
        if any(path[:len(p)] == p for p in ignored):
            hit.append(path) if same else missed.append(path)
        else:
            assert not same, f"{'.'.join(map(str, path))} is not in the plan's key"
    assert not missed, f"fields the plan does not read change the key: {missed}"
    assert ("sim", "duration_s") in hit
    assert key(doc, "fast") != base


def test_the_trace_file_and_the_code_are_in_the_key(tmp_path, monkeypatch):
    trace = private_locks_trace(tmp_path / "t.csv", 4)
    cfg = config("micro-exclusive", workload__kind="trace", workload__trace=trace,
                 workload__clients=4)
    before = plan_cache.plan_key(cfg, "simpy")
    trace.write_text(trace.read_text().replace("1e-05", "2e-05"))
    assert plan_cache.plan_key(cfg, "simpy") != before
    monkeypatch.setattr(plan_cache, "_code", ["other code"])
    other = plan_cache.key_of({}, "simpy", {})
    monkeypatch.setattr(plan_cache, "_code", [])
    assert plan_cache.key_of({}, "simpy", {}) != other


def made(cfg) -> bytes:
    """The plan ``cfg`` makes afresh on the simpy engine, pickled (compared byte for byte)."""
    pilot.forget_pilots()
    with plan_cache.bypassed():
        plan = pilot.make_plan(cfg, run_spec(cfg), lambda *a: start_pilot(cfg, *a), "simpy")
    return pickle.dumps(plan)


def test_the_fields_left_out_of_the_key_do_not_change_the_plan(cache):
    base = made(small())
    assert made(small(sim__duration_s=0.002)) == base
    assert made(small(sim__timeseries_bin_s=0.0001)) == base
    assert made(small(sim__engine="fast")) == base
    assert made(small(failures__switch_fail_s=0.0003)) == base
    assert made(small(sim__seed=2)) != base
    assert made(small(switch__slots=60)) != base


@pytest.mark.parametrize("engine", list(ENGINES))
def test_a_cached_plan_gives_the_same_results(cache, engine, monkeypatch):
    run = ENGINES[engine]
    cfg = small()
    with plan_cache.bypassed():
        fresh = run(cfg).summary
    pilot.forget_pilots()
    first = run(cfg).summary
    assert len(list(cache.glob("*.pickle"))) == 1
    pilot.forget_pilots()

    def no_pilot(*args, **kwargs):
        raise AssertionError("the plan was made again")

    monkeypatch.setattr(pilot, "_made_plan", no_pilot)
    again = run(cfg).summary
    longer = run(small(sim__duration_s=0.0008)).summary
    for summary in (first, again):
        assert {k: v for k, v in summary.items() if k != "wall_s"} == \
            {k: v for k, v in fresh.items() if k != "wall_s"}
    assert longer["sim_time_s"] > fresh["sim_time_s"]


def test_a_broken_entry_is_made_again(cache):
    cfg = small()
    good = made(cfg)
    pilot.forget_pilots()
    spec, start = run_spec(cfg), (lambda *a: start_pilot(cfg, *a))
    pilot.make_plan(cfg, spec, start, "simpy")
    (entry,) = cache.glob("*.pickle")
    for damage in (b"", b"not a pickle", entry.read_bytes()[:100]):
        entry.write_bytes(damage)
        pilot.forget_pilots()
        assert pickle.dumps(pilot.make_plan(cfg, spec, start, "simpy")) == good
        assert pickle.loads(entry.read_bytes())


def test_off_and_an_unwritable_folder_write_nothing(cache, tmp_path, monkeypatch):
    cfg = small()
    monkeypatch.setenv("NETLOCK_PLAN_CACHE", "off")
    simulate(cfg)
    assert not cache.exists()
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("NETLOCK_PLAN_CACHE", "on")
    monkeypatch.setenv("NETLOCK_CACHE_DIR", str(blocker))
    pilot.forget_pilots()
    assert simulate(cfg).summary["granted"] > 0


def test_where_the_cache_lives(tmp_path, monkeypatch):
    monkeypatch.delenv("NETLOCK_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert plan_cache.cache_dir() == tmp_path / "xdg" / "netlock" / "plans"
    monkeypatch.setenv("NETLOCK_CACHE_DIR", str(tmp_path / "own"))
    assert plan_cache.cache_dir() == tmp_path / "own" / "plans"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("NETLOCK_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert plan_cache.cache_dir() == tmp_path / "home" / ".cache" / "netlock" / "plans"


def test_the_least_recently_used_entries_go_first(tmp_path):
    import os

    for i in range(4):
        path = tmp_path / f"{i}.pickle"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1000 + i, 1000 + i))
    os.utime(tmp_path / "0.pickle", (2000, 2000))
    plan_cache.prune(tmp_path, 250)
    assert sorted(p.name for p in tmp_path.glob("*.pickle")) == ["0.pickle", "3.pickle"]


def test_a_configs_inputs_are_kept_for_it_alone():
    """The config's part of the key is made once per config object: the key stays what the
    config's fields make, another config (even an equal one) has its own, and the kept
    text goes with its config."""
    cfg = small()
    first = plan_cache.plan_key(cfg, "fast")
    assert plan_cache.plan_key(cfg, "fast") == first == \
        plan_cache.key_of(plan_cache.plan_inputs(cfg.to_dict()), "fast", {})
    assert plan_cache.plan_key(cfg, "simpy") != first
    for other in (small(switch__slots=60), small(sim__seed=2), small(workload__zipf=0.5)):
        assert plan_cache.plan_key(other, "fast") != first
    assert plan_cache.plan_key(small(sim__duration_s=0.002), "fast") == first
    kept = len(plan_cache._inputs_of)
    del cfg
    assert len(plan_cache._inputs_of) < kept


def test_an_entry_is_read_again_only_when_its_file_changed(cache):
    """A process keeps the entries it read and gives them again while their file is the
    same; an entry written anew, changed in place or removed is read (or missed) again."""
    plan_cache.store("k", {"plan": 1})
    first = plan_cache.load("k")
    assert first == {"plan": 1} and plan_cache.load("k") is first
    plan_cache.store("k", {"plan": 2})
    assert plan_cache.load("k") == {"plan": 2}
    (cache / "k.pickle").write_bytes(pickle.dumps({"plan": 3}))
    assert plan_cache.load("k") == {"plan": 3}
    (cache / "k.pickle").write_bytes(b"damaged")
    assert plan_cache.load("k") is None and not (cache / "k.pickle").exists()
    plan_cache.store("k", {"plan": 4})
    assert plan_cache.load("k") == {"plan": 4}
    (cache / "k.pickle").unlink()
    assert plan_cache.load("k") is None
