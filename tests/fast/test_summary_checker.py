"""The fast engine's summary counts violations with its compiled safety checker."""

from __future__ import annotations

from sim.bench import micro_config
from sim.fast import simulate as fast_simulate


def test_the_summary_uses_the_compiled_checker(monkeypatch):
    seen = []

    def checker(lock, mode, start, end):
        seen.append(len(lock))
        return 7

    monkeypatch.setattr(fast_simulate, "count_violations", checker)
    result = fast_simulate.simulate_fast(micro_config(0.0002))
    assert result.summary["violations"] == 7 and seen == [len(result.requests)]
