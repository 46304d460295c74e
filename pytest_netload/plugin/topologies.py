"""Tests on several topologies in one session: the `netload_topology` marker.

`@pytest.mark.netload_topology("netns-shaped:rate_bps=20Mbit/s", "lab/edge-2.toml")`
runs a test once per topology given (ids `[netns-shaped:rate_bps=20Mbit/s]`,
`[edge-2]`), instead of once on `--netload-topology`. It parametrises the
session-scoped fixture that builds the topology (`_netload_built`), so pytest
orders the tests by topology, builds each one once and tears it down before the
next; the session's engine stays. Under pytest-xdist the tests of one topology go
to one worker (plugin/xdist.py), so several DUTs are tested in parallel.

With `default=True` the marker gives a suite's own topology only while the session
was given none: `--netload-topology`, PYTEST_NETLOAD_TOPOLOGY, the ini key
`netload_topology` or the fake engine's topology win over it, and the test runs once on
that. An example suite written for a built-in DUT so runs unchanged on a lab's file
(conftest_examples/).

The marker's topologies are checked at collection, as `--netload-topology` is:
a bad one fails collection naming the test. A topology file there may not name PCI
ports or lcores unless it is the session's own: the engine, started once per session,
takes those from `--netload-topology`.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import NetloadConfigError
from .keys import SETTINGS_KEY, TOPOLOGY_KEY
from .options import BUILTIN_TOPOLOGIES, _topology

if TYPE_CHECKING:
    from ..topology.model import Topology

MARKER = "netload_topology"
HELP = (f"{MARKER}(*topologies, ids=None, default=False): run the test once on each "
        "topology, a built-in name with parameters (netns-shaped:rate_bps=20Mbit/s) or a "
        "TOML topology file, instead of on --netload-topology; with default=True only "
        "when the session was given no topology (--netload-topology, its environment "
        "variable or ini key win); under pytest-xdist the tests of one topology run in one "
        "worker. Provided by pytest-netload.")
BUILT_FIXTURE = "_netload_built"  # the session fixture that builds a topology (fixtures.py)


def topology_id(spec: str) -> str:
    """A topology's test id: a built-in spec as written, a file by its stem."""
    if spec.partition(":")[0] in BUILTIN_TOPOLOGIES:
        return spec
    return Path(spec).stem


def session_topology_given(config: pytest.Config) -> bool:
    """Whether the session was given its topology (on the command line, in the
    environment, in the ini file, or by the fake engine), not left at the default."""
    from .options import SETTINGS

    setting = next(s for s in SETTINGS if s.name == "netload_topology")
    if config.getoption(setting.name, None) is not None or os.environ.get(setting.env):
        return True
    if str(config.getini(setting.name)) != setting.default:  # an ini key naming another
        return True
    return config.stash[SETTINGS_KEY].fake_dut is not None


def _check(spec: Any, config: pytest.Config) -> str:
    """The marker's topology `spec`, checked as --netload-topology checks its value."""
    if not isinstance(spec, str):
        raise NetloadConfigError(f"{spec!r}: give a topology as a string, e.g. "
                                 "'netns-shaped:rate_bps=20Mbit/s' or 'lab/edge-1.toml'")
    spec = _topology(spec)
    settings = config.stash[SETTINGS_KEY]
    builtin = spec.partition(":")[0] in BUILTIN_TOPOLOGIES
    if settings.fake_dut is not None and builtin:
        raise NetloadConfigError(
            f"{spec!r} builds a real DUT, and this session runs on the fake engine "
            f"({settings.engine}): give topology files, or leave --netload-engine out")
    if not builtin and spec != settings.topology:
        from ..locks import port_lock_name

        topology = _load(spec, config)
        pci = [p.name for p in topology.ports
               if p.device and (port_lock_name(p.device) or "").startswith("pci-")]
        lcores = [p.name for p in topology.ports if p.lcores]
        if pci or lcores:
            raise NetloadConfigError(
                f"{spec}: port {(pci or lcores)[0]!r} names a PCI device or lcores, which "
                "the session's engine takes from --netload-topology only (it starts once, "
                "before any test): give this file as --netload-topology and run its tests "
                "in a session of their own")
    return spec


def _load(spec: str, config: pytest.Config) -> Topology:
    if spec == config.stash[SETTINGS_KEY].topology and TOPOLOGY_KEY in config.stash:
        return config.stash[TOPOLOGY_KEY]
    from ..topology.toml import load_topology

    return load_topology(spec)


def parametrize_topologies(metafunc: pytest.Metafunc) -> None:
    """A test with the marker runs once per topology it names (collection fails naming
    the test and the topology when one is wrong)."""
    mark = metafunc.definition.get_closest_marker(MARKER)
    if mark is None:
        return
    if BUILT_FIXTURE not in metafunc.fixturenames and \
            not any(m.name == MARKER for m in metafunc.definition.own_markers):
        return  # a module's or class's marker: only its tests on a topology take it
    where = f"{metafunc.definition.nodeid}: @pytest.mark.{MARKER}"
    try:
        unknown = sorted(set(mark.kwargs) - {"ids", "default"})
        if unknown:
            raise NetloadConfigError(f"no argument {unknown[0]!r}; it takes topologies, ids= "
                                     "and default=")
        if not isinstance(mark.kwargs.get("default", False), bool):
            raise NetloadConfigError(f"default={mark.kwargs['default']!r}: give True (a "
                                     "given topology wins) or False")
        if mark.kwargs.get("default") and session_topology_given(metafunc.config):
            return  # the session's topology wins over the suite's default
        if not mark.args:
            raise NetloadConfigError("give at least one topology, e.g. "
                                     "'netns-shaped:rate_bps=20Mbit/s'")
        if BUILT_FIXTURE not in metafunc.fixturenames:
            raise NetloadConfigError("the test uses no fixture of a topology (netload_ports, "
                                     "rfc2544, rate_controller, traffic, dut, ...)")
        specs = [_check(spec, metafunc.config) for spec in mark.args]
        ids = mark.kwargs.get("ids") or [topology_id(s) for s in specs]
        if len(ids) != len(specs) or len(set(specs)) != len(specs):
            raise NetloadConfigError("give each topology once, and as many ids as topologies")
    except NetloadConfigError as exc:
        message = f"{where}: {exc}"
    else:
        metafunc.parametrize(BUILT_FIXTURE, specs, indirect=True, scope="session",
                             ids=[str(i) for i in ids])
        return
    pytest.fail(message, pytrace=False)  # outside `except`: no chained traceback


def topology_of(item: pytest.Item) -> str | None:
    """The topology a test runs on (its marker's, else the session's); None for a test
    that builds none."""
    if BUILT_FIXTURE not in getattr(item, "fixturenames", ()):
        return None
    callspec = getattr(item, "callspec", None)
    if callspec is not None and BUILT_FIXTURE in callspec.params:
        return str(callspec.params[BUILT_FIXTURE])
    return item.config.stash[SETTINGS_KEY].topology


def for_request(config: pytest.Config, request: pytest.FixtureRequest,
                settings: Any) -> tuple[Any, Topology | None]:
    """The settings a topology fixture builds from (the marker's topology in place of the
    session's) and, for a topology file, its model; None for a built-in topology."""
    spec = getattr(request, "param", None)
    if spec is not None and spec != settings.topology:
        settings = dataclasses.replace(settings, topology=spec)
    if settings.builtin_topology:
        return settings, None
    return settings, _load(settings.topology, config)
