"""The Y.1564 (2016) CBS/EBS burst tests: the token-bucket formula against a frame-by-frame
bucket, and the procedure against fake bucket DUTs."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.search import TrialSettings
from pytest_netload.verdicts.sac_verdict import assert_sac
from pytest_netload.y1564 import (Burst, BurstResult, BurstSample, Service, bucket_passes,
                                  burst_test, full_burst_frames)
from pytest_netload.y1564.bursts import BURST_MIN_IDLE_S

LINE = 10e9  # L1


def simulate(frames: int, size: int, depth: int, fill_bps: int, rate_bps: int) -> int:
    """A full token bucket, frame by frame, in exact arithmetic: frame k arrives at
    k x size x 8 / rate and passes when the bucket holds `size` bytes."""
    tokens = Fraction(depth)
    passed = 0
    gap = Fraction(size * 8, rate_bps)
    for k in range(frames):
        if k:
            tokens = min(Fraction(depth), tokens + gap * fill_bps / 8)
        if tokens >= size:
            tokens -= size
            passed += 1
    return passed


buckets = st.tuples(
    st.integers(1, 400),                 # frames
    st.integers(64, 9018),               # frame size
    st.integers(64, 200_000),            # depth (bytes)
    st.integers(8_000, 2_000_000_000),   # fill (bit/s)
    st.integers(2, 1000),                # the burst's rate as a multiple of the fill ...
)


@settings(max_examples=400, deadline=None)
@given(buckets)
def test_the_formula_is_the_frame_by_frame_bucket(case: tuple[int, int, int, int, int]) -> None:
    frames, size, depth, fill, times = case
    rate = fill * times + 1  # always faster than the bucket fills
    assert bucket_passes(frames, size, depth, fill, rate) == \
        simulate(frames, size, depth, fill, rate)


@settings(max_examples=300, deadline=None)
@given(buckets)
def test_a_burst_passes_whole_exactly_up_to_the_full_burst(
        case: tuple[int, int, int, int, int]) -> None:
    _frames, size, depth, fill, times = case
    rate = fill * times + 1
    n = full_burst_frames(size, depth, fill, rate)
    rho = fill / rate
    # N x s <= D + (N - 1) x s x r / R: the last N that holds, the next does not
    if n:
        assert n * size <= depth + (n - 1) * size * rho + 1e-6
        assert bucket_passes(n, size, depth, fill, rate) == n
    assert (n + 1) * size > depth + n * size * rho - 1e-6
    assert bucket_passes(n + 1, size, depth, fill, rate) < n + 1


def test_the_known_numbers() -> None:
    # 12,500 B at 10 Mbit/s, 512 B frames at 800 Mbit/s: 24 whole (12,288 B), 2 CBS
    # (48 frames) gets 25 through: the bucket's 24 and the 0.6 frame it refilled
    assert full_burst_frames(512, 12_500, 10e6, 800e6) == 24
    assert bucket_passes(19, 512, 12_500, 10e6, 800e6) == 19
    assert bucket_passes(48, 512, 12_500, 10e6, 800e6) == 25
    # a slow burst refills more: at 20 Mbit/s half of it comes back
    assert bucket_passes(48, 512, 12_500, 10e6, 20e6) == math.floor((12_500 + 47 * 256) / 512)
    assert bucket_passes(0, 512, 12_500, 10e6, 800e6) == 0
    assert full_burst_frames(512, 500, 10e6, 800e6) == 0


def test_a_burst_no_faster_than_the_bucket_is_refused() -> None:
    with pytest.raises(NetloadConfigError, match="never empties it"):
        bucket_passes(10, 512, 12_500, 10e6, 10e6)
    with pytest.raises(NetloadConfigError, match="give a frame size"):
        full_burst_frames(0, 12_500, 10e6, 800e6)


class Bucket:
    """A DUT that polices with a token bucket (full at each burst after its idle time);
    bursts leave at `rate_bps` (L2), or are short/invalid as told."""

    def __init__(self, depth: int, fill_bps: float, rate_bps: float | None = 800e6,
                 invalid_first: int = 0, short: int = 0) -> None:
        self.depth, self.fill, self.rate = depth, fill_bps, rate_bps
        self.invalid_first, self.short = invalid_first, short
        self.calls: list[tuple[Burst, float]] = []

    def measure(self, load: Burst, duration_s: float) -> BurstSample:
        self.calls.append((load, duration_s))
        if len(self.calls) <= self.invalid_first:
            return BurstSample(load.service, 512, load.frames - 1, 0, self.rate, valid=False,
                               invalid_reason="the generator sent 1 frame short")
        rate = self.rate or LINE * 512 / 532
        rx = load.frames if rate <= self.fill else \
            bucket_passes(load.frames, 512, self.depth, self.fill, rate) - self.short
        return BurstSample(load.service, 512, load.frames, max(rx, 0), self.rate)


DATA = Service("data", cir="10Mbit/s", cbs=12_500, frame_size=512)
BOTH = Service("both", cir="10Mbit/s", eir="5Mbit/s", cbs=12_500, ebs=10_000,
               frame_size=512)


def test_a_bucket_of_the_cbs_passes_and_drops_as_expected() -> None:
    dut = Bucket(12_500, 10e6)
    result = burst_test(dut, DATA, line_rate_bps=LINE, shares=(0.8, 2.0))
    assert result.passed and not result.dut_failed, result.failures()
    small, big = result.steps
    assert (small.name, small.frames, small.expected, small.expected_rx) == \
        ("CBS 80%", 19, "pass", 19)
    assert small.sample is not None and small.sample.rx_frames == 19
    assert (big.name, big.frames, big.expected, big.expected_rx) == ("CBS 200%", 48, "drop", 25)
    assert "the other 23 dropped; received 25 of 48: as expected within 1 frame" in big.reason
    # idle: twice the 10 ms the bucket takes to fill, at least the minimum
    assert [c[0].idle_s for c in dut.calls] == [BURST_MIN_IDLE_S] * 2
    assert dut.calls[0][1] == pytest.approx(BURST_MIN_IDLE_S + 19 * 512 * 8 / (LINE * 512 / 532))
    doc = json.loads(json.dumps(result.as_dict()))
    assert doc["procedure"] == "y1564_bursts" and doc["steps"][1]["lost"] == 23
    assert_sac(result)


def test_a_smaller_bucket_fails_the_cbs_burst() -> None:
    result = burst_test(Bucket(6_000, 10e6), DATA, shares=(1.0,))
    (step,) = result.steps
    assert step.expected == "pass" and step.passed is False and result.dut_failed
    assert "expected to pass whole (12,288 B within the bucket, CBS 12,500 B at " \
        "10.00 Mbit/s, at 800.0 Mbit/s); received 12 of 24: not as expected within 1 frame" \
        == step.reason
    with pytest.raises(AssertionError, match="burst test: service 'data' burst CBS 100%"):
        assert_sac(result)


def test_the_tolerance_allows_a_frame_of_rounding() -> None:
    one_short = burst_test(Bucket(12_500, 10e6, short=1), DATA)
    assert one_short.passed
    strict = burst_test(Bucket(12_500, 10e6, short=1), DATA, tolerance_frames=0)
    assert not strict.passed and "not as expected" in strict.steps[0].reason


def test_the_ebs_burst_uses_both_buckets() -> None:
    dut = Bucket(22_500, 15e6)
    result = burst_test(dut, BOTH, shares=(1.0, 2.0), idle_s=0.5)
    assert [s.name for s in result.steps] == ["CBS 100%", "CBS 200%", "CBS+EBS 100%",
                                              "CBS+EBS 200%"]
    cbs, _, ebs, _ = result.steps
    assert (cbs.bucket_bytes, cbs.fill_bps, ebs.bucket_bytes, ebs.fill_bps) == \
        (12_500, 10e6, 22_500, 15e6)
    assert ebs.frames == 43 and ebs.expected == "pass" and ebs.passed
    assert cbs.expected == "pass" and cbs.passed  # a bigger bucket passes it whole too
    assert result.steps[1].passed is False  # ... but lets more of 2 x CBS through
    assert all(c[0].idle_s == 0.5 for c in dut.calls)
    assert [s.name for s in burst_test(dut, BOTH, ebs=False).steps] == ["CBS 100%"]


def test_an_invalid_burst_is_retried_then_not_measured() -> None:
    dut = Bucket(12_500, 10e6, invalid_first=1)
    retried = burst_test(dut, DATA)
    assert retried.passed and retried.steps[0].tries == 2
    assert retried.steps[0].invalid_reasons == ("the generator sent 1 frame short",)
    never = burst_test(Bucket(12_500, 10e6, invalid_first=9), DATA,
                       settings=TrialSettings(retries=1))
    (step,) = never.steps
    assert step.passed is None and step.sample is None and never.not_measured == ("CBS 100%",)
    assert step.reason == ("not measured: the generator failed 2 tries (the generator sent 1 "
                           "frame short); not the DUT's failure")
    assert not never.passed and not never.dut_failed


def test_a_burst_that_left_no_faster_than_the_cir_tests_nothing() -> None:
    result = burst_test(Bucket(12_500, 10e6, rate_bps=8e6), DATA,
                        settings=TrialSettings(retries=0))
    (step,) = result.steps
    assert step.sample is None and "no faster than the bucket fills (10.00 Mbit/s): it " \
        "does not test the bucket" in step.reason


def test_without_a_measured_rate_the_line_rate_judges() -> None:
    result = burst_test(Bucket(12_500, 10e6, rate_bps=None), DATA, line_rate_bps=LINE)
    assert result.passed
    unknown = burst_test(Bucket(12_500, 10e6, rate_bps=None), DATA)
    assert unknown.steps[0].passed is None and "rate is unknown" in unknown.steps[0].reason


@pytest.mark.parametrize(("kwargs", "text"), [
    ({"shares": ()}, "burst_sizes=(): give the bursts as shares of the bucket"),
    ({"shares": (0.5, -1)}, "burst_sizes=[0.5, -1]: -1 is not a share of the bucket"),
    ({"tolerance_frames": -1}, "burst_tolerance=-1: give a whole number of frames >= 0"),
    ({"idle_s": -0.1}, "burst_idle=-0.1: give seconds from 0 to 3600"),
])
def test_bad_settings_name_themselves(kwargs: dict[str, object], text: str) -> None:
    with pytest.raises(NetloadConfigError, match=text.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        burst_test(Bucket(12_500, 10e6), DATA, **kwargs)  # type: ignore[arg-type]


def test_a_service_without_a_cbs_is_refused() -> None:
    with pytest.raises(NetloadConfigError, match="service 'x' has no cbs: the burst test sends "
                       "bursts sized to the CBS; give it one, e.g. cbs='12kB'"):
        burst_test(Bucket(12_500, 10e6), Service("x", cir="10Mbit/s"))
    with pytest.raises(NetloadConfigError, match="less than one 512-byte frame"):
        burst_test(Bucket(12_500, 10e6), Service("x", cir="10Mbit/s", cbs=100))


def test_a_sample_checks_its_figures() -> None:
    with pytest.raises(NetloadConfigError, match="rate_bps=0"):
        BurstSample("x", 512, 1, 1, 0)
    with pytest.raises(NetloadConfigError, match="tx_frames=-1"):
        BurstSample("x", 512, -1, 1, None)
    assert isinstance(burst_test(Bucket(12_500, 10e6), DATA), BurstResult)
