"""From workload traces to switch allocations (Algorithm 3), layouts and lock-server counts."""
