"""Random malformed invocations across the commands (issue 35): configs with a value
replaced, traces, plans, state files and result folders with bytes flipped, cut or replaced,
flags with hostile values. Every one must end with exit 0 or 2 (1 only where a command
documents it, 3 for a run its --max-wall-s stopped), no traceback, an error as one
``netlock: error:`` line (or typer's usage box for a flag of the wrong type), and, when refused,
no output left behind. ``make test`` runs a few in process; the slow tier runs 300 as
separate processes, each within a time budget (so a hang or an abort fails too)."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from tests.config.config_helpers import CONFIGS

NETLOCK = str(Path(sys.executable).parent / "netlock")
HOSTILE = ["", "-1", "0", "1e308", "-1e308", "nan", "inf", "abc", "[1, 2]", "{a: 1}",
           "1e-12", "99999999999999999999", "true", "null", "0x10", "'", "\x01", "1.5",
           "2147483648", "-0"]
SMALL = 8
LARGE = 300
TIMEOUT_S = 180


@dataclass(frozen=True)
class Case:
    """One invocation: its arguments and the output it may write (None: it writes none)."""

    args: list[str]
    out: Path | None
    exits: tuple[int, ...] = (0, 2)


@pytest.fixture(scope="module")
def valid(tmp_path_factory) -> dict[str, Path]:
    """One valid input of each kind, written by the commands themselves."""
    root = tmp_path_factory.mktemp("valid")
    shutil.copytree(CONFIGS / "testbed", root / "testbed")
    config = root / "micro.yaml"
    config.write_text((CONFIGS / "micro-exclusive.yaml").read_text())
    files = {"config": config, "trace": root / "t.csv", "plan": root / "p.yaml",
             "state": root / "s.json", "run": root / "run"}
    steps = [["trace", "gen", "micro", "--config", str(config), "--requests", "400",
              "--out", str(files["trace"])],
             ["plan", str(files["trace"]), "--config", str(config), "--slots", "200",
              "--out", str(files["plan"])],
             ["push", str(files["plan"]), "--state", str(files["state"])],
             ["sim", str(config), "--engine", "simpy", "--set", "sim.duration_s=0.0005",
              "--set", "workload.clients=8", "--out", str(files["run"])]]
    for args in steps:
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
    return files


def _mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    kind = rng.randrange(5)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(400)))
    if kind == 1 and data:
        cut = rng.randrange(len(data))
        return data[:cut]
    if kind == 2 and data:
        out = bytearray(data)
        for _ in range(rng.randrange(1, 6)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    lines = data.decode("utf-8", "replace").splitlines()
    if not lines:
        return b""
    i = rng.randrange(len(lines))
    if kind == 3:
        sep = "," if "," in lines[i] else ":"
        parts = lines[i].split(sep)
        parts[rng.randrange(len(parts))] = rng.choice(HOSTILE)
        lines[i] = sep.join(parts)
    else:
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return ("\n".join(lines) + "\n").encode("utf-8", "replace")


def _copy_mutated(src: Path, dst: Path, rng: random.Random) -> Path:
    if src.is_dir():
        shutil.copytree(src, dst)
        victim = rng.choice(sorted(p for p in dst.iterdir() if p.is_file()))
        victim.write_bytes(_mutate_bytes(victim.read_bytes(), rng))
        return dst
    dst.write_bytes(_mutate_bytes(src.read_bytes(), rng))
    if src.suffix == ".yaml" and src.name == "micro.yaml":
        shutil.copytree(src.parent / "testbed", dst.parent / "testbed", dirs_exist_ok=True)
    return dst


def make_case(seed: int, valid: dict[str, Path], tmp: Path) -> Case:
    """The invocation ``seed`` draws: a command, one malformed input or flag."""
    rng = random.Random(seed)
    hostile = rng.choice(HOSTILE)
    out = tmp / "out"
    pick = rng.randrange(9)
    config = str(valid["config"])
    if pick in (0, 1):
        config = str(_copy_mutated(valid["config"], tmp / "c.yaml", rng))
    if pick == 0:
        return Case(["config", "check", config], None)
    if pick == 1:
        return Case(["sim", config, "--engine", "simpy", "--set", "sim.duration_s=0.0005",
                     "--set", "workload.clients=8", "--max-wall-s", "60", "--out", str(out)],
                    out, (0, 2, 3))
    if pick == 2:
        key = rng.choice(["sim.duration_s", "sim.seed", "workload.clients", "workload.locks",
                          "switch.slots", "servers.count", "network.loss", "sim.warmup_s",
                          "workload.zipf", "lease.us", "clients.timeout_us", "no.such"])
        return Case(["sim", config, "--engine", "simpy", "--set", "sim.duration_s=0.0005",
                     "--set", "workload.clients=8", "--set", f"{key}={hostile}",
                     "--max-wall-s", "60", "--out", str(out)], out, (0, 2, 3))
    if pick == 3:
        flag = rng.choice(["--requests", "--seed"])
        return Case(["trace", "gen", "micro", "--config", config, flag, hostile,
                     "--out", str(out.with_suffix(".csv"))], out.with_suffix(".csv"))
    if pick == 4:
        trace = _copy_mutated(valid["trace"], tmp / "t.csv", rng)
        return Case(["plan", str(trace), "--config", config, "--slots",
                     rng.choice(["200", hostile]), "--out", str(out.with_suffix(".yaml"))],
                    out.with_suffix(".yaml"))
    if pick == 5:
        state = _copy_mutated(valid["state"], tmp / "s.json", rng)
        return Case(["stats", "--state", str(state), "--out", str(out.with_suffix(".csv"))],
                    out.with_suffix(".csv"))
    if pick == 6:
        state = tmp / "s.json"
        shutil.copy(valid["state"], state)
        trace = _copy_mutated(valid["trace"], tmp / "t.csv", rng)
        return Case(["traffic", str(trace), "--state", str(state), "--requests",
                     rng.choice(["100", hostile])], None)
    if pick == 7:
        plan = _copy_mutated(valid["plan"], tmp / "p.yaml", rng)
        state = tmp / "s.json"
        shutil.copy(valid["state"], state)
        return Case(["push", str(plan), "--state", str(state)], None, (0, 1, 2))
    run = _copy_mutated(valid["run"], tmp / "run", rng)
    return Case(["plot", str(run), "--out", str(out)], out)


def check(case: Case, code: int, stderr: str) -> None:
    where = f"{case.args}: exit {code}: {stderr[-600:]}"
    assert code in case.exits, where
    assert "Traceback" not in stderr and "terminate called" not in stderr, where
    if code != 0:
        errors = [line for line in stderr.splitlines() if line.startswith("netlock: error")]
        stopped = code == 3 and "stopped by --max-wall-s" in stderr
        usage = code == 2 and stderr.startswith("Usage:")
        assert len(errors) == 1 or (stopped and not errors) or usage, where
        if code == 2 and case.out is not None:
            assert not case.out.exists(), where


@pytest.mark.parametrize("seed", range(SMALL))
def test_malformed_invocations_in_process(valid, tmp_path, seed):
    case = make_case(seed, valid, tmp_path)
    result = CliRunner().invoke(app, case.args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{case.args}: {result.exception!r}") from result.exception
    check(case, result.exit_code, result.stderr)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(SMALL, SMALL + LARGE))
def test_malformed_invocations_as_processes(valid, tmp_path, seed):
    case = make_case(seed, valid, tmp_path)
    done = subprocess.run([NETLOCK, *case.args], capture_output=True, text=True,
                          timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    check(case, done.returncode, done.stderr)
