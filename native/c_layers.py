"""The layers of the native core (native/src/*.c), and the rule between them.

`LAYERS` lists them highest first. A .c file may call the functions (and use the global
variables) of its own layer and of any lower one, never of a higher one; the files call
one another without a circle; and no .c file has more than `MAX_LINES` lines. Where a
lower file must know something of a higher one, the higher one tells it through a flag
or a function pointer it sets in the lower one: run.c lends the ports' queues to a run
(port.c), port.c gives pool.c the function that reclaims the mbufs ports sent, and
nd_control.c gives port.c the hook that drops a port's ARP/ND state at its close.

The graph is read from the C text, well enough for this code base: comments, strings and
character constants are dropped; a function is defined where a file-level name and
parameter list are followed by a body; a global variable where a file-level declaration
without `static`, `extern` or `typedef` names one. A file depends on another when it names
a function or variable that the other defines without `static` (and it does not define
itself): a call when `(` follows the name, else a use (a function's address, a variable).
Member names (`.x`, `->x`) and struct tags are not names of either kind. A macro's body
counts for the file that defines the macro. The headers (internal.h, run.h, nd.h, port.h,
csum.h) hold declarations and static inline helpers and belong to no layer: what their
helpers name is not seen (they name only variables of lower layers).

tests/unit/test_c_layers.py checks the sources on every CI run (and that these checks
catch the circles of the sources before the layering). docs/architecture.md shows what

    python3 native/c_layers.py            # the layers and the graph between the files
    python3 native/c_layers.py --check    # exit 1 naming each problem (optionally: a src dir)

print.
"""

from __future__ import annotations

import pathlib
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pytest_netload._layers import cycles  # Tarjan, the same as for the Python layers

SRC = pathlib.Path(__file__).resolve().parent / "src"
MAX_LINES = 600

# (layer, what it holds, its .c files), highest first
LAYERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("run", "a run's life (start, workers, poll, stop, free) and what it measured",
     ("run.c", "results.c", "interval.c")),
    ("tasks", "a worker's tasks: the run's configuration loaded into them, the TX step, "
     "the RX step and its accounting, the delay line",
     ("conf.c", "tx.c", "rx.c", "rx_expect.c", "rx_account.c", "flow.c", "fwd.c")),
    ("port users", "streams (templates, the per-packet writer) and a port's ARP/ND",
     ("stream.c", "fill.c", "nd_control.c", "nd.c")),
    ("ports", "DPDK devices opened as ports, their NIC clocks, their AF_XDP sockets",
     ("port.c", "port_clock.c", "port_xsk.c")),
    ("pools", "the mbuf pools TX frames are built in, and the engine's memory",
     ("pool.c",)),
    ("base", "errors, logging, EAL, clocks, a thread's CPU use; the histogram layout",
     ("hist.c", "eal.c", "cpu.c")),
)

_LAYER_OF = {name: i for i, (_, _, files) in enumerate(LAYERS) for name in files}
_ORDER = {name: k for k, name in enumerate(n for _, _, files in LAYERS for n in files)}

