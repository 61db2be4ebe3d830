"""Discrete-event simulation of a NetLock rack, on two engines.

``simulate(config) -> SimResult`` (:mod:`sim.simulate_simpy`) runs the simpy engine: it builds the
rack of a config (:mod:`sim.simpy_model`): closed-loop clients (:mod:`sim.clients`) over a network
of jittery, lossy FIFO links (:mod:`sim.network`) talk to a pluggable lock manager
(:mod:`sim.managers`; NetLock = switch + lock servers, :mod:`sim.managers.netlock_rack`), on the
event core of :mod:`sim.engine`. The fast engine (:mod:`sim.fast`) runs the same rack in one
compiled loop; :func:`sim.run_engine.run_engine` picks either. What both engines share is the
engine-neutral layer :mod:`sim.core`: derived parameters, the plan made on the fly from a
warm-up and pilot run, the network's draws, the result with its safety and liveness
checkers. Workload generators and trace drawing live in :mod:`sim.workloads`; extra probes
attach on demand (:mod:`sim.probes`) and sweeps map runs over a grid (:mod:`sim.sweep`,
:mod:`sim.plots`).
"""
