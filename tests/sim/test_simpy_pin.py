"""The simpy engine keeps its own heap and clock behind simpy's public scheduling members
(:class:`sim.engine.RackEnvironment` overrides ``now``, ``schedule``, ``peek`` and ``step``),
so it depends on no private attribute of simpy and any simpy 4 may be installed
(pyproject.toml allows ``simpy>=4.1,<5``). These tests check that everything simpy makes
(processes, timeouts, plain events, conditions, failures, ``run``) goes through those
members and keeps simpy's order, so a simpy that bypassed them would fail here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import simpy
from packaging.requirements import Requirement

from sim.engine import Engine, RackEnvironment

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def simpy_requirement() -> Requirement:
    text = PYPROJECT.read_text(encoding="utf-8")
    line = re.search(r'^\s*"(simpy[^"]*)"', text, re.MULTILINE)
    assert line, "pyproject.toml declares no simpy dependency"
    return Requirement(line.group(1))


def test_the_installed_simpy_is_an_allowed_version():
    installed = simpy.__version__
    spec = simpy_requirement().specifier
    assert spec.contains(installed), f"simpy {installed} is installed; pyproject.toml allows {spec}"


def test_simpy_events_land_on_the_environments_own_heap():
    env = RackEnvironment()
    assert env.now == 0 and env.peek() == simpy.core.Infinity
    timeout = env.timeout(3.0)
    when, priority, _, event = env.heap[0]
    assert (when, priority, event) == (3.0, simpy.events.NORMAL, timeout)
    assert env.peek() == 3.0
    env.step()
    assert env.now == 3.0 and timeout.processed and not env.heap
    with pytest.raises(simpy.core.EmptySchedule):
        env.step()


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
    assert seen == [(1.0, "early")], "the process's start and the first call, in time order"
    engine.run(5.0)
    assert seen == [(1.0, "early"), (1.5, "process"), (2.0, "late")]
    assert engine.now == 5.0


def trace_of(env: simpy.Environment) -> list[tuple[float, str]]:
    """What a mix of simpy's events does on ``env``: processes, timeouts at one time
    (FIFO), an event succeeded by another process, conditions, an interrupt, a defused
    failure, and ``run(until=...)``."""
    seen: list[tuple[float, str]] = []
    gate = env.event()

    def waiter(name: str):
        value = yield gate
        seen.append((env.now, f"{name} got {value}"))
        both = yield env.timeout(1, "a") & env.timeout(2, "b")
        seen.append((env.now, f"{name} all_of {sorted(both.values())}"))

    def opener():
        yield env.timeout(2)
        gate.succeed("open")
        yield env.timeout(0)
        seen.append((env.now, "opener after"))

    def sleeper():
        try:
            yield env.timeout(10)
        except simpy.Interrupt as interrupt:
            seen.append((env.now, f"interrupted: {interrupt.cause}"))

    def failing():
        yield env.timeout(1)
        raise KeyError("boom")

    def watcher(proc):
        try:
            yield proc
        except KeyError:
            seen.append((env.now, "caught the failure"))

    for name in "xy":
        env.process(waiter(name))
    env.process(opener())
    sleep = env.process(sleeper())
    env.process(watcher(env.process(failing())))

    def interrupter():
        yield env.timeout(3)
        sleep.interrupt("wake")

    env.process(interrupter())
    env.run(until=4.5)
    seen.append((env.now, "paused"))
    env.run(until=env.timeout(1, "done"))
    seen.append((env.now, "ended"))
    return seen


def test_simpy_semantics_are_simpys():
    assert trace_of(RackEnvironment()) == trace_of(simpy.Environment())


def test_a_failure_nobody_defused_ends_the_run():
    engine = Engine()

    def failing():
        yield engine.env.timeout(1)
        raise ValueError("lost")

    engine.process(failing())
    with pytest.raises(ValueError, match="lost"):
        engine.run(5.0)
