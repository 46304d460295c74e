"""The native core's layering (native/c_layers.py): every .c file of native/src has a
layer, none depends on a file of a higher layer (calls, a function's address, a global
variable), the files call one another without a circle, and none has more than 600 lines.
Pure Python: it reads the C text, nothing is built. Run with -s to see the graph; a
failure prints it with what each file uses of the others."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
# main before the C core was layered (issue 33, part 4): its files called round
BEFORE = "5e96d208f224dd1d99db8b76602021bc02052c01"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("c_layers", ROOT / "native" / "c_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["c_layers"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


c_layers = _load()
FOUND = c_layers.sources()
DEPS = c_layers.edges(FOUND)


def _graph() -> str:
    return "\n" + c_layers.format_graph(DEPS, (s.name for s in FOUND), symbols=True)


def test_every_c_file_has_a_layer_and_every_listed_file_exists() -> None:
    names = {s.name for s in FOUND}
    assert "run.c" in names and "eal.c" in names  # the walk found the sources
    assert c_layers.unplaced(FOUND) == []
    listed = [f for _, _, files in c_layers.LAYERS for f in files]
    assert sorted(listed) == sorted(names), "LAYERS in native/c_layers.py lists other files"
    assert len(listed) == len(set(listed))


def test_no_c_file_depends_on_a_higher_layer() -> None:
    offenders = c_layers.upward(DEPS)
    assert not offenders, "\n".join(offenders) + _graph()


def test_the_c_files_call_one_another_without_a_circle() -> None:
    print(_graph())
    circles = c_layers.cycles(DEPS)
    assert circles == [], "\n".join(
        " -> ".join(c_layers.a_circle(DEPS, group)) for group in circles) + _graph()


def test_no_c_file_has_more_than_600_lines() -> None:
    assert c_layers.MAX_LINES == 600
    assert c_layers.too_long(FOUND) == []


def test_the_graph_has_the_edges_the_code_has() -> None:
    calls = c_layers.calls(FOUND)
    for edge in [("run.c", "rx.c"), ("run.c", "tx.c"), ("run.c", "conf.c"), ("rx.c", "nd.c"),
                 ("rx.c", "rx_account.c"), ("results.c", "rx_account.c"), ("tx.c", "fill.c"),
                 ("stream.c", "pool.c"), ("stream.c", "port.c"), ("port.c", "pool.c"),
                 ("nd_control.c", "nd.c"), ("nd_control.c", "port.c"), ("run.c", "port.c")]:
        assert edge in calls, edge
    assert "netload_nd_input()" in calls[("rx.c", "nd.c")]
    assert "netload_nd_ports" in DEPS[("rx.c", "nd.c")]  # a variable: a use, not a call
    # the lower file is told through what the higher one sets, never calls up
    for edge in [("nd.c", "run.c"), ("nd_control.c", "run.c"), ("pool.c", "run.c"),
                 ("pool.c", "port.c"), ("port.c", "nd.c"), ("port.c", "nd_control.c"),
                 ("nd.c", "nd_control.c"), ("rx_account.c", "rx.c")]:
        assert edge not in DEPS, edge
    assert "netload_port_lend_queues()" in calls[("run.c", "port.c")]
    assert "netload_pool_set_reclaim()" in calls[("port.c", "pool.c")]
    assert "netload_port_set_close_hook()" in calls[("nd_control.c", "port.c")]


def test_the_docs_show_the_graph_of_today() -> None:
    text = c_layers.format_layers() + "\n\n" + c_layers.format_graph(
        c_layers.calls(FOUND), (s.name for s in FOUND))
    assert text in (ROOT / "docs" / "architecture.md").read_text(), \
        "docs/architecture.md: paste the output of `python3 native/c_layers.py`\n" + text


def test_the_reader_of_c(tmp_path: Path) -> None:
    for name, text in {
        "high.c": '#include "x.h"\n'
                  "/* low_call(); in a comment */\n"
                  "static int local(void) { return 0; }\n"
                  "int\nhigh_entry(struct low_var *p)\n{\n"
                  '\tconst char *s = "low_call() in a string";\n'
                  "\tp->low_call = 1;\n\tp->x.low_fn = 2;\n"
                  "\treturn low_call() + local() + low_var + s[0];\n}\n",
        "low.c": "int low_var = 1;\nstatic int hidden;\nint *low_table[4];\n"
                 "struct low_state { int n; };\n"
                 "int low_call(void);\n"
                 "#define LOW_SAY(x) mid_say(x)\n"
                 "int\nlow_call(void)\n{\n\treturn LOW_SAY(hidden);\n}\n"
                 "static int local(void) { return 1; }\n"
                 "void\nlow_fn(void)\n{\n\tregister_hook(high_entry);\n}\n",
        "mid.c": "int\nmid_say(int x)\n{\n\treturn x + low_table[0][0];\n}\n",
    }.items():
        (tmp_path / name).write_text(text)
    found = c_layers.sources(tmp_path)
    low = next(s for s in found if s.name == "low.c")
    assert dict(low.functions) == {"low_call": False, "local": True, "low_fn": False}
    assert dict(low.variables) == {"low_var": False, "hidden": True, "low_table": False}
    deps = c_layers.edges(found)
    assert deps == {
        ("high.c", "low.c"): ["low_call()", "low_var"],  # not the comment, string or members
        ("low.c", "high.c"): ["high_entry()"],            # a function's address is a use
        ("low.c", "mid.c"): ["mid_say()"],                # in a macro's body
        ("mid.c", "low.c"): ["low_table"],
    }
    assert c_layers.calls(found) == {("high.c", "low.c"): ["low_call()"],
                                     ("low.c", "mid.c"): ["mid_say()"]}
    assert c_layers.cycles(deps) == [["high.c", "low.c", "mid.c"]]
    assert c_layers.a_circle(deps, ["high.c", "low.c", "mid.c"]) == ["high.c", "low.c",
                                                                    "high.c"]
    assert c_layers.unplaced(found) == [
        f"{n} has no layer: add it to LAYERS in native/c_layers.py"
        for n in ("high.c", "low.c", "mid.c")]
    (tmp_path / "mid.c").write_text("int x;\n" * 601)
    assert c_layers.too_long(c_layers.sources(tmp_path)) == [
        "mid.c has 601 lines; at most 600: split it along a seam"]


def test_the_checks_fail_on_the_sources_before_the_layering(tmp_path: Path) -> None:
    """main before this part of issue 33: run -> rx -> nd -> run, port <-> nd, port <-> pool,
    and rx.c, nd.c and port.c over 600 lines. The checks must catch every one of them."""
    if shutil.which("git") is None or subprocess.run(
            ["git", "-C", str(ROOT), "cat-file", "-e", f"{BEFORE}^{{commit}}"],
            capture_output=True, check=False).returncode != 0:
        pytest.skip("needs the repository's history (git, a full clone)")
    listing = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", BEFORE,
                              "native/src/"], capture_output=True, text=True, check=True)
    for path in listing.stdout.split():
        if path.endswith(".c"):
            (tmp_path / Path(path).name).write_bytes(subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{BEFORE}:{path}"], capture_output=True,
                check=True).stdout)
    found = c_layers.sources(tmp_path)
    deps = c_layers.edges(found)
    calls = c_layers.calls(found)
    for a, b in [("run.c", "rx.c"), ("rx.c", "nd.c"), ("nd.c", "run.c"), ("port.c", "nd.c"),
                 ("nd.c", "port.c"), ("port.c", "pool.c"), ("pool.c", "port.c")]:
        assert (a, b) in calls, (a, b)
    assert c_layers.cycles(calls) == [["conf.c", "nd.c", "pool.c", "port.c", "run.c", "rx.c",
                                       "stream.c"]]
    assert c_layers.upward(deps) == [
        "nd.c (port users) uses netload_run_active() of run.c (run, a higher layer)",
        "pool.c (pools) uses netload_port_is_open() of port.c (ports, a higher layer)",
        "pool.c (pools) uses netload_run_active() of run.c (run, a higher layer)",
        "port.c (ports) uses netload_nd_port_closed() of nd.c (port users, a higher layer)"]
    assert [p for p in c_layers.problems(found) if p.startswith("circle")] == [
        "circle between conf.c, nd.c, pool.c, port.c, run.c, rx.c, stream.c: "
        "conf.c -> nd.c -> run.c -> conf.c"]
    assert c_layers.too_long(found) == [
        f"{name} has {n} lines; at most 600: split it along a seam"
        for name, n in (("nd.c", 657), ("port.c", 669), ("rx.c", 829))]
