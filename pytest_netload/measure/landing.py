"""Where frames land: a stream's frames counted per receiving port, and the spread test.

:class:`PortCounts` is what one stream left on each port of a set: the frames with its
signature that each port received (the engine counts per RX queue; bench/landing.py sums
a port's queues). :func:`spread_test` judges how frames spread over a set of member
ports (ECMP next hops, LAG members) against uniform or given weights: Pearson's
chi-square goodness-of-fit test (``scipy.stats.chisquare``) and, when asked, a largest
relative deviation per member.

The unit the chi-square test counts matters. A hash (ECMP, LAG) places whole flows, not
frames: every frame of a flow follows it, so frame counts are far from independent, and
a chi-square test on them would call a fair hash of 64 flows lopsided. When the stream's
flow count is known (``flows``: the distinct 5-tuples it cycles through, each sending its
equal share of the frames), the test counts flows: each member's frames become
flow-equivalents (frames x flows / frames received), which is exact when no flow is split
and none lost frames. Without it (``flows=None``) each frame counts as an independent
placement, which is right for per-packet spraying and wrong for a hash.

The chi-square approximation needs at least 5 expected units per member (Cochran's rule).
Below that the test has no p-value (``p`` is None) and only ``tolerance`` can judge; the
caller then asks for one. Pure: numpy/scipy, no I/O, no pytest.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import NetloadConfigError

__all__ = ["DEFAULT_ALPHA", "MIN_EXPECTED", "PortCounts", "SpreadTest", "flow_key",
           "merge_counts", "split_flows", "spread_test"]

DEFAULT_ALPHA = 0.001
"""The chi-square test's significance level by default: a fair hash fails it once in a
thousand flow sets."""
MIN_EXPECTED = 5.0
"""Cochran's rule: the chi-square approximation holds with >= 5 expected units per member."""


