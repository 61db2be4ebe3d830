"""``netlock bench`` rows about the fast engine as whole processes: what one run costs before
its first event, and whether its worker thread pays when the cores are shared.

- Fixed CPU: a tiny ``netlock sim configs/micro-exclusive.yaml --engine fast`` (0.2 ms
  simulated, the config's 1 ms warm-up) in a fresh process, its CPU seconds from
  ``getrusage(RUSAGE_CHILDREN)``: what every point of a sweep or every notebook cell pays
  before the events it asks for. It is a re-run, as those are: one untimed run first puts
  the plan in the plan cache and the modules' bytecode in a temporary
  ``PYTHONPYCACHEPREFIX`` (an installed copy has its bytecode; ``PYTHONDONTWRITEBYTECODE``
  is dropped for the children, which would otherwise compile every module of the project
  from source in each process). A second fresh process runs the same run timed in phases
  (interpreter start, imports, setup with numba's cache loads and the plan, loop and
  results, and the exit: the rest of the process's CPU) for the note.
- Worker thread: the fast engine draws randomness ahead on a second thread
  (:data:`sim.fast.fast_model.DRAW_AHEAD`, :mod:`sim.core.ahead`). A sweep runs one process per
  core, so the thread then competes with the other process for a core. Each repeat runs as
  many processes as the machine has cores at once, all with the thread or all without (in
  turns), and times each one's loop and results in wall-clock seconds (what a sweep waits
  for); the results are the same either way.
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

import sim.fast.fast_model as fast_model
from netlock.bench import BenchResult
from sim.paper.experiment_file import CONFIG_DIR

FIXED_CPU_TARGET_S = 1.0
"""CPU seconds of one fast-engine run before and around its events (issue 32)."""
TINY_S = 0.0002
"""Simulated seconds of the tiny run (after the config's warm-up)."""
MICRO = CONFIG_DIR / "micro-exclusive.yaml"
TPCC = CONFIG_DIR / "tpcc-low.yaml"

_CLI = "import sys; from netlock.cli import main; sys.argv[0] = 'netlock'; main()"
_CHILD = "from sim.fast_bench_child import main; main()"


_env: dict[str, str] = {}


def child_env() -> dict[str, str]:
    """The children's environment: this one, with bytecode written under a temporary
    ``PYTHONPYCACHEPREFIX`` (one for the bench process) rather than not at all."""
    if not _env:
        _env.update(os.environ)
        _env.pop("PYTHONDONTWRITEBYTECODE", None)
        _env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="netlock-bench-pycache-")
        atexit.register(shutil.rmtree, _env["PYTHONPYCACHEPREFIX"], True)
    return _env


def _child_cpu_s(args: list[str]) -> float:
    """CPU seconds (user + system) of one child process running ``args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          env=child_env())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"bench child exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def tiny_cli_cpu_s() -> float:
    """CPU seconds of a tiny ``netlock sim --engine fast`` in a fresh process."""
    return _child_cpu_s([sys.executable, "-c", _CLI, "sim", str(MICRO), "--engine", "fast",
                         "--set", f"sim.duration_s={TINY_S}", "--json"])


def _child(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _CHILD, *args], stdout=subprocess.PIPE,
                            text=True, env=child_env())


def phases() -> dict[str, float]:
    """The tiny run's CPU seconds by phase, in a fresh process; ``exit_s``: the rest of the
    process's CPU (after the results: the interpreter's exit)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = _child(["phases", str(MICRO), str(TINY_S)])
    out, _ = child.communicate()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if child.returncode:
        raise RuntimeError(f"bench child exited {child.returncode}")
    p = json.loads(out)
    total = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    p["exit_s"] = max(total - sum(p[k] for k in PHASES), 0.0)
    return p


PHASES = ("python_s", "imports_s", "setup_s", "run_s")
"""The child's phases, in order (:mod:`sim.fast_bench_child`)."""


def fixed_cpu_result(repeats: int) -> BenchResult:
    """The fixed CPU row: the median over ``repeats`` fresh processes after an untimed one
    (the plan cached, the bytecode written), phases in the note."""
    tiny_cli_cpu_s()
    value = statistics.median(tiny_cli_cpu_s() for _ in range(repeats))
    p = phases()
    return BenchResult(
        suite="sim-fast", name="fast engine: one tiny `netlock sim` run's CPU in a fresh process",
        value=value, unit="CPU s", repeats=repeats, target=FIXED_CPU_TARGET_S,
        higher_is_better=False, ok=value <= FIXED_CPU_TARGET_S,
        note=f"needs <= {FIXED_CPU_TARGET_S:g} s; micro-exclusive, {TINY_S * 1e3:g} ms after "
             f"its warm-up, a re-run (plan cached, bytecode written); by phase (one more "
             f"process): interpreter {p['python_s']:.2f}, imports {p['imports_s']:.2f}, setup "
             f"(numba's first use and cache loads, the plan, the rack) {p['setup_s']:.2f}, "
             f"loop and results {p['run_s']:.2f}, exit {p.get('exit_s', 0.0):.2f}")


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def shared_cores_wall_s(config: str, duration_s: float, ahead: bool) -> list[float]:
    """Each process's loop-and-results wall seconds, with ``cores()`` of them at once."""
    children = [_child(["loop", config, str(duration_s), "on" if ahead else "off"])
                for _ in range(cores())]
    runs = []
    for child in children:
        out, _ = child.communicate()
        if child.returncode:
            raise RuntimeError(f"bench child exited {child.returncode}")
        runs.append(json.loads(out))
    return [r["run_wall_s"] for r in runs]


def worker_thread_result(name: str, config: str, duration_s: float,
                         repeats: int) -> BenchResult:
    """Wall seconds of a run's loop and results with the worker thread, beside without it,
    ``cores()`` processes at once (medians over every process of every repeat)."""
    on, off = [], []
    for _ in range(repeats):
        on += shared_cores_wall_s(config, duration_s, True)
        off += shared_cores_wall_s(config, duration_s, False)
    with_thread, without = statistics.median(on), statistics.median(off)
    faster = "with" if with_thread < without else "without"
    return BenchResult(
        suite="sim-fast",
        name=f"fast engine, {name}, {cores()} processes at once: wall s with the worker thread",
        value=with_thread, unit="s", repeats=repeats, baseline_name="without the worker thread",
        baseline_value=without, higher_is_better=False,
        note=f"{duration_s * 1e3:g} ms simulated; loop and results; {faster} the thread is "
             f"faster here; the default draws "
             f"{'ahead on the thread' if fast_model.DRAW_AHEAD else 'on demand'}")


def run(quick: bool) -> list[BenchResult]:
    """The rows of this module."""
    repeats = 3 if quick else 5
    rows = [fixed_cpu_result(repeats),
            worker_thread_result("micro-exclusive", str(MICRO), 0.02, repeats)]
    if not quick:
        rows.append(worker_thread_result("TPC-C low", str(TPCC), 0.02, repeats))
    return rows
