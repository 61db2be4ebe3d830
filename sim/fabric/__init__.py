"""A flow-level model of a multi-rack data-centre fabric: a multi-rooted tree of switches
(:mod:`sim.fabric.topology`), max-min fair sharing of its links (:mod:`sim.fabric.maxmin`)
and the flows in flight on it over time (:mod:`sim.fabric.fluid`).

Why not an existing simulator. SimGrid (PyPI ``simgrid``) has the right model -- flow-level
max-min sharing on arbitrary topologies -- but PyPI carries only its source (no wheel): ``pip
install simgrid`` runs CMake over about 470 C++ and C files and fails outright on a machine
without the Boost headers, which come from the system's package manager, not PyPI; with them,
the library alone costs roughly a quarter of an hour of CPU to build on every fresh install.
Its routing also fixes one route per pair of hosts (a fat-tree zone routes by destination,
d-mod-k), while NetStore's point is choosing, per operation, among a pair's several shortest
paths; that needs a host per path or a route table rewritten per flow. ns-3 (PyPI ``ns3``)
installs as a wheel but is packet-level: 64 hosts at 1 Gbps carrying megabyte background flows
for a minute of simulated time is on the order of 10^8 packet events per run, hours on two
cores for the 20 runs of one figure, and the seed's own argument (section 3.1) is about fair
shares of link capacity, not packet dynamics. So this package is a small max-min model whose
allocations are tested against hand-computed ones and against the defining property of max-min
fairness (``tests/netstore/test_maxmin.py``).
"""
