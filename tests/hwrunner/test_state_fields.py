"""A state file whose checksum matches but whose fields do not fit the program (issue 35):
one line naming the file and the field, exit 2, for every command that loads it. On main an
out-of-range action or too few parameters was an IndexError traceback, a geometry of 10^12
slots a MemoryError traceback, and a key wider than the table's, a key value outside its
bits or a window_s that is not a number of seconds was accepted."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.plan_io import save_plan
from tests.config.config_helpers import CONFIGS
from tests.hwrunner.plans import make_plan
from tests.hwrunner.test_state_files import _write

LOCKS = "pipe.check_lock_exist_table"


def _decode(doc: dict) -> np.ndarray:
    raw = zlib.decompress(base64.b64decode(doc["zlib"]))
    return np.frombuffer(raw, dtype=np.int64).reshape(doc["shape"]).copy()


def _encode(arr: np.ndarray) -> dict:
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    return {"shape": list(arr.shape),
            "zlib": base64.b64encode(zlib.compress(arr.tobytes())).decode()}


def _column(name: str, change):
    def mutate(doc: dict) -> None:
        table = doc["tables"][LOCKS]
        table[name] = _encode(change(_decode(table[name])))
    return mutate


def _set(*path: object, value: object):
    def mutate(doc: dict) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return mutate


def _with(arr: np.ndarray, value: int) -> np.ndarray:
    arr[0] = value
    return arr


CASES = {
    "action out of range": (_column("action", lambda a: _with(a, 7)),
                            f"table {LOCKS}.action: entry 0: action index 7 is outside 0..0"),
    "negative action": (_column("action", lambda a: _with(a, -1)),
                        f"table {LOCKS}.action: entry 0: action index -1"),
    "too few parameters": (_column("params", lambda p: p[:, :0]),
                           f"table {LOCKS}.params: entry 0: action check_lock_exist_action "
                           f"takes 1 parameters, the file holds 0"),
    "fewer parameter rows": (_column("params", lambda p: p[:-1]),
                             f"table {LOCKS}.params: shape"),
    "key too wide": (_column("keys", lambda k: np.repeat(k, 2, axis=1)),
                     f"table {LOCKS}.keys: shape"),
    "key outside its bits": (_column("keys", lambda k: k - 100),
                             "nlk_hdr.lock = -100 does not fit its 32 bits"),
    "a key twice": (_column("keys", lambda k: _with(k, k[1])), "appears twice"),
    "unknown action": (_set("tables", LOCKS, "actions", value=["drop_it"]),
                       f"table {LOCKS}.actions: 'drop_it' is not an action"),
    "huge geometry": (_set("geometry", "arrays", 0, "size", value=10**12),
                      "geometry: 1000000000048 slots, more than the"),
    "geometry not integers": (_set("geometry", "arrays", 0, "size", value="16"),
                              "geometry: stages, priorities and each array's stage and size "
                              "must be integers"),
    "window_s text": (_set("window_s", value="soon"), "window_s: 'soon' is not a number"),
    "window_s negative": (_set("window_s", value=-1.0), "window_s: '-1.0' is not a number"),
}


@pytest.fixture(scope="module")
def pushed(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("state")
    state, plan = folder / "s.json", folder / "p.yaml"
    save_plan(make_plan([(i, 2) for i in range(20)]), plan)
    assert CliRunner().invoke(app, ["push", str(plan), "--state", str(state)]).exit_code == 0
    return state, plan


@pytest.mark.parametrize("case", list(CASES))
def test_a_state_field_that_does_not_fit_is_one_line(pushed, tmp_path, case):
    state, plan = pushed
    mutate, said = CASES[case]
    doc = json.loads(state.read_text())
    mutate(doc)
    bad = tmp_path / "bad.json"
    _write(bad, doc, checksum=True)
    before = bad.read_bytes()
    for args in (["stats", "--state", str(bad)],
                 ["push", str(plan), "--state", str(bad)],
                 ["traffic", str(CONFIGS / "micro-exclusive.yaml"), "--state", str(bad),
                  "--requests", "50"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (args[0], result.output, result.exception)
        line = result.stderr.strip()
        assert "\n" not in line and line.startswith(f"netlock: error: {bad}: "), line
        assert said in line, line
    assert bad.read_bytes() == before
