"""The plain simpy model the engine is measured against: a process per client, a Resource per lock.

This is the textbook way to write the microbenchmark in simpy and the reference point of
``netlock bench``. It models only what the textbook version models: each client picks a
lock uniformly, its request travels half a round trip to the lock manager, waits for the
lock's ``simpy.Resource`` (capacity 1, exclusive), the grant travels back, the client thinks,
and the release travels half a round trip before the lock is freed. No switch, servers,
leases or loss: it is the cost of the modelling style, not a model of NetLock.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import simpy


@dataclass(frozen=True)
class BaselineResult:
    """Granted lock requests after ``duration_us`` of simulated time, and the events run."""

    granted: int
    duration_us: float


def run_baseline(clients: int = 120, locks: int = 5000, rtt_us: float = 5.0,
                 think_time_us: float = 0.0, duration_us: float = 20_000.0,
                 seed: int = 1) -> BaselineResult:
    """Simulate ``duration_us`` microseconds of exclusive lock requests; count grants."""
    env = simpy.Environment()
    rng = random.Random(seed)
    resources = [simpy.Resource(env, capacity=1) for _ in range(locks)]
    half_rtt = rtt_us / 2.0
    granted = [0]

    def client():
        while True:
            resource = resources[rng.randrange(locks)]
            yield env.timeout(half_rtt)
            request = resource.request()
            yield request
            yield env.timeout(half_rtt)
            granted[0] += 1
            if think_time_us > 0:
                yield env.timeout(think_time_us)
            arrival = env.timeout(half_rtt)
            arrival.callbacks.append(lambda _, res=resource, req=request: res.release(req))

    for _ in range(clients):
        env.process(client())
    env.run(until=duration_us)
    return BaselineResult(granted=granted[0], duration_us=duration_us)
