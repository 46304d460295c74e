"""The layers of pytest_netload, and the import rule between them.

`LAYERS` lists them highest first. A module may import modules of its own layer and
of any lower one, never of a higher one, so the layers import one another without
a cycle. A subpackage is a layer of its own; the package itself (its public API in
``__init__``), the command line and ``__main__`` are the top; units, errors, files,
atomic and format, the helpers everything uses, are the base.

tests/unit/test_layers.py checks every import of the package against this table,
also the imports inside functions. ``python -m pytest_netload._layers`` prints the
import graph between the layers (docs/README cite it). Nothing of the package
imports this module: it is read by the test and by that command only.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LAYERS", "Import", "cycles", "format_graph", "imports", "layer_of",
           "package_edges", "upward"]

PACKAGE = "pytest_netload"

LAYERS: tuple[str, ...] = (
    "top",        # pytest_netload (the public API), cli, __main__
    "plugin",     # the pytest surface: hooks, options, markers, fixtures, terminal
    "bench",      # procedures bound to real trials: runner, rate control, harness
    "reports",    # results JSON, HTML, baselines, trends
    "verdicts",   # assert_* helpers and their bounds
    "y1564",      # ITU-T Y.1564 service activation: pure procedures (never the engine)
    "rfc2889",    # RFC 2889 switch benchmarks: pure procedures (never the engine)
    "rfc2544",    # the pure procedures (never the engine)
    "search",     # the search core below the standards: bisection, resolution, brackets
    "engine",     # the engine client, its host process and the cffi facade
    "topology",   # the topology model, files and built-in DUTs
    "traffic",    # packets, streams, patterns
    "measure",    # results, latency, histograms, statistics, records
    "base",       # units, errors, files, atomic, format
)
TOP_MODULES = frozenset({"cli", "__main__"})
BASE_MODULES = frozenset({"units", "errors", "files", "atomic", "format", "locks", "hugepages", "_layers", "extras",
                          "_native_facts"})


@dataclass(frozen=True)
class Import:
    """`module` imports `target` (both dotted, in the package) at `line`."""

    module: str
    target: str
    line: int


def layer_of(module: str) -> str:
    """The layer of a dotted module name of the package; KeyError for a top-level
    module not in the table (a new one: add it to TOP_MODULES or BASE_MODULES)."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        raise KeyError(f"{module} is not in {PACKAGE}")
    if len(parts) == 1 or parts[1] in TOP_MODULES:
        return "top"
    if parts[1] in BASE_MODULES:
        return "base"
    if parts[1] in LAYERS and parts[1] not in ("top", "base"):
        return parts[1]
    raise KeyError(f"{module}: no layer; add it to {PACKAGE}/_layers.py")


def _rank(layer: str) -> int:
    return LAYERS.index(layer)


def _module_name(root: Path, path: Path) -> tuple[str, bool]:
    """The dotted name of `path` under the package dir `root`, and whether it is a
    package (__init__.py)."""
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def imports(root: Path | None = None) -> list[Import]:
    """Every import of a module of the package by a module of the package under
    `root` (default: this package's dir): absolute and relative ones, at module level
    or inside functions and classes. ``from X import name`` counts as an import of
    X.name when that is a module, else of X."""
    root = root or Path(__file__).resolve().parent
    files = sorted(root.rglob("*.py"))
    known = {_module_name(root, p)[0] for p in files}
    out: list[Import] = []
    for path in files:
        module, is_package = _module_name(root, path)
        package = module if is_package else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                out += [Import(module, a.name, node.lineno) for a in node.names
                        if a.name == root.name or a.name.startswith(root.name + ".")]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target != root.name and not target.startswith(root.name + "."):
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    out.append(Import(module, sub if sub in known else target, node.lineno))
    return out


def _short(module: str) -> str:
    return module.partition(".")[2] or module


def upward(found: Iterable[Import]) -> list[str]:
    """Each import of a higher layer than the importer's, as "a.b imports c.d (upward)"."""
    return sorted({f"{_short(i.module)} imports {_short(i.target)} (upward)" for i in found
                   if _rank(layer_of(i.target)) < _rank(layer_of(i.module))})


def package_edges(found: Iterable[Import]) -> set[tuple[str, str]]:
    """The import graph between the layers: (importer's layer, imported layer), an
    edge for each pair that some import joins (a layer's imports of itself left out)."""
    return {(layer_of(i.module), layer_of(i.target)) for i in found
            if layer_of(i.module) != layer_of(i.target)}


def cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan): each is a cycle."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(out)


def format_graph(edges: Iterable[tuple[str, str]]) -> str:
    """One line per layer, highest first: the layers it imports, highest first."""
    targets: dict[str, set[str]] = {}
    for a, b in edges:
        targets.setdefault(a, set()).add(b)
    width = max(map(len, LAYERS))
    return "\n".join(
        f"{layer:<{width}} -> {', '.join(sorted(targets.get(layer, ()), key=_rank)) or '-'}"
        for layer in LAYERS)


if __name__ == "__main__":
    print(format_graph(package_edges(imports())))
