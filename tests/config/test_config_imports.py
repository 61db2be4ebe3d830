"""``netlock config check`` and ``config keys`` start at once: they import neither numba nor
pandas (the engines' compiled kernels and result tables), only the rules and constants they
read. Each command runs in a fresh interpreter, whose ``sys.modules`` is then inspected."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numba", "pandas", "scipy", "matplotlib", "llvmlite")
RUN = """
import json, sys
import netlock.cli
from netlock.cli import main


def refused():
    raise SystemExit(netlock.cli.REFUSED)


netlock.cli.leave_refused = refused  # the console script's exit 2 leaves at once
args, heavy = json.loads(sys.argv[1]), set(json.loads(sys.argv[2]))
sys.argv = ["netlock", *args]
try:
    main()
except SystemExit as stop:
    code = stop.code
else:
    code = 0
print("\\n" + json.dumps({"exit": code,
                         "heavy": sorted({m.split(".")[0] for m in sys.modules} & heavy)}))
"""


def run_cli(args: list[str]) -> tuple[dict, str]:
    """``netlock *args`` in a fresh interpreter: its exit code and the heavy libraries it
    imported, and its stderr."""
    done = subprocess.run([sys.executable, "-c", RUN, json.dumps(args), json.dumps(HEAVY)],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


@pytest.mark.parametrize(("args", "exit_code", "says"), [
    (["config", "check", "configs/tpcc-low.yaml"], 0, ""),
    (["config", "check", "configs/micro-contended.yaml", "--set", "sim.engine=fast"], 0, ""),
    (["config", "check", "configs/tpcc-low.yaml", "--set", "lease.us=3"], 2,
     "too short: clients keep"),
    (["config", "check", "configs/tpcc-low.yaml", "--set", "lease.us=200"], 2,
     "shorter than a live client may hold a lock"),
    (["config", "check", "configs/micro-contended.yaml", "--set", "sim.engine=fast",
      "--set", "workload.clients=100000000"], 2, "client state (fast engine)"),
    (["config", "keys"], 0, ""),
], ids=["tpcc", "micro-fast", "lease-under-guard", "lease-under-longest-hold",
        "memory-fast-engine", "keys"])
def test_config_commands_import_no_engine_library(args: list[str], exit_code: int,
                                                   says: str):
    """The refusals come from the lease rule (:func:`netlock.client.longest_hold_us`) and the
    memory estimate (:mod:`sim.footprint`, with the fast engine's row widths): the rules are
    applied without the engines' libraries, not skipped."""
    ran, stderr = run_cli(args)
    assert ran == {"exit": exit_code, "heavy": []}, stderr
    assert says in stderr
