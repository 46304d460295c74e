"""The search core (pytest_netload/search/): one bisection of a judged trial, by rate or
by count, against trials with a known threshold. The bracket holds the threshold within
the resolution; trials the generator failed are retried and never decide; a value the
generator could not offer is a ceiling, never the DUT's failure."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_netload.errors import InvalidTrial, NetloadConfigError
from pytest_netload.search import (
    Resolution,
    TrialLog,
    bisect,
    check_reachable,
    lower_bound_by_generator,
    search_count,
    search_rate,
    valid_trial,
)

MAX = 1_000_000.0


@dataclass(frozen=True)
class Trial:
    """A judged trial at `value`: it passes at or below the DUT's threshold."""

    value: float
    passed: bool
    valid: bool = True
    invalid_reason: str | None = None


class Dut:
    """Trials at values up to `threshold` pass; the generator cannot offer values above
    `generator_max` (every try invalid) and fails the first `flaky` tries at each value."""

    def __init__(self, threshold: float, generator_max: float = float("inf"),
                 flaky: int = 0) -> None:
        self.threshold, self.generator_max, self.flaky = threshold, generator_max, flaky
        self.tries: dict[float, int] = {}

    def measure(self, value: float) -> Trial:
        n = self.tries[value] = self.tries.get(value, 0) + 1
        if value > self.generator_max:
            return Trial(value, False, False, f"could not offer {value}")
        if n <= self.flaky:
            return Trial(value, False, False, "the worker lost its CPU")
        return Trial(value, value <= self.threshold)


def passes(t: Trial) -> bool:
    return t.passed


resolutions = st.one_of(
    st.floats(min_value=1e-4, max_value=0.2).map(lambda r: Resolution(ratio=r)),
    st.floats(min_value=1.0, max_value=MAX / 4).map(lambda p: Resolution(pps=p)),
)


@given(threshold=st.floats(min_value=MAX * 1e-5, max_value=MAX * 2), resolution=resolutions)
def test_the_rate_bracket_holds_the_threshold_within_the_resolution(
        threshold: float, resolution: Resolution) -> None:
    out = search_rate(Dut(threshold).measure, passes, max_value=MAX, resolution=resolution,
                      max_trials=64, retries=0, what="the test search")
    assert out.ceiling is None
    assert out.reached
    if threshold >= MAX:
        assert (out.found, out.upper) == (MAX, None)
        assert len(out.trials) == 1
        return
    assert out.upper is not None
    assert out.found <= threshold < out.upper
    assert resolution.reached(out.found, out.upper)
    assert out.at_max is not None and not out.at_max.passed
    assert (out.passing is None) == (out.found == 0.0)
    # the maximum first, then halvings: each value inside the bracket the ones before left
    values = [t.value for t in out.trials]
    assert values[0] == MAX and len(set(values)) == len(values)


@given(threshold=st.integers(min_value=0, max_value=5000), low=st.integers(1, 100),
       high=st.integers(100, 4000), repeats=st.integers(1, 3))
def test_a_count_search_finds_the_threshold_exactly(threshold: int, low: int, high: int,
                                                    repeats: int) -> None:
    out = search_count(Dut(threshold).measure, passes, low=low, high=high, repeats=repeats,
                       retries=0, what="the test search")
    expected = high if threshold >= high else 0 if threshold < low else threshold
    assert out.found == expected
    assert out.ceiling is None
    assert out.upper == (None if threshold >= high else max(threshold + 1, low))
    assert (out.passing is None) == (expected == 0)


@given(threshold=st.floats(min_value=MAX * 1e-3, max_value=MAX * 2),
       flaky=st.integers(0, 3), extra=st.integers(0, 2))
def test_invalid_trials_are_retried_and_never_decide(threshold: float, flaky: int,
                                                     extra: int) -> None:
    resolution = Resolution(ratio=0.005)
    clean = search_rate(Dut(threshold).measure, passes, max_value=MAX, resolution=resolution,
                        max_trials=40, retries=0, what="the test search")
    seen: list[Trial] = []
    out = search_rate(Dut(threshold, flaky=flaky).measure, passes, max_value=MAX,
                      resolution=resolution, max_trials=40, retries=flaky + extra,
                      what="the test search", on_trial=seen.append)
    assert (out.found, out.upper, out.ceiling, out.reached) == \
        (clean.found, clean.upper, clean.ceiling, clean.reached)
    assert seen == list(out.trials)
    assert [t for t in out.trials if t.valid] == list(clean.trials)
    assert len(out.trials) == len(clean.trials) * (flaky + 1)


@given(threshold=st.floats(min_value=MAX * 0.01, max_value=MAX * 2),
       generator_max=st.floats(min_value=MAX * 0.01, max_value=MAX * 0.99))
