"""RFC 2889 §5.2 on a fake switch whose one port forwards at most `port_pps`: the
throughput is that rate in either direction, the forwarding rate at the maximum is
capped by it; invalid trials are retried; bad inputs name their field."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import InvalidTrial, NetloadConfigError
from pytest_netload.rfc2889 import (
    PARTIAL_DIRECTIONS,
    TRIAL_S,
    PartialDirection,
    PartialMeshTrial,
    partially_meshed,
)
from pytest_netload.search import TrialSettings


class OnePortSwitch:
    """The one port (p0) carries at most `port_pps`; the N - 1 others are never the
    limit (each carries 1/(N - 1) of p0's load)."""

    def __init__(self, ports: int, port_pps: float, direction: str,
                 invalid_first: int = 0) -> None:
        self.ports, self.port_pps, self.direction = ports, port_pps, direction
        self.invalid_first = invalid_first
        self.calls: list[tuple[float, float]] = []

    def measure(self, load: float, duration_s: float) -> PartialMeshTrial:
        self.calls.append((load, duration_s))
        n = self.ports
        if len(self.calls) <= self.invalid_first:
            return PartialMeshTrial(load, (0,) * n, (0,) * n, duration_s, valid=False,
                                    invalid_reason="tx short")
        each = round(load * duration_s / (n - 1))
        through = min(each * (n - 1), int(self.port_pps * duration_s))
        if self.direction == "one_to_many":
            tx = (each * (n - 1),) + (0,) * (n - 1)
            share = [through // (n - 1)] * (n - 1)
            share[0] += through - sum(share)
            rx = (0, *share)
        else:
            tx = (0,) + (each,) * (n - 1)
            rx = (through,) + (0,) * (n - 1)
        return PartialMeshTrial(load, tx, rx, duration_s,
                                port_names=tuple(f"p{i}" for i in range(n)))


@pytest.mark.parametrize("direction", PARTIAL_DIRECTIONS)
def test_the_one_port_limits_both_directions(direction: PartialDirection) -> None:
    switch = OnePortSwitch(4, port_pps=600_000, direction=direction)
    result = partially_meshed(switch, direction=direction, ports=4, max_pps=1_200_000)
    assert result.duration_s == TRIAL_S and switch.calls[0] == (1_200_000, TRIAL_S)
    assert result.forwarding_rate_at_max_pps == pytest.approx(600_000, rel=1e-6)
    assert result.frmol_trial is not None
    assert result.frmol_trial.loss_ratio == pytest.approx(0.5, rel=1e-6)
    assert 600_000 * 0.99 <= result.throughput_pps <= 600_000 and result.resolution_reached
    d = result.as_dict()
    assert d["procedure"] == "rfc2889_partially_meshed" and d["direction"] == direction
    assert d["trials"][0]["port_names"] == ["p0", "p1", "p2", "p3"]
    assert set(d) >= {"max_pps", "throughput_pps", "upper_pps", "forwarding_rate_at_max_pps",
                      "loss_ratio_at_max", "lower_bound_by_generator", "max_source"}


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 12), st.floats(1_000.0, 900_000.0), st.sampled_from(PARTIAL_DIRECTIONS))
def test_the_throughput_is_the_one_ports_rate(ports: int, port_pps: float,
                                              direction: PartialDirection) -> None:
    switch = OnePortSwitch(ports, port_pps, direction)
    result = partially_meshed(switch, direction=direction, ports=ports, max_pps=1_000_000,
                              settings=TrialSettings(duration_s=1.0))
    lo = result.throughput_pps
    assert lo <= port_pps + ports and result.resolution_reached
    assert result.upper_pps is None or result.upper_pps - lo <= 0.005 * lo + 1e-9


def test_a_maximum_that_passes_is_measured_once_and_generator_bounded() -> None:
    switch = OnePortSwitch(3, port_pps=10_000, direction="many_to_one")
    result = partially_meshed(switch, direction="many_to_one", ports=3, max_pps=5_000,
                              settings=TrialSettings(duration_s=1.0), max_source="generator",
                              generator_max_pps=5_000 / 0.95)
    assert len(switch.calls) == 1 and result.throughput_pps == 5_000
    assert result.lower_bound_by_generator


def test_invalid_trials_are_retried_then_raise() -> None:
    switch = OnePortSwitch(3, port_pps=1_000, direction="one_to_many", invalid_first=2)
    result = partially_meshed(switch, direction="one_to_many", ports=3, max_pps=800,
                              settings=TrialSettings(duration_s=1.0, retries=2))
    assert result.throughput_pps == 800 and len(result.trials) == 3
    dead = OnePortSwitch(3, port_pps=1_000, direction="one_to_many", invalid_first=99)
    with pytest.raises(InvalidTrial, match="partially meshed one-to-many search.*tx short"):
        partially_meshed(dead, direction="one_to_many", ports=3, max_pps=800,
                         settings=TrialSettings(duration_s=1.0, retries=1))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"direction": "both"}, r"direction='both': give 'one_to_many' .* or 'many_to_one'"),
    ({"ports": 2}, r"ports=2: rfc2889 partially meshed runs over a whole number >= 3"),
    ({"max_pps": 0}, r"max_pps=0: give a finite number > 0"),
])
def test_bad_arguments_name_their_field(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"direction": "one_to_many", "ports": 3, "max_pps": 100.0,
                               **kwargs}
    with pytest.raises(NetloadConfigError, match=match):
        partially_meshed(OnePortSwitch(3, 10, "one_to_many"), **args)  # type: ignore[arg-type]


def test_a_measurer_that_counts_the_wrong_ports_is_named() -> None:
    switch = OnePortSwitch(4, port_pps=100, direction="one_to_many")
    with pytest.raises(NetloadConfigError, match=r"returned 4 ports' counts for ports=3"):
        partially_meshed(switch, direction="one_to_many", ports=3, max_pps=100.0,
                         settings=TrialSettings(duration_s=1.0))


def test_a_trial_needs_three_ports_and_counts() -> None:
    with pytest.raises(NetloadConfigError, match=r"tx has 2 ports and rx 2"):
        PartialMeshTrial(1.0, (1, 1), (1, 1), 1.0)
    with pytest.raises(NetloadConfigError, match=r"port_names=\['a'\]"):
        PartialMeshTrial(1.0, (1, 1, 1), (1, 1, 1), 1.0, port_names=("a",))
