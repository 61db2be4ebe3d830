"""Experiments of the seed papers other than NetLock, one module per seed."""
