"""NetLock's lock server: the one home of the lock server's rules.

- :mod:`.kernels`: the request rules (grant, release, ``q2`` buffering and push-back, the
  lease sweep) and the steps of moving a lock, as numba-compatible kernels;
- :mod:`.store`: the storage kernels under them (queues, holders, served locks, action rows);
- :mod:`.layout`: the state's arrays and their named columns; :mod:`.hashmap`: lock id ->
  dense index for compiled code;
- :mod:`.server`: :class:`LockServer`, one server's arrays behind a readable API, with its
  control plane.

The simpy engine, the hardware runner and :mod:`netlock.rack` use :class:`LockServer`; the
fast engine calls the kernels on one state holding all of its rack's servers.
"""

from netlock.lockserver._jit import JIT_ENABLED
from netlock.lockserver.server import Handoff, LockServer

__all__ = ["JIT_ENABLED", "Handoff", "LockServer"]
