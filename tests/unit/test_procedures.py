"""RFC 2544 procedures against fake DUTs: pure logic, no engine."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import InvalidTrial, NetloadConfigError
from pytest_netload.measure.histogram import LogHistogram
from pytest_netload.measure.latency import LatencyResult
from pytest_netload.rfc2544 import (
    FrameSizeThroughput,
    Resolution,
    TrialResult,
    binary_search,
    check_frame_sizes,
)
from pytest_netload.rfc2544.back_to_back import back_to_back
from pytest_netload.rfc2544.frame_loss import frame_loss_sweep
from pytest_netload.rfc2544.latency import latency_trials
from pytest_netload.rfc2544.recovery import (
    RecoveryLoad,
    RecoveryTrial,
    ResetResult,
    ResetTrial,
    check_hook,
    recovery_loads,
    system_recovery,
)
from pytest_netload.rfc2544.summary import Spread
from pytest_netload.search import FunctionMeasurer, TrialSettings

ONE_S_64B = TrialSettings(duration_s=1.0, frame_size=64, mean_frame_size=64)
"""1-s trials of 64-B frames, the default retries."""


class FakeDut:
    """Forwards up to `capacity` pps; loses the excess. `generator_max` is what the
    fake generator can offer: above it every trial is invalid. `noise` adds binomial
    background loss at that ratio."""

    def __init__(self, capacity: float, *, generator_max: float = float("inf"),
                 noise: float = 0.0, seed: int = 1, latency_ns: float | None = None) -> None:
        self.capacity = capacity
        self.generator_max = generator_max
        self.noise = noise
        self.rng = np.random.default_rng(seed)
        self.latency_ns = latency_ns
        self.loads: list[float] = []

    def measure(self, load: float, duration_s: float = 1.0) -> TrialResult:
        self.loads.append(load)
        tx = round(load * duration_s)
        if load > self.generator_max:
            return TrialResult(64, 64.0, load, duration_s, int(tx * 0.9), int(tx * 0.9),
                               valid=False, invalid_reason="the generator sent 90 %")
        rx = min(tx, int(self.capacity * duration_s))
        if self.noise:
            rx -= int(self.rng.binomial(rx, self.noise))
        lat = None
        if self.latency_ns is not None:
            counts = np.zeros(64, dtype=np.uint64)
            counts[int(self.latency_ns) % 64] = rx
            lat = LatencyResult(LogHistogram(counts, np.arange(64, dtype=np.uint64)),
                                clock="fake", samples=rx)
        return TrialResult(64, 64.0, load, duration_s, tx, rx, achieved_tx_pps=load,
                           latency=lat)


# ---- throughput (binary search) --------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(capacity=st.floats(1e3, 1e7), headroom=st.floats(1.01, 20.0))
def test_binary_search_finds_capacity_within_resolution(capacity: float, headroom: float) -> None:
    dut = FakeDut(capacity)
    max_pps = capacity * headroom
    r = binary_search(dut, max_pps, settings=ONE_S_64B,
                      resolution_pps=max_pps * 0.001, max_trials=100)
    assert r.throughput_pps <= capacity + 1
    assert capacity - r.throughput_pps <= max_pps * 0.001 + 1
    assert r.upper_pps is not None and r.upper_pps > capacity - 1
    assert len(r.trials) == len(dut.loads)


def test_binary_search_passing_maximum_is_the_throughput() -> None:
    r = binary_search(FakeDut(1e6), 5e5, settings=ONE_S_64B)
    assert r.throughput_pps == 5e5 and r.upper_pps is None and len(r.trials) == 1
    assert r.bracket_pps == (5e5, None) and r.resolution_reached is True
    assert r.as_dict()["bracket_pps"] == [5e5, None]


class ThresholdDut:
    """Passes a trial iff its load <= `capacity` (no rounding): the bracket is exact."""

    def __init__(self, capacity: float) -> None:
        self.capacity = capacity
        self.loads: list[float] = []

    def measure(self, load: float, _duration_s: float = 1.0) -> TrialResult:
        self.loads.append(load)
        tx = max(1, round(load))
        return TrialResult(64, 64.0, load, 1.0, tx, tx if load <= self.capacity else tx - 1)


def search(dut: ThresholdDut, max_pps: float, **kwargs: Any) -> FrameSizeThroughput:
    return binary_search(dut, max_pps, settings=ONE_S_64B,
                         **kwargs)


@settings(max_examples=200, deadline=None)
@given(max_pps=st.floats(1e3, 1e8), share=st.floats(1e-4, 1.0, exclude_max=True))
def test_default_resolution_is_relative_to_the_lower_bound(max_pps: float, share: float) -> None:
    capacity = max_pps * share
    dut = ThresholdDut(capacity)
    r = search(dut, max_pps)  # default: 0.5 % of the lower bound, 20 trials
    lo, hi = r.bracket_pps
    assert lo <= capacity < hi and hi == r.upper_pps
    assert r.resolution == Resolution(ratio=0.005)
    if share >= 2.0 ** -11:  # 1 + 11 halvings down to the capacity + 8 to 0.5 %: <= 20
        assert r.resolution_reached
    if r.resolution_reached:
        assert capacity * (1 - 0.005) <= lo <= capacity
        assert hi - lo <= 0.005 * lo
    else:
        assert len(dut.loads) == 20
    # with trials enough, any capacity down to 1e-4 of the maximum is found to 0.5 %
    r = search(ThresholdDut(capacity), max_pps, max_trials=40)
    lo, hi = r.bracket_pps
    assert r.resolution_reached
    assert capacity * (1 - 0.005) <= lo <= capacity < hi and hi - lo <= 0.005 * lo


def test_small_capacity_under_a_high_generator_ceiling() -> None:
    """Issue 11: on veth the maximum is the generator's (300 kpps); a 6,448 pps DUT was
    reported 15 % low when the resolution was a share of the maximum."""
    r = search(ThresholdDut(6448.0), 300e3)
    lo, hi = r.bracket_pps
    assert 6448.0 * 0.995 <= lo <= 6448.0 < hi and hi - lo <= 0.005 * lo
    assert r.resolution_reached and len(r.trials) <= 20
    record = r.as_dict()
    assert record["bracket_pps"] == [lo, hi]
    assert (record["resolution_ratio"], record["resolution_pps"],
            record["resolution_reached"]) == (0.005, None, True)


def test_absolute_resolution_behaves_as_before() -> None:
    dut = ThresholdDut(6448.0)
    r = search(dut, 300e3, resolution_pps=100.0)
    lo, hi = r.bracket_pps
    assert lo <= 6448.0 < hi and hi - lo <= 100.0 < 2 * (hi - lo)
    assert len(dut.loads) == 1 + 12  # the maximum, then halvings: 300e3 / 2**12 <= 100
    assert r.resolution == Resolution(pps=100.0)
    assert r.resolution_reached
    assert r.as_dict()["resolution_pps"] == 100.0


def test_both_resolutions_stop_at_the_first_reached() -> None:
    both = search(ThresholdDut(6448.0), 300e3, resolution_pps=1000.0, resolution_ratio=0.001)
    alone = search(ThresholdDut(6448.0), 300e3, resolution_pps=1000.0)
    assert len(both.trials) == len(alone.trials)


@pytest.mark.parametrize("resolution", [Resolution(ratio=0.005), Resolution(ratio=0.5),
                                        Resolution(ratio=0.01), Resolution(ratio=1e-6)])
def test_trials_needed_is_tight_at_half_the_maximum(resolution: Resolution) -> None:
    needed = resolution.trials_needed()
    dut = ThresholdDut(5e5)
    r = search(dut, 1e6, resolution_ratio=resolution.ratio, max_trials=needed)
    assert r.resolution_reached and len(dut.loads) == needed


def test_trials_needed_for_an_absolute_resolution() -> None:
    assert Resolution(pps=100.0).trials_needed(300e3) == 13
    assert Resolution(pps=300e3).trials_needed(300e3) == 1
    assert Resolution(ratio=0.005, pps=100.0).trials_needed(300e3) == 10  # the least


@pytest.mark.parametrize("capacity", [1e-4 * 300e3, 0.0])
def test_resolution_not_reached_within_max_trials_is_reported(capacity: float) -> None:
    dut = ThresholdDut(capacity)
    r = search(dut, 300e3)
    lo, hi = r.bracket_pps
    assert len(dut.loads) == 20 and lo <= capacity < hi
    assert r.resolution_reached is False
    assert hi - lo > 0.005 * lo
    assert r.as_dict()["resolution_reached"] is False


def test_generator_failures_are_retried_and_cap_the_search_without_blaming_the_dut() -> None:
    dut = FakeDut(capacity=9e5, generator_max=6e5)
    r = binary_search(dut, 1e6,
                      settings=TrialSettings(duration_s=1.0, retries=2, frame_size=64,
                                             mean_frame_size=64),
                      max_trials=30)
    assert r.generator_ceiling_pps is not None and r.generator_ceiling_pps > 6e5
    assert r.throughput_pps <= 6e5 and r.upper_pps is None  # no load failed for the DUT
    invalid = [t for t in r.trials if not t.valid]
    assert len(invalid) >= 3 and all(t.invalid_reason for t in invalid)


def test_all_invalid_raises_naming_the_reason() -> None:
    dut = FakeDut(capacity=1e6, generator_max=0.0)
    with pytest.raises(InvalidTrial, match="every trial of the throughput search at 64B was "
                       "invalid.*generator sent 90"):
        binary_search(dut, 1e6, settings=ONE_S_64B)


def test_loss_tolerance_accepts_a_little_loss() -> None:
    dut = FakeDut(capacity=1e6, noise=1e-4, seed=3)
    strict = binary_search(dut, 2e6,
                           settings=TrialSettings(duration_s=1.0, frame_size=64,
                                                  mean_frame_size=64),
                           max_trials=40)
    lenient = binary_search(FakeDut(1e6, noise=1e-4, seed=3), 2e6,
                            settings=TrialSettings(duration_s=1.0, frame_size=64,
                                                   mean_frame_size=64),
                            loss_tolerance=1e-3, max_trials=40)
    assert strict.throughput_pps < 0.1 * lenient.throughput_pps
    assert lenient.throughput_pps == pytest.approx(1e6, rel=0.01)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"loss_tolerance": 1.0}, "loss_tolerance=1.0: give a ratio in"),
    ({"loss_tolerance": -0.1}, "loss_tolerance=-0.1"),
    ({"max_trials": 0}, "max_trials=0"),
    ({"resolution_pps": 0}, "resolution 0 pps"),
    ({"resolution_pps": -5.0}, "resolution -5.0 pps: give a rate > 0"),
    ({"resolution_pps": float("nan")}, "resolution nan pps"),
    ({"resolution_ratio": 0}, r"resolution 0: give a ratio of the lower bound in \(0, 1\)"),
    ({"resolution_ratio": 1.0}, r"resolution 1.0: give a ratio"),
    ({"resolution_ratio": 1.5}, r"resolution 1.5: give a ratio"),
    ({"resolution_ratio": -0.1}, r"resolution -0.1: give a ratio"),
    ({"resolution_ratio": float("nan")}, r"resolution nan: give a ratio"),
    ({"resolution_ratio": True}, r"resolution True: give a ratio"),
    ({"max_trials": 9}, r"resolution 0.5% of the lower bound cannot be reached within "
                        r"max_trials=9: it takes 10 trials .*raise max_trials to 10 or "
                        r"coarsen the resolution, e.g. resolution=0.0079"),
    ({"max_trials": 2, "resolution_ratio": 0.5}, r"max_trials=2.*resolution='100kpps'"),
    ({"max_trials": 10, "resolution_pps": 1.0},
     r"resolution 1 pps cannot be reached within max_trials=10: it takes 21 trials halving "
     r"from the maximum 1,000,000 pps; raise max_trials to 21 .*resolution='2000pps'"),
])
def test_search_settings_are_checked_before_traffic(kwargs: dict, match: str) -> None:
    dut = FakeDut(1e6)
    with pytest.raises(NetloadConfigError, match=match):
        binary_search(dut, 1e6, settings=ONE_S_64B,
                      **kwargs)
    assert dut.loads == []


@pytest.mark.parametrize(("sizes", "match"), [
    ([], "is empty"), ([63], "63 is not a frame size"), ([9217], "9217"), ("64", "a list"),
    ([64, 64], "lists a size twice"), ([True], "True"),
])
def test_bad_frame_sizes(sizes: object, match: str) -> None:
    with pytest.raises(NetloadConfigError, match=match):
        check_frame_sizes(sizes)  # type: ignore[arg-type]


# ---- frame loss -----------------------------------------------------------------------------


def test_frame_loss_steps_down_until_two_clean_trials() -> None:
    dut = FakeDut(capacity=7.5e5)
    r = frame_loss_sweep(dut, 1e6, settings=ONE_S_64B)
    shares = [round(t.offered_pps / 1e6, 3) for t in r.points]
    assert shares == [1.0, 0.9, 0.8, 0.7, 0.6]
    assert [round(t.loss_ratio, 3) for t in r.points] == [0.25, 0.167, 0.062, 0.0, 0.0]
    assert r.loss_at(0.9).lost == 150_000
    assert r.as_dict()["points"][0]["load_ratio"] == 1.0


@settings(max_examples=40, deadline=None)
@given(capacity_share=st.floats(0.05, 1.5))
def test_frame_loss_ends_with_two_lossless_points_when_reachable(capacity_share: float) -> None:
    r = frame_loss_sweep(FakeDut(capacity_share * 1e6), 1e6, settings=ONE_S_64B)
    if capacity_share >= 0.2:
        assert r.points[-1].lost == 0 and r.points[-2].lost == 0
    assert all(a.offered_pps > b.offered_pps for a, b in zip(r.points, r.points[1:]))


def test_frame_loss_skips_loads_the_generator_cannot_offer() -> None:
    dut = FakeDut(capacity=5e5, generator_max=8.5e5)
    r = frame_loss_sweep(dut, 1e6,
                         settings=TrialSettings(duration_s=1.0, retries=1, frame_size=64,
                                                mean_frame_size=64))
    assert r.skipped_pps == (1e6, 9e5)
    assert r.points[0].offered_pps == pytest.approx(8e5)
    with pytest.raises(KeyError, match=r"no frame loss point at 100% of the maximum: the "
                       r"generator could not offer 1,000,000 pps \(every try invalid: "):
        r.loss_at(1.0)
    with pytest.raises(NetloadConfigError, match="step=0.7"):
        frame_loss_sweep(dut, 1e6, settings=ONE_S_64B,
                         step=0.7)


# ---- back-to-back ---------------------------------------------------------------------------


class BufferDut:
    """Holds `buffer` frames: a longer burst loses the excess."""

    def __init__(self, buffer: int, jitter: int = 0, seed: int = 2) -> None:
        self.buffer = buffer
        self.jitter = jitter
        self.rng = np.random.default_rng(seed)

    def burst(self, n: int, _duration_s: float = 0.0) -> TrialResult:
        cap = self.buffer + (int(self.rng.integers(-self.jitter, self.jitter + 1))
                             if self.jitter else 0)
        return TrialResult(64, 64.0, 1e6, max(n, 1) / 1e6, n, min(n, cap))


@settings(max_examples=30, deadline=None)
@given(buffer=st.integers(10, 200_000))
def test_back_to_back_finds_the_buffer(buffer: int) -> None:
    r = back_to_back(FunctionMeasurer(BufferDut(buffer).burst),
                     settings=TrialSettings(frame_size=64, mean_frame_size=64), rate_pps=1e6,
                     max_frames=300_000, repetitions=2, resolution_frames=1)
    assert r.bursts == (buffer, buffer)
    assert r.spread.stdev == 0 and not r.at_maximum


def test_back_to_back_reports_spread_and_the_maximum() -> None:
    r = back_to_back(FunctionMeasurer(BufferDut(5000, jitter=100).burst),
                     settings=TrialSettings(frame_size=64, mean_frame_size=64), rate_pps=1e6,
                     max_frames=10_000, repetitions=5, resolution_frames=1)
    assert 4900 <= r.spread.min <= r.spread.max <= 5100 and r.spread.n == 5
    big = back_to_back(FunctionMeasurer(BufferDut(10**9).burst),
                       settings=TrialSettings(frame_size=64, mean_frame_size=64), rate_pps=1e6,
                       max_frames=1000, repetitions=3)
    assert big.at_maximum and len(big.trials) == 3
    with pytest.raises(NetloadConfigError, match="repetitions=0"):
        back_to_back(FunctionMeasurer(BufferDut(1).burst),
                     settings=TrialSettings(frame_size=64, mean_frame_size=64), rate_pps=1e6,
                     max_frames=10, repetitions=0)


# ---- latency --------------------------------------------------------------------------------


def test_latency_trials_average_like_the_rfc_and_merge_the_distribution() -> None:
    dut = FakeDut(capacity=1e6, latency_ns=20)
    r = latency_trials(FunctionMeasurer(lambda load, _d: dut.measure(load, 0.01)), 5e5,
                       settings=TrialSettings(duration_s=0.01, frame_size=64, mean_frame_size=64),
                       trials=4)
    assert r.rfc2544_ns.n == 4 and r.rfc2544_ns.stdev == 0
    assert r.latency.count == 4 * 5000
    assert r.as_dict()["rfc2544_ns"]["n"] == 4
    with pytest.raises(NetloadConfigError, match="load_pps"):
        latency_trials(dut, 0, settings=ONE_S_64B)


# ---- recovery and reset ---------------------------------------------------------------------


def test_recovery_loads_follow_the_rfc() -> None:
    assert recovery_loads(1e5, 1e6) == pytest.approx((1.1e5, 5e4))
    assert recovery_loads(1e6, 1.05e6) == pytest.approx((1.05e6, 5e5))  # capped at the maximum


def test_recovery_time_runs_from_the_rate_drop_to_the_last_loss() -> None:
    seen: list[tuple[RecoveryLoad, float]] = []

    def measure(load: RecoveryLoad, duration_s: float) -> RecoveryTrial:
        seen.append((load, duration_s))
        return RecoveryTrial(load.overload_pps, load.relief_pps, switch_ns=2_000_000_000,
                             tx_packets=1000, lost=50, last_loss_tx_ns=2_250_000_000)

    r = system_recovery(FunctionMeasurer(measure), throughput_pps=1e5, max_pps=1e6,
                        overload_s=2.0, relief_s=1.0, settings=TrialSettings(frame_size=64),
                        repetitions=3)
    load, duration = seen[0]
    assert (load.overload_pps, load.relief_pps) == pytest.approx((1.1e5, 5e4))
    assert (load.overload_s, load.relief_s, duration) == (2.0, 1.0, 3.0)
    assert r.overloaded and r.recovery_s.mean == pytest.approx(0.25) and r.recovery_s.n == 3
    calm = RecoveryTrial(1.0, 0.5, 10, 100, 0, 0)
    assert calm.recovery_ns == 0 and not calm.overloaded


def test_invalid_recovery_trials_are_retried() -> None:
    calls = []

    def measure(load: RecoveryLoad, duration_s: float) -> RecoveryTrial:
        calls.append(1)
        return RecoveryTrial(load.overload_pps, load.relief_pps, 1, 10, 0, 0,
                             valid=len(calls) > 2, invalid_reason="short")

    r = system_recovery(FunctionMeasurer(measure), throughput_pps=1e5, max_pps=1e6,
                        overload_s=1.0, relief_s=1.0,
                        settings=TrialSettings(frame_size=64, retries=2))
    assert len(r.trials) == 3 and r.trials[-1].valid


def test_reset_time_is_the_silence_beyond_the_frame_spacing() -> None:
    ok = ResetTrial(1e3, 10_000, 500, longest_gap_ns=0.5e9 + 1e6, reset_called_ns=int(2e9),
                    hook_seconds=0.5, rx_last_ns=int(9e9))
    assert ok.recovered and ok.reset_ns == pytest.approx(0.5e9)
    dead = ResetTrial(1e3, 10_000, 8000, 1e6, int(2e9), 0.5, rx_last_ns=int(1.9e9))
    assert not dead.recovered and dead.reset_ns is None
    result = ResetResult(64, (ok, dead))
    assert not result.recovered and result.reset_s.n == 1
    with pytest.raises(NetloadConfigError, match="not callable"):
        check_hook("reboot")


def test_spread() -> None:
    s = Spread.of([1.0, 2.0, 3.0])
    assert (s.mean, s.stdev, s.min, s.max, s.n) == (2.0, 1.0, 1.0, 3.0, 3)
    assert Spread.of([5.0]).stdev == 0
    with pytest.raises(NetloadConfigError, match="no values"):
        Spread.of([])


def test_latency_steps_down_when_the_generator_cannot_hold_its_own_ceiling() -> None:
    from types import SimpleNamespace

    from pytest_netload.bench.runner import Rfc2544Runner
    from pytest_netload.bench.settings import Rfc2544Mark

    dut = FakeDut(capacity=1e9, generator_max=8.6e5, latency_ns=10)
    measurer = SimpleNamespace(measure=dut.measure, mean_frame_size=64)
    runner = Rfc2544Runner(None, None, Rfc2544Mark(retries=0))  # type: ignore[arg-type]
    result = runner._latency_at(measurer, 1e6, 64, 0.01, trials=2)  # type: ignore[arg-type]
    assert result.load_pps == pytest.approx(1e6 * 0.95**3)  # 857,375 pps: held
    assert result.rfc2544_ns.n == 2
    stuck = FakeDut(capacity=1e9, generator_max=1.0)
    measurer.measure = stuck.measure
    with pytest.raises(InvalidTrial, match="latency procedure"):
        runner._latency_at(measurer, 1e6, 64, 0.01, trials=1)  # type: ignore[arg-type]
