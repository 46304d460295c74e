"""The `netload` and `rfc2544` markers: each maps to its settings class
(`NetloadMark`, `Rfc2544Mark`, in bench/settings.py), which reads and checks its
arguments itself; they are parsed at collection, so a wrong argument fails before any
traffic with a message naming the test and the argument. The frame-size
parametrisation and the checks against the session's topology are here too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from ..bench.settings import (
    NETLOAD_FIELDS,
    RFC2544_FIELDS,
    SEARCHES,  # noqa: F401  (its old home)
    NetloadMark,
    Rfc2544Mark,
    both_ways_problem,
)
from ..errors import NetloadConfigError
from ..rfc2544 import RFC2544_FRAME_SIZES, FrameSize, frame_size_label
from .marker_help import NETLOAD_HELP, RFC2544_HELP  # noqa: F401  (their old home)

NETLOAD_ARGS = tuple(NETLOAD_FIELDS)
RFC2544_ARGS = tuple(RFC2544_FIELDS)


def parse_netload(mark: pytest.Mark) -> NetloadMark:
    return NetloadMark.from_marker(mark)


def parse_rfc2544(mark: pytest.Mark) -> Rfc2544Mark:
    return Rfc2544Mark.from_marker(mark)


def frame_size_id(size: FrameSize) -> str:
    return frame_size_label(size)


def parametrize_frame_sizes(metafunc: pytest.Metafunc) -> None:
    """Run a test taking `frame_size` once per size of its rfc2544 (or netload) marker,
    with ids such as test_x[64B] and test_x[imix]."""
    if "frame_size" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0] if mark.args else mark.kwargs.get("argnames", "")
        if "frame_size" in (names.replace(" ", "").split(",") if isinstance(names, str)
                            else list(names)):
            return  # the user parametrised it
    sizes: tuple[FrameSize, ...] = RFC2544_FRAME_SIZES
    rfc = metafunc.definition.get_closest_marker("rfc2544")
    net = metafunc.definition.get_closest_marker("netload")
    if rfc is not None:
        sizes = parse_rfc2544(rfc).frame_sizes
    elif net is not None and parse_netload(net).frame_sizes:
        sizes = parse_netload(net).frame_sizes or sizes
    metafunc.parametrize("frame_size", sizes, ids=[frame_size_id(s) for s in sizes])


@dataclass(frozen=True)
class TopologyFacts:
    """What collection knows of the session's topology without building it."""

    name: str
    wires: tuple[str, ...]
    """"tx->rx" of each wire, in wire order."""
    line_rate_bps: int | None
    mtu: int | None
    """The ports' MTU; None where unknown before the ports open (a topology file)."""
    source: str
    """Where the line rate would be declared, for the fix."""


def topology_facts(config: pytest.Config) -> TopologyFacts | None:
    """The session's topology as far as it is known at collection: a topology file's
    model (loaded at configure), or a built-in topology's definition (topology/facts.py)."""
    from .keys import SETTINGS_KEY, TOPOLOGY_KEY

    settings = config.stash.get(SETTINGS_KEY, None)
    topology = config.stash.get(TOPOLOGY_KEY, None)
    if topology is not None:
        return TopologyFacts(topology.name, tuple(f"{w.tx}->{w.rx}" for w in topology.wires),
                             topology.line_rate_bps, None,
                             f"set [topology] line_rate in {topology.source or 'the file'}")
    if settings is None or not settings.builtin_topology:
        return None
    from ..topology import facts

    return TopologyFacts(settings.topology.partition(":")[0],
                         tuple(f"{tx}->{rx}" for tx, rx in facts.WIRES), facts.LINE_RATE_BPS,
                         facts.MTU, "its veth ports have none")


def check_against_topology(mark: NetloadMark | Rfc2544Mark, facts: TopologyFacts,
                           required: frozenset[str] = frozenset()) -> None:
    """NetloadConfigError for what a parsed marker asks of a topology that `facts` says it
    does not have: a wire, a line rate to take a share of, frames above its MTU. What the
    test's netload_requires asks for (`required`: its keywords) is left to it: such a
    test skips at set-up naming what the topology lacks, rather than failing collection."""
    where = f"topology {facts.name!r}"
    if "ports" not in required and mark.wire >= len(facts.wires):
        raise NetloadConfigError(
            f"wire={mark.wire}: {where} has wires 0..{len(facts.wires) - 1} "
            f"({', '.join(facts.wires)}); give one of those")
    if isinstance(mark, Rfc2544Mark) and mark.direction == "both" and \
            "both_ways" not in required:
        problem = both_ways_problem(facts.name, list(facts.wires), mark.wire)
        if problem is not None:
            raise NetloadConfigError(problem)
    rate_key, rate = ("rate", mark.rate) if isinstance(mark, NetloadMark) else \
        ("max_rate", mark.max_rate)
    if rate is not None and rate.kind == "percent" and not facts.line_rate_bps and \
            "line_rate" not in required:
        raise NetloadConfigError(
            f"{rate_key}='{rate}' is a share of the line rate, but {where} declares none "
            f"({facts.source}); give the rate in pps or bit/s, e.g. '100kpps'")
    if facts.mtu is not None:
        from ..traffic.streams import IMIX_PRESETS

        for size in mark.frame_sizes or ():
            if isinstance(size, str) and size not in IMIX_PRESETS:
                continue  # "pcap": the replay's frames, checked against the ports' MTU
            largest = max(IMIX_PRESETS[size]) if isinstance(size, str) else size
            if largest - 18 > facts.mtu:  # 14-byte header and 4-byte FCS around the packet
                raise NetloadConfigError(
                    f"frame size {frame_size_label(size)} carries {largest - 18} bytes above "
                    f"L2, more than the MTU {facts.mtu} of {where}'s ports; drop it from "
                    "frame_sizes, or use a topology whose ports and DUT take jumbo frames")


def check_markers(metafunc: pytest.Metafunc,
                  more: tuple[tuple[str, Callable[[pytest.Mark], Any]], ...] = ()) -> None:
    """Parse every netload marker of a test at collection (and the markers `more` names
    with their parsers: y1564, rfc2889), and check netload's and rfc2544's against the
    session's topology; fail naming test and argument."""
    facts = topology_facts(metafunc.config)
    checked = {"netload", "rfc2544"}
    required = frozenset(key for mark in metafunc.definition.iter_markers("netload_requires")
                         for key, value in mark.kwargs.items() if value)
    for name, parse in (("netload", parse_netload), ("rfc2544", parse_rfc2544), *more):
        for mark in metafunc.definition.iter_markers(name):
            try:
                parsed = parse(mark)
                if facts is not None and name in checked:
                    check_against_topology(parsed, facts, required)
                continue
            except NetloadConfigError as exc:
                message = f"{metafunc.definition.nodeid}: @pytest.mark.{name}: {exc}"
            pytest.fail(message, pytrace=False)  # outside `except`: no chained traceback
