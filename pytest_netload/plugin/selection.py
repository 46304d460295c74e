"""Which collected tests are netload tests, and whether they can run here.

A **netload test** is a collected test item that

- uses a fixture pytest-netload provides (`netload_engine`, `netload_ports`,
  `netload_topology`, `traffic`, `rate_controller`, `latency_meter`, `port_counts`, `rfc2544`,
  `y1564`, `rfc2889`, `dut`, ...), directly or through fixtures of its own that
  request one; a fixture of the same name that overrides ours without requesting it,
  or a test argument of that name given by `parametrize`, does not count; or
- carries one of the markers `netload`, `rfc2544`, `y1564` or `rfc2889` (its own,
  its class's or its module's).

A session that collects no netload test is not a netload session: the plugin
prints nothing, writes no results, sweeps nothing and installs no signal
handler there, and the overall verdict counts netload tests only.

Light on purpose: pytest itself and nothing of the engine or numpy.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

__all__ = ["NETLOAD_MARKERS", "NETLOAD_TEST_KEY", "is_netload_test", "maybe_netload",
           "mark_netload_tests", "unavailable", "unavailable_text"]

NETLOAD_MARKERS = ("netload", "rfc2544", "y1564", "rfc2889")
PLUGIN_PACKAGE = __name__.rpartition(".")[0]  # pytest_netload.plugin
# autouse helpers that every test gets: using them does not make a netload test
AUTOUSE_FIXTURES = frozenset({"_netload_fresh_ports"})
NETLOAD_TEST_KEY = pytest.StashKey[bool]()  # on an item: it is a netload test


def _ours(fixturedef: Any) -> bool:
    func = getattr(fixturedef, "func", None)
    module = getattr(func, "__module__", None) or ""
    return module == PLUGIN_PACKAGE or module.startswith(PLUGIN_PACKAGE + ".")


def _uses_ours(name: str, defs: Any) -> bool:
    """Whether the fixture `name` the test gets is ours, or one that overrides ours and
    requests it (pytest uses the last definition; it reaches the one before only when
    that one requests its own name)."""
    if name in AUTOUSE_FIXTURES:
        return False
    for fixturedef in reversed(tuple(defs or ())):
        if _ours(fixturedef):
            return True
        if name not in getattr(fixturedef, "argnames", ()):
            return False
    return False


def _has_marker(node: Any) -> bool:
    return any(node.get_closest_marker(m) is not None for m in NETLOAD_MARKERS)


def is_netload_test(item: pytest.Item) -> bool:
    """Whether `item` is a netload test (see the module's docstring)."""
    known = item.stash.get(NETLOAD_TEST_KEY, None)
    if known is not None:
        return known
    answer = _has_marker(item)
    if not answer:
        info = getattr(item, "_fixtureinfo", None)
        name2defs = getattr(info, "name2fixturedefs", None)
        if name2defs is not None:
            answer = any(_uses_ours(name, name2defs.get(name))
                         for name in getattr(item, "fixturenames", ()))
    item.stash[NETLOAD_TEST_KEY] = answer
    return answer


def maybe_netload(metafunc: pytest.Metafunc) -> bool:
    """Cheap, before parametrisation: whether the test function may be a netload test
    (a marker of ours, or a fixture the plugin defines in its closure). A False here
    lets pytest_generate_tests return before importing the marker parsers."""
    if _has_marker(metafunc.definition):
        return True
    if metafunc.definition.get_closest_marker("netload_topology") is not None:
        return True
    name2defs = getattr(metafunc, "_arg2fixturedefs", {}) or {}
    return any(_uses_ours(name, name2defs.get(name)) for name in metafunc.fixturenames)


def mark_netload_tests(items: list[pytest.Item]) -> list[pytest.Item]:
    """The netload tests among `items` (each item's answer is kept in its stash)."""
    return [item for item in items if is_netload_test(item)]


def unavailable(items: list[pytest.Item]) -> list[tuple[pytest.Item, str]]:
    """The netload tests among `items` that cannot run in this process, each with the
    built-in topology it needs: one the plugin builds of namespaces and veths (root
    only), while this process is not root. Empty as root."""
    if os.geteuid() == 0:
        return []
    from .options import BUILTIN_TOPOLOGIES
    from .topologies import topology_of

    out = []
    for item in items:
        spec = topology_of(item)
        name = str(spec).partition(":")[0] if spec is not None else None
        if name in BUILTIN_TOPOLOGIES:
            out.append((item, name))
    return out


def unavailable_text(count: int, topologies: list[str], uid: int | None = None) -> str:
    """The usage error of a session whose netload tests need a built-in DUT (root) and
    that is not root: what happened, then the fixes, the skip option last."""
    uid = os.geteuid() if uid is None else uid
    names = ", ".join(topologies)
    tests = f"{count} netload test{'s' if count != 1 else ''}"
    return (
        f"netload: {tests} could not run: {'they need' if count != 1 else 'it needs'} the "
        f"built-in topology {names} (a DUT the plugin builds of network namespaces and veth "
        f"pairs, which needs root), and this session is not root (uid {uid}). Give the "
        "topology of your device (--netload-topology=lab.toml, docs/topology-files.md), or "
        "run as root (sudo -E python3 -m pytest ...), or try the plugin without hardware on "
        "the fake engine (--netload-engine=fake). To skip such tests instead, pass "
        "--netload-skip-unavailable (ini: netload_skip_unavailable = true).")
