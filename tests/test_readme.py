"""The README's session runs as written (in a scratch directory beside the configs)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def session_script() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## A session", 1)[1]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def test_readme_session_runs(tmp_path: Path) -> None:
    script = session_script().replace("source .venv/bin/activate", "")
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ("zipf.parquet", "plan.yaml", "plan.png", "switch.json", "sweep/results.csv"):
        assert (tmp_path / name).exists(), name
    summary = yaml.safe_load((tmp_path / "plan.yaml").read_text())["summary"]
    assert summary["locks_in_switch"] > 0
    assert summary["rates"] == "closed-loop"  # --config: the rates the rack's clients offer
