"""Unit tests of pytest_netload.verdicts.assertions: verdicts, messages, verdict records, bad input."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pytest_netload
from pytest_netload import format as fmt
from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure.histogram import LogHistogram
from pytest_netload.measure.latency import LatencyResult
from pytest_netload.measure.recording import TestRecord, recording
from pytest_netload.measure.results import RunResult, StreamResult
from pytest_netload.measure.stats import clopper_pearson_upper
from pytest_netload.rfc2544 import FrameSizeThroughput, Resolution, ThroughputResult, TrialResult
from pytest_netload.search import TrialSettings
from pytest_netload.units import Rate, Size
from pytest_netload.verdicts import assertions
from pytest_netload.verdicts.assertions import assert_latency, assert_loss, assert_throughput
from pytest_netload.verdicts.bounds import format_ns

N_BUCKETS = 2560  # NETLOAD_HIST_BUCKETS


def _lower_bounds(n: int = N_BUCKETS) -> np.ndarray:
    """The engine's log-linear bucket layout (native/src/hist.c) for pure-Python tests."""
    i = np.arange(n, dtype=np.uint64)
    k = np.maximum(i, 128) - 128
    return np.where(i < 128, i, (k % 64 + 64) << (k // 64 + 1)).astype(np.uint64)


LOWER = _lower_bounds()


def histogram_of(values: Any) -> LogHistogram:
    idx = np.searchsorted(LOWER, np.asarray(values, dtype=np.uint64), side="right") - 1
    counts = np.bincount(np.minimum(idx, N_BUCKETS - 1), minlength=N_BUCKETS)
    return LogHistogram(counts.astype(np.uint64), LOWER)


def latency_of(values: Any, **kwargs: Any) -> LatencyResult:
    defaults: dict[str, Any] = {"clock": "tsc-software", "resolution_ns": 0.4, "jitter_ns": 812.0}
    return LatencyResult(histogram_of(values), **(defaults | kwargs))


@pytest.fixture(scope="module")
def lat() -> LatencyResult:
    rng = np.random.default_rng(7)
    return latency_of(np.floor(rng.lognormal(math.log(40_000), 0.2, 100_003)))


def trial(latency: LatencyResult | None = None, *, tx: int = 10_000_000, lost: int = 0,
          frame_size: int | str = 64, mean: float = 64.0, offered_pps: float = 1e6,
          duration_s: float = 10.0, clock: str | None = "tsc-software") -> TrialResult:
    return TrialResult(frame_size, mean, offered_pps, duration_s, tx, tx - lost,
                       latency=latency, clock=clock)


def stream(name: str = "s0", *, tx: int = 1000, rx: int = 1000, duplicates: int = 0,
           latency: LogHistogram | None = None, expected_only: bool = False) -> StreamResult:
    return StreamResult(
        name=name, stream_id=0, tx_packets=tx, tx_bytes=tx * 60, tx_unsent=0,
        tx_alloc_failures=0, tx_first_ns=0, tx_last_ns=10**9, rx_packets=rx,
        rx_bytes=rx * 60, duplicates=duplicates, reordered=0, rx_first_ns=0,
        rx_last_ns=10**9, latency_min_ns=0, latency_max_ns=0, latency_sum_ns=0,
        latency_samples=0 if latency is None else latency.total, jitter_ns=90,
        expected_only=expected_only, latency=latency, clock="nic-hardware",
        clock_resolution_ns=8.0,
    )


def run_of(*streams: StreamResult) -> RunResult:
    return RunResult(tuple(streams), {}, np.zeros(0))


def size_result(frame_size: int | str = 64, throughput_pps: float = 1_200_000.0, *,
                mean: float | None = None, upper_pps: float | None = 1_300_000.0,
                line_rate_bps: float | None = 10e9, trials: int = 3,
                **extra: Any) -> FrameSizeThroughput:
    mean = float(frame_size) if mean is None else mean
    log = tuple(trial(frame_size=frame_size, mean=mean, tx=1000, offered_pps=1e6)
                for _ in range(trials))
    return FrameSizeThroughput(
        settings=TrialSettings(duration_s=60.0, frame_size=frame_size, mean_frame_size=mean,
                               line_rate_bps=line_rate_bps),
        throughput_pps=throughput_pps, upper_pps=upper_pps, max_pps=14_880_952.0, trials=log,
        loss_tolerance=0.0, **extra)


def failure(check: Callable[[], None]) -> list[str]:
    """The lines of the AssertionError ``check`` raises."""
    with pytest.raises(AssertionError) as info:
        check()
    assert type(info.value) is AssertionError
    lines = str(info.value).splitlines()
    assert all("nan" not in line.lower().split() for line in lines)
    return lines


def only_verdict(record: TestRecord) -> dict[str, Any]:
    assert len(record.verdicts) == 1
    json.dumps(record.verdicts)  # JSON-able
    return record.verdicts[0]


# ---- the package exports the helpers ------------------------------------------------------


def test_exported_from_the_package() -> None:
    for name in ("assert_latency", "assert_loss", "assert_throughput"):
        assert getattr(pytest_netload, name) is getattr(assertions, name)
        assert name in pytest_netload.__all__


def test_helpers_return_none_on_pass(lat: LatencyResult) -> None:
    helpers: list[tuple[Callable[..., object], object, dict[str, Any]]] = [
        (assert_latency, lat, {"p99": "< 1ms"}),
        (assert_loss, trial(), {"at_most": 0}),
        (assert_throughput, size_result(), {"at_least": "1Mpps"}),
    ]
    for helper, obj, kwargs in helpers:
        assert helper(obj, **kwargs) is None


@pytest.mark.parametrize(
    "call",
    [
        lambda lat: assert_latency(lat, p99="< 1us"),
        lambda lat: assert_loss(trial(lost=5), at_most=0),
        lambda lat: assert_throughput(size_result(), at_least="2Mpps"),
    ],
)
def test_tracebacks_hide_the_helpers(lat: LatencyResult, call: Callable[[Any], None]) -> None:
    with pytest.raises(AssertionError) as info:
        call(lat)
    hidden = [entry.frame.f_locals.get("__tracebackhide__") for entry in info.traceback
              if entry.frame.code.raw.co_name.startswith("assert_")]
    assert hidden == [True]


# ---- assert_latency ------------------------------------------------------------------------


def test_latency_passes_on_every_kind_of_result(lat: LatencyResult) -> None:
    assert_latency(lat, p99="< 1ms")
    assert_latency(trial(lat), p50="< 1ms", p99_9="<= 1ms")
    assert_latency(SimpleNamespace(latency=lat), max="< 1s")
    small = histogram_of([5_000, 6_000, 7_000])
    assert_latency(stream(latency=small), max="< 10us", min=">= 4us")


def test_latency_fails_with_measured_required_and_conditions(lat: LatencyResult) -> None:
    p99 = lat.percentile(99)
    with recording("t") as record:
        lines = failure(lambda: assert_latency(trial(lat), p99="< 50us"))
    shown = fmt.time_ns
    assert lines[0] == f"p99 latency {shown(p99.value_ns)} is not < 50us"
    assert lines[1] == (f"measured: p99 {shown(p99.value_ns)} [95% CI {shown(p99.ci_low_ns)}, "
                        f"{shown(p99.ci_high_ns)}], 100,003 samples")
    assert lines[2] == "required: p99 < 50us (point estimate)"
    assert lines[3] == ("conditions: frame size 64B, offered 1,000,000 pps (672.0 Mbit/s at L1), "
                        "duration 10s, clock tsc-software (resolution 0.4ns)")
    assert len(lines) == 4
    verdict = only_verdict(record)
    assert verdict["check"] == "latency.p99" and verdict["passed"] is False
    assert verdict["measured"] == p99.value_ns and verdict["required"] == "< 50us"
    assert (verdict["ci_low_ns"], verdict["ci_high_ns"]) == (p99.ci_low_ns, p99.ci_high_ns)
    assert verdict["required_ns"] == 50_000.0 and verdict["samples"] == 100_003
    assert verdict["conditions"] == {"frame_size": 64, "offered_pps": 1e6, "duration_s": 10.0,
                                     "clock": "tsc-software", "clock_resolution_ns": 0.4}
    assert verdict["message"] == lines[0]


def test_latency_records_passes_and_lists_them_beside_failures(lat: LatencyResult) -> None:
    with recording("t") as record:
        lines = failure(lambda: assert_latency(lat, mean="< 1ms", p99="< 50us", max="> 1s"))
    assert [v["check"] for v in record.verdicts] == ["latency.mean", "latency.p99",
                                                     "latency.max"]
    assert [v["passed"] for v in record.verdicts] == [True, False, False]
    json.dumps(record.verdicts)
    assert lines[0].startswith("p99 latency ") and lines[3].startswith("max latency ")
    assert lines[6].startswith("passed: mean latency ") and lines[6].endswith(" is < 1ms")
    assert lines[-1].startswith("conditions: clock tsc-software")


@pytest.mark.parametrize(("keyword", "p"), [("p50", 50.0), ("p99", 99.0), ("p99_9", 99.9),
                                            ("p99_99", 99.99), ("p90", 90.0), ("p0_5", 0.5)])
def test_percentile_keywords(lat: LatencyResult, keyword: str, p: float) -> None:
    value = lat.percentile(p).value_ns
    with recording("t") as record:
        at_most: dict[str, Any] = {keyword: value}  # a number of ns: <=
        below: dict[str, Any] = {keyword: f"< {value}ns"}
        assert_latency(lat, **at_most)
        with pytest.raises(AssertionError):
            assert_latency(lat, **below)
    assert [v["passed"] for v in record.verdicts] == [True, False]
    assert record.verdicts[0]["check"] == f"latency.p{p:g}"
    assert record.verdicts[0]["measured"] == value


def test_p100_is_the_maximum(lat: LatencyResult) -> None:
    with recording("t") as record:
        assert_latency(lat, p100=lat.max_ns, max=lat.max_ns)
        lines = failure(lambda: assert_latency(lat, p100=f"< {lat.max_ns}ns"))
    assert [v["measured"] for v in record.verdicts] == [lat.max_ns] * 3
    assert lines[0].startswith("max latency (p100) ")
    assert lines[1].startswith("measured: max ")


@pytest.mark.parametrize("name", ["mean", "min", "max", "jitter"])
def test_statistic_keywords(lat: LatencyResult, name: str) -> None:
    value = {"mean": lat.mean_ns, "min": lat.min_ns, "max": lat.max_ns,
             "jitter": lat.jitter_ns}[name]
    assert value is not None
    with recording("t") as record:
        at_least: dict[str, Any] = {name: f">= {value}ns"}
        at_most: dict[str, Any] = {name: value}
        below: dict[str, Any] = {name: f"< {value}ns"}
        assert_latency(lat, **at_least)
        assert_latency(lat, **at_most)
        lines = failure(lambda: assert_latency(lat, **below))
    assert [v["passed"] for v in record.verdicts] == [True, True, False]
    assert record.verdicts[0]["measured"] == value and record.verdicts[0]["check"] == \
        f"latency.{name}"
    assert lines[2] == f"required: {name} < {format_ns(value)} (measured value)"
    if name == "jitter":
        assert lines[0].startswith("jitter 812ns is not < ")
        assert lines[1] == "measured: RFC 3550 jitter 812ns, 100,003 samples"


def test_conservative_uses_the_far_end_of_the_ci(lat: LatencyResult) -> None:
    p99 = lat.percentile(99)
    assert p99.value_ns < p99.ci_high_ns and p99.ci_low_ns < p99.value_ns
    upper = f"< {(p99.value_ns + p99.ci_high_ns) / 2}ns"   # above the estimate, below the CI end
    lower = f"> {(p99.value_ns + p99.ci_low_ns) / 2}ns"    # below the estimate, above the CI end
    with recording("t") as record:
        assert_latency(lat, p99=upper)
        assert_latency(lat, p99=lower)
        up = failure(lambda: assert_latency(lat, p99=upper, conservative=True))
        low = failure(lambda: assert_latency(lat, p99=lower, conservative=True))
    shown = fmt.time_ns
    assert up[0].startswith(f"p99 latency (upper end of its 95% CI) {shown(p99.ci_high_ns)} is"
                            " not < ")
    assert up[2].endswith("(conservative: the upper end of its 95% CI)")
    assert low[0].startswith(f"p99 latency (lower end of its 95% CI) {shown(p99.ci_low_ns)} is"
                             " not > ")
    assert [v["measured"] for v in record.verdicts] == [p99.value_ns, p99.value_ns,
                                                         p99.ci_high_ns, p99.ci_low_ns]
    assert [v["conservative"] for v in record.verdicts] == [False, False, True, True]
    assert_latency(lat, p99=f"<= {p99.ci_high_ns}ns", conservative=True)


def test_conservative_fails_without_a_confidence_interval() -> None:
    few = latency_of(np.arange(1000, 1050))  # 50 samples: p99 has no 95% interval
    assert not few.percentile(99).has_ci
    assert_latency(few, p99="< 1ms")
    with recording("t") as record:
        lines = failure(lambda: assert_latency(few, p99="< 1ms", conservative=True))
    assert lines[0] == ("p99 latency cannot be shown < 1ms at 95% confidence: 50 samples are "
                        "too few for a confidence interval")
    assert "[no 95% CI: too few samples]" in lines[1]
    assert only_verdict(record)["measured"] is None


def test_confidence_changes_the_interval(lat: LatencyResult) -> None:
    p99 = lat.percentile(99, 0.99)
    lines = failure(lambda: assert_latency(lat, p99="< 1us", confidence=0.99))
    assert f"[99% CI {fmt.time_ns(p99.ci_low_ns)}, " in lines[1]


def test_empty_latency_is_a_failure_not_nan() -> None:
    empty = latency_of(np.array([], dtype=np.uint64))
    with recording("t") as record:
        lines = failure(lambda: assert_latency(trial(empty), p99="< 50us", mean="< 1ms"))
    assert lines[0].startswith("no latency samples: nothing of this stream was received")
    assert lines[1] == "measured: 0 samples"
    assert lines[2] == "required: p99 < 50us, mean < 1ms"
    assert lines[3].startswith("conditions: frame size 64B")
    assert [(v["check"], v["passed"], v["measured"]) for v in record.verdicts] == [
        ("latency.p99", False, None), ("latency.mean", False, None)]
    json.dumps(record.verdicts)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({}, "give at least one bound, e.g. p99='< 50us'; valid keywords: p50, p99, p99_9"),
        ({"p99": "< 1ms", "median": "< 1ms"}, "unknown bound median='< 1ms'; valid keywords: "),
        ({"q99": "< 1ms"}, ("valid keywords: p50, p99, p99_9 (99.9th), p99_99, p<any>, mean, "
                           "min, max, jitter")),
        ({"p99_": "< 1ms"}, "unknown bound p99_="),
        ({"p0": "< 1ms"}, "p0='< 1ms' asks for percentile 0, outside (0, 100]"),
        ({"p0_0": "< 1ms"}, "asks for percentile 0.0, outside (0, 100]"),
        ({"p101": "< 1ms"}, "p101='< 1ms' asks for percentile 101, outside (0, 100]"),
        ({"p100_5": "< 1ms"}, "asks for percentile 100.5"),
        ({"p99": "fast"}, ("p99='fast' is not a bound; write '< 50us', '<= 1ms' or a number of "
                          "ns")),
        ({"p99_9": -3}, "p99_9=-3 is negative"),
        ({"p99": "< 1ms", "confidence": 1.5}, "confidence=1.5: give a number in (0, 1)"),
        ({"p99": "< 1ms", "confidence": 0}, "confidence=0: give a number in (0, 1)"),
        ({"p99": "< 1ms", "confidence": True}, "confidence=True"),
        ({"p99": "< 1ms", "conservative": "yes"}, "conservative='yes': give True or False"),
    ],
)
def test_latency_bad_arguments(lat: LatencyResult, kwargs: dict[str, Any],
                               fragment: str) -> None:
    with recording("t") as record, pytest.raises(NetloadConfigError) as info:
        assert_latency(lat, **kwargs)
    assert fragment in str(info.value)
    assert record.verdicts == []


