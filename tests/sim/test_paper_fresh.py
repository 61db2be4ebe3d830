"""The committed figures of docs/paper/ are made from today's sources.

Each figure's JSON records, in its provenance, a digest of the sources its numbers depend on
(:func:`sim.paper.provenance.sources_digest`) when ``netlock paper`` makes it. A figure whose
digest differs from the checkout's (or that has none) is stale: its numbers may not be what
the code gives now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.paper.provenance import made, sources_digest

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT / "docs" / "paper"
REGENERATE = "netlock paper all --scale full --out docs/paper"


def stale_figures(folder: Path, digest: str) -> list[str]:
    """One line per figure JSON in ``folder`` not made from sources of ``digest``."""
    stale = []
    for path in sorted(folder.glob("fig*.json")):
        made_from = json.loads(path.read_text(encoding="utf-8")).get("provenance", {})
        recorded = made_from.get("sources_sha256")
        if recorded != digest:
            why = "no source digest recorded" if not recorded else "sources changed since"
            stale.append(f"{path.name}: {why} (made at commit {made_from.get('commit', '?')} "
                         f"by `{made_from.get('command', '?')}`)")
    return stale


def test_the_digest_changes_with_any_source_and_only_with_sources(tmp_path):
    for name, text in (("sim/a.py", "x = 1\n"), ("configs/b.yaml", "a: 1\n"),
                       ("docs/c.md", "text\n")):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    first = sources_digest(tmp_path)
    assert first and first == sources_digest(tmp_path)
    (tmp_path / "docs/c.md").write_text("other\n")
    assert sources_digest(tmp_path) == first
    (tmp_path / "configs/b.yaml").write_text("a: 2\n")
    assert sources_digest(tmp_path) != first


def test_a_figure_records_the_digest_and_is_found_stale_once_sources_change(tmp_path):
    provenance = made("fig11", "small", 1)
    assert provenance["sources_sha256"] == sources_digest()
    (tmp_path / "fig11.json").write_text(json.dumps({"provenance": provenance}))
    (tmp_path / "fig12a.json").write_text(json.dumps({"provenance": {"commit": "abc"}}))
    assert stale_figures(tmp_path, provenance["sources_sha256"]) == [
        "fig12a.json: no source digest recorded (made at commit abc by `?`)"]
    assert [line.split(":")[0] for line in stale_figures(tmp_path, "0" * 64)] == [
        "fig11.json", "fig12a.json"]


@pytest.mark.slow
def test_the_committed_figures_are_made_from_todays_sources():
    stale = stale_figures(PAPER, sources_digest())
    assert not stale, ("stale figures in docs/paper/ (regenerate with "
                       f"`{REGENERATE}`):\n" + "\n".join(stale))
