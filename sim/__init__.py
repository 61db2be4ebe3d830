"""Discrete-event simulation of a NetLock rack on simpy.

``simulate(config) -> SimResult`` (:mod:`sim.simulate`) builds the rack of a config
(:mod:`sim.model`): closed-loop clients (:mod:`sim.clients`) over a network of jittery,
lossy FIFO links (:mod:`sim.network`) talk to a pluggable lock manager
(:mod:`sim.managers`; NetLock = switch + lock servers, :mod:`sim.managers.netlock`), on the
event core of :mod:`sim.engine`. Metrics are recorded at the clients (:mod:`sim.metrics`),
lock safety is checked independently (:mod:`sim.safety`), extra probes attach on demand
(:mod:`sim.probes`), plans are made on the fly (:mod:`sim.allocation`) and sweeps map
``simulate`` over a grid (:mod:`sim.sweep`, :mod:`sim.plots`). Workload generators live in
:mod:`sim.workloads`.
"""