def test_latency_needs_a_latency_result(lat: LatencyResult) -> None:
    with pytest.raises(NetloadConfigError, match="TrialResult has no latency result"):
        assert_latency(trial(None), p99="< 1ms")
    with pytest.raises(NetloadConfigError, match="object holds no latency; give a LatencyResult"):
        assert_latency(object(), p99="< 1ms")
    with pytest.raises(NetloadConfigError, match="stream 's0' has no latency histogram"):
        assert_latency(stream(), p99="< 1ms")
    with pytest.raises(NetloadConfigError, match="returned int, not a LatencyResult"):
        assert_latency(SimpleNamespace(latency_result=lambda: 3), p99="< 1ms")
    no_jitter = latency_of([1000, 2000], jitter_ns=None)
    with pytest.raises(NetloadConfigError, match="no jitter_ns"):
        assert_latency(no_jitter, jitter="< 1us")


def test_stream_result_conditions() -> None:
    s = stream(latency=histogram_of([5_000] * 10))
    lines = failure(lambda: assert_latency(s, max="< 1us"))
    assert lines[-1] == "conditions: stream 's0', clock nic-hardware (resolution 8.0ns)"


def test_nothing_is_kept_outside_a_recording(lat: LatencyResult) -> None:
    assert_latency(lat, p99="< 1ms")  # no current record: no error either
    with pytest.raises(AssertionError):
        assert_latency(lat, p99="< 1us")


