"""assert_latency: percentiles (with their confidence intervals) and statistics of a
latency result against bounds such as p99="< 50us"."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..measure.latency import LatencyResult
from ..measure.recording import record_verdict
from .bounds import Bound, parse_time_bound
from .explain import _check_confidence, _conditions, _failure, _is_real


_STAT_KEYWORDS = ("mean", "min", "max", "jitter")
_PERCENTILE_KEYWORD = re.compile(r"p(\d+)(?:[_.](\d+))?")
_VALID_LATENCY_KEYWORDS = "p50, p99, p99_9 (99.9th), p99_99, p<any>, mean, min, max, jitter"


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
