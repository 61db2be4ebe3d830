"""Random bytes, truncations and flipped bytes of valid files, fed to every reader of user
files: each either reads the file or raises one NetlockError line (which the CLI prints with
exit 2), never another exception; a few real ``netlock`` processes confirm the CLI end."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hwrunner.bfrt_info import load_schema
from hwrunner.emulator_state import load_state
from hwrunner.journal import Journal, load_journal, save_journal
from hwrunner.profile import load_profile
from hwrunner.switch_contents import Layout
from hwrunner.targets import push_plan
from netlock.config import load_config
from netlock.errors import NetlockError
from netlock.plan_io import load_plan, save_plan
from netlock.trace import read_trace
from tests.hwrunner.plans import make_plan

FIXTURES = Path(__file__).resolve().parents[1] / "hwrunner" / "fixtures"
PROFILE = load_profile()
CONFIG = textwrap.dedent("""\
    sim: {duration_s: 0.001, seed: 3}
    switch: {slots: 100}
    workload: {kind: micro, clients: 4, locks: 50, zipf: 0.9}
    tenants: [{id: 0, priority: 0}]
""")


def _trace() -> pd.DataFrame:
    n = 40
    t = np.arange(n) * 1e-3
    return pd.DataFrame({"lock_id": np.arange(n) % 7, "mode": ["S", "X"] * (n // 2),
                         "t_request": t, "t_release": t + 5e-4, "client_id": np.arange(n) % 3,
                         "txn_id": np.arange(n)})


def _valid_files(folder: Path) -> dict[str, tuple[Path, Callable[[Path], object]]]:
    """One valid file per reader, and the reader."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.yaml"
    config.write_text(CONFIG)
    csv, parquet = folder / "trace.csv", folder / "trace.parquet"
    _trace().to_csv(csv, index=False)
    _trace().to_parquet(parquet, index=False)
    plan = make_plan([(3, 2), (9, 4)])
    plan_file, state = folder / "plan.yaml", folder / "switch.json"
    save_plan(plan, plan_file)
    push_plan(plan, state=state)
    journal = folder / "push.journal"
    save_journal(Journal("emulator", PROFILE.name, Layout.empty(), Layout.empty(), 2), journal)
    bfrt = folder / "bf-rt.json"
    bfrt.write_bytes((FIXTURES / "bfrt_p4_16.json").read_bytes())
    profile = folder / "profile.yaml"
    profile.write_bytes(Path(PROFILE.source).read_bytes())
    return {
        "config": (config, load_config),
        "csv": (csv, read_trace),
        "parquet": (parquet, read_trace),
        "plan": (plan_file, load_plan),
        "state": (state, lambda p: load_state(p, PROFILE)),
        "journal": (journal, load_journal),
        "bfrt": (bfrt, load_schema),
        "profile": (profile, load_profile),
    }


@pytest.fixture(scope="module")
def valid(tmp_path_factory) -> dict[str, tuple[Path, Callable[[Path], object]]]:
    return _valid_files(tmp_path_factory.mktemp("valid"))


def _reads_or_one_line(reader: Callable[[Path], object], path: Path) -> None:
    try:
        reader(path)
    except NetlockError as exc:
        assert "\n" not in str(exc), str(exc)
        assert str(path) in str(exc), str(exc)


def _mutated(data: bytes, kind: str, at: float, junk: bytes) -> bytes:
    """``data`` cut at ``at`` (a fraction), with ``junk`` written over it there, or replaced."""
    cut = int(at * len(data))
    if kind == "truncate":
        return data[:cut]
    if kind == "overwrite":
        return data[:cut] + junk + data[cut + len(junk):]
    return junk


READERS = ["config", "csv", "parquet", "plan", "state", "journal", "bfrt", "profile"]


@pytest.mark.parametrize("name", READERS)
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["truncate", "overwrite", "random"]),
       at=st.floats(0.0, 1.0), junk=st.binary(min_size=1, max_size=64))
def test_damaged_files_read_or_give_one_line(valid, tmp_path, name, kind, at, junk):
    path, reader = valid[name]
    damaged = tmp_path / path.name
    damaged.write_bytes(_mutated(path.read_bytes(), kind, at, junk))
    _reads_or_one_line(reader, damaged)


@pytest.mark.parametrize("name", READERS)
def test_non_utf8_and_empty_files(valid, tmp_path, name):
    path, reader = valid[name]
    for content in (b"", b"\xff\xfe\x00garbage", path.read_bytes()[:7] + b"\xe9\x80" * 3):
        damaged = tmp_path / path.name
        damaged.write_bytes(content)
        _reads_or_one_line(reader, damaged)


CLI_CASES = [
    ("config", ["config", "check", "{path}"]),
    ("csv", ["plan", "{path}", "--slots", "10", "--out", "{out}"]),
    ("parquet", ["plan", "{path}", "--slots", "10", "--out", "{out}"]),
    ("plan", ["push", "{path}", "--dry-run"]),
    ("state", ["stats", "--state", "{path}"]),
]


@pytest.mark.parametrize(("name", "args"), CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_on_damaged_files(valid, tmp_path, name, args):
    path, _ = valid[name]
    damaged = tmp_path / path.name
    data = path.read_bytes()
    damaged.write_bytes(data[: len(data) // 2] + b"\xff\x00\xfe")
    out = tmp_path / "out.yaml"
    cmd = [sys.executable, "-c", "from netlock.cli import main; main()",
           *(a.format(path=damaged, out=out) for a in args)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("netlock: error: ")
    assert not out.exists()


@pytest.mark.parametrize("section", ["registers", "tables", "dataplane", "geometry", "pipes"])
@pytest.mark.parametrize("value", [[], "x", None, 7])
def test_state_sections_of_the_wrong_type(valid, tmp_path, section, value):
    path, reader = valid["state"]
    doc = json.loads(path.read_text())
    doc[section] = value
    damaged = tmp_path / path.name
    damaged.write_text(json.dumps(doc))
    with pytest.raises(NetlockError):
        reader(damaged)
