"""The layer graph the docs show is the code's: scripts/render_layers.py renders it
from pytest_netload/_layers.py between the begin/end comments of each doc it names,
and a doc whose block differs fails here. The layer table of docs/architecture.md
names every layer of _layers.LAYERS, in its order."""

from __future__ import annotations

import difflib
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from pytest_netload._layers import LAYERS

ROOT = Path(__file__).parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_layers",
                                                  ROOT / "scripts" / "render_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RENDER = _script()


@pytest.mark.parametrize("doc", RENDER.DOCS)
def test_the_docs_layer_graph_is_the_one_the_code_has(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert text.count(RENDER.BEGIN) == 1 and text.count(RENDER.END) == 1, doc
    expected = RENDER.render(text, doc)
    diff = "\n".join(difflib.unified_diff(text.splitlines(), expected.splitlines(), doc,
                                          "generated", lineterm="", n=1))
    assert text == expected, f"{doc}'s layer graph is out of date; run python " \
        f"scripts/render_layers.py\n{diff}"


def test_the_block_holds_what_layers_prints() -> None:
    graph = RENDER.graph()
    assert [line.split()[0] for line in graph.splitlines()] == list(LAYERS)
    block = RENDER.render(f"before\n{RENDER.BEGIN}\nold\n{RENDER.END}\nafter\n")
    assert block == f"before\n{RENDER.BEGIN}\n```\n{graph}\n```\n{RENDER.END}\nafter\n"
    with pytest.raises(ValueError, match="no layer graph block"):
        RENDER.render("a doc without one", "x.md")


def test_the_layer_table_names_every_layer_in_order() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.partition("## The layers")[2].partition("\n\n|")[2].partition("\n\n")[0]
    rows = [m.group(1) for m in re.finditer(r"^\| ([a-z0-9, ]+?) \|", "|" + table, re.M)]
    named = [layer for row in rows[1:] for layer in row.split(", ")]  # a row may hold two
    assert named == list(LAYERS), "docs/architecture.md's layer table: every layer of " \
        "pytest_netload/_layers.py, highest first"
