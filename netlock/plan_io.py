"""Reading and writing plans: one YAML file, plus a Parquet side file for large plans.

The YAML records the format version, geometry, policy, inputs, partition and summary. Up to
``INLINE_ROWS`` switch entries are inlined; beyond that they go to a side file named after the
whole plan file name (``p.yaml`` -> ``p.yaml.entries.parquet``, so ``p.yaml`` and ``p.yml``
never share one), recorded under ``entries_file`` with the SHA-256 of its bytes under
``entries_sha256``: a plan is one unit, and a side file changed or replaced since is refused.
Both files are written atomically and the side file first, so a plan YAML never points at a
missing or partial side file. ``entries_file`` is a bare file name in the plan's folder; a
path (absolute, with a folder or ``..``) is refused. Plans written before the hash was
recorded are still read.
"""

from __future__ import annotations

import hashlib
import io
import math
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
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

if TYPE_CHECKING:
    import pandas as pd

INLINE_ROWS = 1000
_ENTRY_INT_COLUMNS = ("lock_id", "slots", "left", "right", "priority", "contention")


def plan_to_dict(plan: Plan, entries_file: str | None = None,
                 entries_sha256: str | None = None) -> dict:
    """The YAML document of ``plan``; entries inline unless ``entries_file`` (a name beside
    the plan, whose bytes hash to ``entries_sha256``) is given."""
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
        if entries_sha256 is not None:
            doc["entries_sha256"] = entries_sha256
    else:
        doc["entries"] = plan.entries.rows()
    return doc


def entries_frame(entries: SwitchEntries) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({c: getattr(entries, c) for c in SwitchEntries.COLUMNS})


def save_plan(plan: Plan, path: str | Path) -> None:
    """Write ``plan`` to ``path`` (YAML), with a Parquet side file when it is large."""
    path = Path(path)
    entries_file = digest = None
    if len(plan.entries) > INLINE_ROWS:
        side = entries_path(path)
        data = io.BytesIO()
        entries_frame(plan.entries).to_parquet(data, index=False)
        digest = hashlib.sha256(data.getvalue()).hexdigest()
        atomic.write_with(side, lambda tmp: tmp.write_bytes(data.getvalue()))
        entries_file = side.name
    text = yaml.safe_dump(plan_to_dict(plan, entries_file, digest), sort_keys=False)
    atomic.write_text(path, text)


def entries_path(path: str | Path) -> Path:
    """The side file :func:`save_plan` writes for a large plan at ``path``."""
    path = Path(path)
    return path.with_name(path.name + ".entries.parquet")


def _side_entries(doc: dict, source: str, base_dir: Path) -> SwitchEntries:
    """The entries of the side file ``doc`` names: a bare name in ``base_dir``, whose bytes
    match ``entries_sha256`` when the plan records it."""
    name = doc["entries_file"]
    if (not isinstance(name, str) or not name or name in (".", "..") or "/" in name
            or "\\" in name or "\0" in name):
        raise PlanError(f"{source}: entries_file: {str(name)[:80]!r} is not a file name beside "
                        f"the plan (no folders, no '..')")
    side = base_dir / name
    input_file(side, PlanError, "plan entries file")
    want = doc.get("entries_sha256")
    if want is not None and not (isinstance(want, str) and len(want) == 64):
        raise PlanError(f"{source}: entries_sha256: expected 64 hex digits")
    try:
        data = side.read_bytes()
    except OSError as exc:
        raise PlanError(f"{source}: entries_file: cannot read {side}: "
                        f"{exc.strerror or exc}") from None
    if want is not None and hashlib.sha256(data).hexdigest() != want.lower():
        raise PlanError(f"{source}: entries_file: {side} is not the side file this plan was "
                        f"saved with (its SHA-256 differs from entries_sha256)")
    import pandas as pd

    try:
        frame = pd.read_parquet(io.BytesIO(data))
    except (OSError, ValueError) as exc:
        raise PlanError(f"{source}: entries_file: cannot read {side}: {exc}") from None
    return _entries_from_frame(frame, str(side))


def _entries_from_frame(frame: pd.DataFrame, source: str) -> SwitchEntries:
    import pandas as pd

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
        entries = _side_entries(doc, source, base_dir or Path("."))
    else:
        rows = doc.get("entries") or []
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise PlanError(f"{source}: entries: expected a list of mappings")
        import pandas as pd

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
