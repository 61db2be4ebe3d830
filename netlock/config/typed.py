"""Build frozen dataclasses from plain YAML data, and turn them back into plain data.

This module knows nothing about NetLock: it walks the type hints of a dataclass tree and
checks every value against them. Supported field types are ``int``, ``float`` (an ``int``
is accepted and widened), ``str``, ``bool``, ``X | None``, nested dataclasses (sections)
and ``tuple[X, ...]`` (YAML lists). Field metadata adds checks and documentation:

- ``min`` / ``max``: inclusive bounds; ``above`` / ``below``: exclusive bounds;
- ``choices``: the allowed values;
- ``help``: what the field means, with its unit (shown by ``netlock config keys``).

A problem is raised as :class:`Problem` carrying the dotted path (``switch.arrays[1].size``)
and what is wrong; the caller decides which file or ``--set`` to blame.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, Field, dataclass
from functools import cache
from typing import Any, Union


class Problem(Exception):
    """One thing wrong with a value at ``path`` (dotted, with ``[i]`` for list items)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


@dataclass(frozen=True)
class KeyInfo:
    """One documented config key: its dotted path, type, default and help text."""

    path: str
    type: str
    default: Any
    help: str
    required: bool = False


def join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def config_fields(cls: type) -> tuple[Field, ...]:
    """The fields a config file may set (``init=False`` fields are bookkeeping)."""
    return tuple(f for f in dataclasses.fields(cls) if f.init)


@cache
def hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def suggestion(word: str, options: typing.Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def build(cls: type, data: Any, path: str = "") -> Any:
    """Check ``data`` (plain YAML values) against dataclass ``cls`` and construct it."""
    if not isinstance(data, Mapping):
        raise Problem(path, f"must be a mapping of keys, got {describe(data)}")
    known = {f.name: f for f in config_fields(cls)}
    for key in data:
        if not isinstance(key, str) or key not in known:
            raise Problem(join(path, str(key)),
                          f"unknown key{suggestion(str(key), known)}")
    kwargs = {}
    for name, fld in known.items():
        if name in data:
            kwargs[name] = convert(hints(cls)[name], data[name], join(path, name), fld)
        elif fld.default is MISSING and fld.default_factory is MISSING:
            raise Problem(join(path, name), "missing (required)")
    return cls(**kwargs)


def convert(tp: Any, value: Any, path: str, fld: Field | None = None) -> Any:
    """Check one value against type ``tp`` (and the field's metadata) and return it typed."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return convert(args[0], value, path, fld)
    if dataclasses.is_dataclass(tp):
        return build(tp, value, path)
    if origin is tuple:
        item_type = typing.get_args(tp)[0]
        if not isinstance(value, list | tuple):
            raise Problem(path, f"must be a list, got {describe(value)}")
        return tuple(convert(item_type, v, f"{path}[{i}]") for i, v in enumerate(value))
    typed = _scalar(tp, value, path)
    if fld is not None:
        _check_metadata(fld.metadata, value, path)
    return typed


def _scalar(tp: type, value: Any, path: str) -> Any:
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise Problem(path, f"must be true or false, got {describe(value)}")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise Problem(path, f"must be an integer, got {describe(value)}")
    if tp is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:
                number = math.inf
            if not math.isfinite(number):
                raise Problem(path, f"must be a finite number, got {describe(value)}")
            return number
        raise Problem(path, f"must be a number, got {describe(value)}")
    if tp is str:
        if isinstance(value, str):
            return value
        raise Problem(path, f"must be a string, got {describe(value)}")
    raise TypeError(f"unsupported config field type {tp!r} at {path}")


def _check_metadata(meta: Mapping[str, Any], value: Any, path: str) -> None:
    choices = meta.get("choices")
    if choices is not None and value not in choices:
        listed = ", ".join(str(c) for c in choices)
        hint = suggestion(str(value), [str(c) for c in choices])
        raise Problem(path, f"must be one of {listed}; got {value!r}{hint}")
    bounds = (("min", ">=", lambda v, b: v >= b), ("max", "<=", lambda v, b: v <= b),
              ("above", ">", lambda v, b: v > b), ("below", "<", lambda v, b: v < b))
    for key, sign, ok in bounds:
        if key in meta and not ok(value, meta[key]):
            raise Problem(path, f"must be {sign} {_number(meta[key])}, got {value}")


def _number(value: float) -> str:
    """A bound as people write it: ``0`` rather than ``0.0``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def describe(value: Any) -> str:
    """A value as a user wrote it, with its YAML kind: ``'abc' (string)``."""
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list",
            dict: "mapping", type(None): "null"}.get(type(value), type(value).__name__)
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{shown} ({kind})"


def to_plain(obj: Any) -> Any:
    """A dataclass tree as plain dicts, lists and scalars (YAML- and JSON-dumpable)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in config_fields(type(obj))}
    if isinstance(obj, tuple | list):
        return [to_plain(v) for v in obj]
    return obj


def field_type(cls: type, segments: list[tuple[str, int | None]], path: str) -> Any:
    """The declared type at a dotted key (``[("switch", None), ("arrays", 0), ...]``).

    Raises :class:`Problem` naming the first segment that is not a key of its section.
    """
    tp: Any = cls
    walked = ""
    for name, index in segments:
        tp = strip_optional(tp)
        if not dataclasses.is_dataclass(tp):
            raise Problem(path, f"{walked} is a value, it has no key {name!r}")
        known = {f.name for f in config_fields(tp)}
        if name not in known:
            where = f"in {walked}" if walked else "at the top level"
            raise Problem(path, f"unknown key {name!r} {where}{suggestion(name, known)}")
        tp = hints(tp)[name]
        walked = join(walked, name)
        if index is not None:
            if typing.get_origin(tp) is not tuple:
                raise Problem(path, f"{walked} is not a list, it cannot be indexed")
            tp = typing.get_args(tp)[0]
            walked = f"{walked}[{index}]"
    return tp


def strip_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (Union, types.UnionType):
        return next(a for a in typing.get_args(tp) if a is not type(None))
    return tp


def type_name(tp: Any) -> str:
    if typing.get_origin(tp) in (Union, types.UnionType):
        return f"{type_name(strip_optional(tp))} or null"
    if typing.get_origin(tp) is tuple:
        return f"list of {type_name(typing.get_args(tp)[0])}"
    if dataclasses.is_dataclass(tp):
        return "section"
    return {bool: "bool", int: "int", float: "float", str: "str"}.get(tp, str(tp))


def walk_keys(cls: type, path: str = "") -> Iterator[KeyInfo]:
    """Every documented key under ``cls``, depth first, in declaration order."""
    for fld in config_fields(cls):
        tp = hints(cls)[fld.name]
        key = join(path, fld.name)
        if fld.default is not MISSING:
            default = to_plain(fld.default)
        elif fld.default_factory is not MISSING:
            default = to_plain(fld.default_factory())
        else:
            default = None
        required = fld.default is MISSING and fld.default_factory is MISSING
        inner = typing.get_args(tp)[0] if typing.get_origin(tp) is tuple else tp
        help_text = fld.metadata.get("help", "")
        if dataclasses.is_dataclass(inner):
            shown = "section" if inner is tp else type_name(tp)
            yield KeyInfo(key, shown, None if inner is tp else default, help_text)
            yield from walk_keys(inner, key if inner is tp else f"{key}[]")
        else:
            yield KeyInfo(key, type_name(tp), default, help_text, required)
