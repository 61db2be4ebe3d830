"""The simpy engine writes simpy's private heap, clock and event counter (``_queue``,
``_now``, ``_eid``: :class:`sim.engine.RackEnvironment`), so simpy is pinned in
pyproject.toml to the versions tested. These tests fail with a clear message when another
simpy is installed, or when the internals the engine relies on change shape."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import simpy
from packaging.requirements import Requirement
from packaging.version import Version

from sim.engine import Engine, RackEnvironment

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def simpy_requirement() -> Requirement:
    text = PYPROJECT.read_text(encoding="utf-8")
    line = re.search(r'^\s*"(simpy[^"]*)"', text, re.MULTILINE)
    assert line, "pyproject.toml declares no simpy dependency"
    return Requirement(line.group(1))


def test_simpy_is_pinned_below_the_next_minor_version():
    spec = simpy_requirement().specifier
    assert any(s.operator == "<" for s in spec), (
        f"simpy is not pinned from above ({spec}): sim/engine.py writes its private heap, "
        f"so a new simpy must be tested before it is allowed")


def test_the_installed_simpy_is_a_tested_version():
    installed = Version(simpy.__version__)
    spec = simpy_requirement().specifier
    assert spec.contains(installed), (
        f"simpy {installed} is installed, but sim/engine.py was tested with simpy{spec} "
        f"only: it writes simpy's private _queue, _now and _eid. Check RackEnvironment "
        f"against this simpy, then widen the pin in pyproject.toml")


def test_the_private_heap_is_what_the_engine_writes():
    env = RackEnvironment()
    assert isinstance(env._queue, list) and isinstance(env._eid, itertools.count)
    assert env._now == env.now == 0
    timeout = env.timeout(3.0)
    when, priority, eid, event = env._queue[0]
    assert (when, priority, event) == (3.0, simpy.events.NORMAL, timeout)
    assert isinstance(eid, int)


def test_simpy_runs_what_the_engine_schedules_in_order():
    engine = Engine()
    seen: list[tuple[float, str]] = []
    engine.call_later(2.0, lambda: seen.append((engine.now, "late")))
    engine.call_later(1.0, lambda: seen.append((engine.now, "early")))

    def process():
        yield engine.env.timeout(1.5)
        seen.append((engine.now, "process"))

    engine.process(process())
    engine.env.step()
    engine.env.step()
    assert seen == [(1.0, "early")], "simpy's own step() reads the engine's heap entries"
    engine.run(5.0)
    assert seen == [(1.0, "early"), (1.5, "process"), (2.0, "late")]
    assert engine.now == 5.0
