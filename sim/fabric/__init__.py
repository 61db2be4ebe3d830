"""A flow-level model of a multi-rack data-centre fabric: a multi-rooted tree of switches
(:mod:`sim.fabric.topology`), max-min fair sharing of its links (:mod:`sim.fabric.maxmin`)
and the flows in flight on it over time (:mod:`sim.fabric.fluid`)."""
