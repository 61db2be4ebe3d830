"""The engine-neutral layer: what both simulation engines share, written once.

Both the simpy engine (:mod:`sim.simpy_model`, :mod:`sim.simulate_simpy`) and the fast engine
(:mod:`sim.fast`) build a run from these and summarise it with them, so that neither can
drift from the other: a run's derived parameters (:mod:`.spec`), the parts of the rack both
build the same way (:mod:`.parts`: the clients' workload, their NIC shares, the switch data
plane), the network's random draws (:mod:`.draws`), the plan made from a warm-up trace and a
pilot run (:mod:`.pilot`, :mod:`.allocation`), the result tables and their statistics
(:mod:`.metrics`), the result itself (:mod:`.result`) and the two checkers that see only the
clients' use intervals (:mod:`.safety`, :mod:`.liveness`).

This package imports only ``netlock``, ``planner``, :mod:`sim.workloads` and itself, never an
engine (``tests/test_imports.py`` holds it to that).
"""
