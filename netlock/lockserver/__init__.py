"""NetLock's lock server: the one home of the lock server's rules.

- :mod:`.kernels`: the request rules (grant, release, ``q2`` buffering and push-back, the
  lease sweep) and the steps of moving a lock, as numba-compatible kernels;
- :mod:`.store`: the storage kernels under them (queues, holders, served locks, action rows);
- :mod:`.server_state`: the state's arrays and their named columns; :mod:`.hashmap`: lock id ->
  dense index for compiled code;
- :mod:`.server`: :class:`LockServer`, one server's arrays behind a readable API, with its
  control plane (its action rows as values: :mod:`.action_rows`);
- :mod:`.request_path`: how a packet reaches a server's rules and how their answers leave
  (the core choice :mod:`.rss`, the RX rings :mod:`.rxring`, a core's busy time, TX bursts
  :mod:`.txburst`), as steps over a server's state rows, which both simulation engines call.

The simpy engine, the hardware runner and :mod:`netlock.timeless_rack` use :class:`LockServer`; the
fast engine calls the kernels on one state holding all of its rack's servers.

:class:`LockServer` and :class:`Handoff` are imported on first use (PEP 562), so that
importing :mod:`.server_state` for its constants does not compile the kernels or import numba.
"""

from typing import Any

from netlock.dataplane._kernel_jit import JIT_ENABLED

__all__ = ["JIT_ENABLED", "Handoff", "LockServer"]
_SERVER = ("Handoff", "LockServer")


def __getattr__(name: str) -> Any:
    if name in _SERVER:
        from netlock.lockserver import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
