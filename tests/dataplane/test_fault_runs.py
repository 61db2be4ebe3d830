"""Long seeded runs of :class:`tests.dataplane.faulty.FaultyClients`: many more client
operations than the Hypothesis machine reaches, with every fault it knows (switch and
lock-server failures included), each step
checked against the oracle and every run drained at the end (all requests granted, the
rack empty). The slow variant runs at least 1,000,000 client operations across seeds."""

from __future__ import annotations

import random

import pytest

from .faulty import CONTROL_OPS, LEASE_US, LOCKS, MOVABLE, FaultyClients

STEPS = (("acquire", 30), ("release", 22), ("duplicate", 6), ("lose", 3), ("late", 6),
         ("stale", 2), ("tick", 20), ("expire", 3), ("control", 8), ("switch_fails", 0.2),
         ("server_fails", 0.2))
"""What a step does, with its weight."""
MAX_WAITING = 24
"""Acquires wait only while fewer requests than this wait: queues stay short and runs in
a steady state (overflow still happens: the regions hold 1 to 4 requests)."""


def fault_run(seed: int, operations: int, priorities: int,
              check_every: int = 1) -> tuple[int, int]:
    """Random steps until clients have sent ``operations`` packets; the count reached and
    the number of switch and lock-server failures.

    Safety is checked after every step, everything (liveness, backlog bookkeeping) after
    every ``check_every``-th: a lock left waiting stays so, so a later check sees it."""
    rng = random.Random(seed)
    c = FaultyClients(priorities, trace_capacity=0)
    names = [name for name, _ in STEPS]
    weights = [weight for _, weight in STEPS]
    steps = 0
    while c.operations < operations:
        step = rng.choices(names, weights)[0]
        if step == "acquire" and len(c.sent) - len(c.ever_granted) < MAX_WAITING:
            c.acquire(rng.choice(LOCKS), rng.random() < 0.5, rng.randrange(priorities))
        elif step in ("release", "duplicate", "lose") and c.held:
            key = rng.choice(sorted(c.held))
            if step == "release":
                c.release(key)
            elif step == "duplicate":
                c.release_duplicated(key, later=rng.random() < 0.5)
            else:
                c.lose(key)
        elif step == "late" and c.in_flight:
            c.deliver(rng.randrange(len(c.in_flight)))
        elif step == "stale":
            c.stale_release(rng.choice(LOCKS), rng.random() < 0.5, rng.randrange(priorities))
        elif step == "tick":
            c.tick(rng.randint(1, 50))
        elif step == "expire":
            c.expire(c.sys.now + rng.randint(1, LEASE_US))
        elif step == "control":
            c.control(rng.choice(CONTROL_OPS), rng.choice(MOVABLE))
        elif step == "switch_fails":
            c.fail_switch()
        elif step == "server_fails":
            c.fail_server()
        else:
            continue
        steps += 1
        if steps % check_every == 0:
            c.check()
        else:
            c.holders_are_safe()
    c.drain()
    return c.operations, c.failures


@pytest.mark.parametrize("priorities", [1, 2])
def test_a_fault_run_is_safe_and_live(priorities: int) -> None:
    done, failures = fault_run(seed=priorities, operations=10_000, priorities=priorities)
    assert done >= 10_000 and failures > 0


@pytest.mark.slow
def test_a_million_operations_under_faults() -> None:
    runs = [fault_run(seed, 125_000, 1 + seed % 2, check_every=10) for seed in range(8)]
    done = sum(ops for ops, _ in runs)
    failures = sum(count for _, count in runs)
    print(f"fault runs: {done} client operations, {failures} switch or server failures, "
          "0 violations, 0 stalled")
    assert done >= 1_000_000