def _whole(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise NetloadConfigError(f"{what} = {value!r}: give a whole number >= 0")
    return int(value)


@dataclass(frozen=True)
class PortCounts:
    """One stream's frames, counted on each port it was watched on.

    ``counts`` maps a port's name (its topology name, "p1") to the frames with the
    stream's signature that port received; ``tx`` is the sending port's name,
    ``tx_packets`` the frames sent, ``flows`` the distinct flows (5-tuples) the stream
    cycles through (None when unknown).
    """

    stream: str
    tx: str
    counts: Mapping[str, int]
    tx_packets: int
    flows: int | None = None
    streams: tuple[str, ...] = field(default=())
    """The streams summed into this one (merge_counts); empty for a single stream."""
    sampled_flows: int | None = None
    """Distinct flows among the frames the watched ports captured (the last ones each port
    saw); None without captures."""
    split_flows: int | None = None
    """How many of those flows were seen on more than one port; None without captures."""

    def __post_init__(self) -> None:
        counts = {str(k): _whole(v, f"frames on port {k!r}") for k, v in self.counts.items()}
        object.__setattr__(self, "counts", counts)
        _whole(self.tx_packets, "tx_packets")
        if self.flows is not None and (_whole(self.flows, "flows") < 1):
            raise NetloadConfigError(f"flows = {self.flows!r}: give a whole number >= 1")

    def __getitem__(self, port: str) -> int:
        if port not in self.counts:
            raise NetloadConfigError(
                f"port {port!r} was not watched for stream {self.stream!r}: it was counted on "
                f"{sorted(self.counts)}; give the port in over=[...] when sending it")
        return self.counts[port]

    @property
    def rx_packets(self) -> int:
        """Frames of the stream received on every watched port together."""
        return sum(self.counts.values())

    @property
    def ports(self) -> tuple[str, ...]:
        return tuple(self.counts)

    def as_dict(self) -> dict[str, Any]:
        return {"stream": self.stream, "tx": self.tx, "tx_packets": self.tx_packets,
                "flows": self.flows, "counts": dict(self.counts),
                "sampled_flows": self.sampled_flows, "split_flows": self.split_flows}


def merge_counts(parts: Iterable[PortCounts]) -> PortCounts:
    """Several streams' counts summed port by port (each port must be in every part):
    their frames, and their flows (None when any is unknown)."""
    items = list(parts)
    if not items:
        raise NetloadConfigError("no counts to merge: give at least one stream's PortCounts")
    if len(items) == 1:
        return items[0]
    ports = set(items[0].counts)
    for p in items[1:]:
        if set(p.counts) != ports:
            raise NetloadConfigError(
                f"streams {items[0].stream!r} and {p.stream!r} were counted on different "
                f"ports ({sorted(ports)} and {sorted(p.counts)}): count them over the same")
    def total(key: str) -> int | None:
        values = [getattr(p, key) for p in items]
        return None if any(v is None for v in values) else sum(values)

    names = tuple(n for p in items for n in (p.streams or (p.stream,)))
    return PortCounts(" + ".join(names), ",".join(sorted({p.tx for p in items})),
                      {k: sum(p.counts[k] for p in items) for k in items[0].counts},
                      sum(p.tx_packets for p in items), total("flows"), names,
                      total("sampled_flows"), total("split_flows"))


_VLAN_TYPES = (0x8100, 0x88A8)


def flow_key(frame: bytes) -> tuple[bytes, bytes, int, int, int] | None:
    """The 5-tuple of an Ethernet frame (VLAN tags skipped): source and destination
    address, protocol, source and destination port; None for a frame that is not UDP or
    TCP over IPv4 or IPv6, or too short to say (a fragment's later pieces too)."""
    at = 12
    while len(frame) >= at + 2 and int.from_bytes(frame[at:at + 2], "big") in _VLAN_TYPES:
        at += 4
    if len(frame) < at + 2:
        return None
    kind, ip = int.from_bytes(frame[at:at + 2], "big"), at + 2
    if kind == 0x0800 and len(frame) >= ip + 20:
        proto, l4 = frame[ip + 9], ip + (frame[ip] & 0x0F) * 4
        if int.from_bytes(frame[ip + 6:ip + 8], "big") & 0x1FFF:
            return None  # a later fragment: no ports
        src, dst = frame[ip + 12:ip + 16], frame[ip + 16:ip + 20]
    elif kind == 0x86DD and len(frame) >= ip + 40:
        proto, l4 = frame[ip + 6], ip + 40
        src, dst = frame[ip + 8:ip + 24], frame[ip + 24:ip + 40]
    else:
        return None
    if proto not in (6, 17) or len(frame) < l4 + 4:
        return None
    return (src, dst, proto, int.from_bytes(frame[l4:l4 + 2], "big"),
            int.from_bytes(frame[l4 + 2:l4 + 4], "big"))


def split_flows(frames: Mapping[str, Iterable[bytes]]) -> tuple[int, int]:
    """(distinct flows, flows seen on more than one port) among the frames each port
    (port name -> frames) captured; frames that are not UDP or TCP count for none."""
    where: dict[tuple[bytes, bytes, int, int, int], set[str]] = {}
    for port, kept in frames.items():
        for frame in kept:
            key = flow_key(frame)
            if key is not None:
                where.setdefault(key, set()).add(port)
    return len(where), sum(1 for ports in where.values() if len(ports) > 1)


@dataclass(frozen=True)
class SpreadTest:
    """The spread of frames over member ports, judged (see :func:`spread_test`)."""

    members: tuple[str, ...]
    counts: tuple[int, ...]
    """Frames each member received."""
    expected: tuple[float, ...]
    """Frames each member should have received, by its weight."""
    weights: tuple[float, ...]
    unit: str
    """"flow" (flow-equivalents, the stream's flow count known) or "frame"."""
    units: int
    """How many flows (or frames) the chi-square test counts."""
    chi2: float | None
    p: float | None
    """The chi-square test's p-value; None with fewer than MIN_EXPECTED units per member."""
    alpha: float
    tolerance: float | None
    deviations: tuple[float, ...]
    """Each member's relative deviation from its expected frames: (got - expected) /
    expected; 0 for a member of weight 0 that got none, inf for one that got some."""

    @property
    def total(self) -> int:
        return sum(self.counts)

    @property
    def max_deviation(self) -> float:
        return max(abs(d) for d in self.deviations)

    @property
    def chi2_passed(self) -> bool | None:
        """p >= alpha; None where the test had too few units to apply."""
        return None if self.p is None else self.p >= self.alpha

    @property
    def tolerance_passed(self) -> bool | None:
        """Every member within tolerance; None without a tolerance."""
        return None if self.tolerance is None else self.max_deviation <= self.tolerance

    @property
    def passed(self) -> bool:
        if self.total == 0:
            return False
        return self.chi2_passed is not False and self.tolerance_passed is not False

    def as_dict(self) -> dict[str, Any]:
        return {"members": list(self.members), "counts": list(self.counts),
                "expected": [round(e, 6) for e in self.expected],
                "weights": list(self.weights), "unit": self.unit, "units": self.units,
                "chi2": self.chi2, "p": self.p, "alpha": self.alpha,
                "tolerance": self.tolerance,
                "max_deviation": None if math.isinf(self.max_deviation)
                else round(self.max_deviation, 9),
                "passed": self.passed}


def _real(value: object, what: str, fix: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
            not math.isfinite(float(value)):
        raise NetloadConfigError(f"{what} = {value!r}: {fix}")
    return float(value)


def _weights(weights: Sequence[float] | Mapping[str, float] | None,
             members: Sequence[str]) -> tuple[float, ...]:
    if weights is None:
        return (1.0,) * len(members)
    if isinstance(weights, Mapping):
        missing = [m for m in members if m not in weights]
        extra = sorted(set(weights) - set(members))
        if missing or extra:
            raise NetloadConfigError(
                f"weights = {dict(weights)!r}: give one weight per member {list(members)}"
                + (f" (missing {missing})" if missing else f" (not members: {extra})"))
        values = [weights[m] for m in members]
    else:
        values = list(weights)
        if len(values) != len(members):
            raise NetloadConfigError(
                f"weights = {values!r}: give {len(members)} weights, one per member "
                f"{list(members)} in that order")
    out = tuple(_real(w, "weight", "give a number >= 0 per member, e.g. [1, 1, 2]")
                for w in values)
    if any(w < 0 for w in out) or sum(out) <= 0:
        raise NetloadConfigError(
            f"weights = {list(out)!r}: give numbers >= 0 with a positive sum, e.g. [1, 1, 2]")
    return out


def spread_test(counts: Mapping[str, int], members: Sequence[str], *,
                weights: Sequence[float] | Mapping[str, float] | None = None,
                flows: int | None = None, alpha: float = DEFAULT_ALPHA,
                tolerance: float | None = None) -> SpreadTest:
    """Judge how the frames in ``counts`` (port name -> frames) spread over ``members``.

    ``weights`` (one per member, or a mapping by name; default: equal) are the shares the
    members should get. ``flows``: the stream's distinct flows, when known: the test then
    counts flows (module docstring). The chi-square test passes when its p-value is at
    least ``alpha``; ``tolerance``, when given, also bounds every member's relative
    deviation from its expected frames (0.25: each member within +-25 % of its share).
    Members of weight 0 must receive nothing (their deviation is inf otherwise) and take
    no part in the chi-square test.
    """
    members = tuple(str(m) for m in members)
    if len(members) < 2 or len(set(members)) != len(members):
        raise NetloadConfigError(
            f"over = {list(members)!r}: give two or more different member ports; to check "
            "that frames land on one port, use assert_delivered_to")
    missing = [m for m in members if m not in counts]
    if missing:
        raise NetloadConfigError(
            f"members {missing} were not watched: the counts have ports {sorted(counts)}; "
            "send the stream with every member in over=[...]")
    alpha_ = _real(alpha, "alpha", "give a significance level in (0, 1), e.g. 0.001")
    if not 0 < alpha_ < 1:
        raise NetloadConfigError(f"alpha = {alpha!r}: give a significance level in (0, 1), "
                                 "e.g. 0.001")
    tol = None if tolerance is None else _real(
        tolerance, "tolerance", "give the largest relative deviation per member, e.g. 0.25")
    if tol is not None and tol <= 0:
        raise NetloadConfigError(f"tolerance = {tolerance!r}: give the largest relative "
                                 "deviation per member, > 0, e.g. 0.25 (+-25 %)")
    if flows is not None and (isinstance(flows, bool) or not isinstance(flows, int)
                              or flows < 1):
        raise NetloadConfigError(f"flows = {flows!r}: give the stream's flow count, >= 1")
    w = _weights(weights, members)
    if sum(1 for x in w if x > 0) < 2:
        raise NetloadConfigError(
            f"weights = {list(w)!r}: give two or more members a positive weight; to check "
            "that frames land on one port only, use assert_delivered_to")
    got = tuple(_whole(counts[m], f"frames on {m}") for m in members)
    total = sum(got)
    shares = [x / sum(w) for x in w]
    expected = tuple(total * s for s in shares)
    deviations = tuple(
        (g - e) / e if e > 0 else (0.0 if g == 0 else math.inf) for g, e in zip(got, expected))
    units = flows if flows is not None else total
    chi2 = p = None
    live = [i for i, s in enumerate(shares) if s > 0]
    if total and min(units * shares[i] for i in live) >= MIN_EXPECTED:
        from scipy import stats  # type: ignore[import-untyped]

        scale = units / total
        observed = [got[i] * scale for i in live]
        # members of weight 0 take no part; their frames (if any) leave the live total
        live_total = sum(observed)
        exp = [live_total * shares[i] / sum(shares[j] for j in live) for i in live]
        result = stats.chisquare(observed, exp)
        chi2, p = float(result.statistic), float(result.pvalue)
    return SpreadTest(members, got, expected, w, "flow" if flows is not None else "frame",
                      units, chi2, p, alpha_, tol, deviations)
