"""The console script's garbage-collector policy (:mod:`netlock.cli.collector`): off while the
command imports, on (with what exists frozen) once it has started, and untouched for callers
that are not the console script."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

import pytest

from netlock.cli import collector


@pytest.fixture
def restored_gc():
    was = gc.isenabled()
    yield
    gc.unfreeze()
    collector._paused = False
    if was:
        gc.enable()
    else:
        gc.disable()


def test_started_alone_changes_nothing(restored_gc):
    gc.enable()
    frozen = gc.get_freeze_count()
    collector.started()
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen


def test_off_while_starting_then_on_with_the_start_frozen(restored_gc):
    gc.enable()
    collector.starting()
    assert not gc.isenabled()
    made = [[] for _ in range(1000)]
    collector.started()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(made)
    collector.started()
    assert gc.isenabled()


def test_leaving_turns_it_back_on_if_no_command_started(restored_gc):
    gc.enable()
    collector.starting()
    collector.leaving()
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0


def test_a_command_runs_with_the_collector_on():
    """A real console-script process: the command's module imports with the collector off,
    and its body runs with it on (a long command's cycles are collected)."""
    probe = """
import gc, json, sys
import netlock.cli.config_cmd as cmd
from netlock.cli import main

seen = {}
real_register, real_keys = cmd.register, cmd.config_keys


def register(app):
    seen["registering"] = gc.isenabled()
    real_register(app)


def config_keys(*args, **kwargs):
    seen["in_command"] = gc.isenabled()
    return real_keys(*args, **kwargs)


cmd.register, cmd.config_keys = register, config_keys
sys.argv = ["netlock", "config", "keys"]
try:
    main()
except SystemExit:
    pass
print(json.dumps(seen), file=sys.stderr)
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert seen == {"registering": False, "in_command": True}
