"""The kernels behave the same compiled and as plain Python (``NETLOCK_NOJIT=1``).

To run the whole data-plane suite without the JIT: ``NETLOCK_NOJIT=1 pytest tests/dataplane``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from netlock.dataplane import JIT_ENABLED
from netlock.dataplane._kernel_jit import drop_stale_cache

from .harness import scripted_run

ROOT = Path(__file__).resolve().parents[2]
NOJIT = {**os.environ, "NETLOCK_NOJIT": "1"}


def test_pure_python_kernels_match_the_compiled_ones():
    code = ("import json; from netlock.dataplane import JIT_ENABLED; "
            "from tests.dataplane.harness import scripted_run; "
            "print(json.dumps([JIT_ENABLED, scripted_run(5, 400)]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=NOJIT,
                          capture_output=True, text=True, check=True)
    jit_flag, log = json.loads(done.stdout)
    assert jit_flag is False
    assert log == json.loads(json.dumps(scripted_run(5, 400)))


def test_transitions_pass_without_the_jit():
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(Path(__file__).with_name("test_transitions.py"))],
                          cwd=ROOT, env=NOJIT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_this_run_uses_the_jit_unless_disabled():
    assert (os.environ.get("NETLOCK_NOJIT") != "1") == JIT_ENABLED


def test_the_kernel_cache_is_dropped_when_a_sibling_source_changes(tmp_path):
    package = tmp_path / "dataplane"
    cache = package / "__pycache__"
    cache.mkdir(parents=True)
    (tmp_path / "packets.py").write_text("A = 1\n")
    (package / "layout.py").write_text("B = 2\n")
    sources = [package / "layout.py", tmp_path / "packets.py"]
    compiled = cache / "kernels.acquire-1.py311.nbi"
    compiled.write_text("old")
    drop_stale_cache(package, sources)
    assert not compiled.exists()
    compiled.write_text("fresh")
    drop_stale_cache(package, sources)
    assert compiled.exists(), "unchanged sources keep the cache"
    (tmp_path / "packets.py").write_text("A = 3\n")
    drop_stale_cache(package, sources)
    assert not compiled.exists()
