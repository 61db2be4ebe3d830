"""Discrete-event simulation of a NetLock rack (simpy engine and the fast engine)."""
