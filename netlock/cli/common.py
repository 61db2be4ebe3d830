"""Helpers shared by every command module: JSON output, errors, the ``--set`` and ``--json``
options and their parsing."""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Callable
from functools import wraps
from typing import Annotated, Any, TypeVar

import typer

from netlock.cli import interrupt
from netlock.errors import ConfigError, NetlockError, OutputError

F = TypeVar("F", bound=Callable[..., Any])

CONFIG_PANEL = "Config"
OUTPUT_PANEL = "Output"


def set_option(example: str) -> Any:
    """The ``--set KEY=VALUE`` option type (see :func:`parse_sets`), with an example key."""
    return Annotated[list[str] | None, typer.Option(
        "--set", metavar="KEY=VALUE", help=f"override a config key by its dotted path, e.g. "
        f"{example} (repeatable)", rich_help_panel=CONFIG_PANEL)]


def json_option(on_stderr: str) -> Any:
    """The ``--json`` option type (see :func:`emit_json`); ``on_stderr`` says what the
    command prints to stderr instead."""
    return Annotated[bool, typer.Option(
        "--json", help=f"print one JSON object on stdout ({on_stderr} stderr)",
        rich_help_panel=OUTPUT_PANEL)]


def guarded(func: F) -> F:
    """Turn a :class:`NetlockError` or an ``OSError`` (:func:`os_problem`) raised by a
    command into one stderr line and exit 2, and
    Ctrl-C (or an error it caused, see :mod:`netlock.cli.interrupt`) into ``netlock:
    interrupted`` and exit 130 (its workers stopped). Numeric warnings
    (numpy's RuntimeWarning) are not shown: bad input they point at is checked and reported
    as an error, and otherwise they are noise.

    Commands wrap their body with this so that both the console script and typer's
    ``CliRunner`` (which bypasses :func:`netlock.cli.main`) behave the same.
    """

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return func(*args, **kwargs)
        except NetlockError as exc:
            typer.echo(f"netlock: error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except OSError as exc:
            if interrupt.pending():
                _interrupted()
            typer.echo(f"netlock: error: {os_problem(exc)}", err=True)
            raise typer.Exit(OutputError.exit_code) from None
        except Exception:
            if not interrupt.pending():
                raise
            _interrupted()
        except KeyboardInterrupt:
            _interrupted()

    return wrapper  # type: ignore[return-value]


def os_problem(exc: OSError) -> str:
    """An operating-system error as one line naming the file (a full disk, a read-only
    folder, a file where a folder should be): the environment's problem, not a bug."""
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def _interrupted() -> None:
    interrupt.stop_children()
    interrupt.report()
    raise typer.Exit(interrupt.EXIT_CODE) from None


def _same_file(a: os.PathLike[str], b: os.PathLike[str]) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def distinct_outputs(outputs: dict[str, os.PathLike[str] | None],
                     inputs: dict[str, os.PathLike[str] | None]) -> None:
    """Refuse (one line, exit 2) an output path that is one of the command's inputs (the same
    file, by any name): writing it would destroy what the command reads. Keys name the flags
    (``--out``, ``TRACE``); None values are skipped."""
    for out_flag, out in outputs.items():
        for in_flag, given in inputs.items():
            if out is not None and given is not None and _same_file(out, given):
                raise ConfigError(f"{out_flag} {out}: is the input {in_flag}; write the output "
                                  f"to another file")


def emit_json(obj: Any) -> None:
    """Print exactly one JSON object on stdout (the ``--json`` contract)."""
    sys.stdout.write(json.dumps(obj, default=_jsonable) + "\n")
    sys.stdout.flush()


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def parse_sets(items: list[str] | None) -> dict[str, str]:
    """``["a.b=1", "c=x"]`` -> ``{"a.b": "1", "c": "x"}``; a malformed item is a ConfigError."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE with a dotted key")
        out[key.strip()] = value.strip()
    return out


def stderr(message: str) -> None:
    typer.echo(message, err=True)


__all__ = ["NetlockError", "emit_json", "guarded", "parse_sets", "stderr"]