# ---- assert_loss ---------------------------------------------------------------------------


def test_zero_loss_passes_and_words_the_statistical_bound() -> None:
    with recording("t") as record:
        assert_loss(trial(tx=1_000_000), at_most=0)
    verdict = only_verdict(record)
    assert verdict["message"] == ("0 of 1,000,000 frames lost: loss ratio < 3.00e-06 at 95% "
                                  "confidence (Clopper-Pearson)")
    assert verdict["check"] == "loss" and verdict["passed"] is True
    assert (verdict["measured"], verdict["required"]) == (0.0, 0.0)
    assert verdict["upper_bound"] == clopper_pearson_upper(0, 1_000_000, 0.95)
    assert (verdict["sent"], verdict["lost"], verdict["criterion"]) == (1_000_000, 0, "at_most")


def test_loss_failure_message() -> None:
    with recording("t") as record:
        lines = failure(lambda: assert_loss(trial(tx=1_000_000, lost=3), at_most=1e-6))
    upper = clopper_pearson_upper(3, 1_000_000, 0.95)
    assert lines == [
        "loss ratio 3.00e-06 is not <= 1e-06",
        (f"measured: 3 of 1,000,000 frames lost (loss ratio 3.00e-06): loss ratio < {upper:.2e}"
        " at 95% confidence (Clopper-Pearson)"),
        "required: loss ratio <= 1e-06 (at_most; verdict on the measured ratio)",
        ("conditions: frame size 64B, offered 1,000,000 pps (672.0 Mbit/s at L1), duration 10s, "
        "clock tsc-software"),
    ]
    verdict = only_verdict(record)
    assert verdict["passed"] is False and verdict["measured"] == 3e-6
    assert verdict["message"] == lines[1].removeprefix("measured: ")


