"""Config files: YAML reading (with ``include:`` chains), deep merging and dumping.

The YAML dialect is PyYAML's safe subset with three changes for config files: ``18e6`` is a
number (YAML 1.2 floats, not the string PyYAML 1.1 makes of it), a key repeated in one
mapping is an error instead of silently keeping the last value, and date-like values stay
strings (no key is a date).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

import yaml

from netlock.errors import ConfigError
from netlock.inputs import load_yaml, load_yaml_text

INCLUDE_KEY = "include"

_FLOAT = re.compile(r"""^(?:
    [-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
  | [-+]?\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?
  | [-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
  | [-+]?\.(?:inf|Inf|INF)
  | \.(?:nan|NaN|NAN)
)$""", re.X)


class ConfigLoader(yaml.SafeLoader):
    """Safe YAML loader that reads ``18e6`` as a float and rejects duplicate keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            if key_node.value in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key_node.value!r}", key_node.start_mark)
            seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


_REPLACED_TAGS = ("tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp")
ConfigLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _REPLACED_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
ConfigLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT,
                                   list("-+0123456789."))


def parse_yaml_text(text: str) -> Any:
    """Parse one config YAML document; raises ``yaml.YAMLError`` for anything unreadable."""
    return load_yaml_text(text, ConfigLoader)


@dataclass(frozen=True)
class Layer:
    """One config file's own keys (its ``include:`` removed) and the file it came from."""

    source: str
    doc: dict[str, Any]


def read_mapping(path: str) -> dict[str, Any]:
    """A YAML file whose top level is a mapping (an empty file is an empty mapping)."""
    doc = load_yaml(path, ConfigError, "config file", ConfigLoader)
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections, "
                          f"got a {type(doc).__name__}")
    return doc


def read_layers(path: str, _chain: tuple[tuple[str, str], ...] = ()) -> list[Layer]:
    """``path`` and everything it includes, base files first (the merge order).

    ``include:`` names one base file or a list of them, relative to the including file;
    bases may include further files; a file including itself, directly or not, is an error.
    """
    chain = (*_chain, (os.path.realpath(path), path))
    doc = read_mapping(path)
    includes = doc.pop(INCLUDE_KEY, None)
    if includes is None:
        includes = []
    elif isinstance(includes, str):
        includes = [includes]
    if not isinstance(includes, list) or not all(isinstance(i, str) and i for i in includes):
        raise ConfigError(f"{path}: include: must be a file name or a list of file names")
    layers: list[Layer] = []
    for i, name in enumerate(includes):
        base = os.path.normpath(os.path.join(os.path.dirname(path), name))
        label = f"include[{i}]" if len(includes) > 1 else "include"
        if not os.path.isfile(base):
            raise ConfigError(f"{path}: {label}: base file not found: {base}")
        if os.path.realpath(base) in {real for real, _ in chain}:
            cycle = " -> ".join([shown for _, shown in chain] + [base])
            raise ConfigError(f"{path}: {label}: include cycle {cycle}")
        layers.extend(read_layers(base, chain))
    layers.append(Layer(source=path, doc=doc))
    return layers


def deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``: mappings merge key by key, anything else (lists too) replaces."""
    out = dict(base)
    for name, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(name), dict):
            out[name] = deep_merge(out[name], value)
        else:
            out[name] = value
    return out


def leaf_paths(doc: dict[str, Any], prefix: str = "", depth: int = 4) -> list[str]:
    """Dotted paths of the non-mapping values in ``doc`` (lists count as values).

    Mappings deeper than ``depth`` (beyond any config key; a YAML alias can even make a
    mapping contain itself) count as values too.
    """
    paths = []
    for name, value in doc.items():
        path = f"{prefix}.{name}" if prefix else str(name)
        if isinstance(value, dict) and value and depth > 1:
            paths.extend(leaf_paths(value, path, depth - 1))
        else:
            paths.append(path)
    return paths


def dump_plain(doc: dict[str, Any]) -> str:
    """Plain data as block YAML, keys in declaration order."""
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=True)
