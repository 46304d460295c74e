"""RFC 2889 §5.10 on a fake switch that replicates broadcasts only up to a rate: the
throughput is that rate, the forwarding rate at the maximum is what it replicated, and
the latency per port is the throughput trial's."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import InvalidTrial, NetloadConfigError
from pytest_netload.measure.histogram import LogHistogram
from pytest_netload.measure.latency import LatencyResult
from pytest_netload.rfc2889 import TRIAL_S, BroadcastTrial, broadcast_forwarding
from pytest_netload.search import TrialSettings

LOWER = np.arange(64, dtype=np.uint64) * 100


def latency(ns: int, n: int) -> LatencyResult:
    counts = np.zeros(64, dtype=np.uint64)
    counts[ns // 100] = n
    return LatencyResult(LogHistogram(counts, LOWER), clock="tsc-software")


class BroadcastSwitch:
    """Replicates at most `limit_pps` broadcast frames a second to each receiving port;
    port i's latency is 1,000 ns + 100 ns * i. Trials listed in `invalid` (1-based call
    numbers) fail the generator."""

    def __init__(self, ports: int, limit_pps: float, invalid: frozenset[int] = frozenset()):
        self.ports, self.limit_pps, self.invalid = ports, limit_pps, invalid
        self.calls: list[tuple[float, float]] = []

    def measure(self, load_pps: float, duration_s: float) -> BroadcastTrial:
        self.calls.append((load_pps, duration_s))
        tx = round(load_pps * duration_s)
        receivers = self.ports - 1
        if len(self.calls) in self.invalid:
            return BroadcastTrial(load_pps, duration_s, 0, (0,) * receivers, valid=False,
                                  invalid_reason="tx short")
        got = min(tx, int(self.limit_pps * duration_s))
        return BroadcastTrial(load_pps, duration_s, tx, (got,) * receivers,
                              latency=tuple(latency(1000 + 100 * i, got) for i in range(receivers)),
                              port_names=tuple(f"p{i + 1}" for i in range(receivers)))


def test_at_the_defaults() -> None:
    switch = BroadcastSwitch(4, limit_pps=200_000)
    result = broadcast_forwarding(switch, ports=4, max_pps=1_000_000)
    assert result.duration_s == TRIAL_S and switch.calls[0] == (1_000_000, 30.0)
    assert 200_000 * 0.995 <= result.throughput_pps <= 200_000 and result.resolution_reached
    assert result.forwarding_rate_at_max_pps == pytest.approx(3 * 200_000)
    assert result.max_load_trial is not None
    assert result.max_load_trial.loss_ratio == pytest.approx(0.8)
    assert result.throughput_trial is not None and result.throughput_trial.all_received
    assert [lat.min_ns for lat in result.latency if lat is not None] == [1000, 1100, 1200]
    d = result.as_dict()
    assert set(d) == {"procedure", "ports", "max_pps", "duration_s", "throughput_pps",
                      "upper_pps", "generator_ceiling_pps", "max_source", "generator_max_pps",
                      "lower_bound_by_generator", "forwarding_rate_at_max_pps",
                      "loss_ratio_at_max", "latency", "port_names", "resolution_ratio",
                      "resolution_pps", "resolution_reached", "trials"}
    assert d["procedure"] == "rfc2889_broadcast_forwarding"
    assert d["port_names"] == ["p1", "p2", "p3"] and len(d["latency"]) == 3
    assert [lat["min_ns"] for lat in d["latency"]] == [1000, 1100, 1200]
    assert d["latency"][0]["count"] == round(result.throughput_pps * 30.0)
    assert set(d["trials"][0]) == {"offered_pps", "duration_s", "tx", "rx", "lost",
                                   "loss_ratio", "all_received", "forwarding_pps",
                                   "port_names", "latency", "valid", "invalid_reason"}
    default = inspect.signature(broadcast_forwarding).parameters["settings"].default
    assert default == TrialSettings(duration_s=TRIAL_S, retries=2)


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 12), st.floats(100.0, 100_000.0))
def test_the_throughput_is_the_replication_limit(ports: int, limit: float) -> None:
    result = broadcast_forwarding(BroadcastSwitch(ports, limit),
                                  settings=TrialSettings(duration_s=1.0), ports=ports,
                                  max_pps=100_000)
    lo = result.throughput_pps
    assert lo <= limit + 1 and result.resolution_reached
    assert result.upper_pps is None or result.upper_pps - lo <= 0.005 * lo


def test_a_port_that_misses_one_frame_fails_the_load() -> None:
    trial = BroadcastTrial(10.0, 1.0, 10, (10, 9, 10))
    assert not trial.all_received and trial.lost == (0, 1, 0) and trial.loss_ratio == 0.1
    assert trial.forwarding_pps == 29 and trial.as_dict()["latency"] == []
    none_arrived = BroadcastTrial(10.0, 1.0, 10, (0, 10), latency=(latency(500, 0), None))
    assert none_arrived.as_dict()["latency"][0] is None


def test_a_switch_that_replicates_the_maximum_is_measured_once() -> None:
    result = broadcast_forwarding(BroadcastSwitch(3, 10**9), settings=TrialSettings(duration_s=1.0),
                                  ports=3, max_pps=50_000)
    assert len(result.trials) == 1 and result.throughput_pps == 50_000
    assert result.throughput_trial is result.max_load_trial


def test_invalid_trials_are_retried_and_a_load_never_offered_is_a_ceiling() -> None:
    # the maximum is never offered (3 invalid tries): a generator ceiling, not a DUT failure
    switch = BroadcastSwitch(2, 10**9, invalid=frozenset({1, 2, 3, 5}))
    result = broadcast_forwarding(switch, settings=TrialSettings(duration_s=1.0), ports=2,
                                  max_pps=1000)
    assert result.generator_ceiling_pps == 1000 and result.upper_pps is None
    assert result.max_load_trial is None and result.forwarding_rate_at_max_pps is None
    assert result.throughput_pps >= 995
    with pytest.raises(InvalidTrial, match="broadcast forwarding.*tx short"):
        broadcast_forwarding(BroadcastSwitch(2, 1, invalid=frozenset(range(1, 100))),
                             settings=TrialSettings(duration_s=1.0), ports=2, max_pps=1000)


def test_a_measurer_counting_the_wrong_ports_is_refused() -> None:
    with pytest.raises(NetloadConfigError, match="counted 1 receiving ports for ports=4"):
        broadcast_forwarding(BroadcastSwitch(2, 10), settings=TrialSettings(duration_s=1.0),
                             ports=4, max_pps=100)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"ports": 1}, "ports=1"), ({"max_pps": -5}, "max_pps="),
    ({"duration_s": 0}, "duration_s="), ({"resolution": 0}, "resolution 0"),
    ({"max_trials": 2}, "max_trials=2"), ({"retries": None}, "retries="),
])
def test_bad_input_names_the_field(kwargs: dict, field: str) -> None:
    switch = BroadcastSwitch(3, 10)
    trial = {k: kwargs.pop(k) for k in ("duration_s", "retries") if k in kwargs}
    with pytest.raises(NetloadConfigError, match=field):
        broadcast_forwarding(switch, **{"ports": 3, "max_pps": 1000,
                                        "settings": TrialSettings(**{"duration_s": 1.0, **trial}),
                                        **kwargs})
    assert switch.calls == []


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"rx": ()}, "rx is empty"), ({"rx": (1, -1)}, "rx="), ({"tx": 1.5}, "tx="),
    ({"latency": (None,)}, "latency has 1 entries for 2"),
    ({"port_names": ("p1", "p2", "p3")}, "port_names has 3"),
    ({"offered_pps": 0}, "offered_pps="),
])
def test_bad_trials_name_the_field(kwargs: dict, field: str) -> None:
    args = {"offered_pps": 1.0, "duration_s": 1.0, "tx": 1, "rx": (1, 1), **kwargs}
    with pytest.raises(NetloadConfigError, match=field):
        BroadcastTrial(**args)
