"""assert_spread, assert_delivered_to, assert_not_delivered: where a stream's frames landed.

They read :class:`~pytest_netload.measure.landing.PortCounts` (the ``port_counts``
fixture's result), a list of them (summed port by port) or a plain mapping of port name
to frames. A spread is judged by :func:`~pytest_netload.measure.landing.spread_test`
(Pearson's chi-square against uniform or given weights, counting flows where the stream's
flow count is known, and an optional largest relative deviation per member). Every check
keeps a measurement (kind "spread" or "delivery") and a verdict before anything is raised.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..measure.landing import DEFAULT_ALPHA, PortCounts, merge_counts, spread_test
from ..measure.recording import record_measurement, record_verdict

__all__ = ["assert_delivered_to", "assert_not_delivered", "assert_spread"]


def _port_name(port: Any) -> str:
    """A port's topology name: a name given as such, or a Port's ``name``."""
    if isinstance(port, str) and port:
        return port
    name = getattr(port, "name", None)
    if isinstance(name, str) and name:
        return name
    raise NetloadConfigError(f"port {port!r}: give a port of netload_ports or its name ('p1')")


def _counts(obj: Any, helper: str) -> PortCounts:
    if isinstance(obj, PortCounts):
        return obj
    if isinstance(obj, (list, tuple)) and obj and all(isinstance(p, PortCounts) for p in obj):
        return merge_counts(obj)
    if isinstance(obj, Mapping):
        return PortCounts("counts", "", {str(k): v for k, v in obj.items()}, 0)
    raise NetloadConfigError(
        f"{helper}: {type(obj).__name__} has no per-port frame counts; give what "
        "port_counts(stream, over=[...]) returned (one, or a list), or a mapping of port "
        "name to frames")


def _table(names: Sequence[str], got: Sequence[int], expected: Sequence[float] | None = None,
           deviations: Sequence[float] | None = None) -> str:
    parts = []
    for i, name in enumerate(names):
        text = f"{name} {fmt.count(got[i])}"
        if expected is not None:
            text += f" (expected {fmt.count(expected[i])}"
            if deviations is not None:
                d = deviations[i]
                text += ", +inf" if math.isinf(d) else f", {'+' if d >= 0 else ''}{fmt.share(d)}"
            text += ")"
        parts.append(text)
    return ", ".join(parts)


def assert_spread(obj: Any, over: Sequence[Any], *,
                  weights: Sequence[float] | Mapping[str, float] | None = None,
                  tolerance: float | None = None, alpha: float = DEFAULT_ALPHA,
                  flows: int | None = None, per_packet: bool = False) -> None:
    """Check that a stream's frames spread over the member ports ``over`` (ECMP next hops,
    LAG members) as ``weights`` say (default: evenly).

    ``obj`` is what ``port_counts`` returned (one stream, or a list: summed), or a mapping
    port name -> frames. The check is Pearson's chi-square goodness-of-fit test: it fails
    when its p-value is below ``alpha`` (default 0.001). It counts the stream's flows
    where their number is known (``flows``, else the one ``port_counts`` recorded): a hash
    places flows, not frames; else each frame. ``tolerance`` (optional) also bounds each
    member's relative deviation from its expected frames: 0.25 lets each member get
    75-125 % of its share. With fewer than 5 expected flows (frames) per member the
    chi-square test does not apply: give more flows, or a tolerance to judge by alone.

    A hash keeps each flow on one member: where the ports' captured frames show a flow on
    two members (``counts.split_flows``), the check fails. ``per_packet=True`` judges a
    per-packet spread (round-robin LAG, packet spraying) instead: every frame counts as
    one placement, and split flows are expected.
    """
    __tracebackhide__ = True
    counts = _counts(obj, "assert_spread")
    if isinstance(over, (str, bytes)) or not isinstance(over, Sequence):
        raise NetloadConfigError(f"assert_spread: over = {over!r}: give the member ports as a "
                                 "list, e.g. over=[p1, p2, p3]")
    members = [_port_name(p) for p in over]
    if not isinstance(per_packet, bool):
        raise NetloadConfigError(f"assert_spread: per_packet = {per_packet!r}: give True (a "
                                 "per-packet spread) or False (a hash of flows, the default)")
    if per_packet and flows is not None:
        raise NetloadConfigError("assert_spread: per_packet=True counts frames; leave flows "
                                 "out")
    test = spread_test(counts.counts, members, weights=weights,
                       flows=None if per_packet else
                       flows if flows is not None else counts.flows, alpha=alpha,
                       tolerance=tolerance)
    split = None if per_packet else counts.split_flows
    if test.p is None and tolerance is None and test.total:
        raise NetloadConfigError(
            f"assert_spread: {test.units} {test.unit}s over {len(members)} members is fewer "
            f"than 5 per member, too few for the chi-square test; send more flows (at least "
            f"{5 * len(members)}), or give tolerance= (the largest relative deviation per "
            "member) to judge by it alone")
    outside = {k: v for k, v in counts.counts.items() if k not in members and v}
    passed = test.passed and not split
    record = {"stream": counts.stream, **test.as_dict(), "outside": outside,
              "split_flows": split, "sampled_flows": None if per_packet else counts.sampled_flows,
              "passed": passed}
    record_measurement("spread", record)
    got = _table(test.members, test.counts, test.expected, test.deviations)
    stat = (f"chi-square {test.chi2:.3g}, p = {test.p:.3g} over {fmt.count(test.units)} "
            f"{test.unit}s" if test.p is not None else
            f"chi-square not applied (fewer than 5 {test.unit}s per member)")
    even = "evenly" if weights is None else f"by weights {list(test.weights)}"
    required = f"spread {even}: p >= {test.alpha:g}" + (
        f" and every member within +-{fmt.share(test.tolerance)} of its share"
        if test.tolerance is not None else "") + (
        ", and no flow on two members" if split is not None else "")
    flows_line = None if split is None else (
        f"flows: {split} of {counts.sampled_flows} sampled on more than one port (from the "
        "last frames each port captured)")
    message = f"{got}; {stat}" + (f"; {flows_line}" if flows_line else "")
    record_verdict("spread", passed,
                   None if test.p is None else f"p = {test.p:.3g} over {test.units} {test.unit}s",
                   required, message=message, stream=counts.stream, p=test.p,
                   alpha=test.alpha, tolerance=test.tolerance,
                   max_deviation=record["max_deviation"], counted=test.unit)
    if passed:
        return
    if test.passed:
        verdict = (f"{split} of the {counts.sampled_flows} flows of stream {counts.stream!r} "
                   "sampled at the watched ports landed on more than one port: a hash keeps "
                   "each flow on one member (per_packet=True judges a per-packet spread)")
    elif test.total == 0:
        verdict = (f"no frame of stream {counts.stream!r} landed on any member "
                   f"{list(test.members)} (sent {fmt.count(counts.tx_packets)})")
    else:
        top = max(range(len(test.members)), key=lambda i: test.counts[i])
        verdict = (f"frames of stream {counts.stream!r} are not spread {even} over "
                   f"{list(test.members)}")
        if test.counts[top] == test.total:
            verdict += f": every one landed on {test.members[top]}"
    lines = [verdict, f"measured: {got}", f"statistic: {stat}",
             f"tolerance: {'none' if test.tolerance is None else fmt.share(test.tolerance)}"
             + (f", largest deviation {fmt.share(test.max_deviation)}"
                if not math.isinf(test.max_deviation) else ", a member of weight 0 got frames"),
             *([flows_line] if flows_line else []), f"required: {required}"]
    if outside:
        lines.append(f"outside the members: {_table(list(outside), list(outside.values()))}")
    raise AssertionError("\n".join(lines))


def _delivery(obj: Any, port: Any, helper: str) -> tuple[PortCounts, str, int]:
    counts = _counts(obj, helper)
    name = _port_name(port)
    if name not in counts.counts:
        raise NetloadConfigError(
            f"{helper}: port {name!r} was not watched for stream {counts.stream!r}: it was "
            f"counted on {sorted(counts.counts)}; give the port in over=[...] when sending it")
    return counts, name, counts.counts[name]


def _record_delivery(check: str, counts: PortCounts, name: str, got: int, ok: bool,
                     message: str) -> None:
    record_measurement("delivery", {"stream": counts.stream, "tx": counts.tx or None,
                                    "port": name, "expect": check, "frames": got,
                                    "tx_packets": counts.tx_packets,
                                    "counts": dict(counts.counts), "passed": ok})
    required = f"frames on {name}" if check == "delivered_to" else f"no frame on {name}"
    record_verdict(check, ok, f"{got:,} frames on {name}", required, message=message,
                   stream=counts.stream, port=name, frames=got)


def assert_delivered_to(obj: Any, port: Any, *, only: bool = True) -> None:
    """Check a forwarding decision: the stream's frames reached ``port``.

    ``obj`` is what ``port_counts`` returned (or a mapping port name -> frames). It passes
    when ``port`` received frames of the stream and, with ``only`` (the default), no other
    watched port received any. Loss is assert_loss's business: this checks where frames
    went, not how many arrived.
    """
    __tracebackhide__ = True
    counts, name, got = _delivery(obj, port, "assert_delivered_to")
    others = {k: v for k, v in counts.counts.items() if k != name and v}
    ok = got > 0 and not (only and others)
    table = _table(list(counts.counts), list(counts.counts.values()))
    sent = f" of {fmt.count(counts.tx_packets)} sent" if counts.tx_packets else ""
    _record_delivery("delivered_to", counts, name, got, ok, f"{table}{sent}")
    if ok:
        return
    if got == 0:
        verdict = f"no frame of stream {counts.stream!r} reached {name}"
    else:
        verdict = (f"stream {counts.stream!r} reached {name}, but also "
                   f"{_table(list(others), list(others.values()))}")
    where = "only there" if only else "at least one frame"
    raise AssertionError("\n".join([
        verdict, f"measured: {table}{sent}",
        f"required: frames on {name}, {where}" + (" (only=False allows others too)"
                                                  if only else "")]))


def assert_not_delivered(obj: Any, port: Any) -> None:
    """Check a forwarding decision: no frame of the stream reached ``port`` (an ACL that
    drops, VLAN isolation, a member a route must not use). ``port`` must have been
    watched: ``port_counts(stream, over=[..., port])``."""
    __tracebackhide__ = True
    counts, name, got = _delivery(obj, port, "assert_not_delivered")
    table = _table(list(counts.counts), list(counts.counts.values()))
    sent = f" of {fmt.count(counts.tx_packets)} sent" if counts.tx_packets else ""
    _record_delivery("not_delivered", counts, name, got, got == 0, f"{table}{sent}")
    if got == 0:
        return
    raise AssertionError("\n".join([
        f"{fmt.count(got)} frames of stream {counts.stream!r} reached {name}",
        f"measured: {table}{sent}", f"required: no frame on {name}"]))
