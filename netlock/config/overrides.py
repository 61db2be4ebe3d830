"""Dotted-key overrides (``--set workload.think_time_us=10``) applied to plain config data.

Keys name a field by its path, with ``[i]`` for list items: ``switch.slots``,
``tenants[1].quota_rps``, ``switch.arrays[0].size``. Unknown keys are refused with a
suggestion; values are checked later, with the rest of the config.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import types
import typing
from typing import Any

import yaml

from netlock.config.schema import Config
from netlock.config.typed import (
    Problem,
    config_fields,
    describe,
    field_type,
    hints,
    strip_optional,
    to_plain,
)
from netlock.config.yamlio import deep_merge, parse_yaml_text
from netlock.inputs import yaml_problem

_KEY = re.compile(r"^[A-Za-z_]\w*(?:\[\d+\])?(?:\.[A-Za-z_]\w*(?:\[\d+\])?)*$")
_SEGMENT = re.compile(r"([A-Za-z_]\w*)(?:\[(\d+)\])?")


def path_keys() -> set[str]:
    """Dotted keys holding file paths (resolved relative to where they are set)."""
    keys = set()
    for sec in config_fields(Config):
        tp = hints(Config)[sec.name]
        if dataclasses.is_dataclass(tp):
            keys |= {f"{sec.name}.{f.name}" for f in config_fields(tp) if f.metadata.get("path")}
    return keys


def segments(key: str) -> list[tuple[str, int | None]]:
    """``"tenants[1].quota_rps"`` -> ``[("tenants", 1), ("quota_rps", None)]``."""
    if not _KEY.match(key):
        raise Problem(key, "not a dotted key like workload.think_time_us or tenants[0].clients")
    return [(m.group(1), None if m.group(2) is None else int(m.group(2)))
            for m in _SEGMENT.finditer(key)]


def parse_override(key: str, text: str, root: type = Config) -> Any:
    """The value of ``--set key=text``: YAML for numbers, booleans and lists; text for strings.

    A string key takes the text as typed (``testbed.name=2024`` stays a string); ``null``,
    ``~`` or nothing clear an optional one. File paths are made absolute from the working
    directory, where the user typed them. ``root`` is the schema the key belongs to.
    """
    tp = field_type(root, segments(key), key)
    optional = typing.get_origin(tp) in (typing.Union, types.UnionType)
    if strip_optional(tp) is str and not (optional and text in ("null", "~", "")):
        return os.path.abspath(text) if key in path_keys() and text else text
    try:
        return parse_yaml_text(text)
    except yaml.YAMLError as exc:
        raise Problem(key, f"cannot read {text!r}: {yaml_problem(exc)}") from None


def apply_overrides(doc: dict[str, Any], values: dict[str, Any],
                    root: type = Config) -> dict[str, Any]:
    """A copy of ``doc`` with each dotted key set; a mapping value merges into a section.
    ``root`` is the schema ``doc`` follows."""
    out = copy.deepcopy(doc)
    for key, value in values.items():
        _set_key(out, key, value, root)
    return out


def _set_key(doc: dict[str, Any], key: str, value: Any, root: type) -> None:
    segs = segments(key)
    field_type(root, segs, key)
    cls: Any = root
    node: dict[str, Any] = doc
    walked = ""
    for i, (name, index) in enumerate(segs):
        last = i == len(segs) - 1
        fld = next(f for f in config_fields(cls) if f.name == name)
        tp = strip_optional(hints(cls)[name])
        walked = f"{walked}.{name}" if walked else name
        if last and index is None:
            node[name] = _merged(node.get(name), value)
            return
        if name not in node:
            node[name] = _default(fld) if index is not None else {}
        child = node[name]
        if index is None:
            if not isinstance(child, dict):
                raise Problem(key, f"{walked} is {describe(child)}, not a section")
            node, cls = child, tp
            continue
        if not isinstance(child, list) or index >= len(child):
            size = len(child) if isinstance(child, list) else 0
            raise Problem(key, f"index {index} is out of range: {walked} has {size} item(s)")
        walked = f"{walked}[{index}]"
        if last:
            child[index] = _merged(child[index], value)
            return
        if not isinstance(child[index], dict):
            raise Problem(key, f"{walked} is {describe(child[index])}, not a section")
        node, cls = child[index], typing.get_args(tp)[0]


def _merged(old: Any, new: Any) -> Any:
    return deep_merge(old, new) if isinstance(old, dict) and isinstance(new, dict) else new


def _default(fld: dataclasses.Field) -> Any:
    if fld.default_factory is not dataclasses.MISSING:
        return to_plain(fld.default_factory())
    return to_plain(fld.default)
