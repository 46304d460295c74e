"""assert_rfc2889 on results of the pure RFC 2889 procedures over fake switches: each
procedure's headline against at_least, congestion's observations against what is
required, every check recorded, bad arguments named."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_netload import NetloadConfigError, assert_rfc2889
from pytest_netload.measure.recording import recording
from pytest_netload.rfc2889 import (AddressLoad, AddressTrial, CongestionTrial, MeshTrial,
                                    StreamCounts,
                                    address_caching_capacity, congestion_control,
                                    fully_meshed)
from pytest_netload.search import TrialSettings


class Table:
    """A switch that learns `capacity` addresses and floods the rest."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity

    def measure(self, load: AddressLoad, duration_s: float) -> AddressTrial:
        count = load.count
        flooded = max(0, count - self.capacity)
        return AddressTrial(count, count, count, flooded)


class Fabric:
    """N ports forwarding at most `limit_pps` each."""

    def __init__(self, limit_pps: float) -> None:
        self.limit = limit_pps

    def measure(self, load: float, duration_s: float) -> MeshTrial:
        tx = round(load * duration_s)
        rx = min(tx, round(self.limit * duration_s))
        return MeshTrial(load, (tx, tx), (rx, rx), duration_s)


class Switch:
    """Congestion at 150 % on C; with `hol`, the uncongested a->d loses too."""

    def __init__(self, hol: bool) -> None:
        self.hol = hol

    def measure(self, load: float, duration_s: float) -> CongestionTrial:
        n = round(load * duration_s)
        half = n // 2
        return CongestionTrial(load, duration_s, StreamCounts("a->c", half, half * 2 // 3),
                               StreamCounts("a->d", half, half - (half // 10 if self.hol
                                                                  else 0)),
                               StreamCounts("b->c", n, n * 2 // 3))


def _verdicts(fn: Any) -> list[dict[str, Any]]:
    with recording("t.py::test") as record:
        fn()
    return record.verdicts


def test_capacity_at_least() -> None:
    result = address_caching_capacity(Table(64), low=1, high=200)
    verdicts = _verdicts(lambda: assert_rfc2889(result, at_least=64))
    assert verdicts[0]["passed"] and verdicts[0]["measured"] == 64
    with pytest.raises(AssertionError, match=r"RFC 2889 address caching capacity 64 is not "
                                             r">= 65\nmeasured: 64 \(\d+ trials\)"):
        assert_rfc2889(result, at_least=65)


def test_mesh_throughput_at_least_a_rate() -> None:
    result = fully_meshed(Fabric(900.0), settings=TrialSettings(duration_s=1.0), ports=2,
                          max_pps_per_port=1000.0, resolution=0.01)
    assert_rfc2889(result, at_least="880pps")
    with pytest.raises(AssertionError, match="fully meshed throughput per port .* is not >= "):
        assert_rfc2889(result, at_least=950)


def test_congestion_observations() -> None:
    clean = congestion_control(Switch(hol=False), settings=TrialSettings(duration_s=1.0),
                               load_pps_per_port=1000.0)
    verdicts = _verdicts(lambda: assert_rfc2889(clean, head_of_line_blocking=False))
    assert [v["check"] for v in verdicts] == ["rfc2889:head_of_line_blocking"]
    blocked = congestion_control(Switch(hol=True), settings=TrialSettings(duration_s=1.0),
                                 load_pps_per_port=1000.0)
    with pytest.raises(AssertionError, match="head of line blocking seen, required not seen"):
        assert_rfc2889(blocked, head_of_line_blocking=False)
    assert_rfc2889(blocked, head_of_line_blocking=True)


@pytest.mark.parametrize("call, message", [
    (lambda r: assert_rfc2889(r), r"needs at_least=, e\.g\. 8192"),
    (lambda r: assert_rfc2889(r, at_least="1kpps"), r"at_least='1kpps': .* number of "
                                                     "addresses"),
    (lambda r: assert_rfc2889(r, at_least=10, back_pressure=True), "congestion control only"),
    (lambda r: assert_rfc2889(object(), at_least=1), "give what an rfc2889 procedure returns"),
])
def test_bad_arguments_name_the_fix(call: Any, message: str) -> None:
    result = address_caching_capacity(Table(8), low=1, high=16)
    with pytest.raises(NetloadConfigError, match=message):
        call(result)


def test_congestion_needs_an_observation() -> None:
    result = congestion_control(Switch(hol=False), settings=TrialSettings(duration_s=1.0),
                                load_pps_per_port=1000.0)
    with pytest.raises(NetloadConfigError, match="needs head_of_line_blocking="):
        assert_rfc2889(result)
    with pytest.raises(NetloadConfigError, match="at_least= does not apply"):
        assert_rfc2889(result, at_least=1)


class OnePort:
    """Three ports; p0 receives at most `limit_pps` from the two others (many-to-one)."""

    def __init__(self, limit_pps: float) -> None:
        self.limit = limit_pps

    def measure(self, load: float, duration_s: float) -> Any:
        from pytest_netload.rfc2889 import PartialMeshTrial

        each = round(load * duration_s / 2)
        rx = min(2 * each, round(self.limit * duration_s))
        return PartialMeshTrial(load, (0, each, each), (rx, 0, 0), duration_s)


def test_partially_meshed_and_mfr_at_least_a_rate() -> None:
    from pytest_netload.rfc2889 import maximum_forwarding_rate, partially_meshed

    one = TrialSettings(duration_s=1.0)
    partial = partially_meshed(OnePort(800.0), direction="many_to_one", ports=3,
                               max_pps=1000.0, settings=one, resolution=0.01)
    verdicts = _verdicts(lambda: assert_rfc2889(partial, at_least="780pps"))
    assert verdicts[0]["check"] == "rfc2889:partially_meshed" and verdicts[0]["passed"]
    with pytest.raises(AssertionError, match="partially meshed throughput .* is not >= "):
        assert_rfc2889(partial, at_least=900)
    mfr = maximum_forwarding_rate(Fabric(900.0), ports=2, loads=(500.0, 1000.0),
                                  settings=one, pressure="no gap to shorten")
    assert_rfc2889(mfr, at_least="1800pps")
    with pytest.raises(AssertionError, match=r"maximum forwarding rate 1\.800 kpps is not "):
        assert_rfc2889(mfr, at_least="2kpps")
