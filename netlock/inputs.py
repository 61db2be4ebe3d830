"""Reading users' text files: any problem is one line naming the file and what is wrong.

Every input path is first checked to be a regular file of bounded size
(:func:`input_file`). Every reader of a YAML or JSON file a user hands the toolkit
(configs, plans, switch profiles, bf-rt.json, emulator state, push journals) goes through
:func:`read_text` and :func:`parse_yaml` or :func:`parse_json`. A missing file, a
directory, unreadable or non-UTF-8 bytes, malformed or absurdly nested YAML/JSON each
become one :class:`~netlock.errors.NetlockError` of the reader's own kind
(``ConfigError``, ``PlanError``, ``TargetError``), which the CLI prints as one line with
exit status 2.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

import yaml

from netlock.errors import NetlockError

TEXT_MAX_BYTES = 64 * 2**20
"""The largest YAML or JSON input read, bytes: a config, a plan or a state file is
kilobytes to a few megabytes; anything far larger is not one."""
TABLE_MAX_BYTES = 16 * 2**30
"""The largest CSV or Parquet input read, bytes (a trace of a few hundred million rows)."""


def input_file(path: str | os.PathLike[str], error: type[NetlockError], what: str,
               limit: int = TABLE_MAX_BYTES) -> int:
    """Check, before reading, that ``path`` is a regular file of at most ``limit`` bytes
    (not a directory, a FIFO that would block, nor a device such as /dev/zero that never
    ends); its size, bytes. Any problem raises ``error`` naming the file."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise error(f"{path}: cannot read {what}: {_reason(exc)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{path}: cannot read {what}: is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{path}: cannot read {what}: not a regular file")
    if info.st_size > limit:
        raise error(f"{path}: {what} is {info.st_size:,} bytes, more than the "
                    f"{limit:,} a {what} may have")
    return info.st_size


def read_text(path: str | os.PathLike[str], error: type[NetlockError], what: str) -> str:
    """The UTF-8 text of ``path``, a ``what`` (``"plan"``, ``"config file"``): a regular
    file of at most :data:`TEXT_MAX_BYTES` (:func:`input_file`).

    A leading byte-order mark is dropped; any other problem raises ``error``.
    """
    input_file(path, error, what, TEXT_MAX_BYTES)
    try:
        with open(path, "rb") as fh:
            data = fh.read(TEXT_MAX_BYTES + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read {what}: {_reason(exc)}") from None
    if len(data) > TEXT_MAX_BYTES:
        raise error(f"{path}: {what} grew past {TEXT_MAX_BYTES:,} bytes while read")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{path}: line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                    f"offset {exc.start})") from None


def _reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    return exc.strerror or str(exc)


def yaml_problem(exc: yaml.YAMLError) -> str:
    """One line describing a YAML error, with its line and column when known."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"{where}malformed YAML: {' '.join(str(problem).split())}"


def load_yaml_text(text: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> Any:
    """Parse one YAML document; raises ``yaml.YAMLError`` for anything unreadable (values
    a constructor rejects, such as an impossible date, and nesting too deep to build)."""
    try:
        return yaml.load(text, Loader=loader)
    except RecursionError:
        raise yaml.YAMLError("nested too deeply") from None
    except ValueError as exc:
        raise yaml.YAMLError(str(exc)) from None


def parse_yaml(text: str, source: str | os.PathLike[str], error: type[NetlockError],
               loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> Any:
    """:func:`load_yaml_text`, a problem raised as ``error`` naming ``source``."""
    try:
        return load_yaml_text(text, loader)
    except yaml.YAMLError as exc:
        raise error(f"{source}: {yaml_problem(exc)}") from None


def parse_json(text: str, source: str | os.PathLike[str], error: type[NetlockError]) -> Any:
    """One JSON document, a problem raised as ``error`` naming ``source``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{source}: line {exc.lineno}, column {exc.colno}: malformed JSON: "
                    f"{exc.msg}") from None
    except RecursionError:
        raise error(f"{source}: malformed JSON: nested too deeply") from None


def load_yaml(path: str | os.PathLike[str], error: type[NetlockError], what: str,
              loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> Any:
    """The YAML document in the file ``path`` (a ``what``); any problem raises ``error``."""
    return parse_yaml(read_text(path, error, what), path, error, loader)


def load_json(path: str | os.PathLike[str], error: type[NetlockError], what: str) -> Any:
    """The JSON document in the file ``path`` (a ``what``); any problem raises ``error``."""
    return parse_json(read_text(path, error, what), path, error)
