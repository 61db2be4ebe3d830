"""The simpy engine's scheduling helpers: an event set for a time runs at that time."""

from __future__ import annotations

from sim.engine import Engine

NOW = 1.5628152528394357
AT = 6.786510189928452
"""A pair for which ``NOW + (AT - NOW)`` is one bit short of ``AT``."""


def test_a_call_set_for_a_time_runs_at_exactly_that_time():
    assert NOW + (AT - NOW) != AT
    engine = Engine()
    seen: list[tuple[str, float]] = []
    engine.call_later(NOW, lambda: engine.call_at(AT, lambda: seen.append(("late", engine.now))))
    engine.call_later(AT, lambda: seen.append(("first", engine.now)))
    engine.run(10.0)
    assert seen == [("first", AT), ("late", AT)], "same time: in the order scheduled"
