"""The fast engine's profiler: mapping perf's addresses into numba's object code."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter

import pytest

from sim.fast_profile import Symbol, attribute, parse_symbols, short_name

OBJDUMP_T = """
loop.o:     file format elf64-x86-64

SYMBOL TABLE:
0000000000000000 l    df *ABS*\t0000000000000000 <string>
0000000000000000 g     F .ltext\t0000000000000100 _ZN3sim4fast4loop3runB2v1B40c8tJTIeFIjxE
0000000000000200 g     F .ltext\t0000000000000080 _ZN7netlock10lockserver7kernels5grantB2v1E
0000000000000000 g     O .rodata\t0000000000000010 some_constant
0000000000000000 g     F .text\t0000000000000010 elsewhere
"""


def test_parse_symbols_keeps_the_sections_functions_by_offset():
    symbols = parse_symbols(OBJDUMP_T, ".ltext")
    assert [(s.offset, s.size) for s in symbols] == [(0, 0x100), (0x200, 0x80)]
    assert [s.name for s in parse_symbols(OBJDUMP_T, ".text")] == ["elsewhere"]


def test_attribute_maps_addresses_inside_functions_only():
    symbols = [Symbol(0, 0x100, "run"), Symbol(0x200, 0x80, "grant")]
    base = 0x7F0000001000
    samples = Counter({base + 0x10: 5, base + 0xFF: 1, base + 0x100: 7, base + 0x250: 3,
                       base + 0x280: 2, 0xFFFFFFFF81000000: 9, base - 1: 4})
    by_function, by_offset = attribute(samples, base, symbols)
    assert by_function == Counter({"run": 6, "grant": 3})
    assert by_offset == Counter({0x10: 5, 0xFF: 1, 0x250: 3})


def test_short_name_demangles_numbas_names():
    assert short_name("_ZN3sim4fast4loop3runB2v1B40c8tJTIeFIjxE") == "sim.fast.loop.run"
    assert (short_name("cfunc._ZN7netlock10lockserver7kernels5grantB2v1E")
            == "netlock.lockserver.kernels.grant")
    assert short_name("plain") == "plain"


def perf_can_sample() -> bool:
    if shutil.which("perf") is None or shutil.which("objdump") is None:
        return False
    done = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", "/dev/null",
                           "--", "true"], capture_output=True)
    return done.returncode == 0


@pytest.mark.skipif(not perf_can_sample(), reason="perf cannot sample on this machine")
def test_profiles_a_short_run():
    out = subprocess.run([sys.executable, "-m", "sim.fast_profile", "--duration", "0.01",
                          "--asm", "3"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "sim.fast.loop.run" in out.stdout
    shares = [float(line.split("%")[0]) for line in out.stdout.splitlines()
              if line.strip().endswith("sim.fast.loop.run")]
    assert shares and shares[0] > 20.0
    assert out.stdout.count("0x") >= 3


def test_a_missing_config_is_one_line_and_exit_2(tmp_path):
    out = subprocess.run([sys.executable, "-m", "sim.fast_profile", str(tmp_path / "no.yaml")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1
    assert "no.yaml" in out.stderr


def test_a_bad_config_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("workload:\n  clients: -3\n")
    out = subprocess.run([sys.executable, "-m", "sim.fast_profile", str(bad)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1
    assert "clients" in out.stderr
