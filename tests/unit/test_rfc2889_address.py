"""RFC 2889 §5.7/§5.8 on fake switches: a table of known capacity C finds exactly C,
also with invalid trials retried; a switch that learns at most R fps finds R within
the resolution; every bad input names its field."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import InvalidTrial, NetloadConfigError
from pytest_netload.rfc2889 import (
    DEFAULT_HIGH_ADDRESSES,
    AddressLoad,
    AddressTrial,
    address_caching_capacity,
    address_learning_rate,
)
from pytest_netload.search import TrialSettings


class TableSwitch:
    """Learns the first `capacity` source addresses (the table is flushed before each
    trial); forwards test frames to those and floods the rest. Learns only below
    `max_rate_fps`: above it, it misses the share of frames it had no time for. Every
    `invalid_every`-th trial the generator fails."""

    def __init__(self, capacity: int, max_rate_fps: float = float("inf"),
                 invalid_every: int = 0) -> None:
        self.capacity, self.max_rate_fps, self.invalid_every = capacity, max_rate_fps, invalid_every
        self.calls: list[tuple[int, float, float]] = []

    def measure(self, load: AddressLoad, duration_s: float) -> AddressTrial:
        count, learning_rate_fps, test_rate_fps = (load.count, load.learning_rate_fps,
                                                   load.test_rate_fps)
        self.calls.append((count, learning_rate_fps, test_rate_fps))
        if self.invalid_every and len(self.calls) % self.invalid_every == 0:
            return AddressTrial(count, count - 1, 0, 0, valid=False,
                                invalid_reason="tx short: the generator sent 1 frame less")
        learned = min(count, self.capacity)
        if learning_rate_fps > self.max_rate_fps:
            learned = min(learned, int(count * self.max_rate_fps / learning_rate_fps))
        flooded = count - learned
        return AddressTrial(count, count, count, flooded, learning_rate_fps=learning_rate_fps,
                            test_rate_fps=test_rate_fps)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 40), st.integers(0, 5000))
def test_the_capacity_search_finds_exactly_the_table_size(capacity: int, low: int,
                                                          span: int) -> None:
    high = low + span
    result = address_caching_capacity(TableSwitch(capacity), low=low, high=high,
                                      learning_rate_fps=1000, test_rate_fps=1000)
    if capacity < low:
        assert result.capacity == 0 and result.below_low and result.upper == low
    elif capacity >= high:
        assert result.capacity == high and result.at_maximum and result.upper is None
    else:
        assert result.capacity == capacity and result.upper == capacity + 1
    assert result.ceiling is None


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3000), st.integers(2, 5))
def test_invalid_trials_are_retried_and_never_decide(capacity: int, every: int) -> None:
    switch = TableSwitch(capacity, invalid_every=every)
    result = address_caching_capacity(switch, settings=TrialSettings(retries=2), low=1, high=4096,
                                      learning_rate_fps=500, test_rate_fps=500)
    assert result.capacity == min(capacity, 4096)
    invalid = [t for t in result.trials if not t.valid]
    assert invalid and all(t.invalid_reason for t in invalid)
    assert len(result.trials) == len(switch.calls)


def test_defaults_search_up_to_64ki_addresses_and_record_every_trial() -> None:
    switch = TableSwitch(8191)
    result = address_caching_capacity(switch)
    assert result.capacity == 8191 and result.high == DEFAULT_HIGH_ADDRESSES == 65536
    assert switch.calls[0] == (65536, 1000.0, 1000.0) and switch.calls[1][0] == 1
    d = result.as_dict()
    assert set(d) == {"procedure", "capacity", "low", "high", "upper", "ceiling",
                      "at_maximum", "below_low", "learning_rate_fps", "test_rate_fps",
                      "repeats", "age_time_s", "trials"}
    assert d["procedure"] == "rfc2889_address_caching_capacity"
    assert len(d["trials"]) == len(switch.calls) <= 2 + 16
    assert d["trials"][0] == {"count": 65536, "tx": 65536, "forwarded": 65536,
                              "flooded": 65536 - 8191, "lost": 0, "learned_all": False,
                              "learning_rate_fps": 1000.0, "test_rate_fps": 1000.0,
                              "valid": True, "invalid_reason": None}


def test_repeats_fail_a_count_that_fails_once() -> None:
    class Flaky(TableSwitch):
        """Forgets one address on every third trial at 100 addresses."""

        def measure(self, load: AddressLoad, duration_s: float) -> AddressTrial:
            count = load.count
            trial = super().measure(load, duration_s)
            if count == 100 and len(self.calls) % 3 == 0:
                return AddressTrial(count, count, count, 1)
            return trial

    once = address_caching_capacity(Flaky(100), low=1, high=100, repeats=1)
    assert once.capacity == 100
    thrice = address_caching_capacity(Flaky(100), low=1, high=100, repeats=3)
    assert thrice.capacity == 99 and thrice.repeats == 3


def test_lost_test_frames_fail_a_count_too() -> None:
    trial = AddressTrial(10, 10, 9, 0)
    assert trial.lost == 1 and not trial.learned_all
    assert AddressTrial(10, 10, 10, 0).learned_all


def test_every_trial_invalid_is_the_generators_failure() -> None:
    class Broken:
        def measure(self, load: AddressLoad, duration_s: float) -> AddressTrial:
            return AddressTrial(load.count, 0, 0, 0, valid=False, invalid_reason="link down")

    with pytest.raises(InvalidTrial, match="address caching capacity.*link down"):
        address_caching_capacity(Broken(), low=1, high=8)


def test_a_count_the_generator_cannot_measure_is_a_ceiling_not_a_failure() -> None:
    class Short(TableSwitch):
        def measure(self, load: AddressLoad, duration_s: float) -> AddressTrial:
            if load.count > 600:
                return AddressTrial(load.count, 0, 0, 0, valid=False,
                                    invalid_reason="no buffers")
            return super().measure(load, duration_s)

    result = address_caching_capacity(Short(5000), low=1, high=1024)
    assert result.capacity == 600 and result.upper is None and result.ceiling == 601


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"low": 0}, "low="), ({"low": -3}, "low="), ({"low": 1.5}, "low="),
    ({"low": True}, "low="), ({"high": "64"}, "high="), ({"high": 2.0}, "high="),
    ({"low": 10, "high": 9}, "high=9 is below low=10"),
    ({"learning_rate_fps": 0}, "learning_rate_fps="),
    ({"test_rate_fps": float("nan")}, "test_rate_fps="),
    ({"repeats": 0}, "repeats="), ({"retries": -1}, "retries="),
    ({"age_time_s": 0}, "age_time_s="),
    ({"high": 1000, "learning_rate_fps": 10, "age_time_s": 60}, "age_time_s=60"),
])
def test_bad_capacity_input_names_the_field(kwargs: dict, field: str) -> None:
    switch = TableSwitch(10)
    trial = {k: kwargs.pop(k) for k in ("retries",) if k in kwargs}
    with pytest.raises(NetloadConfigError, match=field.replace("(", r"\(")) as info:
        address_caching_capacity(switch, settings=TrialSettings(**trial), **kwargs)
    assert "give" in str(info.value) or "raise" in str(info.value)
    assert switch.calls == []  # refused before any traffic


def test_the_aging_time_bounds_the_learning_time() -> None:
    with pytest.raises(NetloadConfigError, match=r"raise learning_rate_fps above 16\.6"):
        address_caching_capacity(TableSwitch(10), high=1000, learning_rate_fps=10, age_time_s=60)
    result = address_caching_capacity(TableSwitch(10), high=1000, learning_rate_fps=20,
                                      age_time_s=60)
    assert result.capacity == 10 and result.as_dict()["age_time_s"] == 60.0


@settings(max_examples=80, deadline=None)
@given(st.floats(2.0, 90_000.0))
def test_the_learning_rate_search_finds_the_switchs_rate(rate: float) -> None:
    switch = TableSwitch(capacity=10**6, max_rate_fps=rate)
    result = address_learning_rate(switch, count=1000, max_rate_fps=100_000)
    assert result.resolution_reached
    assert result.learning_rate_fps <= rate
    assert result.upper_fps is not None and result.upper_fps > rate
    assert result.upper_fps - result.learning_rate_fps <= 0.01 * result.learning_rate_fps
    assert all(call[0] == 1000 for call in switch.calls)


def test_learning_rate_at_the_maximum_and_below_the_minimum() -> None:
    fast = address_learning_rate(TableSwitch(10**6), count=100, max_rate_fps=5000)
    assert fast.at_maximum and fast.learning_rate_fps == 5000 and len(fast.trials) == 1
    slow = address_learning_rate(TableSwitch(10**6, max_rate_fps=0.5), count=100, max_rate_fps=5000)
    assert slow.learning_rate_fps == 0.0 and slow.upper_fps == 1.0 and len(slow.trials) == 2
    d = fast.as_dict()
    assert set(d) == {"procedure", "count", "learning_rate_fps", "upper_fps", "ceiling_fps",
                      "lower_bound_by_generator", "max_rate_fps", "min_rate_fps", "test_rate_fps", "at_maximum",
                      "resolution_ratio", "resolution_pps", "resolution_reached", "trials"}
    assert d["resolution_ratio"] == 0.01 and d["min_rate_fps"] == 1.0


def test_learning_rate_with_invalid_trials_retried() -> None:
    switch = TableSwitch(10**6, max_rate_fps=3000, invalid_every=3)
    result = address_learning_rate(switch, count=500, max_rate_fps=10_000)
    assert 3000 * 0.99 <= result.learning_rate_fps <= 3000
    assert any(not t.valid for t in result.trials)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"count": 0}, "count="), ({"count": 2.5}, "count="),
    ({"max_rate_fps": -1}, "max_rate_fps="), ({"min_rate_fps": 0}, "min_rate_fps="),
    ({"min_rate_fps": 2000}, "min_rate_fps=2000 is not below max_rate_fps=1000"),
    ({"test_rate_fps": 0}, "test_rate_fps="), ({"resolution": 1.5}, "resolution 1.5"),
    ({"max_trials": 0}, "max_trials="), ({"max_trials": 3}, "max_trials=3"),
    ({"retries": 1.0}, "retries="),
])
def test_bad_learning_input_names_the_field(kwargs: dict, field: str) -> None:
    trial = {k: kwargs.pop(k) for k in ("retries",) if k in kwargs}
    args = {"count": 100, "max_rate_fps": 1000, **kwargs}
    switch = TableSwitch(10)
    with pytest.raises(NetloadConfigError, match=field):
        address_learning_rate(switch, settings=TrialSettings(**trial), **args)
    assert switch.calls == []


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"count": 0}, "count="), ({"tx": -1}, "tx="), ({"forwarded": 1.0}, "forwarded="),
    ({"flooded": None}, "flooded="),
])
def test_bad_trial_counts_name_the_field(kwargs: dict, field: str) -> None:
    args = {"count": 4, "tx": 4, "forwarded": 4, "flooded": 0, **kwargs}
    with pytest.raises(NetloadConfigError, match=field):
        AddressTrial(**args)
