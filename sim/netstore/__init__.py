"""NetStore (Active'17): one controller that is both the transactions' read/write lock server
and the network manager, choosing each operation's path with the lock grant.

:mod:`sim.netstore.locktable` (strict 2PL, arrival order), :mod:`sim.netstore.lbp` (least
bottlenecked path) and :mod:`sim.netstore.nac` (network-aware caching) are the controller's
rules as plain code; :mod:`sim.netstore.netstore_run` runs the section 4.1 experiment on the fabric
model of :mod:`sim.fabric`.
"""
