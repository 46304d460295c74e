"""The streams of one RFC 2544 trial: several at once, on one wire or on both.

A procedure's traffic is a `traffic.mix.Mix` (the user's `stream=`, or the default
UDP stream) made into loaded streams, "lanes", for each direction the trial loads:
the marker's wire, and with `direction="both"` its reverse (RFC 2544 §14: the same
load on each direction at once). A lane carries its share of its direction's load;
a direction's shares sum to 1, so the search's load is per direction.

`plan_wires` checks the wires a direction setting loads; `load_lanes` loads the
streams; `trial_counts` sums a finished run's streams into a trial's counts, with a
breakdown per direction when there are several. The runner (bench/runner.py) does the
rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.client import Engine, LoadedStream, Port
from ..errors import NetloadConfigError
from ..measure.latency import LatencyResult
from ..rfc2544.recovery import RecoveryTrial, ResetTrial
from ..rfc2544.trial import DirectionResult, FrameSize
from ..traffic.mix import Mix
from .expected import check_expect_names, expect_rules, flow_names
from .harness import WiredPorts
from .settings import both_ways_problem

__all__ = ["Lane", "Plan", "load_lanes", "longest_gap_ns", "plan_wires", "recovery_of",
           "require_loss_timing", "reset_of", "trial_counts"]


@dataclass(frozen=True)
class Lane:
    """One loaded stream of a trial and its share of its direction's load."""

    stream: LoadedStream
    share: float
    """Of the direction's packets: the shares of a direction sum to 1."""
    direction: int = 0
    """Index of its direction (its wire) in the trial's `directions`."""


@dataclass(frozen=True)
class Plan:
    """What a procedure's trials load: the lanes, the wires ("tx->rx") and the RX ports."""

    lanes: tuple[Lane, ...]
    directions: tuple[str, ...]
    rx: list[Port]
    record: dict[str, Any]
    """The "traffic" entry of the procedure's record: direction, wires, streams."""
    rules: dict[str, Any] = field(default_factory=dict)
    """Expected frames: stream name -> its `FrameRule`s (none: frames not compared)."""


def plan_wires(ports: WiredPorts, wire: int, direction: str) -> list[tuple[Port, Port]]:
    """The (tx, rx) ports each direction of a trial sends on: wire `wire`, and with
    direction "both" its reverse, which the topology must have (a usage error names the
    topology and its wires otherwise)."""
    tx, rx = ports.wire(wire)
    if direction != "both":
        return [(tx, rx)]
    labels = [f"{w.tx}->{w.rx}" for w in ports.topology.wires]
    problem = both_ways_problem(ports.topology.name, labels, wire)
    if problem is not None:
        raise NetloadConfigError(problem)
    return [(tx, rx), (rx, tx)]


@contextmanager
def load_lanes(engine: Engine, ports: WiredPorts, wires: Sequence[tuple[Port, Port]], mix: Mix,
               size: FrameSize, *, name: str | None = None,
               only: Sequence[int] | None = None, readdress: bool = False,
               expect: Any = None) -> Iterator[Plan]:
    """The mix's streams at frame size `size` loaded on each wire's TX port (the first wire
    forward, the second its reverse); every stream is freed after. `only`: the indexes
    of the wires loaded (default every one; the reverse is still the reply to the first
    wire's streams); `readdress`: Mix.streams_for's (RFC 2889's port pairs). `expect`: the
    frames each stream should come back as (bench/expected.py), its rules in the plan."""
    loaded: list[LoadedStream] = []
    lanes: list[Lane] = []
    described: list[dict[str, Any]] = []
    rules: dict[str, Any] = {}
    flows = [ports.flow(tx, rx) for tx, rx in wires]
    chosen = range(len(wires)) if only is None else only
    try:
        for d, ((tx, _), flow) in enumerate(zip(wires, flows)):
            if d not in chosen:
                continue
            made = mix.streams_for(flow, size, reverse=d > 0, forward_flow=flows[0],
                                   ports=ports.topology.ports, name=name, readdress=readdress)
            for (stream, share), part in zip(made, mix.describe(reverse=d > 0)):
                handle = engine.load(tx, stream)
                loaded.append(handle)
                rules.update(expect_rules(expect, [(handle.name, stream)], flow_names(
                    flow.tx.mac or tx.mac, flow.rx.mac or wires[d][1].mac, flow.rx.peer_mac),
                    whole_run=False))
                lanes.append(Lane(handle, share, d))
                described.append({"wire": f"{flow.tx.name}->{flow.rx.name}",
                                  "name": handle.name, "kind": part["kind"], "share": share,
                                  "mean_frame_size": handle.mean_frame_size})
        check_expect_names(expect, [h.name for h in loaded])
        directions = tuple(f"{f.tx.name}->{f.rx.name}" for f in flows)
        rx = list({r.device: r for d, (_, r) in enumerate(wires)
                   if d in chosen}.values())  # both ways: both receive
        record = {"direction": "both" if len(wires) > 1 else "one",
                  "wires": list(directions), "load": "per direction",
                  "streams": described}
        yield Plan(tuple(lanes), directions, rx, record, rules)
    finally:
        for handle in loaded:
            handle.free()


def _merged(parts: list[Any]) -> LatencyResult | None:
    results = [s.latency_result() for s in parts if s.latency is not None]
    if not results:
        return None
    return results[0] if len(results) == 1 else LatencyResult.merge(results)


