"""Python's garbage collector in a ``netlock`` process: off while the command imports, on for its
work, and with nothing to scan at exit.

A command's start makes most of the objects the process will hold (a million or so: the
modules, numba's typing registries), and they live until the exit. The collector's passes
over them free nothing: its full passes while the modules import, each over everything made
so far, and the interpreter's collections at exit. A tiny ``netlock sim --engine fast`` run
spent 0.5-0.7 of its 1.8 CPU s in them (issue 32). So :func:`main <netlock.cli.main>` turns
the collector off before importing (:func:`starting`), the command group turns it on once the
command's modules are in (:func:`started`: what exists then is frozen, ``gc.freeze``, so later
passes skip it), and the exit freezes what is left (:func:`leaving`).

Only the console script does this (a library caller, a test calling the app in-process, keeps
its collector as it was); cycles made during the command's work are collected as usual.
"""

from __future__ import annotations

import gc

_paused = False


def starting() -> None:
    """The process is about to import the command line: the collector off until
    :func:`started`."""
    global _paused
    _paused = gc.isenabled()
    gc.disable()


def started() -> None:
    """The command's modules are imported: freeze what exists and turn the collector back on
    (when :func:`starting` turned it off; otherwise nothing)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def leaving() -> None:
    """The command has finished: freeze every object, so that the interpreter's collections
    at exit have nothing to scan (objects are freed as the modules are torn down); the
    collector is on again if no command started."""
    started()
    gc.freeze()
