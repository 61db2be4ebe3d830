"""``netlock config``: validate configs, print them fully resolved, list their keys."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from netlock.cli.common import emit_json, guarded, parse_sets
from netlock.config import KeyInfo, config_keys, dump_yaml, load_config
from netlock.memory import check_fits, config_needs

config_app = typer.Typer(
    name="config",
    help="Validate experiment configs and list the keys they may set.",
    no_args_is_help=True,
)


@config_app.command("check")
@guarded
def check(
    file: Annotated[Path, typer.Argument(help="config file (YAML); include: chains are followed")],
    sets: Annotated[list[str] | None, typer.Option(
        "--set", metavar="KEY=VALUE",
        help="override a key by its dotted path, e.g. workload.think_time_us=10 (repeatable)",
    )] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="print one JSON object instead of YAML")] = False,
) -> None:
    """Validate a config and print it fully resolved (includes merged, defaults filled in).

    Example:

        netlock config check configs/tpcc-low.yaml --set switch.slots=5000 --json

    A bad file, key or value prints one line naming the file and the dotted key, and exits 2;
    so does a run too large for this machine's memory.
    """
    config = load_config(file, parse_sets(sets))
    check_fits(config_needs(config))
    if as_json:
        emit_json(config.to_dict())
    else:
        typer.echo(dump_yaml(config), nl=False)


@config_app.command("keys")
@guarded
def keys(
    as_json: Annotated[bool, typer.Option(
        "--json", help="print one JSON object: {\"keys\": [...]}")] = False,
    markdown: Annotated[bool, typer.Option(
        "--markdown", help="print the key tables of docs/config.md")] = False,
) -> None:
    """List every config key with its type, default and meaning (units in name or help).

    docs/config.md explains the keys further; its tables are this command's --markdown.

    Example:

        netlock config keys | grep workload.
    """
    infos = config_keys()
    if markdown:
        typer.echo(keys_markdown(infos), nl=False)
        return
    if as_json:
        emit_json({"keys": [{"key": k.path, "type": k.type, "default": k.default,
                             "required": k.required, "help": k.help} for k in infos]})
        return
    width = max(len(k.path) for k in infos)
    for info in infos:
        if info.type == "section":
            typer.echo(f"{info.path:<{width}}  [section] {info.help}")
            continue
        default = "required" if info.required else f"default {info.default!r}"
        typer.echo(f"{info.path:<{width}}  {info.type}, {default}: {info.help}")


def keys_markdown(infos: list[KeyInfo]) -> str:
    """The keys as Markdown: one table per top-level section, in schema order."""
    out: list[str] = []
    for info in infos:
        if info.type == "section" and "." not in info.path:
            out += ["", f"### `{info.path}`: {info.help}", "",
                    "| key | type | default | meaning |", "|---|---|---|---|"]
            continue
        default = "required" if info.required else f"`{info.default!r}`"
        meaning = info.help.replace("|", "\\|")
        out.append(f"| `{info.path}` | {info.type} | {default} | {meaning} |")
    return "\n".join(out).lstrip("\n") + "\n"


def register(app: typer.Typer) -> None:
    """Add the ``config`` command group to the ``netlock`` app."""
    app.add_typer(config_app, name="config")
