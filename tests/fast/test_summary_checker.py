"""Both engines' summaries count violations with the one safety checker."""

from __future__ import annotations

import pytest

from sim.bench import micro_config
from sim.core import result
from sim.fast.simulate_fast import simulate_fast
from sim.simulate_simpy import simulate


@pytest.mark.parametrize("run", [simulate, simulate_fast], ids=["simpy", "fast"])
def test_the_summary_counts_violations_with_the_one_checker(monkeypatch, run):
    seen = []

    def checker(lock, mode, start, end):
        seen.append(len(lock))
        return 7

    monkeypatch.setattr(result, "count_violations", checker)
    outcome = run(micro_config(0.0002))
    assert outcome.summary["violations"] == 7 and seen == [len(outcome.requests)]
