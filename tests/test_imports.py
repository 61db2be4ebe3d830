"""The import graph: no cycle between modules, and every arrow points down the layers.

The layers, bottom up: ``netlock`` (the domain), ``planner``, ``sim``, ``hwrunner``
(docs/architecture.md). A package may import its own modules and those of the layers below
it, never above; and no module, through any chain, imports itself. Every import counts:
module level, inside functions, and under ``TYPE_CHECKING`` (a type-only arrow is still an
arrow a reader has to follow). ``from package import name`` is an arrow to the submodule
``package.name`` when there is one, else to the package's ``__init__``.

Inside ``sim``, the two engines stand on one engine-neutral layer (``NEUTRAL``: ``sim.core``
and the workload generators ``sim.workloads``), which imports nothing else of ``sim``; the
fast engine imports only that layer, ``netlock`` and itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("netlock", "planner", "sim", "hwrunner")
ALLOWED_CYCLES: dict[frozenset[str], str] = {}
"""Cycles known and accepted, each with its reason; any other cycle fails the test."""
NEUTRAL = ("sim.core", "sim.workloads")
"""The engine-neutral layer under both simulation engines."""
FAST = "sim.fast"


@dataclass(frozen=True)
class Arrow:
    source: str
    target: str
    where: str


def modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of ``packages`` under ``root``."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _known(name: str, known: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of ``known``'s modules."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in known:
            return ".".join(parts)
        parts.pop()
    return None


def _imported(node: ast.AST, module: str, is_package: bool,
              known: dict[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[:len(package) - (node.level - 1)]
            base = ".".join([*package, *([node.module] if node.module else [])])
        for alias in node.names:
            yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base


def arrows(known: dict[str, Path], root: Path = ROOT) -> list[Arrow]:
    """Every import from one of ``known``'s modules (files under ``root``) to another."""
    found = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for name in _imported(node, module, path.name == "__init__.py", known):
                target = _known(name, known)
                if target is not None and target != module:
                    where = f"{path.relative_to(root)}:{node.lineno}"
                    found.append(Arrow(module, target, where))
    return list(dict.fromkeys(found))


