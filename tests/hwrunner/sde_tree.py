"""The SDE's Python client for conformance tests: a real ``$SDE_INSTALL``, or an SDE-like tree
built in a temporary directory from ``../shared/bfrt-sde`` (beside the repository).

The tree is laid out as the SDE installs it, ``lib/pythonX.Y/site-packages/tofino/bfrt_grpc/``
with ``client.py``, ``info_parse.py`` and ``bfruntime_pb2*.py`` generated from the real proto
with grpcio-tools (the generated gRPC module's import rewritten to a relative one, as the SDE's
CMake does). Nothing of it is copied into the project.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED_SDE = REPO.parent / "shared" / "bfrt-sde"
SOURCES = ("client.py", "info_parse.py", "bfruntime.proto")


def _site(root: Path) -> Path:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return root / "lib" / version / "site-packages" / "tofino"


def installed_sde() -> Path | None:
    """``$SDE_INSTALL`` when it holds the client for this Python."""
    sde = os.environ.get("SDE_INSTALL")
    if sde and (_site(Path(sde)) / "bfrt_grpc" / "client.py").exists():
        return Path(sde)
    return None


def missing_reason() -> str | None:
    """Why the conformance suite cannot run here (None: it can)."""
    if installed_sde() is None and not all((SHARED_SDE / f).exists() for f in SOURCES):
        return (f"no SDE client: set SDE_INSTALL or provide {SHARED_SDE} "
                f"({', '.join(SOURCES)})")
    for module in ("grpc", "grpc_tools", "google.rpc.status_pb2", "six"):
        try:
            importlib.import_module(module)
        except ImportError:
            return f"the SDE client needs {module} (pip install -e '.[test]')"
    return None


def build_tree(root: Path) -> Path:
    """An SDE-like install under ``root`` from ``../shared/bfrt-sde``; returns ``root``."""
    import google.rpc
    from grpc_tools import protoc

    package = _site(root) / "bfrt_grpc"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name in ("client.py", "info_parse.py"):
        shutil.copyfile(SHARED_SDE / name, package / name)
    proto_dir = root / "proto"
    proto_dir.mkdir()
    shutil.copyfile(SHARED_SDE / "bfruntime.proto", proto_dir / "bfruntime.proto")
    googleapis = Path(next(iter(google.rpc.__path__))).parents[1]
    well_known = Path(protoc.__file__).parent / "_proto"
    code = protoc.main(["protoc", f"-I{proto_dir}", f"-I{googleapis}", f"-I{well_known}",
                        f"--python_out={package}", f"--grpc_python_out={package}",
                        str(proto_dir / "bfruntime.proto")])
    if code != 0:
        raise RuntimeError(f"protoc failed on {SHARED_SDE / 'bfruntime.proto'} ({code})")
    grpc_module = package / "bfruntime_pb2_grpc.py"
    grpc_module.write_text(re.sub(r"^import bfruntime_pb2 as bfruntime__pb2$",
                                  "from . import bfruntime_pb2 as bfruntime__pb2",
                                  grpc_module.read_text(), flags=re.M))
    return root


def tofino_dir(sde: Path) -> Path:
    """The directory that must be on ``sys.path`` for ``import bfrt_grpc.client``."""
    return _site(sde)
