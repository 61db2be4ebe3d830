"""Concordia (FAST'21): in-switch reader-writer locks with ownership migration."""

from sim.managers.concordia.manager import ConcordiaManager

__all__ = ["ConcordiaManager"]
