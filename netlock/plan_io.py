"""Reading and writing plans: one YAML file, plus a Parquet side file for large plans.

The YAML records the format version, geometry, policy, inputs, partition and summary. Up to
``INLINE_ROWS`` switch entries are inlined; beyond that they go to ``<plan>.entries.parquet``,
named (relative to the YAML) under ``entries_file``. Both files are written atomically and
the side file first, so a plan YAML never points at a missing or partial side file.
"""

from __future__ import annotations

import math
from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from netlock import atomic
from netlock.errors import PlanError
from netlock.geometry import SwitchGeometry
from netlock.inputs import input_file, load_yaml
from netlock.plan import (
    PLAN_FORMAT_VERSION,
    PartitionRange,
    Plan,
    PlanInputs,
    PlanSummary,
    SwitchEntries,
)

INLINE_ROWS = 1000
_ENTRY_INT_COLUMNS = ("lock_id", "slots", "left", "right", "priority", "contention")


def plan_to_dict(plan: Plan, entries_file: str | None = None) -> dict:
    """The YAML document of ``plan``; entries inline unless ``entries_file`` is given."""
    doc: dict = {
        "version": plan.version,
        "policy": plan.policy,
        "geometry": plan.geometry.to_dict(),
        "inputs": {
            "slots": plan.inputs.slots,
            "server_rate_rps": float(plan.inputs.server_rate_rps),
            "trace_digest": plan.inputs.trace_digest,
            "contention": plan.inputs.contention,
            "hold_time_us": plan.inputs.hold_time_us,
            "lock_group": plan.inputs.lock_group,
        },
        "summary": plan.summary.to_dict(),
        "partition": [{"lo": p.lo, "hi": p.hi, "server": p.server} for p in plan.partition],
    }
    if entries_file is not None:
        doc["entries_file"] = entries_file
    else:
        doc["entries"] = plan.entries.rows()
    return doc


def entries_frame(entries: SwitchEntries) -> pd.DataFrame:
    return pd.DataFrame({c: getattr(entries, c) for c in SwitchEntries.COLUMNS})


def save_plan(plan: Plan, path: str | Path) -> None:
    """Write ``plan`` to ``path`` (YAML), with a Parquet side file when it is large."""
    path = Path(path)
    entries_file = None
    if len(plan.entries) > INLINE_ROWS:
        side = path.with_name(path.stem + ".entries.parquet")
        frame = entries_frame(plan.entries)
        atomic.write_with(side, lambda tmp: frame.to_parquet(tmp, index=False))
        entries_file = side.name
    text = yaml.safe_dump(plan_to_dict(plan, entries_file), sort_keys=False)
    atomic.write_text(path, text)


def _entries_from_frame(frame: pd.DataFrame, source: str) -> SwitchEntries:
    missing = [c for c in ("lock_id", "slots", "left", "right") if c not in frame.columns]
    if missing:
        raise PlanError(f"{source}: entries: missing column {missing[0]!r}")
    cols = {}
    for c in SwitchEntries.COLUMNS:
        if c not in frame.columns:
            continue
        values = pd.to_numeric(frame[c], errors="coerce")
        if c == "rate_rps":
            given = frame[c].notna().to_numpy()
            number = values.to_numpy(dtype=np.float64)
            bad = given & ~(np.isfinite(number) & (number >= 0))
            if bad.any():
                row = int(np.argmax(bad))
                raise PlanError(f"{source}: row {row}: entries.rate_rps: not a finite "
                                f"number >= 0: {frame[c].iloc[row]!r}")
        bad = values.isna().to_numpy()
        if c in _ENTRY_INT_COLUMNS:
            bad = bad | (values.fillna(0) % 1 != 0).to_numpy()
        if c != "rate_rps" and bad.any():
            raise PlanError(f"{source}: row {int(np.argmax(bad))}: entries.{c}: not an integer")
        cols[c] = values.to_numpy(dtype=np.float64 if c == "rate_rps" else np.int64)
    n = len(frame)
    cols.setdefault("priority", np.zeros(n, dtype=np.int64))
    return SwitchEntries(**cols)


def _check_numbers(section: object, where: str) -> None:
    """Every int or float field of a plan section (:class:`PlanInputs`,
    :class:`PlanSummary`) holds a finite number, or None where the field allows it."""
    for fld in fields(section):  # type: ignore[arg-type]
        kind = str(fld.type)
        if not kind.startswith(("int", "float")):
            continue
        value = getattr(section, fld.name)
        if value is None and "None" in kind:
            continue
        whole = kind.startswith("int")
        ok = (isinstance(value, int) if whole else isinstance(value, int | float)
              ) and not isinstance(value, bool) and math.isfinite(value)
        if not ok:
            wanted = "an integer" if whole else "a finite number"
            raise PlanError(f"{where}.{fld.name}: must be {wanted}, got {value!r}")


def plan_from_dict(doc: object, source: str, base_dir: Path | None = None) -> Plan:
    """Validate a YAML document and build the :class:`Plan`; errors name ``source``."""
    if not isinstance(doc, dict):
        raise PlanError(f"{source}: not a plan (expected a YAML mapping)")
    for key in ("version", "policy", "geometry", "inputs", "summary"):
        if key not in doc:
            raise PlanError(f"{source}: {key}: missing")
    if doc["version"] != PLAN_FORMAT_VERSION:
        raise PlanError(f"{source}: version: unsupported plan format {doc['version']!r} "
                        f"(this toolkit reads version {PLAN_FORMAT_VERSION})")
    try:
        geometry = SwitchGeometry.from_dict(doc["geometry"])
    except (KeyError, TypeError, ValueError) as exc:
        raise PlanError(f"{source}: geometry: {exc}") from None
    try:
        inputs = PlanInputs(**doc["inputs"])
        summary = PlanSummary(**doc["summary"])
        partition = tuple(PartitionRange(int(p["lo"]), int(p["hi"]), int(p["server"]))
                          for p in doc.get("partition") or [])
    except (KeyError, TypeError, ValueError) as exc:
        raise PlanError(f"{source}: inputs/summary/partition: {exc}") from None
    for name, section in (("inputs", inputs), ("summary", summary)):
        _check_numbers(section, f"{source}: {name}")
    if "entries_file" in doc:
        side = (base_dir or Path(".")) / str(doc["entries_file"])
        input_file(side, PlanError, "plan entries file")
        try:
            frame = pd.read_parquet(side)
        except (OSError, ValueError) as exc:
            raise PlanError(f"{source}: entries_file: cannot read {side}: {exc}") from None
        entries = _entries_from_frame(frame, str(side))
    else:
        rows = doc.get("entries") or []
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise PlanError(f"{source}: entries: expected a list of mappings")
        frame = pd.DataFrame(rows, columns=None if rows else list(SwitchEntries.COLUMNS))
        entries = _entries_from_frame(frame, source) if rows else SwitchEntries.empty()
    try:
        plan = Plan(geometry=geometry, policy=str(doc["policy"]), inputs=inputs, entries=entries,
                    partition=partition, summary=summary)
    except ValueError as exc:
        raise PlanError(f"{source}: {exc}") from None
    found = plan.problem()
    if found:
        row, msg = found
        prefix = f"{source}: row {row}" if row is not None else source
        raise PlanError(f"{prefix}: {msg}")
    return plan


def load_plan(path: str | Path) -> Plan:
    """Read and validate a plan file; any problem is a one-line :class:`PlanError`."""
    path = Path(path)
    doc = load_yaml(path, PlanError, "plan")
    return plan_from_dict(doc, str(path), path.parent)