def test_a_value_the_generator_cannot_offer_is_a_ceiling(threshold: float,
                                                          generator_max: float) -> None:
    resolution = Resolution(ratio=0.005)
    out = search_rate(Dut(threshold, generator_max).measure, passes, max_value=MAX,
                      resolution=resolution, max_trials=40, retries=2,
                      what="the test search")
    assert out.ceiling is not None and out.ceiling > generator_max
    assert out.at_max is None   # every try at the maximum was invalid
    assert out.found <= min(threshold, generator_max)
    invalid = {t.value for t in out.trials if not t.valid}
    assert out.ceiling == min(invalid)
    assert all(sum(1 for t in out.trials if t.value == v) == 3 for v in invalid)
    if out.upper is not None:          # the DUT failed a valid trial: its figure
        assert threshold < out.upper <= generator_max
        assert not lower_bound_by_generator(out.found, out.upper, out.ceiling, MAX, None)
    else:                              # the generator closed the bracket: a lower bound
        assert resolution.reached(out.found, out.ceiling)
        assert lower_bound_by_generator(out.found, out.upper, out.ceiling, MAX, None)
    if threshold >= generator_max:     # every load the generator offered passed
        assert out.upper is None


def test_the_minimum_is_tried_after_the_maximum_and_ends_a_search_it_fails() -> None:
    out = search_rate(Dut(5.0).measure, passes, max_value=MAX, min_value=10.0,
                      resolution=Resolution(ratio=0.01), max_trials=20, retries=0,
                      what="the test search")
    assert [t.value for t in out.trials] == [MAX, 10.0]
    assert (out.found, out.upper, out.reached, out.passing) == (0.0, 10.0, True, None)


def test_an_untried_minimum_is_the_bracket_s_floor() -> None:
    out = search_rate(Dut(5.0).measure, passes, max_value=100.0, min_value=10.0,
                      try_min=False, resolution=Resolution(pps=20.0), max_trials=20,
                      retries=0, what="the test search")
    assert [t.value for t in out.trials] == [100.0, 55.0, 32.5, 21.25]
    assert (out.lo, out.found, out.upper) == (10.0, 0.0, 21.25)


def test_the_trial_budget_stops_the_bisection_short_of_the_resolution() -> None:
    judged: list[float] = []

    def judge(x: float) -> bool:
        judged.append(x)
        return x <= 1.0

    out = bisect(judge, low=0.0, high=1024.0, midpoint=lambda lo, hi: (lo + hi) / 2,
                 narrow=Resolution(ratio=0.001).reached, max_trials=4)
    assert judged == [1024.0, 512.0, 256.0, 128.0]
    assert (out.lo, out.hi, out.reached, out.top_passed) == (0.0, 128.0, False, False)


def test_every_try_invalid_names_the_reasons() -> None:
    with pytest.raises(InvalidTrial, match=r"every trial of the test search was invalid "
                                           r"\(the generator, not the DUT, failed\): could not"):
        search_rate(Dut(MAX, generator_max=0.0).measure, passes, max_value=MAX,
                    resolution=Resolution(ratio=0.1), max_trials=3, retries=1,
                    what="the test search")
    with pytest.raises(InvalidTrial, match="the count search"):
        search_count(Dut(10, generator_max=0).measure, passes, low=1, high=8, repeats=1,
                     retries=0, what="the count search")


def test_a_count_the_generator_cannot_measure_is_a_ceiling() -> None:
    out = search_count(Dut(100, generator_max=40).measure, passes, low=1, high=64, repeats=2,
                       retries=1, what="the test search")
    assert (out.found, out.upper, out.ceiling) == (40, None, 41)


def test_the_trial_log_keeps_the_lowest_failure_and_ceiling() -> None:
    log: TrialLog[float, Trial] = TrialLog(Dut(10.0, generator_max=50.0).measure, passes,
                                           retries=0)
    assert [log.judge(v) for v in (80.0, 60.0, 30.0, 20.0, 5.0)] == \
        [False, False, False, False, True]
    assert (log.ceiling, log.upper) == (60.0, 20.0)
    assert sorted(log.valid) == [5.0, 20.0, 30.0]


def test_valid_trial_stops_at_the_first_valid_try() -> None:
    log: list[Trial] = []
    assert valid_trial(Dut(10.0, flaky=2).measure, 5.0, 3, log) == Trial(5.0, True)
    assert [t.valid for t in log] == [False, False, True]
    assert valid_trial(Dut(10.0, flaky=2).measure, 5.0, 1, log) is None


def test_an_unreachable_resolution_is_refused_before_any_trial() -> None:
    with pytest.raises(NetloadConfigError, match="cannot be reached within max_trials=3"):
        check_reachable(Resolution(ratio=0.001), 3, MAX)
