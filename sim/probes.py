"""Probes attached to a built model for measurements the default run does not pay for.

:class:`QueueProbe` checks the switch queues against Little's law with two independent
views: the number of requests in the queues, sampled from the data plane's registers at
random instants (Poisson sampling sees time averages), and the arrival rate and time spent
in the queues, counted as packets enter and leave them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.managers.netlock_rack.switch_pipeline import SwitchProbe
from sim.simpy_model import Model


@dataclass(frozen=True)
class LittlesLaw:
    """L (time-average queue length), lambda (arrivals/us) and W (mean sojourn, us)."""

    length: float
    arrival_rate_per_us: float
    sojourn_us: float

    @property
    def predicted_length(self) -> float:
        """lambda * W."""
        return self.arrival_rate_per_us * self.sojourn_us


class QueueProbe:
    """Samples the switch's queue length and counts arrivals and sojourns after warm-up."""

    def __init__(self, model: Model, mean_period_us: float = 2.0) -> None:
        self.model = model
        self.mean_period_us = mean_period_us
        self.samples: list[int] = []
        self.counters = SwitchProbe()
        self.start_us = model.config.sim.warmup_s * 1e6
        self.end_us = model.config.sim.end_s * 1e6
        self._enqueued_at_start = 0
        self._dequeued_at_start = 0
        self._sojourn_at_start = 0.0
        model.manager.switch.probe = self.counters
        model.engine.process(self._sample())

    def _sample(self):
        env = self.model.engine.env
        rng = self.model.probe_rng
        yield env.timeout(self.start_us)
        self._enqueued_at_start = self.counters.enqueued
        self._dequeued_at_start = self.counters.dequeued
        self._sojourn_at_start = self.counters.sojourn_us
        while True:
            yield env.timeout(float(rng.exponential(self.mean_period_us)))
            self.samples.append(self.model.manager.switch_queue_length())

    def result(self) -> LittlesLaw:
        """The three quantities over ``[warm-up, end]``."""
        c = self.counters
        span = self.end_us - self.start_us
        left = c.dequeued - self._dequeued_at_start
        sojourn = (c.sojourn_us - self._sojourn_at_start) / left if left else 0.0
        arrivals = (c.enqueued - self._enqueued_at_start) / span
        return LittlesLaw(float(np.mean(self.samples)) if self.samples else 0.0, arrivals,
                          sojourn)
