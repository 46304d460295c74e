"""RFC 2889 §5.6 on a fake switch forwarding at most `port_pps` per port: the MFR is
N x that rate whatever the loss, reached at the first load above it; forward pressure
runs when the binding gives a measurer, and is skipped with the binding's reason
otherwise, while the MFR is still measured."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import InvalidTrial, NetloadConfigError
from pytest_netload.rfc2889 import (
    PRESSURE_GAP_BITS,
    ForwardPressure,
    MeshTrial,
    load_steps,
    maximum_forwarding_rate,
    pressure_load_pps,
)
from pytest_netload.search import TrialSettings

ONE_S = TrialSettings(duration_s=1.0, retries=1)


class PortCapped:
    """Each port receives at most `port_pps`; `invalid_at` loads never valid."""

    def __init__(self, ports: int, port_pps: float, invalid_at: float | None = None) -> None:
        self.ports, self.port_pps, self.invalid_at = ports, port_pps, invalid_at
        self.calls: list[float] = []

    def measure(self, load: float, duration_s: float) -> MeshTrial:
        self.calls.append(load)
        n = self.ports
        if load == self.invalid_at:
            return MeshTrial(load, (0,) * n, (0,) * n, duration_s, valid=False,
                             invalid_reason="tx short")
        sent = round(load * duration_s)
        rx = min(sent, round(self.port_pps * duration_s))
        return MeshTrial(load, (sent,) * n, (rx,) * n, duration_s)


def test_the_mfr_is_the_ports_rate_and_pressure_is_skipped_with_the_reason() -> None:
    switch = PortCapped(4, port_pps=700)
    loads = load_steps(1_000, 10)
    assert loads[0] == 100 and loads[-1] == 1_000 and len(loads) == 10
    result = maximum_forwarding_rate(switch, ports=4, loads=loads, settings=ONE_S,
                                     pressure="veth has no gap")
    assert switch.calls == list(loads)
    assert result.mfr_pps == 4 * 700 and result.mfr_trial.offered_pps_per_port == 700
    assert [round(t.forwarding_pps) for t in result.curve][:7] == [400, 800, 1200, 1600,
                                                                   2000, 2400, 2800]
    fp = result.pressure
    assert fp.skipped_reason == "veth has no gap" and fp.detected is None
    d = result.as_dict()
    assert d["procedure"] == "rfc2889_maximum_forwarding_rate" and d["mfr_pps"] == 2800
    assert d["forward_pressure"]["skipped"] and d["forward_pressure"]["gap_bits"] == 88
    assert d["mfr_load_pps_per_port"] == 700 and len(d["curve"]) == 10


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 8), st.floats(10.0, 10_000.0), st.integers(1, 20))
def test_the_mfr_is_the_best_of_the_curve(ports: int, port_pps: float, steps: int) -> None:
    result = maximum_forwarding_rate(PortCapped(ports, port_pps), ports=ports,
                                     loads=load_steps(5_000, steps), settings=ONE_S,
                                     pressure="no")
    assert result.mfr_pps == max(t.forwarding_pps for t in result.curve)
    assert result.mfr_pps <= ports * (min(port_pps, 5_000) + 1)


def test_forward_pressure_is_detected_above_the_line_rate() -> None:
    line = 148_809.5  # 100 Mbit/s at 64 B
    offered = pressure_load_pps(line, 64)
    # frame, preamble and gap, in bit times
    assert offered == pytest.approx(line * (512 + 64 + 96) / (512 + 64 + 88))
    honest, pushy = PortCapped(2, line), PortCapped(2, 2 * line)
    for switch, seen in ((honest, False), (pushy, True)):
        result = maximum_forwarding_rate(switch, ports=2, loads=(line,), settings=ONE_S,
                                         pressure=switch, line_pps_per_port=line)
        assert result.pressure.detected is seen and switch.calls[-1] == offered
        assert result.pressure.as_dict()["offered_pps_per_port"] == offered
    assert PRESSURE_GAP_BITS == 88


def test_an_unofferable_load_is_listed_and_pressure_failing_is_a_skip() -> None:
    switch = PortCapped(2, 500, invalid_at=1_000)
    result = maximum_forwarding_rate(switch, ports=2, loads=(500, 1_000), settings=ONE_S,
                                     pressure=PortCapped(2, 500, invalid_at=pressure_load_pps(
                                         600, 64)), line_pps_per_port=600)
    assert result.unoffered_pps_per_port == (1_000,) and result.mfr_pps == 1_000
    assert result.pressure.skipped_reason is not None
    assert "every forward pressure trial was invalid" in result.pressure.skipped_reason
    with pytest.raises(InvalidTrial, match="maximum forwarding rate"):
        maximum_forwarding_rate(PortCapped(2, 1, invalid_at=5), ports=2, loads=(5,),
                                settings=ONE_S, pressure="x")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"loads": ()}, r"loads=\(\): give the offered loads"),
    ({"loads": (1, -1)}, r"loads=-1: give a finite number > 0"),
    ({"ports": 1}, r"ports=1: rfc2889 maximum forwarding rate runs over"),
    ({"pressure": " "}, r"pressure='': give the measurer"),
    ({"pressure": PortCapped(2, 1)}, r"forward pressure needs line_pps_per_port"),
])
def test_bad_arguments_name_their_field(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"ports": 2, "loads": (1.0,), "pressure": "skip", **kwargs}
    with pytest.raises(NetloadConfigError, match=match):
        maximum_forwarding_rate(PortCapped(2, 1), settings=ONE_S, **args)  # type: ignore[arg-type]


def test_load_steps_and_pressure_values_are_checked() -> None:
    with pytest.raises(NetloadConfigError, match=r"load_steps=0: give a whole number"):
        load_steps(100, 0)
    with pytest.raises(NetloadConfigError, match=r"give its trial or the reason"):
        ForwardPressure()
