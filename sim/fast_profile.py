"""``python -m sim.fast_profile``: where the fast engine's event loop spends its time (it
runs the microbenchmark of :mod:`sim.bench` by default, so it sits above the engine).

numba's compiled code carries no symbols, so ``perf report`` shows its samples as bare
addresses. This profiler runs a config's event loop under ``perf record`` (the process's CPU
clock), writes out the object code numba compiled the loop into (it keeps it for its cache)
and maps every sampled address into it: the share of each compiled function, and with
``--asm`` the hottest instructions (from ``objdump``). Samples outside the compiled code
(NumPy drawing hop delays, Python, the kernel zeroing fresh memory) are named by ``perf``.
Needs ``perf`` (allowed to sample this process) and ``objdump`` (binutils).

A run is repeated once before it is profiled, as in ``netlock bench``, so that the recorder
reuses its memory and the profile shows the loop rather than page faults.

Example: python -m sim.fast_profile configs/tpcc-low.yaml --duration 0.05 --asm 20
"""

from __future__ import annotations

import bisect
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from netlock.config import Config, load_config, override_config
from netlock.errors import NetlockError
from sim.bench import micro_config

PERF_HZ = 4999


@dataclass(frozen=True)
class Symbol:
    """A function of the object code: its offset and size in bytes in its section."""

    offset: int
    size: int
    name: str


def parse_symbols(objdump_t: str, section: str) -> list[Symbol]:
    """The functions of ``section`` in ``objdump -t`` output, by offset."""
    found = []
    for line in objdump_t.splitlines():
        parts = line.split()
        if len(parts) >= 6 and parts[-3] == section and "F" in parts[1:-3]:
            found.append(Symbol(int(parts[0], 16), int(parts[-2], 16), parts[-1]))
    return sorted(found, key=lambda s: s.offset)


def attribute(samples: Counter, base: int, symbols: list[Symbol]) -> tuple[Counter, Counter]:
    """Samples per function and per offset in the object, for samples at addresses
    ``base + offset`` inside a function of ``symbols``; the others are left out."""
    starts = [s.offset for s in symbols]
    by_function: Counter = Counter()
    by_offset: Counter = Counter()
    for ip, count in samples.items():
        offset = ip - base
        k = bisect.bisect_right(starts, offset) - 1
        if k >= 0 and offset < symbols[k].offset + symbols[k].size:
            by_function[symbols[k].name] += count
            by_offset[offset] += count
    return by_function, by_offset


def short_name(mangled: str) -> str:
    """``sim.fast.loop.run`` from numba's mangled ``_ZN3sim4fast4loop3runB...``."""
    rest = mangled.removeprefix("cfunc.").removeprefix("_ZN")
    parts = []
    while rest[:1].isdigit():
        digits = len(rest) - len(rest.lstrip("0123456789"))
        size = int(rest[:digits])
        parts.append(rest[digits:digits + size])
        rest = rest[digits + size:]
    return ".".join(parts) or mangled


def _capture_objects() -> dict[str, bytes]:
    """Object code of every numba library loaded from the cache from now on, by name."""
    from numba.core import codegen

    objects: dict[str, bytes] = {}
    unserialize = codegen.CPUCodeLibrary._unserialize.__func__

    def keep(cls: type, codegen_: object, state: tuple) -> object:
        name, kind, data = state
        if kind == "object":
            objects[name] = data[0]
        return unserialize(cls, codegen_, state)

    codegen.CPUCodeLibrary._unserialize = classmethod(keep)
    return objects


