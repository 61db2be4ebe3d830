"""Saving and restoring an emulated switch (``--state FILE``), atomically.

The file is one JSON document: the profile name, pipes and geometry, every register array
and match table of the program, and the data plane's snapshot. Arrays are stored as
zlib-compressed, base64-encoded int64 bytes, so a 100K-slot switch stays small and quick.

A file that cannot describe the switch is refused on load with one line: its ``sha256`` (of
the rest of the document) must match, so a damaged or hand-edited file is caught (files saved
before the checksum was recorded are still read); every array must have the shape this
program gives it and inflate to exactly that many bytes (no compressed bombs); and the data
plane must serve exactly the locks in the program's lock table, at their registers' bounds.
Every field is checked against the program too (a matching checksum only says the file is
as its writer left it): table entries' actions, parameters, key widths and bits, the slot
arrays against the profile's slot registers, ``window_s``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import zlib
from pathlib import Path

import numpy as np

from hwrunner.bfrt_info import Schema, Table
from hwrunner.emulator import EmulatedSwitch
from hwrunner.profile import SwitchProfile
from netlock import atomic
from netlock.errors import TargetError
from netlock.geometry import SwitchGeometry
from netlock.inputs import load_json

FORMAT = "netlock-emulated-switch"
VERSION = 1
MAX_PARAMS = 16
"""Action parameters an entry may have (the programs' actions take one to three)."""


def _encode(arr: np.ndarray) -> dict:
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    return {"shape": list(arr.shape),
            "zlib": base64.b64encode(zlib.compress(arr.tobytes(), 1)).decode("ascii")}


def _decode(doc: dict, where: str, max_items: int) -> np.ndarray:
    """The array ``doc`` encodes, refused (ValueError naming ``where``) when its declared shape
    holds more than ``max_items`` values or its bytes do not inflate to exactly that shape."""
    shape = doc["shape"]
    if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)):
        raise ValueError(f"{where}: shape {str(shape)[:40]} is not a list of sizes")
    items = math.prod(shape)
    if items > max_items:
        raise ValueError(f"{where}: shape {shape} holds {items} values, more than the "
                         f"{max_items} this program has room for")
    size = items * 8
    text = doc["zlib"]
    if not isinstance(text, str) or len(text) > 2 * size + 1024:
        raise ValueError(f"{where}: encoded data larger than its shape {shape} needs")
    inflate = zlib.decompressobj()
    raw = inflate.decompress(base64.b64decode(text, validate=True), size + 1)
    if len(raw) != size or inflate.unconsumed_tail:
        raise ValueError(f"{where}: data does not inflate to its shape {shape}")
    return np.frombuffer(raw, dtype=np.int64).reshape(shape).copy()


