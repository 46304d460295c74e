"""RFC 2889 §5.1 on a fake switch whose fabric forwards at most a fixed aggregate rate:
FRMOL is that rate at the maximum load, the throughput is the highest per-port load
under it; invalid trials are retried; bad inputs name their field."""

from __future__ import annotations

import inspect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import InvalidTrial, NetloadConfigError
from pytest_netload.rfc2544 import Resolution
from pytest_netload.rfc2889 import TRIAL_S, MeshTrial, fully_meshed
from pytest_netload.search import TrialSettings


class MeshSwitch:
    """`ports` ports, a fabric forwarding at most `fabric_pps` in all; above it each
    port receives its share of what the fabric forwards."""

    def __init__(self, ports: int, fabric_pps: float, invalid_every: int = 0) -> None:
        self.ports, self.fabric_pps, self.invalid_every = ports, fabric_pps, invalid_every
        self.calls: list[tuple[float, float]] = []

    def measure(self, load_pps_per_port: float, duration_s: float) -> MeshTrial:
        self.calls.append((load_pps_per_port, duration_s))
        sent = round(load_pps_per_port * duration_s)
        if self.invalid_every and len(self.calls) % self.invalid_every == 0:
            return MeshTrial(load_pps_per_port, (0,) * self.ports, (0,) * self.ports,
                             duration_s, valid=False, invalid_reason="tx short")
        total = sent * self.ports
        forwarded = min(total, int(self.fabric_pps * duration_s))
        rx = [forwarded // self.ports] * self.ports
        rx[0] += forwarded - sum(rx)
        return MeshTrial(load_pps_per_port, (sent,) * self.ports, tuple(rx), duration_s,
                         port_names=tuple(f"p{i}" for i in range(self.ports)))


def test_at_the_defaults() -> None:
    switch = MeshSwitch(4, fabric_pps=2_000_000)
    result = fully_meshed(switch, ports=4, max_pps_per_port=1_000_000)
    assert result.duration_s == TRIAL_S == 30.0 and switch.calls[0] == (1_000_000, 30.0)
    assert result.forwarding_rate_at_max_pps == pytest.approx(2_000_000)
    assert result.frmol_trial is not None and result.frmol_trial.loss_ratio == pytest.approx(0.5)
    assert 500_000 * 0.995 <= result.throughput_pps_per_port <= 500_000
    assert result.upper_pps_per_port is not None and result.upper_pps_per_port > 500_000
    assert result.resolution_reached and result.throughput_pps == 4 * result.throughput_pps_per_port
    d = result.as_dict()
    assert set(d) == {"procedure", "ports", "max_pps_per_port", "duration_s",
                      "forwarding_rate_at_max_pps", "loss_ratio_at_max",
                      "throughput_pps_per_port", "throughput_pps", "upper_pps_per_port",
                      "generator_ceiling_pps_per_port", "max_source",
                      "generator_max_pps_per_port", "lower_bound_by_generator",
                      "resolution_ratio", "resolution_pps",
                      "resolution_reached", "trials"}
    assert d["procedure"] == "rfc2889_fully_meshed" and d["resolution_ratio"] == 0.005
    assert set(d["trials"][0]) == {"offered_pps_per_port", "offered_pps", "duration_s",
                                   "port_names", "tx", "rx", "tx_total", "rx_total", "lost",
                                   "loss_ratio", "forwarding_pps", "valid", "invalid_reason"}
    assert d["trials"][0]["port_names"] == ["p0", "p1", "p2", "p3"]


def test_the_defaults_are_the_rfcs_trial_duration() -> None:
    default = inspect.signature(fully_meshed).parameters["settings"].default
    assert default == TrialSettings(duration_s=TRIAL_S, retries=2)


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 16), st.floats(1_000.0, 1_000_000.0))
def test_the_throughput_is_the_fabric_share_per_port(ports: int, per_port: float) -> None:
    switch = MeshSwitch(ports, fabric_pps=per_port * ports)
    result = fully_meshed(switch, settings=TrialSettings(duration_s=1.0), ports=ports,
                          max_pps_per_port=1_000_000)
    lo = result.throughput_pps_per_port
    assert lo <= per_port + 1 and result.resolution_reached
    assert result.upper_pps_per_port is None or \
        result.upper_pps_per_port - lo <= 0.005 * lo