def test_loss_verdict_is_the_point_ratio_not_the_upper_bound() -> None:
    # 3e-6 measured, upper bound 7.8e-6 > at_most: the verdict is on the measured ratio
    assert_loss(trial(tx=1_000_000, lost=3), at_most=5e-6)
    assert clopper_pearson_upper(3, 1_000_000) > 5e-6


def test_loss_at_most_zero_and_every_frame_lost() -> None:
    lines = failure(lambda: assert_loss(trial(tx=1000, lost=1), at_most=0))
    assert lines[0] == "loss ratio 0.1000% is not <= 0"
    assert lines[2] == "required: no frame lost (at_most=0)"
    lines = failure(lambda: assert_loss(trial(tx=1000, lost=1000), at_most=0.5))
    assert lines[1] == "measured: 1,000 of 1,000 frames lost: every frame"


def test_max_lost() -> None:
    with recording("t") as record:
        assert_loss(trial(tx=1000, lost=10), max_lost=10)
        lines = failure(lambda: assert_loss(trial(tx=1000, lost=11), max_lost=10))
    assert lines[0] == "11 frames lost is not <= 10"
    assert lines[2] == "required: at most 10 frames lost (max_lost=10)"
    assert [(v["passed"], v["measured"], v["required"], v["criterion"])
            for v in record.verdicts] == [(True, 10, 10, "max_lost"), (False, 11, 10, "max_lost")]