def trial_counts(run: Any, lanes: Sequence[Lane], directions: Sequence[str],
                 offered_pps: float, duration_s: float,
                 backlog: Callable[[Any, float, float], dict[str, Any]]) -> dict[str, Any]:
    """A trial's counts (TrialResult keyword arguments) from a run of `lanes` at
    `offered_pps` per direction: TX and RX summed over every stream (RX without
    duplicates), the achieved TX rate of the slowest direction, the latency of every
    stream merged, the backlog summed and the forwarding rate per direction (as the load
    is), and, with two or more directions, a `DirectionResult` for each."""
    streams = list(run.streams[:len(lanes)])
    by_dir: list[list[tuple[Lane, Any]]] = [[] for _ in directions]
    for lane, s in zip(lanes, streams):
        by_dir[lane.direction].append((lane, s))
    achieved = min(sum(s.tx_pps for _, s in part) for part in by_dir)
    parts = [backlog(s, offered_pps * lane.share, duration_s) for lane, s in zip(lanes, streams)]
    measured = bool(parts) and all(parts)
    out: dict[str, Any] = {
        "tx_packets": sum(s.tx_packets for s in streams),
        "rx_packets": sum(s.rx_packets - s.duplicates for s in streams),
        "achieved_tx_pps": achieved,
        "latency": _merged(streams), "clock": streams[0].clock,
        "extra": {"duplicates": sum(s.duplicates for s in streams),
                  "reordered": sum(s.reordered for s in streams),
                  "generator_drops": run.generator_drops, "foreign": run.foreign},
    }
    if measured:
        out["backlog_frames"] = sum(p["backlog_frames"] for p in parts)
        out["forwarding_pps"] = sum(p["forwarding_pps"] for p in parts) / len(directions)
    if len(directions) > 1:
        index = {id(s): i for i, s in enumerate(streams)}
        out["directions"] = tuple(DirectionResult(
            wire, sum(s.tx_packets for _, s in part),
            sum(s.rx_packets - s.duplicates for _, s in part),
            sum(s.tx_pps for _, s in part), tuple(s.name for _, s in part),
            _merged([s for _, s in part]),
            sum(parts[index[id(s)]]["backlog_frames"] for _, s in part) if measured else None)
            for wire, part in zip(directions, by_dir))
    return out


def _by_direction(lanes: Sequence[Lane], directions: Sequence[str],
                  items: Sequence[Any]) -> list[tuple[str, list[Any]]]:
    groups: list[list[Any]] = [[] for _ in directions]
    for lane, item in zip(lanes, items):
        groups[lane.direction].append(item)
    return list(zip(directions, groups))


def recovery_of(parts: Sequence[RecoveryTrial], lanes: Sequence[Lane],
                directions: Sequence[str]) -> RecoveryTrial:
    """One recovery trial from each lane's: counts summed, the recovery of the lane that
    recovered last (a DUT has recovered when every direction has)."""
    if len(parts) == 1:
        return parts[0]
    lossy = [p for p in parts if p.lost]
    last = max(lossy, key=lambda p: p.recovery_ns) if lossy else parts[0]
    per = tuple({"wire": wire, "tx_packets": sum(p.tx_packets for p in group),
                 "lost": sum(p.lost for p in group),
                 "recovery_ns": max(p.recovery_ns for p in group)}
                for wire, group in _by_direction(lanes, directions, parts))
    return RecoveryTrial(parts[0].overload_pps, parts[0].recovery_pps, last.switch_ns,
                         sum(p.tx_packets for p in parts), sum(p.lost for p in parts),
                         last.last_loss_tx_ns if lossy else 0,
                         directions=per if len(directions) > 1 else ())


def require_loss_timing(streams: Sequence[Any], what: str) -> None:
    """Refuse `what` (a procedure that times losses or silences) when a stream arrived on
    several RX queues: its gaps are tracked per queue (`StreamResult.loss_timing_unavailable`)."""
    for s in streams:
        reason = s.loss_timing_unavailable
        if reason is not None:
            raise NetloadConfigError(f"{what}: {reason}")


def longest_gap_ns(s: Any) -> float:
    """The longest silence between two arrivals of a stream (its gap histogram's top)."""
    gaps = s.rx_gaps
    return float(gaps.upper_ns[np.nonzero(gaps.counts)[0][-1]]) \
        if gaps is not None and gaps.total else 0.0


def reset_of(run: Any, lanes: Sequence[Lane], directions: Sequence[str], load_pps: float,
             longest: Sequence[float], called_ns: int, hook_s: float,
             reason: str | None) -> ResetTrial:
    """One reset trial from a run of `lanes` at `load_pps` per direction. Its longest gap
    is the one that exceeds its own lane's frame spacing most, restated against the
    direction's spacing (1 / load), so `ResetTrial.reset_ns` is that excess; its last
    arrival is the earliest lane's (the DUT forwards again when every lane does)."""
    streams = run.streams[:len(lanes)]
    gap = longest[0]
    if len(lanes) > 1:
        excess = [g - 1e9 / (load_pps * lane.share) for g, lane in zip(longest, lanes) if g]
        gap = max(excess) + 1e9 / load_pps if excess else 0.0
    per = tuple({"wire": wire, "tx_packets": sum(s.tx_packets for s, _ in group),
                 "lost": sum(s.lost for s, _ in group),
                 "longest_gap_ns": max(g for _, g in group),
                 "rx_last_ns": min(s.rx_last_ns for s, _ in group)}
                for wire, group in _by_direction(lanes, directions, list(zip(streams, longest))))
    return ResetTrial(load_pps, sum(s.tx_packets for s in streams),
                      sum(s.lost for s in streams), gap, called_ns, hook_s,
                      min(s.rx_last_ns for s in streams), reason is None, reason,
                      directions=per if len(directions) > 1 else ())