def test_a_switch_that_forwards_the_maximum_is_measured_once() -> None:
    switch = MeshSwitch(3, fabric_pps=10**9)
    result = fully_meshed(switch, settings=TrialSettings(duration_s=2.0), ports=3,
                          max_pps_per_port=100_000)
    assert len(result.trials) == 1 and result.throughput_pps_per_port == 100_000
    assert result.upper_pps_per_port is None
    assert result.forwarding_rate_at_max_pps == pytest.approx(300_000)


def test_invalid_trials_are_retried_and_never_count_as_loss() -> None:
    switch = MeshSwitch(4, fabric_pps=400_000, invalid_every=2)
    result = fully_meshed(switch, settings=TrialSettings(duration_s=1.0, retries=2), ports=4,
                          max_pps_per_port=1_000_000)
    assert 100_000 * 0.995 <= result.throughput_pps_per_port <= 100_000
    assert any(not t.valid for t in result.trials)
    assert result.generator_ceiling_pps_per_port is None


def test_every_trial_invalid_is_the_generators_failure() -> None:
    switch = MeshSwitch(2, fabric_pps=1.0, invalid_every=1)
    with pytest.raises(InvalidTrial, match="fully meshed.*tx short"):
        fully_meshed(switch, settings=TrialSettings(duration_s=1.0), ports=2, max_pps_per_port=1000)


def test_an_absolute_resolution() -> None:
    result = fully_meshed(MeshSwitch(2, fabric_pps=1000), settings=TrialSettings(duration_s=1.0),
                          ports=2, max_pps_per_port=10_000, resolution=Resolution(pps=10))
    assert result.upper_pps_per_port is not None
    assert result.upper_pps_per_port - result.throughput_pps_per_port <= 10


def test_a_measurer_counting_the_wrong_ports_is_refused() -> None:
    with pytest.raises(NetloadConfigError, match="returned 2 ports' counts for ports=4"):
        fully_meshed(MeshSwitch(2, 1000), settings=TrialSettings(duration_s=1.0), ports=4,
                     max_pps_per_port=1000)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"ports": 1}, "ports=1"), ({"ports": 2.0}, "ports=2.0"),
    ({"max_pps_per_port": 0}, "max_pps_per_port="),
    ({"max_pps_per_port": float("inf")}, "max_pps_per_port="),
    ({"duration_s": -1}, "duration_s="), ({"resolution": 2}, "resolution 2"),
    ({"max_trials": 0}, "max_trials="), ({"max_trials": 3}, "max_trials=3"),
    ({"retries": -1}, "retries="),
])
def test_bad_input_names_the_field(kwargs: dict, field: str) -> None:
    switch = MeshSwitch(4, 1000)
    trial = {k: kwargs.pop(k) for k in ("duration_s", "retries") if k in kwargs}
    with pytest.raises(NetloadConfigError, match=field):
        fully_meshed(switch, **{"ports": 4, "max_pps_per_port": 1000,
                                "settings": TrialSettings(**{"duration_s": 1.0, **trial}),
                                **kwargs})
    assert switch.calls == []


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"tx": (1, 2, 3)}, "tx has 3 ports and rx 2"), ({"tx": (1,), "rx": (1,)}, ">= 2 ports"),
    ({"tx": (1, -1)}, "tx: -1"), ({"rx": 5}, "rx=5"), ({"duration_s": 0}, "duration_s="),
    ({"offered_pps_per_port": 0}, "offered_pps_per_port="),
    ({"port_names": ("p0",)}, "port_names="),
])
def test_bad_trials_name_the_field(kwargs: dict, field: str) -> None:
    args = {"offered_pps_per_port": 10.0, "tx": (1, 1), "rx": (1, 1), "duration_s": 1.0,
            **kwargs}
    with pytest.raises(NetloadConfigError, match=field):
        MeshTrial(**args)
