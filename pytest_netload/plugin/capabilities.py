"""What a test needs of its topology: the `netload_requires` marker and the
`netload_capabilities` fixture.

`@pytest.mark.netload_requires(ports=4, policer="10Mbit/s", dut_reset=True)` states
what the test cannot run without; on a topology that lacks it the test is skipped,
and the reason names what is missing and what the topology has:

    SKIPPED netload_requires: needs a policer at 10.00 Mbit/s; topology netns-router
    has 2 ports wired both ways, no line rate, a DUT with commands, counters, reset, ...

So an example suite runs on any topology given to it (conftest_examples/): the tests
that can run there run, the others say why not. Requirements of a module's and a
test's markers add up. The capabilities come from the topology (topology/
capabilities.py): its shape, what its DUT declares (a built-in DUT's info, a
topology file's `[capabilities]` table) and the session's DUT hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..errors import NetloadConfigError
from ..topology.capabilities import REQUIREMENTS, Capabilities, check_requirements

if TYPE_CHECKING:
    from ..topology.model import Topology

MARKER = "netload_requires"
HELP = (f"{MARKER}({'=..., '.join(REQUIREMENTS)}=...): skip the test, naming what is "
        "missing, on a topology without these: ports=N (at least N ports), both_ways=True "
        "(a pair of ports wired both ways), line_rate=True, dut=True (commands run on "
        "the DUT), dut_counters=True, dut_reset=True, policer=True or a CIR such as "
        "'10Mbit/s', shaper=True or a rate, loss=True (a DUT that drops a known share). "
        "Provided by pytest-netload.")


def configure(config: pytest.Config) -> None:
    """Register the marker and this module's fixtures (from the plugin's configure)."""
    config.addinivalue_line("markers", HELP)
    if not config.pluginmanager.has_plugin("netload-capabilities"):
        import sys

        config.pluginmanager.register(sys.modules[__name__], "netload-capabilities")


def _has_hook(config: pytest.Config, name: str) -> bool:
    """A plugin other than the built-in DUTs' own (a lab's conftest.py) implements the
    hook `name`."""
    from .dut_hooks import BUILTIN_PLUGIN

    return any(impl.plugin_name != BUILTIN_PLUGIN
               for impl in getattr(config.hook, name).get_hookimpls())


def capabilities_of(config: pytest.Config, topology: Topology, dut: Any) -> Capabilities:
    """The capabilities of `topology` built with DUT handle `dut` (None: no DUT)."""
    from .dut_hooks import _is_builtin

    builtin = dut is not None and _is_builtin(dut)
    commands = dut is not None and callable(getattr(dut, "run", None)) and (
        getattr(dut, "namespace", None) is not None or getattr(dut, "ssh", None) is not None)
    return Capabilities.of(
        topology, dut_info=dut.info if builtin else None, dut=commands,
        dut_counters=dut is not None and (builtin or
                                          _has_hook(config, "pytest_netload_dut_counters")),
        dut_reset=dut is not None and (builtin or _has_hook(config, "pytest_netload_dut_reset")))


def requirements_of(item: pytest.Item) -> dict[str, Any]:
    """What the test's `netload_requires` markers (module, class, function) ask, merged;
    a bad argument fails the test naming the marker."""
    merged: dict[str, Any] = {}
    for mark in reversed(list(item.iter_markers(MARKER))):  # the closest wins
        try:
            merged.update(check_requirements(mark.kwargs, mark.args))
        except NetloadConfigError as exc:
            pytest.fail(f"{item.nodeid}: @pytest.mark.{MARKER}: {exc}", pytrace=False)
    return merged


@pytest.fixture
def netload_capabilities(pytestconfig: pytest.Config,
                         _netload_built: tuple[Topology, Any]) -> Capabilities:
    """What the test's topology can test: ports, wiring, line rate, the DUT's commands,
    counters and reset, a policer's or shaper's rate, a known loss (topology/
    capabilities.py)."""
    topology, dut = _netload_built
    return capabilities_of(pytestconfig, topology, dut)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    """After the test's fixtures are set up: skip it when its topology (the one it was
    given, built or loaded) lacks what its `netload_requires` markers ask. A hook, not
    an autouse fixture: a test that uses nothing of ours stays no netload test
    (selection.py)."""
    result = yield
    if item.get_closest_marker(MARKER) is None:
        return result
    needs = requirements_of(item)
    built = getattr(item, "funcargs", {}).get("_netload_built")
    if not needs or built is None:
        return result
    has = capabilities_of(item.config, *built)
    missing = has.missing(needs)
    if missing:
        reason = (f"{MARKER}: needs {', '.join(missing)}; topology {has.topology} has "
                  f"{has.describe()}")
        try:  # shown at the test's line, as a skip marker's is (pytest's own idiom)
            raise pytest.skip.Exception(reason, _use_item_location=True)
        except TypeError:  # a pytest without it: shown here
            pytest.skip(reason)
    return result