def profile(cfg: Config, asm: int) -> str:
    """Profile the event loop of a run of ``cfg``; the report as text."""
    objects = _capture_objects()
    from sim.fast import loop
    from sim.fast.simulate_fast import build

    end_us = cfg.sim.end_s * 1e6
    first = build(cfg)
    first.advance(end_us)
    first.close(end_us)
    del first
    model = build(cfg)
    compiled = loop.run.overloads[loop.run.signatures[0]]
    library = compiled.library
    name = compiled.fndesc.llvm_func_name
    entry = library.get_pointer_to_function(name)
    obj = objects.get(library.name) or library._get_compiled_object()
    with tempfile.TemporaryDirectory() as tmp:
        obj_path, data = Path(tmp) / "loop.o", Path(tmp) / "perf.data"
        obj_path.write_bytes(obj)
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(PERF_HZ),
                                 "-p", str(os.getpid()), "-o", str(data)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        t0 = time.process_time()
        model.advance(end_us)
        loop_s = time.process_time() - t0
        perf.send_signal(signal.SIGINT)
        perf.wait()
        ips = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip"], check=True,
                             capture_output=True, text=True).stdout.split()
        others = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--sort",
                                 "dso,sym"], capture_output=True, text=True).stdout
        table = subprocess.run(["objdump", "-t", str(obj_path)], check=True,
                               capture_output=True, text=True).stdout
        section = ".ltext" if " .ltext" in table else ".text"
        symbols = parse_symbols(table, section)
        base = entry - next(s.offset for s in symbols if s.name == name)
        samples = Counter(int(ip, 16) for ip in ips)
        by_function, by_offset = attribute(samples, base, symbols)
        disassembly = (subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-j", section,
                                       str(obj_path)], check=True, capture_output=True,
                                      text=True).stdout if asm else "")
    return report(samples, by_function, by_offset, others, disassembly, asm, loop_s)


def report(samples: Counter, by_function: Counter, by_offset: Counter, others: str,
           disassembly: str, asm: int, loop_s: float) -> str:
    """The profile as text: shares of all samples (``samples``), per compiled function, for
    the rest as ``perf report`` names them (``others``), and the ``asm`` hottest offsets."""
    total = sum(samples.values()) or 1
    lines = [f"event loop {loop_s:.2f} CPU s, {total:,} samples",
             "", "compiled functions (share of all samples):"]
    lines += [f"  {count / total:6.1%}  {short_name(name)}"
              for name, count in by_function.most_common(15)]
    lines += ["", "outside the compiled code (perf's names; [JIT] lines are the functions above):"]
    lines += [f"  {line.strip()}" for line in others.splitlines()
              if line.strip() and not line.startswith("#") and "[JIT]" not in line][:10]
    if asm:
        text = {}
        for line in disassembly.splitlines():
            head, _, rest = line.partition(":")
            if rest and head.strip() and all(c in "0123456789abcdef" for c in head.strip()):
                text[int(head.strip(), 16)] = rest.strip()
        lines += ["", "hottest instructions (offset in the object; a load that misses the "
                  "cache shows on the instruction after it):"]
        lines += [f"  {count / total:6.2%}  {offset:#8x}  {text.get(offset, '?')[:70]}"
                  for offset, count in by_offset.most_common(asm)]
    return "\n".join(lines)


def main(
    config: Annotated[Path | None, typer.Argument(help="config to run (default: the "
                                                    "microbenchmark of netlock bench)")] = None,
    duration: Annotated[float, typer.Option("--duration", min=1e-4,
                                            help="simulated seconds (s)")] = 0.1,
    asm: Annotated[int, typer.Option("--asm", min=0,
                                     help="also show the N hottest instructions")] = 0,
) -> None:
    """Profile the fast engine's event loop with perf.

    Example: python -m sim.fast_profile configs/tpcc-low.yaml --duration 0.05 --asm 20
    """
    if config is not None and not config.is_file():
        typer.echo(f"sim.fast_profile: {config}: no such config file", err=True)
        raise typer.Exit(2)
    try:
        cfg = (micro_config(duration) if config is None else
               override_config(load_config(config), {"sim.duration_s": duration}))
    except NetlockError as err:
        typer.echo(f"sim.fast_profile: {err}", err=True)
        raise typer.Exit(2) from None
    for tool in ("perf", "objdump"):
        if shutil.which(tool) is None:
            typer.echo(f"sim.fast_profile: {tool} not found (install linux-tools / binutils)",
                       err=True)
            raise typer.Exit(2)
    typer.echo(profile(cfg, asm))


if __name__ == "__main__":
    try:
        typer.run(main)
    except KeyboardInterrupt:
        sys.exit(130)
