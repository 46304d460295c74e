"""No two modules of pytest_netload import each other, directly or round a longer
circle: every import that runs counts, at module level and inside functions and
classes, absolute and relative (pytest_netload/_layers.py reads them with `ast`);
only the imports under ``if TYPE_CHECKING:``, which never run, are left out. Where
two modules need each other, what both need goes into a lower module of its own
(reports/html/figures.py, plugin/environment.py): a circle hidden inside functions
still makes a module's import order matter and its dependencies unreadable."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest_netload
from pytest_netload._layers import Import, cycles, imports

ROOT = Path(pytest_netload.__file__).resolve().parent


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def type_only(root: Path) -> set[tuple[str, int]]:
    """(module, line) of each import under ``if TYPE_CHECKING:`` in the package at
    `root`: for annotations only, never run."""
    out: set[tuple[str, int]] = set()
    for path in root.rglob("*.py"):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.If) and _type_checking(node.test):
                out |= {(module, n.lineno) for stmt in node.body for n in ast.walk(stmt)
                        if isinstance(n, (ast.Import, ast.ImportFrom))}
    return out


def module_edges(found: list[Import], skip: set[tuple[str, int]]) -> set[tuple[str, str]]:
    """importer -> imported between modules (a package is its __init__), for the
    imports that run."""
    return {(i.module, i.target) for i in found
            if i.module != i.target and (i.module, i.line) not in skip}


def describe(group: list[str], found: list[Import], skip: set[tuple[str, int]]) -> str:
    members = set(group)
    lines = sorted({f"  {i.module} imports {i.target} (line {i.line})" for i in found
                    if i.module in members and i.target in members and i.module != i.target
                    and (i.module, i.line) not in skip})
    return " <-> ".join(group) + ":\n" + "\n".join(lines)


def test_no_modules_import_each_other() -> None:
    found, skip = imports(ROOT), type_only(ROOT)
    circles = cycles(module_edges(found, skip))
    assert not circles, "modules that import one another (move what they share into a " \
        "lower module):\n" + "\n".join(describe(c, found, skip) for c in circles)


def test_a_circle_through_function_level_and_relative_imports_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "pytest_netload"
    for name, text in {
        "__init__.py": "",
        "reports/__init__.py": "",
        "reports/plots.py": "def draw():\n    from .y1564 import plot\n",
        "reports/y1564.py": "def plot():\n    from .plots import COLOURS\n",
        "plugin/__init__.py": "def hook():\n    from .terminal import Summary\n",
        "plugin/terminal.py": "class Summary:\n    def m(self):\n"
                              "        from pytest_netload.plugin.xdist import KEY\n",
        "plugin/xdist.py": "def f():\n    from . import hook\n",
        "engine/__init__.py": "",
        "engine/client.py": "from .handles import Port\n",
        "engine/handles.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                             "    from .client import Engine\n",
    }.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    found, skip = imports(pkg), type_only(pkg)
    assert skip == {("pytest_netload.engine.handles", 3)}  # annotations only: no circle
    assert cycles(module_edges(found, skip)) == [
        ["pytest_netload.plugin", "pytest_netload.plugin.terminal",
         "pytest_netload.plugin.xdist"],
        ["pytest_netload.reports.plots", "pytest_netload.reports.y1564"],
    ]
    assert "reports.plots imports pytest_netload.reports.y1564 (line 2)" in \
        describe(["pytest_netload.reports.plots", "pytest_netload.reports.y1564"], found, skip)
