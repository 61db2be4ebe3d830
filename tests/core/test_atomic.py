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


def test_the_folder_is_synced_after_the_rename_and_the_umask_is_never_touched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The rename lives in the folder: without an fsync of the folder a power cut can lose
    it. ``os.umask`` changes the whole process's mask (racing with other threads), so the
    temporary file takes its mode from the kernel instead."""
    import os
    import stat

    synced: list[bool] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real_fsync(fd)

    def no_umask(mask: int) -> int:
        raise AssertionError("os.umask called")

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "umask", no_umask)
    atomic.write_text(tmp_path / "x.json", "{}")
    assert synced == [False, True]
    mode = stat.S_IMODE((tmp_path / "x.json").stat().st_mode)
    assert mode & 0o600 == 0o600 and not mode & 0o111
