"""The settings of a test's markers: what the bench reads, parsed and checked in one place.

`NetloadMark`, `Rfc2544Mark`, `Rfc2889Mark` and `Y1564Mark` are frozen dataclasses
whose defaults are the markers' defaults. Each reads its marker itself
(`from_marker`): a table of fields, one per argument in the order the marker's help
names them (bench/fields.py: the attribute it fills and how its value is read), then
the checks that join two arguments. The plugin (plugin/markers.py, rfc2889.py,
y1564.py) only maps a marker to its class and names the test in the error. The
harness and the runners take them as plain values, so scripts can build them without
pytest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import NetloadConfigError
from ..rfc2544 import RFC2544_FRAME_SIZES, FrameSize, check_frame_sizes
from ..rfc2544.trial import STEADY_STATES
from ..rfc2889 import (
    DEFAULT_HIGH_ADDRESSES,
    DEFAULT_LOAD_STEPS,
    DEFAULT_LEARNING_RATE_FPS,
    DEFAULT_TEST_RATE_FPS,
    TRIAL_S,
)
from ..search.resolution import DEFAULT_RESOLUTION_RATIO, Resolution, check_reachable
from ..units import MAX_RUN_S, Rate, as_duration, as_rate
from ..y1564 import (
    AVAILABILITY_N,
    AVAILABILITY_THRESHOLD,
    BURST_SHARES,
    BURST_TOLERANCE_FRAMES,
    CHECKPOINT_EVERY_S,
    FDV_QUANTILE,
    INTERVAL_S,
    IR_TOLERANCE,
    POLICING_OVERSHOOT,
    SCT_STEP_S,
    SCT_STEPS,
    SPT_DURATION_S,
    Service,
    check_services,
    check_stream_directions,
)
from .fields import (
    Field,
    MarkLike,
    count,
    duration,
    flag,
    marker_kwargs,
    number,
    optional,
    parse_fields,
    rate,
    resolution,
)

if TYPE_CHECKING:
    from ..rfc2544.latency_at import LatencyAt
    from ..traffic.mix import Mix

__all__ = ["DIRECTIONS", "NETLOAD_FIELDS", "RFC2544_FIELDS", "RFC2889_FIELDS", "SEARCHES",
           "Y1564_DRAIN_S", "Y1564_FIELDS", "NetloadMark", "Rfc2544Mark", "Rfc2889Mark",
           "Y1564Mark", "both_ways_problem", "time_budget_seconds"]

DIRECTIONS = ("one", "both")
SEARCHES = ("binary", "mlrsearch")
Y1564_DRAIN_S = 0.1  # RX waits this long after each step or interval's last frame

FLOWS = count(1, 64512)  # UDP source ports of the procedures' own stream
WIRE = count(0, 1023)
RETRIES = count(0, 100)
MAX_TRIALS = count(1, 1000)
LEARNING_FRAMES = count(0, 1_000_000)


# ---- netload ------------------------------------------------------------------------------


def _frame_sizes(name: str, value: Any) -> tuple[FrameSize, ...]:
    return check_frame_sizes(value)


def _pattern(name: str, value: Any) -> Any:
    from ..traffic.patterns import parse_pattern

    parse_pattern(value)
    return value


NETLOAD_FIELDS: Mapping[str, Field] = {
    "rate": Field("rate", optional(rate)),
    "pattern": Field("pattern", _pattern),
    "duration": Field("duration_s", duration()),
    "frame_sizes": Field("frame_sizes", _frame_sizes),
    "flows": Field("flows", FLOWS),
    "wire": Field("wire", WIRE),
}


@dataclass(frozen=True)
class NetloadMark:
    rate: Rate | None = None
    pattern: str = "cbr"
    duration_s: float = 1.0
    frame_sizes: tuple[FrameSize, ...] | None = None
    flows: int = 1
    wire: int = 0

    @classmethod
    def from_marker(cls, mark: MarkLike) -> NetloadMark:
        """The `netload` marker's arguments, read; NetloadConfigError naming a bad one."""
        return cls(**parse_fields(NETLOAD_FIELDS, marker_kwargs(mark, tuple(NETLOAD_FIELDS))))


# ---- rfc2544 ------------------------------------------------------------------------------