def test_loss_confidence() -> None:
    with recording("t") as record:
        assert_loss(trial(tx=1000), at_most=0, confidence=0.99)
    verdict = only_verdict(record)
    assert "at 99% confidence" in verdict["message"]
    assert verdict["upper_bound"] == clopper_pearson_upper(0, 1000, 0.99)


def test_loss_of_streams_and_runs() -> None:
    with recording("t") as record:
        assert_loss(stream(tx=1000, rx=1002, duplicates=5), max_lost=3)  # 3 lost, 5 duplicated
        run = run_of(stream("a", tx=1000, rx=990), stream("b", tx=500, rx=500),
                     stream("c", tx=0, rx=40, expected_only=True))
        lines = failure(lambda: assert_loss(run, at_most=0))
    assert [(v["sent"], v["lost"]) for v in record.verdicts] == [(1000, 3), (1500, 10)]
    assert lines[1].startswith("measured: 10 of 1,500 frames lost")
    assert lines[-1] == "conditions: 3 streams"


def test_loss_of_plain_counts() -> None:
    with recording("t") as record:
        assert_loss(SimpleNamespace(tx_packets=100, rx_packets=103), at_most=0)  # duplicates
        assert_loss(SimpleNamespace(tx_packets=100, lost=1), max_lost=1)
    assert [v["lost"] for v in record.verdicts] == [0, 1]