def _digest(doc: dict) -> str:
    """SHA-256 of the document without its ``sha256`` field (keys sorted, compact)."""
    body = {k: v for k, v in doc.items() if k != "sha256"}
    text = json.dumps(body, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


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
    """Write the switch's full state to ``path`` (atomically: all of it or nothing), with
    its checksum."""
    doc = state_to_dict(switch)
    doc["sha256"] = _digest(doc)
    atomic.write_text(path, json.dumps(doc, separators=(",", ":")))


def _restore(switch: EmulatedSwitch, doc: dict, source: str) -> None:
    program = switch.program
    for table, fields in doc["registers"].items():
        if table not in program.registers:
            raise TargetError(f"{source}: register {table} is not in this program")
        for field, enc in fields.items():
            have = program.registers[table].get(field)
            if have is None:
                raise TargetError(f"{source}: register {table}.{field}: no such field, does "
                                  f"not fit this program")
            arr = _decode(enc, f"register {table}.{field}", have.size)
            if have.shape != arr.shape:
                raise TargetError(f"{source}: register {table}.{field}: saved shape "
                                  f"{tuple(arr.shape)} does not fit this program")
            have[...] = arr
    for table, enc in doc["tables"].items():
        if table not in program.entries:
            raise TargetError(f"{source}: table {table} is not in this program")
        program.entries[table] = _entries(program.table(table), enc, f"{source}: table {table}")
    room = {k: v.size for k, v in switch.dataplane.snapshot().items()}
    try:
        switch.dataplane.restore({k: _decode(v, f"dataplane.{k}", room.get(k, 0))
                                  for k, v in doc["dataplane"].items()})
    except Exception as exc:
        raise TargetError(f"{source}: dataplane: {exc}") from None
    switch.rebuild_index()
    problems = switch.dataplane_problems()
    if problems:
        raise TargetError(f"{source}: damaged: the data plane and the lock table disagree: "
                          f"{problems[0]}")
    switch.window_s = _window(doc.get("window_s"), source)


def _entries(table: Table, enc: dict, where: str) -> dict:
    """The match table's entries ``enc`` holds, each checked against the program's table:
    as many keys, actions and parameter rows, keys of the table's width and no key twice,
    every action one of the table's with at least the parameters it takes, every value
    within its field's bits (TargetError naming ``where`` and the field)."""
    rows = table.size
    width = sum(2 if f.match_type in ("Ternary", "Range") else 1 for f in table.keys)
    names = enc["actions"]
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise TargetError(f"{where}.actions: not a list of action names")
    actions = dict(table.actions)
    for name in names:
        if name not in actions:
            raise TargetError(f"{where}.actions: {name[:80]!r} is not an action of this table")
    keys = _decode(enc["keys"], f"{where}.keys", rows * width)
    action = _decode(enc["action"], f"{where}.action", rows)
    params = _decode(enc["params"], f"{where}.params", rows * MAX_PARAMS)
    n = len(action)
    if n == 0 and keys.size == 0 and params.size == 0:
        return {}
    if keys.shape != (n, width):
        raise TargetError(f"{where}.keys: shape {list(keys.shape)}, expected [{n}, {width}] "
                          f"({n} entries of {width} key values)")
    if params.ndim != 2 or params.shape[0] != n:
        raise TargetError(f"{where}.params: shape {list(params.shape)}, expected {n} rows")
    if n and (action.min() < 0 or action.max() >= len(names)):
        bad = int(np.flatnonzero((action < 0) | (action >= len(names)))[0])
        raise TargetError(f"{where}.action: entry {bad}: action index {int(action[bad])} is "
                          f"outside 0..{len(names) - 1}")
    fields = [(f.name, f.width) for f in table.keys
              for _ in range(2 if f.match_type in ("Ternary", "Range") else 1)]
    _in_bits(keys, fields, f"{where}.keys")
    count = [len(actions[name]) for name in names]
    for i, name in enumerate(names):
        used = np.flatnonzero(action == i)
        if not len(used):
            continue
        if count[i] > params.shape[1]:
            raise TargetError(f"{where}.params: entry {int(used[0])}: action {name} takes "
                              f"{count[i]} parameters, the file holds {params.shape[1]}")
        _in_bits(params[used, :count[i]], [(p.name, p.width) for p in actions[name]],
                 f"{where}.params", used)
    entries = {tuple(k): (names[a], tuple(p[:count[a]]))
               for k, a, p in zip(keys.tolist(), action.tolist(), params.tolist(), strict=True)}
    if len(entries) != n:
        raise TargetError(f"{where}.keys: an entry's key appears twice")
    return entries


def _in_bits(values: np.ndarray, fields: list[tuple[str, int]], where: str,
             rows: np.ndarray | None = None) -> None:
    """Each column of ``values`` within 0..2^bits-1 of its ``(name, bits)`` field."""
    for col, (name, bits) in enumerate(fields):
        column = values[:, col]
        bad = np.flatnonzero((column < 0) | (column >= (1 << min(bits, 63))))
        if len(bad):
            entry = int(bad[0] if rows is None else rows[bad[0]])
            raise TargetError(f"{where}: entry {entry}: {name} = {int(column[bad[0]])} does "
                              f"not fit its {bits} bits")


def _geometry(doc: object, profile: SwitchProfile, where: str) -> SwitchGeometry:
    """The saved slot arrays, refused unless they are integers that this profile's slot
    registers can hold (so a geometry of 10^12 slots is a line, not a MemoryError)."""
    if not (isinstance(doc, dict) and isinstance(doc.get("arrays"), list)
            and all(isinstance(a, dict) for a in doc["arrays"])):
        raise TargetError(f"{where}: geometry: not a mapping with a list of arrays")
    values = [doc.get("stages", 12), doc.get("priorities", 1)]
    values += [a.get(k) for a in doc["arrays"] for k in ("stage", "size")]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise TargetError(f"{where}: geometry: stages, priorities and each array's stage and "
                          f"size must be integers")
    room = profile.slot_capacity - profile.slot_base
    total = sum(a["size"] for a in doc["arrays"])
    if total > room:
        raise TargetError(f"{where}: geometry: {total} slots, more than the {room} this "
                          f"profile's slot registers hold")
    try:
        return SwitchGeometry.from_dict(doc)
    except ValueError as exc:
        raise TargetError(f"{where}: geometry: {exc}") from None


def _window(value: object, where: str) -> float | None:
    """Seconds of replayed traffic the counters hold: None, or a finite number >= 0."""
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or value < 0):
        raise TargetError(f"{where}: window_s: {str(value)[:40]!r} is not a number of "
                          f"seconds >= 0")
    return float(value)


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
    if "sha256" in doc and doc["sha256"] != _digest(doc):
        raise TargetError(f"{path}: damaged: its contents do not match its sha256 checksum")
    if doc.get("profile") != profile.name:
        raise TargetError(f"{path}: saved with switch profile {str(doc.get('profile'))[:80]!r}, "
                          f"not {profile.name!r}")
    try:
        geometry = _geometry(doc.get("geometry"), profile, str(path))
        switch = EmulatedSwitch(profile, geometry, schema)
        if doc["pipes"] != switch.pipes:
            raise TargetError(f"{path}: pipes: saved {doc['pipes']}, profile says {switch.pipes}")
        _restore(switch, doc, str(path))
    except (AttributeError, KeyError, TypeError, ValueError, zlib.error) as exc:
        raise TargetError(f"{path}: corrupt emulator state ({exc})") from None
    return switch
