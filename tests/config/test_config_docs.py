"""docs/config.md cannot drift from the schema: its key tables are exactly what
``netlock config keys --markdown`` prints, so every key is documented with its meaning."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.config import config_keys

DOC = Path(__file__).resolve().parents[2] / "docs" / "config.md"
MARKER = "checks that they match the schema. -->\n"


def generated() -> str:
    done = CliRunner().invoke(app, ["config", "keys", "--markdown"])
    assert done.exit_code == 0, done.output
    return done.stdout


def test_the_key_tables_in_docs_are_the_schemas():
    documented = DOC.read_text(encoding="utf-8").split(MARKER, 1)[1].lstrip("\n")
    assert documented == generated(), (
        "docs/config.md is out of date: replace everything after its 'Keys' comment with "
        "the output of `netlock config keys --markdown`")


def test_every_key_appears_with_a_meaning():
    tables = generated()
    for info in config_keys():
        if info.type == "section" and "." not in info.path:
            assert f"### `{info.path}`: {info.help}" in tables
        else:
            assert f"| `{info.path}` | {info.type} |" in tables
            assert info.help.strip(), f"{info.path} has no meaning written"