_STRIP = re.compile(r"""/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n\\]|\\.)*", re.M | re.S)
_TOKEN = re.compile(r"\d[\w.]*|[A-Za-z_]\w*|->|\S")
_TAGS = {"struct", "union", "enum"}


@dataclass(frozen=True)
class Source:
    """What one .c file defines and names."""

    name: str
    lines: int
    functions: Mapping[str, bool]    # name -> static
    variables: Mapping[str, bool]    # name -> static
    names: Mapping[str, bool]        # every name it uses -> whether it calls it somewhere


def _strip(text: str) -> str:
    """Comments and literals out (a comment becomes a space, a literal "" or '')."""
    def repl(m: re.Match[str]) -> str:
        s = m.group()
        if s.startswith("/"):
            return " " + "\n" * s.count("\n")
        return s[0] * 2
    return _STRIP.sub(repl, text)


def _is_ident(tok: str) -> bool:
    return tok[0].isalpha() or tok[0] == "_"


def _uses(toks: list[str], names: dict[str, bool]) -> None:
    for i, tok in enumerate(toks):
        if not _is_ident(tok) or (i and toks[i - 1] in (".", "->", *_TAGS)):
            continue
        called = i + 1 < len(toks) and toks[i + 1] == "("
        names[tok] = names.get(tok, False) or called


def _declared_name(stmt: list[str]) -> str | None:
    """The name a file-level declaration (up to its `;`, `=` or `[`) declares."""
    for i, tok in enumerate(stmt):
        if tok in ("=", "[", ";", ","):
            prev = stmt[i - 1] if i else ""
            if i and _is_ident(prev) and (i < 2 or stmt[i - 2] not in _TAGS):
                return prev
            return None
    return None


def scan(name: str, text: str) -> Source:
    """The functions and variables `text` (a .c file) defines, and the names it uses."""
    code = _strip(text)
    names: dict[str, bool] = {}
    for directive in _DIRECTIVE.findall(code):
        if not re.match(r"\s*#\s*include\b", directive):
            _uses(_TOKEN.findall(directive.replace("\\\n", " "))[2:], names)
    toks = _TOKEN.findall(_DIRECTIVE.sub(" ", code))
    _uses(toks, names)
    functions: dict[str, bool] = {}
    variables: dict[str, bool] = {}
    depth = 0
    body = False          # the braces open a function's body
    stmt: list[str] = []  # the file-level tokens of the current declaration
    for tok in toks:
        if tok == "{":
            if depth == 0 and stmt and "=" not in stmt and ")" in stmt:
                paren = stmt.index("(")
                if paren and _is_ident(stmt[paren - 1]):
                    functions[stmt[paren - 1]] = "static" in stmt
                    body = True
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth == 0 and body:
                body = False
                stmt = []
        elif depth == 0:
            stmt.append(tok)
            if tok == ";":
                first_call = next((i for i in range(1, len(stmt)) if stmt[i] == "(" and
                                   _is_ident(stmt[i - 1])), len(stmt))
                declared = _declared_name(stmt)
                cut = min((stmt.index(t) for t in ("=", "[") if t in stmt), default=len(stmt))
                if (declared is not None and first_call >= cut and stmt[0] != "typedef"
                        and "extern" not in stmt):
                    variables[declared] = "static" in stmt
                stmt = []
    return Source(name, text.count("\n"), functions, variables, names)


def sources(src: pathlib.Path = SRC) -> list[Source]:
    return [scan(p.name, p.read_text()) for p in sorted(src.glob("*.c"))]


def edges(found: Iterable[Source]) -> dict[tuple[str, str], list[str]]:
    """(file, file it depends on) -> the names it uses there, `name()` for a function."""
    found = list(found)
    owner: dict[str, tuple[str, bool]] = {}
    for s in found:
        for kind, table in ((True, s.functions), (False, s.variables)):
            for sym, static in table.items():
                if not static:
                    owner[sym] = (s.name, kind)
    out: dict[tuple[str, str], list[str]] = {}
    for s in found:
        for sym in sorted(s.names):
            if sym in s.functions or sym in s.variables or sym not in owner:
                continue
            other, is_function = owner[sym]
            if other != s.name:
                out.setdefault((s.name, other), []).append(sym + "()" * is_function)
    return out


def calls(found: Iterable[Source]) -> dict[tuple[str, str], list[str]]:
    """The edges made of calls only (the call graph)."""
    found = list(found)
    called = {s.name: {sym for sym, c in s.names.items() if c} for s in found}
    out: dict[tuple[str, str], list[str]] = {}
    for (a, b), syms in edges(found).items():
        kept = [sym for sym in syms if sym.endswith("()") and sym[:-2] in called[a]]
        if kept:
            out[(a, b)] = kept
    return out


def a_circle(pairs: Iterable[tuple[str, str]], group: list[str]) -> list[str]:
    """One shortest circle through the first file of `group` (a strongly connected group),
    as the files it passes, the first one again at its end."""
    graph: dict[str, list[str]] = {}
    for a, b in sorted(pairs):
        if a in group and b in group:
            graph.setdefault(a, []).append(b)
    start = group[0]
    paths = [[start]]
    while paths:
        path = paths.pop(0)
        for nxt in graph.get(path[-1], []):
            if nxt == start:
                return path + [start]
            if nxt not in path:
                paths.append(path + [nxt])
    return []


def unplaced(found: Iterable[Source]) -> list[str]:
    return [f"{s.name} has no layer: add it to LAYERS in native/c_layers.py"
            for s in found if s.name not in _LAYER_OF]


def upward(deps: Mapping[tuple[str, str], list[str]]) -> list[str]:
    out = []
    for (a, b), syms in sorted(deps.items()):
        if a in _LAYER_OF and b in _LAYER_OF and _LAYER_OF[b] < _LAYER_OF[a]:
            out.append(f"{a} ({LAYERS[_LAYER_OF[a]][0]}) uses {', '.join(syms)} of {b} "
                       f"({LAYERS[_LAYER_OF[b]][0]}, a higher layer)")
    return out


def too_long(found: Iterable[Source]) -> list[str]:
    return [f"{s.name} has {s.lines} lines; at most {MAX_LINES}: split it along a seam"
            for s in found if s.lines > MAX_LINES]


def problems(found: Iterable[Source]) -> list[str]:
    """Everything against the rule, one sentence each; [] when the sources keep it."""
    found = list(found)
    deps = edges(found)
    return (unplaced(found) + upward(deps) +
            [f"circle between {', '.join(group)}: {' -> '.join(a_circle(deps, group))}"
             for group in cycles(deps)] +
            too_long(found))


def _rank(name: str) -> tuple[int, str]:
    return (_ORDER.get(name, len(_ORDER)), name)


def format_graph(deps: Mapping[tuple[str, str], list[str]], names: Iterable[str] = (),
                 symbols: bool = False) -> str:
    """One line per file, highest layer first: the files it depends on (and what of them)."""
    targets: dict[str, list[str]] = {}
    for (a, b), syms in deps.items():
        targets.setdefault(a, []).append(f"{b} ({', '.join(syms)})" if symbols else b)
    files = sorted({*names, *targets}, key=_rank)
    width = max(map(len, files), default=0)
    return "\n".join(
        f"{f:<{width}} -> {', '.join(sorted(targets.get(f, []), key=_rank)) or '-'}"
        for f in files)


def format_layers() -> str:
    width = max(len(layer) for layer, _, _ in LAYERS)
    return "\n".join(f"{layer:<{width}}  {' '.join(files)}" for layer, _, files in LAYERS)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    rest = [a for a in argv if a != "--check"]
    found = sources(pathlib.Path(rest[0]) if rest else SRC)
    if check:
        bad = problems(found)
        for line in bad:
            print(line, file=sys.stderr)
        if bad:
            print("\n" + format_graph(edges(found), (s.name for s in found), symbols=True),
                  file=sys.stderr)
        return 1 if bad else 0
    print(format_layers())
    print()
    print(format_graph(calls(found), (s.name for s in found)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