def test_nothing_sent_is_a_failure() -> None:
    with recording("t") as record:
        lines = failure(lambda: assert_loss(run_of(), at_most=0))
        failure(lambda: assert_loss(SimpleNamespace(tx_packets=0, rx_packets=0), max_lost=5))
    assert lines[0].startswith("no frames were sent")
    assert lines[1] == "measured: 0 frames sent"
    assert [(v["passed"], v["measured"], v["sent"]) for v in record.verdicts] == [
        (False, None, 0), (False, None, 0)]
    json.dumps(record.verdicts)


@pytest.mark.parametrize(
    ("obj", "kwargs", "fragment"),
    [
        (None, {}, ("give at_most (a loss ratio in [0, 1), e.g. at_most=0 or at_most=1e-6) or "
                   "max_lost (a number of frames), one of them")),
        (None, {"at_most": 0, "max_lost": 0}, "not both"),
        (None, {"at_most": 1}, "at_most=1: give a loss ratio in [0, 1)"),
        (None, {"at_most": -0.1}, "at_most=-0.1: give a loss ratio in [0, 1)"),
        (None, {"at_most": math.nan}, "at_most=nan"),
        (None, {"at_most": "0.1%"}, "at_most='0.1%'"),
        (None, {"at_most": True}, "at_most=True"),
        (None, {"max_lost": -1}, "max_lost=-1: give a whole number of frames >= 0"),
        (None, {"max_lost": 1.5}, "max_lost=1.5"),
        (None, {"max_lost": False}, "max_lost=False"),
        (None, {"at_most": 0, "confidence": 1}, "assert_loss: confidence=1: give a number in"),
        (object(), {"at_most": 0}, ("object has no frame counts; give a result with tx_packets "
                                   "and rx_packets")),
        (SimpleNamespace(tx_packets=5, lost=6), {"at_most": 0}, "6 frames lost of 5 sent"),
        (SimpleNamespace(tx_packets=5.0, rx_packets=5), {"at_most": 0},
         "tx_packets = 5.0 is not a count"),
        (SimpleNamespace(tx_packets=5, rx_packets=-1), {"at_most": 0},
         "rx_packets = -1 is not a count"),
        (stream(expected_only=True), {"at_most": 0}, "was only expected in this run"),
    ],
)
def test_loss_bad_arguments(obj: object, kwargs: dict[str, Any], fragment: str) -> None:
    with recording("t") as record, pytest.raises(NetloadConfigError) as info:
        assert_loss(trial(tx=1000) if obj is None else obj, **kwargs)
    assert fragment in str(info.value)
    assert record.verdicts == []


@settings(max_examples=200, deadline=None)
@given(sent=st.integers(1, 10**9), data=st.data(),
       at_most=st.floats(0, 1, exclude_max=True, allow_nan=False))
