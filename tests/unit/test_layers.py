"""The package's layering (pytest_netload/_layers.py): every import of a module of the
package points to its own layer or a lower one, and the layers import one another
without a cycle. Run with -s to see the graph between the layers."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_netload import _layers
from pytest_netload._layers import (
    Import,
    cycles,
    format_graph,
    imports,
    layer_of,
    package_edges,
    upward,
)

FOUND = imports()


def test_every_module_of_the_package_has_a_layer() -> None:
    modules = {i.module for i in FOUND} | {i.target for i in FOUND}
    assert "pytest_netload.plugin.fixtures" in modules  # the walk found the package
    for module in modules:
        assert layer_of(module) in _layers.LAYERS


def test_no_module_imports_a_higher_layer() -> None:
    offenders = upward(FOUND)
    assert not offenders, "imports against the layer order (pytest_netload/_layers.py):\n" + \
        "\n".join(offenders)


def test_the_layers_import_one_another_without_a_cycle() -> None:
    edges = package_edges(FOUND)
    print("\n" + format_graph(edges))
    assert cycles(edges) == []


def test_the_graph_has_the_edges_the_code_has() -> None:
    edges = package_edges(FOUND)
    for edge in [("top", "verdicts"), ("plugin", "bench"), ("bench", "rfc2544"),
                 ("bench", "engine"), ("engine", "measure"), ("traffic", "base")]:
        assert edge in edges
    assert ("rfc2544", "engine") not in edges  # the procedures stay pure
    for standard in ("rfc2544", "rfc2889", "y1564"):   # one search core below the standards
        assert (standard, "search") in edges
        assert ("search", standard) not in edges
    for a, b in [("rfc2889", "rfc2544"), ("y1564", "rfc2544"), ("y1564", "rfc2889")]:
        assert (a, b) not in edges  # no standard imports another's internals
    assert ("bench", "plugin") not in edges


def test_the_procedures_and_the_search_core_have_no_module_cycle() -> None:
    procedures = {"rfc2544", "rfc2889", "y1564", "search"}
    edges = {(i.module, i.target) for i in FOUND
             if i.module != i.target and layer_of(i.module) in procedures}
    assert cycles(edges) == []   # e.g. rfc2544.mlr and .throughput share .goals instead


@pytest.mark.parametrize(("module", "layer"), [
    ("pytest_netload", "top"),
    ("pytest_netload.cli", "top"),
    ("pytest_netload.__main__", "top"),
    ("pytest_netload.plugin", "plugin"),
    ("pytest_netload.bench.settings", "bench"),
    ("pytest_netload.search.bisection", "search"),
    ("pytest_netload.engine._netload_native", "engine"),
    ("pytest_netload.units", "base"),
    ("pytest_netload.atomic", "base"),
])
def test_layer_of(module: str, layer: str) -> None:
    assert layer_of(module) == layer


def test_a_new_top_level_module_needs_a_layer() -> None:
    with pytest.raises(KeyError, match="no layer"):
        layer_of("pytest_netload.newthing")


def test_the_walk_sees_absolute_relative_and_function_level_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pytest_netload"
    for name, text in {
        "__init__.py": "from .measure.results import RunResult\n",
        "units.py": "def f():\n    from .plugin import hooks\n",
        "measure/__init__.py": "",
        "measure/results.py": "from .. import units\nfrom . import stats\n"
                              "import pytest_netload.traffic.packets\n",
        "measure/stats.py": "",
        "traffic/__init__.py": "",
        "traffic/packets.py": "class C:\n    def m(self):\n"
                              "        from pytest_netload.bench.runner import x\n",
        "plugin/__init__.py": "from ..bench import runner\n",
        "plugin/hooks.py": "",
        "bench/__init__.py": "",
        "bench/runner.py": "from ..units import Rate\n",
    }.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    found = imports(pkg)
    assert Import("pytest_netload.measure.results", "pytest_netload.units", 1) in found
    assert Import("pytest_netload.measure.results", "pytest_netload.measure.stats", 2) in found
    assert Import("pytest_netload.plugin", "pytest_netload.bench.runner", 1) in found
    assert upward(found) == [
        "measure.results imports traffic.packets (upward)",
        "traffic.packets imports bench.runner (upward)",
        "units imports plugin.hooks (upward)",
    ]
    # units -> plugin -> bench -> units: a cycle; measure and traffic only lead into it
    assert cycles(package_edges(found)) == [["base", "bench", "plugin"]]


def test_cycles() -> None:
    assert cycles({("a", "b"), ("b", "c")}) == []
    assert cycles({("a", "b"), ("b", "a"), ("b", "c"), ("c", "d"), ("d", "c")}) == \
        [["a", "b"], ["c", "d"]]
