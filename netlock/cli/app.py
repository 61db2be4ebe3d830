"""The ``netlock`` console script.

``netlock`` owns only the composition: its own commands (``config``, ``bench``) are added
here, and ``sim``, ``planner`` and ``hwrunner`` contribute theirs through the
``netlock.commands`` entry-point group (each entry is ``register(app: typer.Typer) -> None``).
That keeps the dependency arrow pointing into ``netlock`` while one command line covers the
whole toolkit.

Commands are registered lazily, so that ``netlock --help`` and ``netlock config check`` start at
once (each command module imports numba, pandas or matplotlib; all of them together took
seconds): :data:`COMMANDS` names each command, the register function that adds it and the
first paragraph of its help, which is all the top-level ``--help`` shows. The register function
runs only when its command is invoked (or asked for its own ``--help``).
``tests/core/test_cli_help.py`` checks that this index matches what the register functions add;
an entry point that the index does not name is loaded at start, so that a new package's
commands appear without it (only slower).
"""

from __future__ import annotations

import sys
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

import click
import typer
from typer.core import TyperGroup

from netlock.cli import collector
from netlock.errors import NetlockError

COMMANDS: dict[str, tuple[str, str]] = {
    "bench": ("netlock.cli.bench_cmd:register",
              "Run the performance benchmarks, each beside its baseline in the same run."),
    "demo": ("hwrunner.demo:register", "Run the main job end to end on the emulated switch."),
    "push": ("hwrunner.cli:register", "Install a plan on a switch, moving live locks safely, "
             "and verify it by reading back."),
    "stats": ("hwrunner.cli:register", "Read per-lock request counters and queue occupancy "
              "back from a switch."),
    "traffic": ("hwrunner.cli:register",
                "Replay a workload into the emulated switch as NetLock packets."),
    "autopilot": ("hwrunner.cli:register", "Keep the switch's plan current: measure, re-plan, "
                  "migrate when the workload moved."),
    "netstore": ("sim.netstore.cli:register", "Run NetStore's controller (2PL lock server "
                 "choosing each operation's path) on a\nflow-level fat-tree with background "
                 "traffic, and report transaction completion times."),
    "plan": ("planner.cli:register",
             "Allocate switch slots to locks (Algorithm 3) and size the lock servers."),
    "sim": ("sim.cli:register", "Run one simulation of a NetLock rack and report throughput, "
            "latency and safety."),
    "sweep": ("sim.cli:register", "Run a grid of simulations in parallel, then write a results "
              "table and plots."),
    "plot": ("sim.cli:register", "Plot a simulation run: throughput over time, the latency "
             "CDF, and the split of\ngrants between the switch and the lock servers "
             "(timeseries.png, latency_cdf.png,\nsplit.png)."),
    "paper": ("sim.paper.cli:register", "Reproduce a figure of the NetLock paper's evaluation from "
              "configs/paper/FIG.yaml and\ncheck the qualitative outcome its text states (exit 1 "
              "if a check of a required figure\nfails; the figures the model does not "
              "reproduce yet report theirs)."),
    "config": ("netlock.cli.config_cmd:register",
               "Validate experiment configs and list the keys they may set."),
    "trace": ("sim.trace_cli:register", "Workload traces: generate them."),
    "capacity": ("sim.capacity_cli:register", "Find the smallest switch memory and lock-server "
                 "count that meet a throughput (and\nlatency) target: the planner's model "
                 "proposes, the simulator verifies."),
    "servers": ("sim.servers_cli:register", "How many lock servers the rack needs: the fewest "
                "at which one more adds less than\n--gain of throughput, the plan's model "
                "proposing and the simulator deciding."),
}
"""Command name -> (its register function as ``module:function``, its short help), in the
order ``netlock --help`` lists them."""

_loaded: dict[str, dict[str, click.Command]] = {}


def _load(target: str) -> dict[str, click.Command]:
    """The click commands that the register function ``target`` adds (imported once)."""
    if target not in _loaded:
        module, _, func = target.partition(":")
        scratch = typer.Typer()
        getattr(import_module(module), func)(scratch)
        _loaded[target] = dict(typer.main.get_group(scratch).commands)
    return _loaded[target]


def _unindexed_targets() -> list[str]:
    """Register functions of the ``netlock.commands`` entry points that :data:`COMMANDS` does
    not name (loaded at start)."""
    known = {target for target, _ in COMMANDS.values()}
    return [ep.value for ep in sorted(entry_points(group="netlock.commands"),
                                      key=lambda e: e.name) if ep.value not in known]


class LazyGroup(TyperGroup):
    """The top-level group: the commands of :data:`COMMANDS` are stand-ins holding their short
    help until one is resolved for invocation, which runs its register function."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*COMMANDS, *(name for name in self.commands if name not in COMMANDS)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name not in COMMANDS:
            return None
        target, short = COMMANDS[cmd_name]
        if target in _loaded:
            return self.load(cmd_name)
        return click.Command(cmd_name, help=short)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        if args and args[0] in COMMANDS:
            self.load(args[0])
        collector.started()
        return super().resolve_command(ctx, args)

    def load(self, name: str) -> click.Command:
        """The real command ``name`` (running its register function if not yet run)."""
        if name not in self.commands:
            self.add_command(_load(COMMANDS[name][0])[name], name)
        return self.commands[name]

    def load_all(self) -> LazyGroup:
        """Every command loaded: the group as an eager registration would build it."""
        for name in COMMANDS:
            self.load(name)
        return self


app = typer.Typer(
    name="netlock",
    cls=LazyGroup,
    help="Plan, simulate and deploy NetLock, the in-switch lock manager.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from netlock import __version__

        typer.echo(f"netlock {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Plan, simulate and deploy NetLock, the in-switch lock manager.

    Start with `netlock demo`; every command has --help with an example. File formats
    and results: docs/formats.md; config keys: docs/config.md (or netlock config keys).
    """


for _target in _unindexed_targets():
    module_name, _, func_name = _target.partition(":")
    getattr(import_module(module_name), func_name)(app)


def command_group(*, load_all: bool = False) -> LazyGroup:
    """The click group of ``netlock``; with ``load_all`` every command in it is the real one
    (for tests and tools that walk the commands)."""
    group = typer.main.get_group(app)
    assert isinstance(group, LazyGroup)
    return group.load_all() if load_all else group


def run() -> None:
    """Run the app; a :class:`NetlockError` becomes one line and exit 2 (the console script
    is :func:`netlock.cli.main`, which also owns Ctrl-C)."""
    try:
        app()
    except NetlockError as exc:
        print(f"netlock: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