def cycles(found: list[Arrow]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for arrow in found:
        graph.setdefault(arrow.source, set()).add(arrow.target)
        graph.setdefault(arrow.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(frozenset(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return components


def upward(found: list[Arrow], layers: tuple[str, ...]) -> list[Arrow]:
    """Arrows from a package to one in a layer above it."""
    rank = {name: i for i, name in enumerate(layers)}
    return [a for a in found
            if rank[a.target.split(".")[0]] > rank[a.source.split(".")[0]]]


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def outside(found: list[Arrow], sources: tuple[str, ...],
            allowed: tuple[str, ...]) -> list[Arrow]:
    """Arrows from a module of ``sources`` to a module of none of ``allowed``."""
    return [a for a in found
            if _within(a.source, sources) and not _within(a.target, allowed)]


def _describe(component: frozenset[str], found: list[Arrow]) -> str:
    inside = [f"    {a.source} -> {a.target} ({a.where})" for a in found
              if a.source in component and a.target in component]
    return "\n".join(["  cycle: " + ", ".join(sorted(component)), *inside])


@pytest.fixture(scope="module")
def graph() -> list[Arrow]:
    return arrows(modules(ROOT, LAYERS))


def test_no_import_cycle(graph: list[Arrow]) -> None:
    new = [c for c in cycles(graph) if c not in ALLOWED_CYCLES]
    assert not new, "import cycles:\n" + "\n".join(_describe(c, graph) for c in new)


def test_the_allowed_cycles_still_exist(graph: list[Arrow]) -> None:
    """An exception that no longer applies is removed from the list, so it cannot hide a
    new cycle among the same modules later."""
    stale = set(ALLOWED_CYCLES) - set(cycles(graph))
    assert not stale, f"cycles listed as allowed but gone: {stale}"


def test_every_arrow_points_down_the_layers(graph: list[Arrow]) -> None:
    wrong = upward(graph, LAYERS)
    assert not wrong, "imports from a lower layer to a higher one (netlock <- planner <- " \
        "sim <- hwrunner):\n" + "\n".join(f"  {a.source} -> {a.target} ({a.where})"
                                          for a in wrong)


def _listed(wrong: list[Arrow]) -> str:
    return "\n".join(f"  {a.source} -> {a.target} ({a.where})" for a in wrong)


def test_the_neutral_layer_imports_no_engine(graph: list[Arrow]) -> None:
    """``sim.core`` and ``sim.workloads`` import only ``netlock``, ``planner`` and each
    other: nothing of either engine (``sim.simpy_model``, ``sim.clients``, ``sim.engine``,
    ``sim.managers``, ``sim.fast``, ...), nor anything that could lead to one."""
    wrong = outside(graph, NEUTRAL, ("netlock", "planner", *NEUTRAL))
    assert not wrong, "the engine-neutral layer imports above itself:\n" + _listed(wrong)


def test_the_fast_engine_imports_only_the_neutral_layer_and_netlock(
        graph: list[Arrow]) -> None:
    wrong = outside(graph, (FAST,), ("netlock", FAST, *NEUTRAL))
    assert not wrong, "the fast engine imports beyond netlock and the engine-neutral " \
        "layer:\n" + _listed(wrong)


def test_production_code_does_not_import_the_tests() -> None:
    found = []
    for module, path in modules(ROOT, LAYERS).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for name in _imported(node, module, path.name == "__init__.py", {}):
                if name == "tests" or name.startswith("tests."):
                    found.append(f"{module} -> {name}")
    assert not found, found


SAME_JOB_NAMES = {"__init__": "a package", "cli": "a package's commands",
                  "bench": "a package's benchmark rows",
                  "kernels": "a package's compiled rules (switch, lock server)",
                  "manager": "one lock-manager design of sim/managers"}
"""Module names that repeat because each names the same job in its own package
(docs/architecture.md); any other name used twice is two jobs under one name."""


def test_no_two_modules_with_different_jobs_share_a_name() -> None:
    seen: dict[str, list[str]] = {}
    for module, path in modules(ROOT, LAYERS).items():
        seen.setdefault(path.stem, []).append(module)
    twice = {name: found for name, found in seen.items()
             if len(found) > 1 and name not in SAME_JOB_NAMES}
    assert not twice, twice


def _tree(root: Path, files: dict[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return modules(root, ("low", "high"))


def test_the_checker_finds_cycles_through_functions_and_relative_imports(tmp_path: Path) -> None:
    known = _tree(tmp_path, {
        "low/__init__.py": "",
        "low/a.py": "from .b import f\n",
        "low/b.py": "def f():\n    from low import c\n",
        "low/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import low.a\n",
        "low/d.py": "from low import a\n",
        "high/__init__.py": "",
    })
    assert cycles(arrows(known, tmp_path)) == [frozenset({"low.a", "low.b", "low.c"})]


def test_the_checker_finds_an_upward_arrow(tmp_path: Path) -> None:
    known = _tree(tmp_path, {
        "low/__init__.py": "", "low/a.py": "def f():\n    import high.b\n",
        "high/__init__.py": "", "high/b.py": "from low.a import f\n",
    })
    wrong = upward(arrows(known, tmp_path), ("low", "high"))
    assert [(a.source, a.target) for a in wrong] == [("low.a", "high.b")]


def test_the_checker_finds_an_arrow_out_of_a_layer(tmp_path: Path) -> None:
    known = _tree(tmp_path, {
        "low/__init__.py": "",
        "high/__init__.py": "", "high/core/__init__.py": "", "high/core/a.py": "import low\n",
        "high/core/b.py": "def f():\n    from high.engine import run\n",
        "high/engine.py": "from high.core import a\n",
        "high/fast/__init__.py": "",
        "high/fast/c.py": "from ..core import b\nfrom .. import engine\n",
    })
    found = arrows(known, tmp_path)
    assert [(a.source, a.target) for a in outside(found, ("high.core",), ("low", "high.core"))] \
        == [("high.core.b", "high.engine")]
    assert [(a.source, a.target) for a in outside(found, ("high.fast",),
                                                  ("low", "high.fast", "high.core"))] \
        == [("high.fast.c", "high.engine")]
