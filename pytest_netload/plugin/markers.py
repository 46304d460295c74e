"""The `netload` and `rfc2544` markers: whitelisted arguments, parsed into frozen
dataclasses (`NetloadMark`, `Rfc2544Mark`, in bench/settings.py) at collection, so
a wrong argument fails before any traffic with a message naming the test and the
argument.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from ..bench.settings import (
    DIRECTIONS,
    NetloadMark,
    Rfc2544Mark,
    both_ways_problem,
    time_budget_seconds,
)
from ..errors import NetloadConfigError
from ..rfc2544 import RFC2544_FRAME_SIZES, FrameSize, check_frame_sizes, frame_size_label
from ..rfc2544.throughput import DEFAULT_RESOLUTION_RATIO, Resolution, check_reachable
from ..rfc2544.trial import STEADY_STATES
from ..units import Rate, as_rate, run_seconds
from .marker_help import NETLOAD_HELP, RFC2544_HELP  # noqa: F401  (their old home)

SEARCHES = ("binary", "mlrsearch")


def _count(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise NetloadConfigError(f"{name}={value!r}: give a whole number from {low} to {high}")
    return value


def _resolution(value: Any) -> float | Rate:
    """The marker's resolution: a ratio in (0, 1) of the lower bound or a rate > 0."""
    if isinstance(value, (str, Rate)):
        fix = ("give a ratio of the lower bound in (0, 1), e.g. 0.005, or a rate, e.g. "
               "'100pps' or '1Mbit/s'")
        try:
            rate = as_rate(value, what="resolution")
        except NetloadConfigError:
            raise NetloadConfigError(f"resolution={value!r}: {fix}") from None
        if rate.kind == "percent":
            raise NetloadConfigError(
                f"resolution={value!r}: a share of the line rate is not a search resolution; "
                f"{fix}")
        if not (math.isfinite(rate.value) and rate.value > 0):
            raise NetloadConfigError(f"resolution={value!r}: {fix}")
        return rate
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not 0 < value < 1:  # NaN compares false; isfinite overflows on huge ints
        raise NetloadConfigError(
            f"resolution={value!r}: give a ratio of the lower bound in (0, 1), e.g. 0.005 "
            "(0.5 %), or a rate, e.g. '100pps' or '1Mbit/s'")
    return float(value)


def _run_seconds(name: str, value: Any, zero_ok: bool = False) -> float:
    """Time a run spends: > 0 (or >= 0) and at most 24 h, the error naming the argument."""
    return run_seconds(value, what=name, zero_ok=zero_ok)


NETLOAD_ARGS = ("rate", "pattern", "duration", "frame_sizes", "flows", "wire")
RFC2544_ARGS = ("frame_sizes", "trial_duration", "loss_tolerance", "search", "resolution",
                "max_trials", "retries", "drain", "flows", "max_rate", "wire", "learning_frames",
                "warmup", "goals", "time_budget", "steady_state", "direction", "stream",
                "dut_health")


def _kwargs(mark: pytest.Mark, allowed: tuple[str, ...]) -> dict[str, Any]:
    if mark.args:
        raise NetloadConfigError(
            f"positional arguments {list(mark.args)!r}: write them as keywords "
            f"({', '.join(allowed)})")
    unknown = sorted(set(mark.kwargs) - set(allowed))
    if unknown:
        raise NetloadConfigError(
            f"unknown argument {unknown[0]!r}; {mark.name} takes {', '.join(allowed)}: "
            "rename or remove it")
    return dict(mark.kwargs)


def parse_netload(mark: pytest.Mark) -> NetloadMark:
    kw = _kwargs(mark, NETLOAD_ARGS)
    out: dict[str, Any] = {}
    for key, value in kw.items():
        if key == "rate":
            out["rate"] = None if value is None else as_rate(value, what="rate")
        elif key == "pattern":
            from ..traffic.patterns import parse_pattern

            parse_pattern(value)
            out["pattern"] = value
        elif key == "duration":
            out["duration_s"] = _run_seconds("duration", value)
        elif key == "frame_sizes":
            out["frame_sizes"] = check_frame_sizes(value)
        elif key == "flows":
            out["flows"] = _count("flows", value, 1, 64512)
        elif key == "wire":
            out["wire"] = _count("wire", value, 0, 1023)
    return NetloadMark(**out)


