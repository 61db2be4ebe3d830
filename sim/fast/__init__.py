"""The fast simulation engine: the simpy engine's model as one compiled event loop.

``simulate_fast(config) -> SimResult`` (:mod:`sim.fast.simulate_fast`) runs the rack that
:mod:`sim.simpy_model` describes, with the same latency components, server CPU model, client
NIC limit, leases, retries, measurement window and metrics, in a numba-compiled loop over
numpy arrays: an array-based 4-ary heap of events (:mod:`sim.fast.heap`), the switch's
data-plane kernels of :mod:`netlock.dataplane.kernels` and the lock-server kernels of
:mod:`netlock.lockserver.kernels` called from inside the loop, workload and network
randomness drawn in vectorised batches. It imports only ``netlock`` and the engine-neutral
layer (:mod:`sim.core`, :mod:`sim.workloads`), which makes its plan and its result as for
the simpy engine. Run with the same seed, it gives the simpy engine's results (the same
random streams drawn in the same order); the tests in ``tests/fast`` hold it to that.
:mod:`sim.fast_bench` measures it for ``netlock bench``.

Not modelled: switch and lock-server failures (such configs are refused; use the simpy
engine).
"""
