"""Atomic writes never leave partial output behind."""

from pathlib import Path

import pytest

from netlock import atomic


def test_failed_write_keeps_the_old_file(tmp_path: Path):
    target = tmp_path / "out.txt"
    target.write_text("old")

    def broken(tmp: Path) -> None:
        tmp.write_text("half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        atomic.write_with(target, broken)
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_write_text_creates_parents(tmp_path: Path):
    target = tmp_path / "a" / "b.txt"
    atomic.write_text(target, "new")
    assert target.read_text() == "new"