def test_loss_verdict_agrees_with_the_point_ratio(sent: int, data: st.DataObject,
                                                  at_most: float) -> None:
    lost = data.draw(st.integers(0, sent))
    max_lost = data.draw(st.integers(0, 2 * sent))
    t = trial(tx=sent, lost=lost)
    with recording("t") as record:
        for kwargs, expected in (({"at_most": at_most}, lost / sent <= at_most),
                                 ({"max_lost": max_lost}, lost <= max_lost)):
            if expected:
                assert_loss(t, **kwargs)
            else:
                with pytest.raises(AssertionError):
                    assert_loss(t, **kwargs)
    ratio_verdict, count_verdict = record.verdicts
    assert ratio_verdict["passed"] is (lost / sent <= at_most)
    assert ratio_verdict["measured"] == lost / sent
    assert lost / sent <= ratio_verdict["upper_bound"] <= 1
    assert count_verdict["passed"] is (lost <= max_lost)
    assert count_verdict["measured"] == lost


# ---- assert_throughput ---------------------------------------------------------------------


def test_throughput_passes_and_records() -> None:
    with recording("t") as record:
        result = size_result(throughput_pps=250_000.0)
        assert_throughput(result, at_least="250kpps")
        assert_throughput(result, at_least=">= 250kpps")
        assert_throughput(result, at_least=Rate("250kpps"))
        lines = failure(lambda: assert_throughput(result, at_least="> 250kpps"))
    assert [v["passed"] for v in record.verdicts] == [True, True, True, False]
    verdict = record.verdicts[0]
    assert verdict["check"] == "throughput@64B"
    assert (verdict["measured"], verdict["required"], verdict["required_pps"]) == (
        250_000.0, ">= 250kpps", 250_000.0)
    json.dumps(record.verdicts)
    assert lines[0] == "throughput at 64B 250,000 pps is not > 250,000 pps"


def test_throughput_failure_message() -> None:
    result = size_result(throughput_pps=1_200_000.0)
    lines = failure(lambda: assert_throughput(result, at_least="95%"))
    assert lines == [
        "throughput at 64B 1,200,000 pps is not >= 14,136,905 pps (95%)",
        ("measured: 1,200,000 pps (806.4 Mbit/s at L1: frame+FCS+preamble+IFG; 8.064% of the "
        "10.00 Gbit/s line rate), the highest load that passed; the lowest that failed: "
        "1,300,000 pps"),
        "required: throughput >= 95% = 14,136,905 pps at 64B frames",
        ("conditions: frame size 64B, searched up to 14,880,952 pps, duration 1m per trial, "
        "loss tolerance 0%, 3 trials, 3 valid (binary search), line rate 10.00 Gbit/s"),
    ]


def test_throughput_shows_the_search_bracket_and_its_resolution() -> None:
    result = size_result(throughput_pps=6421.0, upper_pps=6453.0, line_rate_bps=None,
                         resolution=Resolution(ratio=0.005), resolution_reached=True)
    with recording("t") as record:
        assert_throughput(result, at_least="6kpps")
        lines = failure(lambda: assert_throughput(result, at_least="7kpps"))
    assert lines[1] == ("measured: 6,421 pps (4.315 Mbit/s at L1: frame+FCS+preamble+IFG), the "
                        "highest load that passed; the search's final bracket [6,421, 6,453] pps "
                        "(resolution 0.5% of the lower bound)")
    passed = record.verdicts[0]
    assert passed["passed"] and passed["bracket_pps"] == [6421.0, 6453.0]
    assert (passed["resolution_ratio"], passed["resolution_pps"],
            passed["resolution_reached"]) == (0.005, None, True)


def test_throughput_says_when_the_resolution_was_not_reached() -> None:
    result = size_result(throughput_pps=29.0, upper_pps=36.0, line_rate_bps=None,
                         resolution=Resolution(pps=1.0), resolution_reached=False)
    lines = failure(lambda: assert_throughput(result, at_least="1kpps"))
    assert lines[1].endswith("the search's final bracket [29, 36] pps (resolution 1 pps, not "
                             "reached: the search ran out of max_trials first)")


def test_throughput_names_a_generator_ceiling() -> None:
    result = size_result(throughput_pps=1e6, upper_pps=1.1e6, generator_ceiling_pps=1.1e6)
    with recording("t") as record:
        lines = failure(lambda: assert_throughput(result, at_least="2Mpps"))
    assert lines[1].endswith("; the generator could not offer 1,100,000 pps (every try "
                             "invalid), so this may be the generator's limit, not the DUT's")
    assert only_verdict(record)["generator_ceiling_pps"] == 1.1e6


