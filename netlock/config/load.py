"""Load, override and print configs; every problem becomes one ``ConfigError`` line.

The line is ``<file>: <dotted.path>: <what is wrong>``. The file named is the one that set
the offending key (an included base, the experiment file, or the experiment file with
``--set <key>`` when an override set it), found by remembering which layer wrote each key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from netlock.config.cross_field import first_problem
from netlock.config.overrides import apply_overrides, parse_override, path_keys
from netlock.config.schema import Config
from netlock.config.typed import Problem, build
from netlock.config.yamlio import (
    INCLUDE_KEY,
    Layer,
    deep_merge,
    dump_plain,
    leaf_paths,
    read_layers,
)
from netlock.errors import ConfigError


class _Blame:
    """Which source (a file, or an override label such as ``--set``) last set each key."""

    def __init__(self, default: str) -> None:
        self.default = default
        self.by_path: dict[str, tuple[str, bool]] = {}

    def record(self, source: str, paths: list[str], override: bool = False) -> None:
        for path in paths:
            self.by_path[path] = (source, override)

    def error(self, problem: Problem) -> ConfigError:
        """The one-line error for ``problem``, naming whoever set the key (or a parent)."""
        path = problem.path
        source, override = self.default, False
        for cut in range(len(path), 0, -1):
            if (cut == len(path) or path[cut] in ".[") and path[:cut] in self.by_path:
                source, override = self.by_path[path[:cut]]
                break
        if override:
            return ConfigError(f"{self.default}: {source} {path}: {problem.message}")
        return ConfigError(f"{source}: {path}: {problem.message}" if path
                           else f"{source}: {problem.message}")


def _checked(doc: Mapping[str, Any], blame: _Blame) -> Config:
    try:
        cfg = build(Config, doc)
        problem = first_problem(cfg)
        if problem is not None:
            raise problem
    except Problem as problem:
        raise blame.error(problem) from None
    object.__setattr__(cfg, "source", blame.default)
    return cfg


def _resolve_paths(layer: Layer) -> dict[str, Any]:
    doc = dict(layer.doc)
    base = os.path.dirname(layer.source)
    for key in path_keys():
        section, name = key.split(".")
        sec = doc.get(section)
        if isinstance(sec, dict) and isinstance(sec.get(name), str) and sec[name]:
            doc[section] = {**sec, name: os.path.abspath(os.path.join(base, sec[name]))}
    return doc


def load_config(path: str | os.PathLike[str],
                overrides: dict[str, str] | None = None) -> Config:
    """Read a config file (following ``include:``), apply ``--set`` overrides, validate.

    ``overrides`` maps dotted keys to their text as typed on the command line; each value is
    read as a YAML scalar or flow list (``"10"`` -> 10, ``"[1, 2]"`` -> [1, 2]), except
    that string keys take the text as it is.
    """
    path = str(path)
    blame = _Blame(path)
    doc: dict[str, Any] = {}
    for layer in read_layers(path):
        resolved = _resolve_paths(layer)
        doc = deep_merge(doc, resolved)
        blame.record(layer.source, leaf_paths(resolved))
    return _apply(doc, parse_sets_typed(overrides, f"{path}: "), blame, "--set")


def config_from_dict(doc: Mapping[str, Any], source: str = "<dict>") -> Config:
    """Validate plain data (as from ``Config.to_dict`` or a parsed YAML file) into a Config.

    ``source`` names the data in error messages. ``include:`` needs a file and is refused.
    """
    if INCLUDE_KEY in doc:
        raise ConfigError(f"{source}: {INCLUDE_KEY}: only config files can include others")
    blame = _Blame(source)
    blame.record(source, leaf_paths(dict(doc)))
    return _checked(doc, blame)


def default_config(overrides: dict[str, str] | None = None,
                   source: str = "<defaults>") -> Config:
    """The schema's defaults with ``--set``-style text overrides applied, validated.

    For commands that take an optional config file: without one they still accept
    ``--set`` and report errors the same way (``<defaults>: --set key: ...``).
    """
    return _apply(config_from_dict({}).to_dict(), parse_sets_typed(overrides, f"{source}: "),
                  _Blame(source), "--set")


def parse_sets_typed(overrides: Mapping[str, str] | None, where: str = "") -> dict[str, Any]:
    """``--set`` texts by dotted key -> their typed values (as :func:`load_config` reads
    them), for :func:`override_config`; a bad key or value is one ConfigError starting with
    ``where``."""
    values = {}
    for key, text in (overrides or {}).items():
        try:
            values[key] = parse_override(key, text)
        except Problem as problem:
            raise ConfigError(f"{where}--set {key}: {problem.message}") from None
    return values


def override_config(cfg: Config, overrides: Mapping[str, Any]) -> Config:
    """``cfg`` with dotted keys replaced by already-typed values, validated again."""
    return _apply(cfg.to_dict(), dict(overrides), _Blame(cfg.source), "override")


def _apply(doc: dict[str, Any], values: dict[str, Any], blame: _Blame, label: str) -> Config:
    for key, value in values.items():
        try:
            doc = apply_overrides(doc, {key: value})
        except Problem as problem:
            raise ConfigError(f"{blame.default}: {label} {key}: {problem.message}") from None
        blame.record(label, [key], override=True)
    return _checked(doc, blame)


def dump_yaml(config: Config) -> str:
    """The fully resolved config as YAML that ``load_config`` reads back unchanged."""
    return dump_plain(config.to_dict())