def parse_rfc2544(mark: pytest.Mark) -> Rfc2544Mark:
    kw = _kwargs(mark, RFC2544_ARGS)
    out: dict[str, Any] = {}
    for key, value in kw.items():
        if key == "frame_sizes":
            out["frame_sizes"] = check_frame_sizes(value)
        elif key == "trial_duration":
            from ..bench.validity import trial_seconds

            out["trial_duration_s"] = trial_seconds(value, what="trial_duration")
            out["trial_duration_set"] = True
        elif key == "goals":
            from ..rfc2544.mlr import check_goals

            out["goals"] = value if isinstance(value, str) or \
                not isinstance(value, (list, tuple)) else tuple(value)
            check_goals(out["goals"])
        elif key == "time_budget":
            out["time_budget_s"] = time_budget_seconds(value)
        elif key == "learning_frames":
            out["learning_frames"] = _count("learning_frames", value, 0, 1_000_000)
        elif key == "warmup":
            out["warmup_s"] = _run_seconds("warmup", value, zero_ok=True)
        elif key == "drain":
            out["drain_s"] = _run_seconds("drain", value, zero_ok=True)
        elif key == "loss_tolerance":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    not 0 <= value < 1:
                raise NetloadConfigError(
                    f"loss_tolerance={value!r}: give a ratio in [0, 1), e.g. 0 or 1e-6")
            out["loss_tolerance"] = float(value)
        elif key == "steady_state":
            if value not in STEADY_STATES:
                raise NetloadConfigError(
                    f"steady_state={value!r}: use one of {list(STEADY_STATES)} ('warn' flags a "
                    "trial whose DUT buffered an overload, 'fail' fails it)")
            out["steady_state"] = value
        elif key == "search":
            if value not in SEARCHES:
                raise NetloadConfigError(f"search={value!r}: use one of {list(SEARCHES)}")
            out["search"] = value
        elif key == "resolution":
            out["resolution"] = _resolution(value)
        elif key == "max_trials":
            out["max_trials"] = _count("max_trials", value, 1, 1000)
        elif key == "retries":
            out["retries"] = _count("retries", value, 0, 100)
        elif key == "flows":
            out["flows"] = _count("flows", value, 1, 64512)
        elif key == "wire":
            out["wire"] = _count("wire", value, 0, 1023)
        elif key == "max_rate":
            out["max_rate"] = None if value is None else as_rate(value, what="max_rate")
        elif key == "direction":
            if value not in DIRECTIONS:
                raise NetloadConfigError(
                    f"direction={value!r}: use 'one' (traffic on the marker's wire) or 'both' "
                    "(on it and its reverse at once, the load offered on each; RFC 2544 §14)")
            out["direction"] = value
        elif key == "dut_health":
            if value is not None and not isinstance(value, bool):
                raise NetloadConfigError(
                    f"dut_health={value!r}: give True (run the DUT's health hooks after every "
                    "trial), False, or None (the ini key netload_dut_health decides)")
            out["dut_health"] = value
        elif key == "stream" and value is not None:
            from ..traffic.mix import as_mix

            out["stream"] = as_mix(value)
    if out.get("stream") is not None and out.get("flows", 1) != 1:
        raise NetloadConfigError(
            f"flows={out['flows']} varies the procedures' own UDP stream, but stream= gives "
            "the traffic: vary it there (udp(flows=N), src_ips=N, dst_ips=N) and drop flows")
    if out.get("stream") is not None and out["stream"].reverse is not None and \
            out.get("direction", "one") != "both":
        raise NetloadConfigError(
            "stream=bidirectional(...) names the reverse wire's streams, but direction is "
            "'one': add direction='both', or give the forward streams alone")
    if out.get("search", "binary") == "binary":
        given = [k for k in ("goals", "time_budget") if k in kw]
        if given:
            raise NetloadConfigError(
                f"{given[0]} applies to search='mlrsearch', but the search is binary; add "
                "search='mlrsearch' or drop it")
        ratio = out.get("resolution", DEFAULT_RESOLUTION_RATIO)
        if not isinstance(ratio, Rate):   # a rate's reach depends on the maximum load
            check_reachable(Resolution(ratio=ratio), out.get("max_trials", Rfc2544Mark.max_trials))
    elif "max_trials" in kw or "resolution" in kw:
        raise NetloadConfigError(
            "max_trials and resolution bound the binary search; MLRsearch takes its width "
            "and trial durations from its goals (and time_budget): drop them")
    return Rfc2544Mark(**out)


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
