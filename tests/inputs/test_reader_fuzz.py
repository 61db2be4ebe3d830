"""Every reader answers malformed input with its own one-line error, never a traceback
(issue 35): random bytes and random mutations of valid files, through the trace reader,
the config reader and the ``netlock plan`` / ``netlock config check`` commands (exit 2,
one line, nothing written). Small here; larger in the slow tier."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.config import load_config
from netlock.errors import ConfigError, TraceError
from netlock.trace import read_trace
from tests.config.config_helpers import CONFIGS

VALID_CSV = (b'"lock_id","mode","t_request","t_release","client_id","txn_id"\n'
             b'3228,"X",3.1e-8,0.000004806,93,93\n583,"S",3.8e-8,0.000006006,61,61\n'
             b'17,"X",4.0e-8,0.000007,2,2\n')
VALID_YAML = (CONFIGS / "micro-exclusive.yaml").read_bytes()


def mutated(valid: bytes) -> st.SearchStrategy[bytes]:
    """``valid`` with a few bytes replaced, dropped or inserted."""

    @st.composite
    def draw(data: st.DrawFn) -> bytes:
        out = bytearray(valid)
        for _ in range(data(st.integers(1, 6))):
            at = data(st.integers(0, max(len(out) - 1, 0)))
            kind = data(st.sampled_from(["set", "drop", "insert"]))
            byte = data(st.sampled_from(list(b',"\nXS-e.0123456789aZ\x00\xff ')))
            if kind == "set" and out:
                out[at] = byte
            elif kind == "drop" and out:
                del out[at]
            else:
                out.insert(at, byte)
        return bytes(out)

    return draw()


INPUTS_CSV = st.one_of(st.binary(max_size=300), mutated(VALID_CSV))
INPUTS_YAML = st.one_of(st.binary(max_size=300), mutated(VALID_YAML))
FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
FUZZ_SLOW = settings(max_examples=600, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])


def check_trace(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.csv"
        path.write_bytes(data)
        try:
            read_trace(path)
        except TraceError as exc:
            assert "\n" not in str(exc) and str(path) in str(exc)


def check_config(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.yaml"
        path.write_bytes(data)
        try:
            load_config(path)
        except ConfigError as exc:
            assert "\n" not in str(exc)


def check_plan_command(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path, out = Path(folder) / "t.csv", Path(folder) / "plan.yaml"
        path.write_bytes(data)
        result = CliRunner().invoke(app, ["plan", str(path), "--out", str(out)])
        assert "Traceback" not in result.output
        assert result.exit_code in (0, 2), (result.exit_code, result.output)
        if result.exit_code == 2:
            assert len(result.stderr.strip().splitlines()) == 1, result.stderr
            assert not out.exists()


@FUZZ
@given(INPUTS_CSV)
def test_trace_reader(data):
    check_trace(data)


@FUZZ
@given(INPUTS_YAML)
def test_config_reader(data):
    check_config(data)


@settings(max_examples=15, deadline=None)
@given(INPUTS_CSV)
def test_plan_command(data):
    check_plan_command(data)


@pytest.mark.slow
@FUZZ_SLOW
@given(INPUTS_CSV)
def test_trace_reader_at_scale(data):
    check_trace(data)


@pytest.mark.slow
@FUZZ_SLOW
@given(INPUTS_YAML)
def test_config_reader_at_scale(data):
    check_config(data)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(INPUTS_CSV)
def test_plan_command_at_scale(data):
    check_plan_command(data)
