"""A sweep's output folder: each finished point's file ``points/<id>.json`` with the point's
full config and the sweep's provenance (:class:`Provenance`: engine, durations, ``--set``
overrides, config file and its SHA-256), read back on resume (:func:`load_finished`, which
refuses points run with other settings, so one table never mixes them), and the claim on the
folder (:func:`claim_out`)."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netlock import atomic
from netlock.config import Config
from netlock.errors import ConfigError
from netlock.inputs import load_json
from sim.sweep_grid import Point
from sim.sweep_row import check_row


@dataclass(frozen=True)
class Provenance:
    """Where a sweep's settings came from: recorded with every point, compared on resume."""

    config_file: str
    config_sha256: str
    overrides: dict[str, str]

    @classmethod
    def of(cls, path: str | Path, overrides: dict[str, str] | None = None) -> Provenance:
        data = Path(path).read_bytes()
        return cls(str(path), hashlib.sha256(data).hexdigest(), dict(overrides or {}))

    def record(self, config: Config) -> dict[str, Any]:
        return {"engine": config.sim.engine, "duration_s": config.sim.duration_s,
                "warmup_s": config.sim.warmup_s,
                "overrides": " ".join(f"{k}={v}" for k, v in self.overrides.items()),
                "config_file": self.config_file, "config_sha256": self.config_sha256}


def point_path(out_dir: Path, point: Point) -> Path:
    return out_dir / "points" / f"{point.pid}.json"


def load_finished(out_dir: Path, point: Point,
                  provenance: Provenance | None = None) -> dict[str, Any] | None:
    """The stored result of ``point`` when a previous run finished it, else None. A stored
    point run with other settings (config, engine, durations, overrides) is a ConfigError
    naming what differs: resuming it would mix two experiments in one table."""
    path = point_path(out_dir, point)
    if not path.exists():
        return None
    try:
        doc = load_json(path, ConfigError, "sweep point")
    except ConfigError:
        return None
    if not isinstance(doc, dict) or doc.get("values") != _jsonable(point.values):
        return None
    result = doc.get("result")
    if not isinstance(result, dict):
        return None
    stored = doc.get("config")
    if not isinstance(stored, dict):
        raise ConfigError(f"--resume: {path} does not record the settings it was run with "
                          f"(an older sweep); add --force to replace it or use another --out")
    differs = _differences(stored, _jsonable(point.config.to_dict()))
    old = doc.get("provenance") or {}
    if provenance is not None and old.get("config_sha256") not in (
            None, provenance.config_sha256) and not differs:
        differs = [f"config file {old.get('config_file')} (sha256 "
                   f"{str(old.get('config_sha256'))[:12]}) -> {provenance.config_file} "
                   f"(sha256 {provenance.config_sha256[:12]})"]
    if differs:
        raise ConfigError(f"--resume: {out_dir} was swept with other settings: "
                          f"{'; '.join(differs[:3])}{' ...' if len(differs) > 3 else ''}; "
                          f"rerun with the same settings, or add --force to replace it, or "
                          f"use another --out")
    check_row(result, path)
    return result


def _differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """``key: old -> new`` for every dotted key whose value differs."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differences(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key} {a!r} -> {b!r}")
    return out


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(values, default=str))


def save_point(out_dir: Path, point: Point, row: dict[str, Any],
               provenance: Provenance | None = None) -> None:
    doc = {"pid": point.pid, "values": _jsonable(point.values), "seed": point.seed,
           "run": point.run,
           "provenance": provenance.record(point.config) if provenance else None,
           "config": _jsonable(point.config.to_dict()), "result": row}
    atomic.write_text(point_path(out_dir, point), json.dumps(doc, indent=1) + "\n")


def claim_out(out_dir: Path, resume: bool, force: bool) -> None:
    """Make ``out_dir`` ready for a sweep: an earlier sweep's results there are continued
    (``resume``), replaced (``force``: its ``points/`` removed) or refused, never mixed in
    silently."""
    earlier = [name for name in ("points", "results.parquet", "results.csv")
               if (out_dir / name).exists()]
    if not earlier or resume:
        return
    if not force:
        raise ConfigError(f"--out {out_dir}: holds an earlier sweep ({', '.join(earlier)}); "
                          f"add --resume to continue it or --force to replace it")
    shutil.rmtree(out_dir / "points", ignore_errors=True)