def _trial_duration(name: str, value: Any) -> float:
    from .validity import trial_seconds

    return trial_seconds(value, what=name)


def _goals(name: str, value: Any) -> Any:
    from ..rfc2544.mlr import check_goals

    goals = value if isinstance(value, str) or not isinstance(value, (list, tuple)) else \
        tuple(value)
    check_goals(goals)
    return goals


def _time_budget(name: str, value: Any) -> float:
    return time_budget_seconds(value)


def _loss_tolerance(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise NetloadConfigError(
            f"loss_tolerance={value!r}: give a ratio in [0, 1), e.g. 0 or 1e-6")
    return float(value)


def _steady_state(name: str, value: Any) -> Any:
    if value not in STEADY_STATES:
        raise NetloadConfigError(
            f"steady_state={value!r}: use one of {list(STEADY_STATES)} ('warn' flags a "
            "trial whose DUT buffered an overload, 'fail' fails it)")
    return value


def _search(name: str, value: Any) -> Any:
    if value not in SEARCHES:
        raise NetloadConfigError(f"search={value!r}: use one of {list(SEARCHES)}")
    return value


def _direction(name: str, value: Any) -> Any:
    if value not in DIRECTIONS:
        raise NetloadConfigError(
            f"direction={value!r}: use 'one' (traffic on the marker's wire) or 'both' "
            "(on it and its reverse at once, the load offered on each; RFC 2544 §14)")
    return value


def _dut_health(name: str, value: Any) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise NetloadConfigError(
            f"dut_health={value!r}: give True (run the DUT's health hooks after every "
            "trial), False, or None (the ini key netload_dut_health decides)")
    return value


def _latency_at(name: str, value: Any) -> LatencyAt | None:
    from ..rfc2544.latency_at import check_latency_at

    return check_latency_at(value, name)


def _stream(name: str, value: Any) -> Any:
    from ..traffic.mix import as_mix

    return as_mix(value)


def _expect(name: str, value: Any) -> Any:
    from .expected import check_expect

    return check_expect(name, value)


RFC2544_FIELDS: Mapping[str, Field] = {
    "frame_sizes": Field("frame_sizes", _frame_sizes),
    "trial_duration": Field("trial_duration_s", _trial_duration),
    "loss_tolerance": Field("loss_tolerance", _loss_tolerance),
    "search": Field("search", _search),
    "resolution": Field("resolution", resolution),
    "max_trials": Field("max_trials", MAX_TRIALS),
    "retries": Field("retries", RETRIES),
    "drain": Field("drain_s", duration(zero_ok=True)),
    "flows": Field("flows", FLOWS),
    "max_rate": Field("max_rate", optional(rate)),
    "wire": Field("wire", WIRE),
    "learning_frames": Field("learning_frames", LEARNING_FRAMES),
    "warmup": Field("warmup_s", duration(zero_ok=True)),
    "goals": Field("goals", _goals),
    "time_budget": Field("time_budget_s", _time_budget),
    "steady_state": Field("steady_state", _steady_state),
    "direction": Field("direction", _direction),
    "stream": Field("stream", optional(_stream)),
    "expect": Field("expect", optional(_expect)),
    "dut_health": Field("dut_health", _dut_health),
    "latency_at": Field("latency_at", _latency_at),
}


@dataclass(frozen=True)
class Rfc2544Mark:
    frame_sizes: tuple[FrameSize, ...] = RFC2544_FRAME_SIZES
    trial_duration_s: float = 60.0
    loss_tolerance: float = 0.0
    search: str = "binary"
    resolution: float | Rate = DEFAULT_RESOLUTION_RATIO
    """Binary-search resolution: a ratio in (0, 1) of the bracket's lower bound (the
    search stops when hi - lo <= ratio * lo), or an absolute Rate (hi - lo <= rate)."""
    max_trials: int = 20
    retries: int = 2
    drain_s: float = 2.0
    flows: int = 1
    max_rate: Rate | None = None
    wire: int = 0
    learning_frames: int = 10
    """Frames sent each way before the first trial (§23); 0: none."""
    warmup_s: float = 0.0
    """Uncounted traffic at each trial's load before it."""
    trial_duration_set: bool = False
    """trial_duration was given: it then applies to every procedure's trials."""
    goals: Any = "rfc2544-strict"
    """MLRsearch loss goals: a preset name or a tuple of rfc2544.mlr.LossGoal."""
    time_budget_s: float | None = None
    """MLRsearch: the most trial time one search may spend."""
    steady_state: str = "warn"
    """A trial whose DUT buffered a material backlog: "warn", "fail" or "off"."""
    direction: str = "one"
    """"one": traffic on `wire`; "both": on `wire` and its reverse at once, the load
    offered on each (RFC 2544 §14)."""
    stream: Any = None
    """The procedures' traffic (a traffic.mix.Mix); None: UDP with `flows` source ports."""
    dut_health: bool | None = None
    """Run the DUT's health hooks after every trial; None: the session's setting (ini
    netload_dut_health)."""
    expect: Any = None
    """Expected frames (traffic.expect.expect(...), or a list): every trial's received
    frames are compared with them; None: not compared."""
    latency_at: LatencyAt | None = None
    """throughput() then measures latency at these fractions of each frame size's
    throughput (an rfc2544.latency_at.LatencyAt; 'csit': 0, 10, 50, 90 % of the PDR);
    None: it does not."""

    @classmethod
    def from_marker(cls, mark: MarkLike) -> Rfc2544Mark:
        """The `rfc2544` marker's arguments, read and checked together (the stream
        against flows and direction, the search against its own arguments);
        NetloadConfigError naming what is wrong."""
        given = marker_kwargs(mark, tuple(RFC2544_FIELDS))
        out = parse_fields(RFC2544_FIELDS, given)
        if "trial_duration" in given:
            out["trial_duration_set"] = True
        cls._check_together(out, given)
        return cls(**out)

    @classmethod
    def _check_together(cls, out: Mapping[str, Any], given: Mapping[str, Any]) -> None:
        if out.get("stream") is not None and out.get("flows", 1) != 1:
            raise NetloadConfigError(
                f"flows={out['flows']} varies the procedures' own UDP stream, but stream= "
                "gives the traffic: vary it there (udp(flows=N), src_ips=N, dst_ips=N) and "
                "drop flows")
        if out.get("stream") is not None and out["stream"].reverse is not None and \
                out.get("direction", "one") != "both":
            raise NetloadConfigError(
                "stream=bidirectional(...) names the reverse wire's streams, but direction is "
                "'one': add direction='both', or give the forward streams alone")
        if out.get("search", "binary") == "binary":
            misplaced = [k for k in ("goals", "time_budget") if k in given]
            if misplaced:
                raise NetloadConfigError(
                    f"{misplaced[0]} applies to search='mlrsearch', but the search is binary; "
                    "add search='mlrsearch' or drop it")
            ratio = out.get("resolution", DEFAULT_RESOLUTION_RATIO)
            if not isinstance(ratio, Rate):   # a rate's reach depends on the maximum load
                check_reachable(Resolution(ratio=ratio), out.get("max_trials", cls.max_trials))
        elif "max_trials" in given or "resolution" in given:
            raise NetloadConfigError(
                "max_trials and resolution bound the binary search; MLRsearch takes its width "
                "and trial durations from its goals (and time_budget): drop them")

    def mix_for(self, stream: Any = None) -> tuple[Mix, str | None]:
        """A procedure's traffic (a traffic.mix.Mix): its `stream` (any form `stream=`
        takes), else the marker's, else UDP over the marker's `flows` source ports; and
        the name its streams are given (None: each its own). NetloadConfigError where a
        procedure's stream contradicts the marker's flows or direction."""
        from ..traffic.mix import as_mix
        from ..traffic.streams import UdpSpec

        mix = self.stream if stream is None else as_mix(stream)
        if mix is None:
            return as_mix(UdpSpec(flows=self.flows)), "rfc2544"
        if self.flows != 1:
            raise NetloadConfigError(
                f"flows={self.flows} varies the procedures' own UDP stream, but stream= "
                "gives the traffic: vary it there (udp(flows=N), src_ips=N, dst_ips=N) and "
                "drop flows from the marker")
        if mix.reverse is not None and self.direction != "both":
            raise NetloadConfigError(
                "bidirectional(...) names the reverse wire's streams, but the marker's "
                "direction is 'one': add direction='both' to @pytest.mark.rfc2544, or pass "
                "the forward streams alone")
        return mix, None

    @property
    def resolution_ratio(self) -> float | None:
        """The relative resolution; None when it is a rate."""
        return None if isinstance(self.resolution, Rate) else self.resolution

    def resolution_pps(self, mean_frame_size: float,
                       line_rate_bps: float | None = None) -> float | None:
        """The absolute resolution in pps for frames of `mean_frame_size` bytes; None
        when it is a ratio."""
        if not isinstance(self.resolution, Rate):
            return None
        return self.resolution.pps(mean_frame_size, line_rate_bps=line_rate_bps)


# ---- rfc2889 ------------------------------------------------------------------------------


def _frame_size(name: str, value: Any) -> int:
    (size,) = check_frame_sizes([value])
    if not isinstance(size, int):
        raise NetloadConfigError(f"{name}={value!r}: give bytes with FCS, e.g. 64")
    return size


def _ratio_resolution(name: str, value: Any) -> float:
    res = resolution(name, value)
    if not isinstance(res, float):
        raise NetloadConfigError(f"{name}={value!r}: give a ratio of the lower "
                                 "bound in (0, 1), e.g. 0.005")
    return res


def _fps(name: str, value: Any) -> float:
    parsed = as_rate(value, what=name)
    if parsed.kind != "pps" or not parsed.value > 0:
        raise NetloadConfigError(f"{name}={value!r}: give a frame rate > 0, e.g. '1000pps'")
    return parsed.value


ADDRESSES = count(1, 1 << 24)


def _rfc2889_stream(name: str, value: Any) -> Any:
    if isinstance(value, str):
        raise NetloadConfigError(
            f"stream={value!r} is not a stream; the marker's frame_size sets the meshes' "
            "frames (e.g. frame_size=128): give stream= udp(...), tcp(...), a template "
            "(Eth() / Vlan(100) / IPv6() / UDP()), a Stream or a weighted list of them")
    from ..traffic.replay import ReplayFlow

    mix = _stream(name, value)
    if any(isinstance(p.source, ReplayFlow) for p in mix.forward):
        raise NetloadConfigError(
            "stream= replays a capture, whose frames keep their captured sizes and "
            "addresses, but RFC 2889's meshes send frames of the marker's frame_size to "
            "each port pair: give a udp()/tcp() spec or a template (Eth() / IPv4() / UDP())")
    if mix.reverse is not None:
        raise NetloadConfigError(
            "stream=bidirectional(...) names a reverse wire's streams, but RFC 2889's "
            "meshes send the one stream from every sending port to each of its receivers: "
            "give the forward streams alone")
    return mix

RFC2889_FIELDS: Mapping[str, Field] = {
    "frame_size": Field("frame_size", _frame_size),
    "trial_duration": Field("trial_duration_s", duration()),
    "resolution": Field("resolution", _ratio_resolution),
    "max_trials": Field("max_trials", MAX_TRIALS),
    "retries": Field("retries", RETRIES),
    "max_rate": Field("max_rate", optional(rate)),
    "drain": Field("drain_s", duration(zero_ok=True)),
    "ports": Field("ports", optional(count(2, 1024))),
    "low": Field("low", ADDRESSES),
    "high": Field("high", ADDRESSES),
    "learning_rate": Field("learning_rate_fps", _fps),
    "test_rate": Field("test_rate_fps", _fps),
    "learning_count": Field("learning_count", ADDRESSES),
    "age_time": Field("age_time_s", optional(duration())),
    "load_steps": Field("load_steps", count(1, 100)),
    "max_frame": Field("max_frame", count(64, 9604)),
    "stream": Field("stream", optional(_rfc2889_stream)),
    "expect": Field("expect", optional(_expect)),
}


@dataclass(frozen=True)
class Rfc2889Mark:
    """The `rfc2889` marker's settings."""

    frame_size: int = 64
    trial_duration_s: float = TRIAL_S
    resolution: float = DEFAULT_RESOLUTION_RATIO
    max_trials: int = 20
    retries: int = 2
    max_rate: Rate | None = None
    """Per port; None: the topology's line rate, else the generator's own maximum."""
    drain_s: float = 0.5
    ports: int | None = None
    """How many of the topology's ports (the first ones); None: all (congestion: 4)."""
    low: int = 1
    high: int = DEFAULT_HIGH_ADDRESSES
    learning_rate_fps: float = DEFAULT_LEARNING_RATE_FPS
    test_rate_fps: float = DEFAULT_TEST_RATE_FPS
    learning_count: int = 1000
    age_time_s: float | None = None
    """An external DUT's address age time: waited out before each address trial."""
    load_steps: int = DEFAULT_LOAD_STEPS
    """The maximum forwarding rate's loads: max/steps, 2 max/steps, ..., max."""
    max_frame: int = 1518
    """The switch's largest valid frame (bytes, FCS included): errored-frame filtering
    sends oversized frames one byte longer."""
    stream: Any = None
    """The meshes' traffic (a traffic.mix.Mix), sent between each port pair addressed to
    that pair; None: UDP. The address, broadcast and errored-frame procedures send frames
    of their own."""
    expect: Any = None
    """The meshes' expected frames (as Rfc2544Mark's); None: frames not compared."""

    @classmethod
    def from_marker(cls, mark: MarkLike) -> Rfc2889Mark:
        """The `rfc2889` marker's arguments, read; the address range checked."""
        out = parse_fields(RFC2889_FIELDS, marker_kwargs(mark, tuple(RFC2889_FIELDS)))
        if out.get("high", 1) < out.get("low", 1):
            raise NetloadConfigError(f"high={out['high']} is below low={out['low']}: give "
                                     "high >= low")
        return cls(**out)


# ---- y1564 --------------------------------------------------------------------------------


def _services(name: str, value: Any) -> tuple[Service, ...]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise NetloadConfigError(f"services={value!r}: give a list of services, each "
                                 "a dict like {'name': 'data', 'cir': '10Mbit/s'}")
    return check_services(list(value), None)  # the line rate: the fixture checks it


def _steps(name: str, value: Any) -> tuple[Any, ...]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise NetloadConfigError(f"steps={value!r}: give shares of the CIR, e.g. "
                                 "[0.25, 0.5, 0.75, 1.0]")
    return tuple(value)  # the procedure checks them (names `steps`), after the others


def _burst_sizes(name: str, value: Any) -> tuple[float, ...]:
    from ..y1564.bursts import check_shares

    return check_shares(value)


Y1564_FIELDS: Mapping[str, Field] = {
    "services": Field("services", _services),
    "steps": Field("steps", _steps),
    "step_duration": Field("step_duration_s", duration()),
    "eir_step": Field("eir_step", flag),
    "policing": Field("policing", flag),
    "policing_overshoot": Field("policing_overshoot",
                                number(1.0001, 10.0, "1.25 (125 % of CIR+EIR)")),
    "ir_tolerance": Field("ir_tolerance", number(0.0, 0.5, "0.02 (2 %)")),
    "spt_duration": Field("spt_duration_s", duration()),
    "interval": Field("interval_s", duration()),
    "availability_threshold": Field("availability_threshold",
                                    number(0.0, 1.0, "0.5 (an interval losing over half)")),
    "availability_n": Field("availability_n", count(1, 3600)),
    "fdv_quantile": Field("fdv_quantile", number(50.0, 100.0, "99.9")),
    "drain": Field("drain_s", duration(zero_ok=True)),
    "retries": Field("retries", RETRIES),
    "wire": Field("wire", WIRE),
    "learning_frames": Field("learning_frames", LEARNING_FRAMES),
    "checkpoint": Field("checkpoint", flag),
    "checkpoint_every": Field("checkpoint_every_s", duration()),
    "bursts": Field("bursts", flag),
    "burst_sizes": Field("burst_sizes", _burst_sizes),
    "burst_idle": Field("burst_idle_s", optional(duration(zero_ok=True))),
    "burst_tolerance": Field("burst_tolerance", count(0, 1_000_000)),
    "direction": Field("direction", _direction),
    "expect": Field("expect", optional(_expect)),
}


@dataclass(frozen=True)
class Y1564Mark:
    """The `y1564` marker's settings."""

    services: tuple[Service, ...] = ()
    steps: tuple[float, ...] = SCT_STEPS
    step_duration_s: float = SCT_STEP_S
    eir_step: bool = True
    policing: bool = True
    policing_overshoot: float = POLICING_OVERSHOOT
    ir_tolerance: float = IR_TOLERANCE
    spt_duration_s: float = SPT_DURATION_S
    interval_s: float = INTERVAL_S
    availability_threshold: float = AVAILABILITY_THRESHOLD
    availability_n: int = AVAILABILITY_N
    fdv_quantile: float = FDV_QUANTILE
    drain_s: float = Y1564_DRAIN_S
    retries: int = 2
    wire: int = 0
    learning_frames: int = 10
    checkpoint: bool = True
    """The performance test appends each interval to a checkpoint file (docs/y1564.md)
    and a rerun after a crash resumes from it."""
    checkpoint_every_s: float = CHECKPOINT_EVERY_S
    """At most this much of the run (in intervals) is lost by a crash: the file is
    flushed and fsync'ed that often."""
    bursts: bool = False
    """`run()` includes the CBS/EBS burst tests (Y.1564 2016) of each service with a CBS."""
    burst_sizes: tuple[float, ...] = BURST_SHARES
    """Each burst as a share of its bucket (CBS, or CBS+EBS)."""
    burst_idle_s: float | None = None
    """Silence before each burst; None: twice the bucket's fill time."""
    burst_tolerance: int = BURST_TOLERANCE_FRAMES
    """Frames a burst's delivery may differ from what the bucket predicts."""
    direction: str = "one"
    """"one": the services on the marker's wire; "both": on it and its reverse, each
    direction a service of its own, judged by the SAC."""
    expect: Any = None
    """Every service's expected frames (as Rfc2544Mark's); None: frames not compared."""

    @classmethod
    def from_marker(cls, mark: MarkLike) -> Y1564Mark:
        """The `y1564` marker's arguments, read; the services checked together (without
        a line rate: the fixture checks CIR against the topology's), the steps last."""
        out = parse_fields(Y1564_FIELDS, marker_kwargs(mark, tuple(Y1564_FIELDS)))
        check_stream_directions(out.get("services", ()), out.get("direction", "one"))
        if "steps" in out:
            from ..y1564.sct import check_steps

            out["steps"] = check_steps(out["steps"])
        return cls(**out)


# ---- shared checks ------------------------------------------------------------------------


def _seconds(name: str, value: Any) -> float:
    seconds = as_duration(value, what=name).seconds
    if seconds <= 0:
        raise NetloadConfigError(f"{name}={value!r}: give a duration > 0, e.g. '10s'")
    if seconds > MAX_RUN_S:
        raise NetloadConfigError(f"{name}={value!r} is {seconds:g} s, more than 24 h "
                                 f"({MAX_RUN_S} s); give at most '24h'")
    return seconds


def time_budget_seconds(value: Any) -> float:
    """An MLRsearch time budget in seconds: > 0 and at most 24 h."""
    return _seconds("time_budget", value)


def both_ways_problem(topology: str, wires: list[str], wire: int) -> str | None:
    """Why `direction="both"` cannot load wire `wire` ("tx->rx") of `topology` (whose
    wires are `wires`) and its reverse at once; None when the topology has both."""
    if not 0 <= wire < len(wires):
        return None  # the wire itself is refused elsewhere, naming the wires
    tx, _, rx = wires[wire].partition("->")
    listed = f"its wires are {', '.join(wires)}" if len(wires) > 1 else \
        f"its one wire is {wires[0]}"
    if tx == rx:
        return (f"direction='both': wire {wire} of topology {topology!r} ({tx}->{rx}) is a "
                f"hairpin, which has no reverse ({listed}); use direction='one', or a wire "
                "between two ports")
    if f"{rx}->{tx}" not in wires:
        return (f"direction='both' sends on wire {wire} ({tx}->{rx}) and its reverse "
                f"{rx}->{tx} at once, but topology {topology!r} has no {rx}->{tx} ({listed}); "
                f"add a [[wires]] table with tx = \"{rx}\" and rx = \"{tx}\" to the "
                "topology file, or use direction='one'")
    return None