def test_throughput_bit_rates_use_the_layer() -> None:
    l1_pps = 1e9 / (84 * 8)  # 1 Gbit/s of 64 B frames at L1
    l2_pps = 1e9 / (64 * 8)
    at = size_result(throughput_pps=l1_pps)
    assert_throughput(at, at_least="1Gbit/s")  # layer="l1" by default
    assert_throughput(at, at_least="1Gbit/s@l1", layer="l2")
    with pytest.raises(AssertionError, match="1Gbit/s@l2"):
        assert_throughput(at, at_least="1Gbit/s", layer="l2")
    with pytest.raises(AssertionError):
        assert_throughput(at, at_least=Rate("1Gbit/s"))  # a Rate keeps its layer (L2)
    assert_throughput(size_result(throughput_pps=l2_pps), at_least="1Gbit/s", layer="l2")
    below = size_result(throughput_pps=l1_pps * (1 - 1e-9))
    with recording("t") as record, pytest.raises(AssertionError):
        assert_throughput(below, at_least="1Gbit/s")
    assert only_verdict(record)["required_pps"] == pytest.approx(l1_pps, rel=1e-15)


def test_throughput_imix_uses_the_mean_frame_size() -> None:
    result = size_result("imix", 1e6, mean=353.83)
    bits = (353.83 + 20) * 8
    assert_throughput(result, at_least=f"{1e6 * bits / 1e9}Gbit/s@l1")
    lines = failure(lambda: assert_throughput(result, at_least="3Gbit/s"))
    assert lines[2] == (f"required: throughput >= 3Gbit/s@l1 = {3e9 / bits:,.0f} pps at imix "
                        "frames (mean 353.83B)")
    assert lines[3].startswith("conditions: frame size imix (mean 353.83B)")


def test_throughput_picks_the_frame_size() -> None:
    both = ThroughputResult((size_result(64, 1e6), size_result(128, 5e5)))
    with recording("t") as record:
        assert_throughput(both, at_least="1Mpps", frame_size=64)
        assert_throughput(both, at_least="500kpps", frame_size=Size(128))
        assert_throughput(both, at_least="500kpps", frame_size="128B")
        assert_throughput(ThroughputResult((size_result(128, 5e5),)), at_least="500kpps")
        lines = failure(lambda: assert_throughput(both, at_least="1Mpps", frame_size=256))
    assert [(v["check"], v["passed"]) for v in record.verdicts] == [
        ("throughput@64B", True), ("throughput@128B", True), ("throughput@128B", True),
        ("throughput@128B", True), ("throughput@256B", False)]
    assert lines[0] == "no throughput was measured at 256B; measured: 64B, 128B"
    assert record.verdicts[-1]["measured"] is None
    with pytest.raises(AssertionError, match="measured at 64B only, not at 128B"):
        assert_throughput(size_result(64), at_least="1pps", frame_size=128)
    with pytest.raises(AssertionError, match="holds no frame size"):
        assert_throughput(ThroughputResult(()), at_least="1pps")


@pytest.mark.parametrize(
    ("obj", "kwargs", "fragment"),
    [
        (ThroughputResult((size_result(64), size_result(128))), {"at_least": "1pps"},
         "the result holds 2 frame sizes (64B, 128B); say which with frame_size="),
        (size_result(line_rate_bps=None), {"at_least": "95%"},
         ("at_least='95%' is a share of the line rate, but this throughput result has no "
         "line_rate_bps")),
        (size_result(), {"at_least": "< 1Mpps"}, ("operator '<' does not apply here; use '>' "
                                                 "or '>='")),
        (size_result(), {"at_least": "fast"}, "at_least='fast' is not a rate bound"),
        (size_result(), {"at_least": 250_000}, "at_least=250000 is not a rate bound"),
        (size_result(), {"at_least": ">= 5us"}, "unknown unit 'us'"),
        (size_result(), {"at_least": "1Mpps", "layer": "l3"}, "layer 'l3' is unknown"),
        (trial(), {"at_least": "1Mpps"}, "TrialResult is not a throughput result"),
    ],
)
def test_throughput_bad_arguments(obj: object, kwargs: dict[str, Any], fragment: str) -> None:
    with recording("t") as record, pytest.raises(NetloadConfigError) as info:
        assert_throughput(obj, **kwargs)
    assert fragment in str(info.value)
    assert record.verdicts == []
