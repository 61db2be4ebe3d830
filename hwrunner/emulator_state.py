"""Saving and restoring an emulated switch (``--state FILE``), atomically.

The file is one JSON document: the profile name, pipes and geometry, every register array
and match table of the program, and the data plane's snapshot. Arrays are stored as
zlib-compressed, base64-encoded int64 bytes, so a 100K-slot switch stays small and quick.
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import numpy as np

from hwrunner.emulator import EmulatedSwitch
from hwrunner.profile import SwitchProfile
from hwrunner.schema import Schema
from netlock import atomic
from netlock.errors import TargetError
from netlock.geometry import SwitchGeometry
from netlock.inputs import load_json

FORMAT = "netlock-emulated-switch"
VERSION = 1


def _encode(arr: np.ndarray) -> dict:
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    return {"shape": list(arr.shape),
            "zlib": base64.b64encode(zlib.compress(arr.tobytes(), 1)).decode("ascii")}


def _decode(doc: dict) -> np.ndarray:
    raw = zlib.decompress(base64.b64decode(doc["zlib"]))
    return np.frombuffer(raw, dtype=np.int64).reshape(doc["shape"]).copy()


def state_to_dict(switch: EmulatedSwitch) -> dict:
    program = switch.program
    tables = {}
    for name, rows in program.entries.items():
        items = list(rows.items())
        actions = sorted({a for _, (a, _) in items})
        width = len(items[0][0]) if items else 0
        params = max((len(p) for _, (_, p) in items), default=0)
        tables[name] = {
            "keys": _encode(np.array([k for k, _ in items], dtype=np.int64)
                            .reshape(len(items), width)),
            "actions": actions,
            "action": _encode(np.array([actions.index(a) for _, (a, _) in items])),
            "params": _encode(np.array([list(p) + [0] * (params - len(p))
                                        for _, (_, p) in items], dtype=np.int64)
                              .reshape(len(items), params)),
        }
    return {
        "format": FORMAT, "version": VERSION, "profile": switch.profile.name,
        "pipes": switch.pipes, "geometry": switch.geometry.to_dict(),
        "registers": {t: {f: _encode(a) for f, a in fields.items()}
                      for t, fields in program.registers.items()},
        "tables": tables,
        "dataplane": {k: _encode(v) for k, v in switch.dataplane.snapshot().items()},
        "window_s": switch.window_s,
    }


def save_state(switch: EmulatedSwitch, path: str | Path) -> None:
    """Write the switch's full state to ``path`` (atomically: all of it or nothing)."""
    text = json.dumps(state_to_dict(switch), separators=(",", ":"))
    atomic.write_text(path, text)


def _restore(switch: EmulatedSwitch, doc: dict, source: str) -> None:
    program = switch.program
    for table, fields in doc["registers"].items():
        if table not in program.registers:
            raise TargetError(f"{source}: register {table} is not in this program")
        for field, enc in fields.items():
            have = program.registers[table].get(field)
            arr = _decode(enc)
            if have is None or have.shape != arr.shape:
                raise TargetError(f"{source}: register {table}.{field}: saved shape "
                                  f"{tuple(arr.shape)} does not fit this program")
            have[...] = arr
    for table, enc in doc["tables"].items():
        if table not in program.entries:
            raise TargetError(f"{source}: table {table} is not in this program")
        keys = _decode(enc["keys"])
        action = _decode(enc["action"])
        params = _decode(enc["params"])
        count = {a: len(program.table(table).action(a)[1]) for a in enc["actions"]}
        program.entries[table] = {
            tuple(k): (enc["actions"][a], tuple(p[:count[enc["actions"][a]]]))
            for k, a, p in zip(keys.tolist(), action.tolist(), params.tolist(), strict=True)}
    try:
        switch.dataplane.restore({k: _decode(v) for k, v in doc["dataplane"].items()})
    except Exception as exc:
        raise TargetError(f"{source}: dataplane: {exc}") from None
    switch.rebuild_index()
    window = doc.get("window_s")
    switch.window_s = float(window) if isinstance(window, (int, float)) else None


def saved_profile(path: str | Path) -> str | None:
    """The name of the profile a state file was saved with (None: no readable state)."""
    try:
        doc = load_json(path, TargetError, "emulator state")
    except TargetError:
        return None
    name = doc.get("profile") if isinstance(doc, dict) else None
    return name if isinstance(name, str) else None


def load_state(path: str | Path, profile: SwitchProfile,
               schema: Schema | None = None) -> EmulatedSwitch:
    """The switch saved in ``path``; it must have been saved with the same profile."""
    path = Path(path)
    doc = load_json(path, TargetError, "emulator state")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TargetError(f"{path}: not an emulated-switch state file")
    if doc.get("version") != VERSION:
        raise TargetError(f"{path}: version: unsupported state version {doc.get('version')!r}")
    if doc.get("profile") != profile.name:
        raise TargetError(f"{path}: saved with switch profile {doc.get('profile')!r}, "
                          f"not {profile.name!r}")
    try:
        geometry = SwitchGeometry.from_dict(doc["geometry"])
        switch = EmulatedSwitch(profile, geometry, schema)
        if doc["pipes"] != switch.pipes:
            raise TargetError(f"{path}: pipes: saved {doc['pipes']}, profile says {switch.pipes}")
        _restore(switch, doc, str(path))
    except (AttributeError, KeyError, TypeError, ValueError, zlib.error) as exc:
        raise TargetError(f"{path}: corrupt emulator state ({exc})") from None
    return switch
