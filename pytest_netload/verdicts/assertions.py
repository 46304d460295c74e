"""Assertion helpers: a DUT verdict with the measured value beside the required one.

``assert_latency``, ``assert_loss`` and ``assert_throughput`` return None when the check
passes and raise ``AssertionError`` (pytest: FAIL) when it does not, with a message of the form::

    p99 latency 61.2us is not < 50us
    measured: p99 61.2us [95% CI 59.8us, 63.1us], 100,003 samples
    required: p99 < 50us (point estimate)
    conditions: frame size 64B, offered 1,000,000 pps (672.0 Mbit/s at L1), duration 10s, ...

Bad arguments (an unknown keyword, a bound that does not parse, a result without the data the
check needs) raise :class:`~pytest_netload.errors.NetloadConfigError` (pytest: ERROR). Every
check, passed or failed, is kept with :func:`recording.record_verdict` before anything is
raised. Methods: percentiles and their confidence intervals are those of
:class:`~pytest_netload.measure.latency.LatencyResult`; loss bounds are Clopper-Pearson
(:func:`stats.clopper_pearson_upper`).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..measure.latency import LatencyResult
from ..measure.recording import record_verdict
from ..measure.stats import clopper_pearson_upper
from ..rfc2544.throughput import FrameSizeThroughput, ThroughputResult
from ..rfc2544.trial import frame_size_label
from ..units import LAYER_TEXT, Size, check_layer, frame_bits
from .bounds import Bound, compare, parse_rate_bound, parse_time_bound

__all__ = ["assert_latency", "assert_loss", "assert_throughput"]

_STAT_KEYWORDS = ("mean", "min", "max", "jitter")
_PERCENTILE_KEYWORD = re.compile(r"p(\d+)(?:[_.](\d+))?")
_VALID_LATENCY_KEYWORDS = "p50, p99, p99_9 (99.9th), p99_99, p<any>, mean, min, max, jitter"


# ---- formatting --------------------------------------------------------------------------


def _is_real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


# Numbers read as format.py writes them (TEXT): measured times to 3 digits ("61.2us"),
# rates exact ("41,601 pps"), bit rates to 4 digits, given shares and durations exactly.


# ---- conditions --------------------------------------------------------------------------


def _real_attr(obj: object, name: str) -> float | None:
    value = getattr(obj, name, None)
    if _is_real(value) and math.isfinite(float(value)):  # type: ignore[arg-type]
        return float(value)  # type: ignore[arg-type]
    return None


def _conditions(obj: object, latency: LatencyResult | None = None) -> dict[str, Any]:
    """What the object says about how it was measured; JSON-able; unknown ones skipped."""
    out: dict[str, Any] = {}
    name = getattr(obj, "name", None)
    if isinstance(name, str):
        out["stream"] = name
    streams = getattr(obj, "streams", None)
    if isinstance(streams, tuple | list):
        out["streams"] = len(streams)
    size = getattr(obj, "frame_size", None)
    if isinstance(size, int | str) and not isinstance(size, bool):
        out["frame_size"] = size
    mean = _real_attr(obj, "mean_frame_size")
    if mean is not None and mean != size:
        out["mean_frame_size"] = mean
    for key in ("offered_pps", "duration_s", "loss_tolerance", "line_rate_bps", "max_pps"):
        value = _real_attr(obj, key)
        if value is not None:
            out[key] = value
    trials = getattr(obj, "trials", None)
    if isinstance(trials, tuple | list):
        out["trials"] = len(trials)
        out["valid_trials"] = sum(1 for t in trials if getattr(t, "valid", True))
    method = getattr(obj, "method", None)
    if isinstance(method, str):
        out["method"] = method
    own = getattr(obj, "latency", None)
    lat = latency if latency is not None else own if isinstance(own, LatencyResult) else None
    clock = getattr(obj, "clock", None)
    if not isinstance(clock, str) and lat is not None:
        clock = lat.clock
    if isinstance(clock, str):
        out["clock"] = clock
    if lat is not None:
        resolution = _real_attr(lat, "resolution_ns")
    else:
        resolution = _real_attr(obj, "clock_resolution_ns")
        if resolution is None:
            resolution = _real_attr(obj, "tsc_resolution_ns")
    if resolution is not None:
        out["clock_resolution_ns"] = resolution
    return out


def _conditions_text(cond: dict[str, Any], layer: str = "l1") -> str | None:
    parts: list[str] = []
    if "stream" in cond:
        parts.append(f"stream {cond['stream']!r}")
    if "streams" in cond:
        parts.append(f"{cond['streams']} streams")
    size = cond.get("frame_size")
    mean = cond.get("mean_frame_size")
    if size is not None:
        text = f"frame size {frame_size_label(size)}"
        parts.append(text + (f" (mean {mean:g}B)" if mean is not None else ""))
    elif mean is not None:
        parts.append(f"mean frame size {mean:g}B")
    if "offered_pps" in cond:
        text = f"offered {fmt.rate_pps_exact(cond['offered_pps'])}"
        frame = mean if mean is not None else size if isinstance(size, int) else None
        if frame is not None and frame > 4:
            bps = cond["offered_pps"] * frame_bits(frame, layer)
            text += f" ({fmt.bitrate(bps)} at {layer.upper()})"
        parts.append(text)
    if "max_pps" in cond:
        parts.append(f"searched up to {fmt.rate_pps_exact(cond['max_pps'])}")
    if "duration_s" in cond:
        per = " per trial" if "trials" in cond else ""
        parts.append(f"duration {fmt.time_s_exact(cond['duration_s'])}{per}")
    if "loss_tolerance" in cond:
        parts.append(f"loss tolerance {fmt.percent(cond['loss_tolerance'])}")
    if "trials" in cond:
        method = f" ({cond['method']} search)" if "method" in cond else ""
        n = cond["trials"]
        parts.append(f"{n} trial{'s' if n != 1 else ''}, {cond['valid_trials']} valid{method}")
    if "line_rate_bps" in cond:
        parts.append(f"line rate {fmt.bitrate(cond['line_rate_bps'])}")
    if "clock" in cond:
        res = cond.get("clock_resolution_ns")
        parts.append(f"clock {cond['clock']}"
                     + (f" (resolution {fmt.time_ns(res)})" if res else ""))
    return ", ".join(parts) if parts else None


def _failure(lines: list[str], cond: dict[str, Any], layer: str = "l1") -> AssertionError:
    text = _conditions_text(cond, layer)
    if text is not None:
        lines = [*lines, f"conditions: {text}"]
    return AssertionError("\n".join(lines))


# ---- assert_latency ----------------------------------------------------------------------


@dataclass(frozen=True)
class _LatencyCheck:
    keyword: str
    name: str          # "p99.9", "mean", ...
    percentile: float | None
    bound: Bound


def _latency_checks(bounds: dict[str, object]) -> list[_LatencyCheck]:
    if not bounds:
        raise NetloadConfigError("assert_latency: give at least one bound, e.g. p99='< 50us'; "
                                 f"valid keywords: {_VALID_LATENCY_KEYWORDS}")
    checks = []
    for keyword, value in bounds.items():
        percentile: float | None = None
        if keyword in _STAT_KEYWORDS:
            name = keyword
        else:
            m = _PERCENTILE_KEYWORD.fullmatch(keyword)
            if m is None:
                raise NetloadConfigError(
                    f"assert_latency: unknown bound {keyword}={value!r}; valid keywords: "
                    f"{_VALID_LATENCY_KEYWORDS}")
            digits = m.group(1) + ("." + m.group(2) if m.group(2) is not None else "")
            percentile = float(digits)
            if not 0 < percentile <= 100:
                raise NetloadConfigError(
                    f"assert_latency: {keyword}={value!r} asks for percentile {digits}, "
                    "outside (0, 100]; write e.g. p50, p99, p99_9 (99.9th) or p100 (the "
                    "maximum)")
            name = f"p{percentile:g}"
        checks.append(_LatencyCheck(keyword, name, percentile,
                                    parse_time_bound(value, name=keyword)))
    return checks


def _latency_of(obj: object) -> LatencyResult:
    if isinstance(obj, LatencyResult):
        return obj
    method = getattr(obj, "latency_result", None)
    if callable(method):
        result = method()
        if not isinstance(result, LatencyResult):
            raise NetloadConfigError(
                f"assert_latency: {type(obj).__name__}.latency_result() returned "
                f"{type(result).__name__}, not a LatencyResult")
        return result
    if hasattr(obj, "latency"):
        result = obj.latency
        if isinstance(result, LatencyResult):
            return result
        if result is None:
            raise NetloadConfigError(
                f"assert_latency: this {type(obj).__name__} has no latency result (its latency "
                "is None); measure latency in the trial (streams with latency signatures)")
    raise NetloadConfigError(
        f"assert_latency: {type(obj).__name__} holds no latency; give a LatencyResult, a "
        "StreamResult or a result whose .latency is a LatencyResult (TrialResult)")


def _check_confidence(confidence: object, helper: str) -> float:
    if not _is_real(confidence) or not 0 < float(confidence) < 1:  # type: ignore[arg-type]
        raise NetloadConfigError(f"{helper}: confidence={confidence!r}: give a number in "
                                 "(0, 1), e.g. 0.95")
    return float(confidence)  # type: ignore[arg-type]


def assert_latency(obj: object, *, confidence: float = 0.95, conservative: bool = False,
                   **bounds: object) -> None:
    """Check latency statistics against bounds: ``assert_latency(result, p99="< 50us")``.

    ``obj`` is a LatencyResult, anything with a ``latency_result()`` method (a StreamResult)
    or with a ``latency`` attribute holding a LatencyResult (a TrialResult). Keywords:
    ``pN`` for the N-th percentile with ``_`` as decimal point (``p50``, ``p99``, ``p99_9``
    = 99.9th, ``p99_99``; ``p100`` is the maximum), ``mean``, ``min``, ``max`` and
    ``jitter`` (RFC 3550 interarrival jitter, ``jitter_ns``). Bounds are time bounds of
    :func:`bounds.parse_time_bound`: ``"< 50us"``, ``"<= 1.5ms"``, ``"50us"`` (means <=),
    a number of ns or a Duration.

    A percentile is judged by its point estimate; with ``conservative=True`` by the far end
    of its ``confidence`` interval instead (the upper end for ``<``/``<=`` bounds, the lower
    end for ``>``/``>=``), so a pass means the bound holds at that confidence; a sample too
    small for such an interval then fails. mean, min, max and jitter have no interval.
    """
    __tracebackhide__ = True
    confidence = _check_confidence(confidence, "assert_latency")
    if not isinstance(conservative, bool):
        raise NetloadConfigError(f"assert_latency: conservative={conservative!r}: give True or "
                                 "False")
    checks = _latency_checks(bounds)
    lat = _latency_of(obj)
    if any(c.name == "jitter" for c in checks) and lat.jitter_ns is None:
        raise NetloadConfigError("assert_latency: a jitter bound was given, but this latency "
                                 "result has no jitter_ns (the engine did not report one)")
    cond = _conditions(obj, lat)
    if lat.empty:
        for c in checks:
            record_verdict(f"latency.{c.name}", False, None, c.bound.text, unit="ns",
                           samples=0, reason="no latency samples", conditions=cond)
        required = ", ".join(f"{c.name} {c.bound.text}" for c in checks)
        raise _failure([
            ("no latency samples: nothing of this stream was received with a timestamp "
             "(check the loss counters and that the stream carries latency signatures)"),
            "measured: 0 samples",
            f"required: {required}",
        ], cond)
    failed: list[str] = []
    passed: list[str] = []
    for c in checks:
        ok, lines, details = _judge_latency(c, lat, confidence, conservative)
        record_verdict(f"latency.{c.name}", ok, details.pop("compared_ns"), c.bound.text,
                       message=lines[0], conditions=cond, **details)
        if ok:
            passed.append(lines[0])
        else:
            failed.extend(lines)
    if failed:
        if passed:
            failed.append(f"passed: {'; '.join(passed)}")
        raise _failure(failed, cond)


def _judge_latency(c: _LatencyCheck, lat: LatencyResult, confidence: float,
                   conservative: bool) -> tuple[bool, list[str], dict[str, Any]]:
    """(passed, [verdict, measured, required] lines, verdict details) of one latency check."""
    bound, n = c.bound, lat.count
    samples = f"{fmt.count(n)} sample{'s' if n != 1 else ''}"
    details: dict[str, Any] = {"unit": "ns", "op": bound.op, "required_ns": bound.value,
                               "samples": n, "keyword": c.keyword}
    how = "point estimate"
    if c.percentile is None:
        how = "measured value"
        getter: dict[str, Callable[[], float]] = {
            "mean": lambda: lat.mean_ns, "min": lambda: float(lat.min_ns),
            "max": lambda: float(lat.max_ns),
            "jitter": lambda: float(lat.jitter_ns or 0.0),
        }
        value = float(getter[c.name]())
        compared: float | None = value
        what = {"jitter": "RFC 3550 jitter"}.get(c.name, c.name)
        measured = f"{what} {fmt.time_ns(value)}, {samples}"
        details["value_ns"] = value
        subject = f"{c.name} latency" if c.name != "jitter" else "jitter"
    else:
        pct = lat.percentile(c.percentile, confidence)
        value = pct.value_ns
        subject = f"{c.name} latency" if c.percentile != 100 else "max latency (p100)"
        conf = fmt.percent(confidence)
        details.update(value_ns=value, ci_low_ns=pct.ci_low_ns, ci_high_ns=pct.ci_high_ns,
                       confidence=confidence, conservative=conservative,
                       ci_coverage=pct.coverage)
        if c.percentile == 100:
            measured = f"max {fmt.time_ns(value)}, {samples}"
            end = pct.ci_high_ns if bound.is_upper else pct.ci_low_ns
            compared = end if conservative else value
            if conservative:
                how = "conservative: the histogram bucket bound of the maximum"
        elif pct.has_ci:
            measured = (f"{c.name} {fmt.time_ns(value)} [{conf} CI {fmt.time_ns(pct.ci_low_ns)}, "
                        f"{fmt.time_ns(pct.ci_high_ns)}], {samples}")
            end, side = ((pct.ci_high_ns, "upper") if bound.is_upper
                         else (pct.ci_low_ns, "lower"))
            compared = end if conservative else value
            if conservative:
                how = f"conservative: the {side} end of its {conf} CI"
                subject = f"{c.name} latency ({side} end of its {conf} CI)"
        else:
            measured = (f"{c.name} {fmt.time_ns(value)} [no {conf} CI: too few samples], "
                        f"{samples}")
            compared = None if conservative else value
            if conservative:
                side = "upper" if bound.is_upper else "lower"
                how = f"conservative: the {side} end of its {conf} CI"
    details["compared_ns"] = compared
    required = f"required: {c.name} {bound.text} ({how})"
    if compared is None:
        verdict = (f"{c.name} latency cannot be shown {bound.text} at {fmt.percent(confidence)}"
                   f" confidence: {samples} are too few for a confidence interval")
        return False, [verdict, f"measured: {measured}", required], details
    ok = bound.holds(compared)
    verdict = f"{subject} {fmt.time_ns(compared)} is {'' if ok else 'not '}{bound.text}"
    return ok, [verdict, f"measured: {measured}", required], details


# ---- assert_loss -------------------------------------------------------------------------


def _count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise NetloadConfigError(f"assert_loss: {what} = {value!r} is not a count >= 0")
    return int(value)


def _loss_counts(obj: Any) -> tuple[int, int]:
    """(sent, lost) frames of a trial, a stream or a run (summed over its sent streams)."""
    streams = getattr(obj, "streams", None)
    if isinstance(streams, tuple | list):
        sent = lost = 0
        for s in streams:
            if getattr(s, "expected_only", False):
                continue  # its TX count is on the engine that sent it
            s_sent, s_lost = _loss_counts(s)
            sent, lost = sent + s_sent, lost + s_lost
        return sent, lost
    if not hasattr(obj, "tx_packets") or not (hasattr(obj, "lost")
                                              or hasattr(obj, "rx_packets")):
        raise NetloadConfigError(
            f"assert_loss: {type(obj).__name__} has no frame counts; give a result with "
            "tx_packets and rx_packets (or lost): a TrialResult, StreamResult or RunResult")
    sent = _count(obj.tx_packets, "tx_packets")
    if hasattr(obj, "lost"):
        lost = _count(obj.lost, "lost")
    else:
        lost = max(sent - _count(obj.rx_packets, "rx_packets"), 0)
    if lost > sent:
        raise NetloadConfigError(f"assert_loss: {fmt.count(lost)} frames lost of {fmt.count(sent)} sent: the "
                                 "counts disagree")
    return sent, lost


def assert_loss(obj: object, *, at_most: float | None = None, max_lost: int | None = None,
                confidence: float = 0.95) -> None:
    """Check frame loss: ``assert_loss(trial, at_most=0)`` or ``assert_loss(run, max_lost=10)``.

    ``obj`` has ``tx_packets`` and ``rx_packets`` (or ``lost``): a TrialResult, a
    StreamResult, or a RunResult (summed over the streams it sent). Give exactly one of
    ``at_most``, a loss ratio in [0, 1) (0: no frame may be lost), or ``max_lost``, a count.

    The verdict is on the measured ratio (lost / sent <= at_most) or count (lost <=
    max_lost). The message (kept in the verdict record also on a pass) states what the
    sample shows about the true loss ratio: its one-sided Clopper-Pearson upper bound at
    ``confidence`` (:func:`stats.clopper_pearson_upper`).
    """
    __tracebackhide__ = True
    confidence = _check_confidence(confidence, "assert_loss")
    if (at_most is None) == (max_lost is None):
        which = "not both" if at_most is not None else "one of them"
        raise NetloadConfigError(
            f"assert_loss: give at_most (a loss ratio in [0, 1), e.g. at_most=0 or "
            f"at_most=1e-6) or max_lost (a number of frames), {which}")
    if at_most is not None and (not _is_real(at_most) or not 0 <= float(at_most) < 1):
        raise NetloadConfigError(f"assert_loss: at_most={at_most!r}: give a loss ratio in "
                                 "[0, 1), e.g. 0 (no frame lost) or 1e-6")
    if max_lost is not None and (isinstance(max_lost, bool)
                                 or not isinstance(max_lost, numbers.Integral)
                                 or int(max_lost) < 0):
        raise NetloadConfigError(f"assert_loss: max_lost={max_lost!r}: give a whole number of "
                                 "frames >= 0")
    criterion = "at_most" if at_most is not None else "max_lost"
    limit: float | int = float(at_most) if at_most is not None else int(max_lost or 0)
    if at_most is None:
        required = f"at most {fmt.count(limit)} frames lost (max_lost={limit})"
    elif limit == 0:
        required = "no frame lost (at_most=0)"
    else:
        required = (f"loss ratio <= {fmt.loss_ratio_exact(limit)} (at_most; verdict on the "
                    "measured ratio)")
    sent, lost = _loss_counts(obj)
    cond = _conditions(obj)
    details: dict[str, Any] = {"criterion": criterion, "sent": sent, "lost": lost,
                               "confidence": confidence, "method": "clopper-pearson",
                               "conditions": cond}
    if sent == 0:
        record_verdict("loss", False, None, limit, reason="no frames were sent",
                       message="no frames were sent", **details)
        raise _failure([("no frames were sent: a loss verdict needs frames (check the "
                         "trial's rate, duration and that the stream was started)"),
                        "measured: 0 frames sent", f"required: {required}"], cond)
    ratio = lost / sent
    upper = clopper_pearson_upper(lost, sent, confidence)
    conf = fmt.percent(confidence)
    if lost == sent:
        statement = f"{fmt.count(lost)} of {fmt.count(sent)} frames lost: every frame"
    else:
        shown = f" (loss ratio {fmt.loss_ratio(ratio)})" if lost else ""
        statement = (f"{fmt.count(lost)} of {fmt.count(sent)} frames lost{shown}: loss ratio < "
                     f"{fmt.loss_ratio(upper)} at {conf} confidence (Clopper-Pearson)")
    ok = ratio <= limit if at_most is not None else lost <= limit
    measured: float | int = ratio if at_most is not None else lost
    record_verdict("loss", ok, measured, limit, loss_ratio=ratio, upper_bound=upper,
                   message=statement, **details)
    if not ok:
        if at_most is not None:
            verdict = (f"loss ratio {fmt.loss_ratio(ratio)} is not <= "
                       f"{fmt.loss_ratio_exact(limit)}")
        else:
            verdict = f"{fmt.count(lost)} frames lost is not <= {fmt.count(limit)}"
        raise _failure([verdict, f"measured: {statement}", f"required: {required}"], cond)


# ---- assert_throughput -------------------------------------------------------------------


def _normalise_size(frame_size: object) -> object:
    if isinstance(frame_size, Size):
        return frame_size.bytes
    if isinstance(frame_size, str):
        m = re.fullmatch(r"\s*(\d+)\s*B?\s*", frame_size)
        return int(m.group(1)) if m else frame_size.strip().lower()
    return frame_size


def _pick_size(obj: object, frame_size: object) -> tuple[FrameSizeThroughput | None, str]:
    """The measured size, or (None, why it is missing) when the result lacks it."""
    want = _normalise_size(frame_size)
    if isinstance(obj, FrameSizeThroughput):
        if frame_size is not None and want != obj.frame_size:
            return None, (f"throughput was measured at {obj.label} only, not at "
                          f"{frame_size_label(want)}")  # type: ignore[arg-type]
        return obj, ""
    if isinstance(obj, ThroughputResult):
        labels = ", ".join(s.label for s in obj.sizes) or "none"
        if frame_size is None:
            if len(obj.sizes) == 1:
                return obj.sizes[0], ""
            if not obj.sizes:
                return None, "the throughput result holds no frame size"
            raise NetloadConfigError(
                f"assert_throughput: the result holds {len(obj.sizes)} frame sizes ({labels}); "
                "say which with frame_size=, e.g. frame_size=64")
        try:
            return obj[want], ""  # type: ignore[index]
        except KeyError:
            return None, (f"no throughput was measured at {frame_size_label(want)}; "  # type: ignore[arg-type]
                          f"measured: {labels}")
    raise NetloadConfigError(
        f"assert_throughput: {type(obj).__name__} is not a throughput result; give a "
        "ThroughputResult or a FrameSizeThroughput (rfc2544.throughput)")


def _bracket_text(fst: FrameSizeThroughput) -> str:
    """E.g. "bracket [6,421, 6,453] pps (resolution 0.5% of the lower bound)"; with
    "not reached" when the search ran out of trials; "" for a search without a
    resolution (MLRsearch) or an open bracket (the maximum passed)."""
    lo, hi = fst.bracket_pps
    if fst.resolution is None or hi is None:
        return ""
    text = (f"bracket [{fmt.rate_pps_exact(lo).removesuffix(' pps')}, "
            f"{fmt.rate_pps_exact(hi).removesuffix(' pps')}] pps "
            f"(resolution {fst.resolution.describe()}")
    if fst.resolution_reached is False:
        text += ", not reached: the search ran out of max_trials first"
    return text + ")"


def _bracket_fields(fst: FrameSizeThroughput) -> dict[str, Any]:
    if fst.resolution is None:
        return {}
    return {"bracket_pps": list(fst.bracket_pps), **fst.resolution.as_dict(),
            "resolution_reached": fst.resolution_reached}


def assert_throughput(obj: object, *, at_least: object, frame_size: object = None,
                      layer: str = "l1") -> None:
    """Check RFC 2544 throughput: ``assert_throughput(result, at_least="95%", frame_size=64)``.

    ``obj`` is a ThroughputResult (``frame_size`` picks the size; required when it holds
    more than one) or a FrameSizeThroughput. ``at_least`` is a rate (``"250kpps"``,
    ``"1Gbit/s"``, ``"95%"`` of the line rate, a Rate) or a rate bound (``">= 250kpps"``,
    ``"> 1Mpps"``). A bit rate written without ``@layer`` counts ``layer`` (default L1, as
    line rates do); a Rate keeps its own layer. The check compares packets per second,
    converting with the result's mean frame size (and its line rate for a percentage).
    A failure shows the binary search's final bracket and its resolution, and says when
    the search ran out of trials before reaching it; the verdict record keeps both.
    """
    __tracebackhide__ = True
    layer = check_layer(layer, what="assert_throughput: layer")
    bound = parse_rate_bound(at_least, name="at_least", default_op=">=", ops=(">", ">="),
                             layer=layer)
    fst, missing = _pick_size(obj, frame_size)
    if fst is None:
        label = ("unknown" if frame_size is None
                 else frame_size_label(_normalise_size(frame_size)))  # type: ignore[arg-type]
        cond = _conditions(obj)
        record_verdict(f"throughput@{label}", False, None, bound.text, reason=missing,
                       message=missing, conditions=cond)
        raise _failure([missing, "measured: nothing at this frame size",
                        f"required: throughput {bound.text} at {label}"], cond, layer)
    rate = bound.rate
    assert rate is not None
    if rate.kind == "percent" and not fst.line_rate_bps:
        raise NetloadConfigError(
            f"assert_throughput: at_least={at_least!r} is a share of the line rate, but this "
            "throughput result has no line_rate_bps (the topology declares none; veth has "
            "none); give the rate in pps or bit/s")
    mean = fst.mean_frame_size
    required_pps = rate.pps(mean, fst.line_rate_bps)
    measured_pps = fst.throughput_pps
    ok = compare(measured_pps, bound.op, required_pps)
    label, cond = fst.label, _conditions(fst)
    size_text = f"{label} frames" + (f" (mean {mean:g}B)" if mean != fst.frame_size else "")
    measured_bps = measured_pps * frame_bits(mean, layer)
    share = (f"; {fmt.share(fst.bps('l1') / fst.line_rate_bps)} of the "
             f"{fmt.bitrate(fst.line_rate_bps)} line rate" if fst.line_rate_bps else "")
    measured = (f"{fmt.rate_pps_exact(measured_pps)} ({fmt.bitrate(measured_bps)} at "
                f"{LAYER_TEXT[layer]}"
                f"{share}), the highest load that passed")
    bracket = _bracket_text(fst)
    if bracket:
        measured += f"; the search's final {bracket}"
    elif fst.upper_pps is not None:
        measured += f"; the lowest that failed: {fmt.rate_pps_exact(fst.upper_pps)}"
    else:
        measured += " (the search's maximum)"
    ceiling = _real_attr(fst, "generator_ceiling_pps")
    if ceiling is not None:
        measured += (f"; the generator could not offer {fmt.rate_pps_exact(ceiling)} "
                     "(every try invalid),"
                     " so this may be the generator's limit, not the DUT's")
    converted = ("" if rate.kind == "pps" else
                 f" = {fmt.rate_pps_exact(required_pps)} at {size_text}")
    required = f"throughput {bound.text}{converted}"
    verdict = (f"throughput at {label} {fmt.rate_pps_exact(measured_pps)} is {'' if ok else 'not '}"
               f"{bound.op} {fmt.rate_pps_exact(required_pps)}"
               + (f" ({rate})" if rate.kind != "pps" else ""))
    record_verdict(f"throughput@{label}", ok, measured_pps, bound.text,
                   required_pps=required_pps, op=bound.op, unit="pps", layer=layer,
                   measured_bps=measured_bps, upper_pps=fst.upper_pps,
                   line_rate_bps=fst.line_rate_bps, generator_ceiling_pps=ceiling,
                   **_bracket_fields(fst), message=verdict, conditions=cond)
    if not ok:
        raise _failure([verdict, f"measured: {measured}", f"required: {required}"], cond, layer)
