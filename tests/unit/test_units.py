"""Unit tests of pytest_netload.units: rates with layers, durations, frame sizes."""

from __future__ import annotations

import dataclasses
import math
import re
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.streams import Stream
from pytest_netload.units import (
    LAYER_OVERHEAD_BYTES,
    LAYER_TEXT,
    LAYERS,
    MAX_FRAME_SIZE_BYTES,
    MIN_FRAME_SIZE_BYTES,
    RATE_KINDS,
    Duration,
    Rate,
    Size,
    as_duration,
    as_rate,
    as_size,
    check_layer,
    frame_bits,
    layer_overhead_bytes,
)

T4 = (Eth() / IPv4() / UDP()).build()
PPS_UNITS = {"pps": 1, "kpps": 1e3, "Mpps": 1e6, "Gpps": 1e9, "Tpps": 1e12}
BIT_UNITS = {f"{p}{u}": m for p, m in (("", 1), ("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12))
             for u in ("bit/s", "bps")}
LINE_10G_BPS = 10e9


def raises(match: str) -> Any:
    """pytest.raises for a NetloadConfigError whose message matches ``match``."""
    return pytest.raises(NetloadConfigError, match=match)


# ---- layers ------------------------------------------------------------------------------

def test_layer_constants() -> None:
    assert LAYERS == ("l1", "l2", "l2-nofcs")
    assert set(LAYER_TEXT) == set(LAYERS)
    assert LAYER_TEXT["l1"] == "L1: frame+FCS+preamble+IFG"
    assert LAYER_OVERHEAD_BYTES == {"l1": 24, "l2": 4, "l2-nofcs": 0}  # as results.py counts
    assert [layer_overhead_bytes(x) for x in LAYERS] == [24, 4, 0]
    assert (MIN_FRAME_SIZE_BYTES, MAX_FRAME_SIZE_BYTES) == (64, 9604)
    assert RATE_KINDS == ("pps", "bps", "percent")


def test_frame_bits_every_size() -> None:
    for size in range(64, 9001):
        l1, l2, nofcs = (frame_bits(size, x) for x in LAYERS)
        assert (l1, l2, nofcs) == (8 * (size + 20), 8 * size, 8 * (size - 4))
        assert l1 - l2 == 160 and l2 - nofcs == 32


@pytest.mark.parametrize("layer", ["l3", "L1", "", None, 1])
def test_unknown_layer_lists_layers(layer: object) -> None:
    with raises(rf"layer {re.escape(repr(layer))} is unknown; use one of 'l1' .*'l2-nofcs'"):
        check_layer(layer)
    with raises("unknown"):
        frame_bits(64, layer)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [4, 0, -64, math.nan, math.inf, True, "64"])
def test_frame_bits_refuses_bad_sizes(size: Any) -> None:
    with raises(rf"frame size {re.escape(repr(size))} is invalid"):
        frame_bits(size, "l2")


# ---- parsing and formatting --------------------------------------------------------------

@pytest.mark.parametrize(("text", "kind", "value", "layer"), [
    ("1.5Mpps", "pps", 1.5e6, None),
    ("250kpps", "pps", 250e3, None),
    ("1000pps", "pps", 1000.0, None),
    ("9.5Gbit/s", "bps", 9.5e9, "l2"),
    ("100Mbps", "bps", 100e6, "l2"),
    ("95%", "percent", 95.0, None),
    ("100%", "percent", 100.0, None),
    ("9.5Gbit/s@l1", "bps", 9.5e9, "l1"),
    (" 1e3 kbit/s @ l2-nofcs ", "bps", 1e6, "l2-nofcs"),
    ("1Tbps", "bps", 1e12, "l2"),
    ("0.5bit/s", "bps", 0.5, "l2"),
    (".5Gpps", "pps", 5e8, None),
])
def test_parse(text: str, kind: str, value: float, layer: str | None) -> None:
    r = Rate(text)
    assert (r.kind, r.value, r.layer) == (kind, value, layer)
    assert Rate(str(r)) == r


def test_number_and_unit() -> None:
    assert Rate(1000, "pps") == Rate("1000pps") == Rate("1kpps")
    assert Rate(1e9, "bit/s", layer="l1") == Rate("1Gbit/s@l1")
    assert Rate(95, "%") == Rate("95%")
    assert Rate(1.5, "Mpps").value == 1.5e6
    assert Rate("9.5Gbit/s", layer="l1").layer == "l1"
    r = Rate("1Gbps@l1")
    assert Rate(r) == r and Rate(r, layer="l1") == r and as_rate(r) is r


def test_parsing_is_decimal_exact() -> None:
    assert Rate("1.1Mpps") == Rate(1100000, "pps") == Rate(1.1, "Mpps")
    assert Rate("0.3kpps").value == 300.0
    assert Rate("1.234567891Gbit/s").value == 1234567891.0


def test_str_and_repr() -> None:
    assert str(Rate("1500000pps")) == "1.5Mpps"
    assert str(Rate("100Mbps")) == "100Mbit/s@l2"
    assert str(Rate("9.5Gbit/s@l1")) == "9.5Gbit/s@l1"
    assert str(Rate("95%")) == "95%"
    assert str(Rate(123456789, "pps")) == "123.456789Mpps"
    assert repr(Rate("1Mpps")) == "Rate('1Mpps')"


UNIT = st.sampled_from([*PPS_UNITS, *BIT_UNITS, "%"])
POSITIVE = st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False)


@given(value=POSITIVE, unit=UNIT, layer=st.sampled_from(LAYERS))
def test_round_trip(value: float, unit: str, layer: str) -> None:
    if unit == "%":
        value = min(value, 100.0)
    try:
        r = Rate(value, unit, layer=layer if unit in BIT_UNITS else None)
    except NetloadConfigError as exc:  # only products past the float range
        assert "too large" in str(exc)
        return
    assert Rate(str(r)) == r and hash(Rate(str(r))) == hash(r)
    assert Rate(f"{value!r}{unit}" + (f"@{layer}" if unit in BIT_UNITS else "")) == r
    mult = PPS_UNITS.get(unit) or BIT_UNITS.get(unit) or 1
    assert r.value == float(Decimal(repr(value)) * Decimal(repr(mult)))


@given(st.floats(min_value=5e-324, max_value=1e300))
def test_round_trip_of_stored_values(value: float) -> None:
    for unit in ("pps", "bit/s"):
        r = Rate(value, unit)
        assert Rate(str(r)).value == value


def test_equality_and_hash() -> None:
    assert Rate("1Gbps@l2") == Rate("1Gbit/s")
    assert Rate("1Gbps@l1") != Rate("1Gbps@l2")
    assert Rate("100pps") != Rate("100%")
    assert len({Rate("1Mpps"), Rate(1e6, "pps"), Rate("1000kpps"), Rate("1Mbps")}) == 2


def test_frozen() -> None:
    r = Rate("1Mpps")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.value = 2.0  # type: ignore[misc]


def test_ordering_within_a_kind_only() -> None:
    assert Rate("1Mpps") < Rate("2Mpps") <= Rate("2000kpps") and Rate("2%") > Rate("1%")
    assert sorted([Rate("2Gbps"), Rate("1Gbps")]) == [Rate("1Gbps"), Rate("2Gbps")]
    for a, b in [("1Mpps", "1Gbps"), ("1Mpps", "50%"), ("1Gbps@l1", "1Gbps@l2")]:
        with pytest.raises(TypeError, match="without a frame size"):
            _ = Rate(a) < Rate(b)
        with pytest.raises(TypeError):
            _ = Rate(a) >= Rate(b)
    with pytest.raises(TypeError):
        _ = Rate("1Mpps") < 5


# ---- conversions -------------------------------------------------------------------------

def test_percent_of_10g_at_64_bytes() -> None:
    assert Rate("100%").pps(64, LINE_10G_BPS) == pytest.approx(14_880_952.38, abs=0.005)
    assert Rate("100%").pps(1518, LINE_10G_BPS) == pytest.approx(812_743.82, abs=0.005)
    assert Rate("50%").pps(64, LINE_10G_BPS) == pytest.approx(14_880_952.38 / 2, abs=0.005)
    assert Rate("95%").bps(64, "l1", LINE_10G_BPS) == 9.5e9
    assert Rate("100%").bps(64, "l2", LINE_10G_BPS) == pytest.approx(10e9 * 64 / 84)


def test_percent_needs_a_line_rate() -> None:
    msg = ("rate '95%' is a share of the line rate, but the topology declares none (veth has "
           "none); give the rate in pps or bit/s")
    with pytest.raises(NetloadConfigError) as info:
        Rate("95%").pps(64)
    assert str(info.value) == msg
    with raises("share of the line rate"):
        Rate("95%").bps(64, "l1")
    for bad in (0, -1.0, math.nan, math.inf, True):
        with raises(rf"line rate {re.escape(repr(bad))} bit/s is invalid"):
            Rate("95%").pps(64, bad)


@pytest.mark.parametrize("layer", LAYERS)
def test_pps_bps_round_trip_every_size(layer: str) -> None:
    for size in range(64, 9001):
        pps = 1_000_000.0
        bps = Rate(pps, "pps").bps(size, layer)
        assert bps == pps * frame_bits(size, layer)
        back = Rate(bps, "bit/s", layer=layer).pps(size)
        assert back == pytest.approx(pps, rel=1e-14)
        assert Rate(bps, "bit/s", layer=layer).bps(size, layer) == bps


def test_bit_rates_convert_between_layers() -> None:
    r = Rate("10Gbit/s@l1")
    assert r.pps(64) == pytest.approx(10e9 / 672)
    assert r.bps(64, "l2") == pytest.approx(10e9 * 64 / 84)
    assert r.bps(64, "l2-nofcs") == pytest.approx(10e9 * 60 / 84)
    assert r.bps(64, "l1") == 10e9  # exact: no detour through pps
    assert Rate("1Mpps").pps() == 1e6 and Rate("1Mpps").pps(1518) == 1e6
    with raises("rate '1Gbit/s@l2' needs a frame size"):
        Rate("1Gbps").pps()
    with raises("unknown"):
        Rate("1Mpps").bps(64, "l4")


IMIX_SEQUENCE = [64] * 7 + [594] * 4 + [1518]


@pytest.mark.parametrize("layer", LAYERS)
def test_imix(layer: str) -> None:
    stream = Stream(T4, size="imix")
    assert sorted(stream.frame_sizes[i] for i in stream.sequence) == sorted(IMIX_SEQUENCE)
    mean_bits = sum(frame_bits(s, layer) for s in IMIX_SEQUENCE) / len(IMIX_SEQUENCE)
    rate = Rate(1e9, "bit/s", layer=layer)
    assert rate.pps(stream) == pytest.approx(1e9 / mean_bits, rel=1e-14)
    assert rate.pps(stream) == rate.pps(stream.mean_frame_size)
    pps = 123_456.0
    bps = Rate(pps, "pps").bps(stream, layer)
    assert bps == pytest.approx(pps * mean_bits, rel=1e-14)
    assert Rate(bps, "bit/s", layer=layer).pps(stream) == pytest.approx(pps, rel=1e-14)
    share = Rate("100%").pps(stream, LINE_10G_BPS)
    assert share == pytest.approx(10e9 / (sum(8 * (s + 20) for s in IMIX_SEQUENCE) / 12))


def test_frame_size_kinds() -> None:
    class Mix:
        mean_frame_size = 100.5

    r = Rate("1Gbps")
    assert r.pps(Size(64)) == r.pps(64) == r.pps(64.0)
    assert r.pps(Mix()) == r.pps(100.5)
    for bad in ("64", None, [64]):
        with raises("needs a frame size"):
            r.pps(bad)  # type: ignore[arg-type]


# ---- bad rates ---------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "match"), [
    ("fast", (r"rate 'fast': cannot parse it as a number and a unit; write e.g. '1\.5Mpps', "
             r"'9\.5Gbit/s' or '95%'")),
    ("", "rate '': cannot parse"),
    ("Mpps", "rate 'Mpps': cannot parse"),
    ("0pps", "rate '0pps' is not above zero"),
    ("0%", "rate '0%' is not above zero"),
    ("-1Mpps", "rate '-1Mpps' is not above zero"),
    ("-5%", "rate '-5%' is not above zero"),
    ("nanpps", "rate 'nanpps' is not finite"),
    ("infGbps", "rate 'infGbps' is not finite"),
    ("1e999999999pps", "rate '1e999999999pps' is too large"),
    ("10Mbbs", "rate '10Mbbs': unknown unit 'Mbbs'; use one of"),
    ("10mpps", r"unknown unit 'mpps' \(did you mean 'Mpps'\?\)"),
    ("10MB/s", "unknown unit 'MB/s'"),
    ("1000", "rate '1000' has no unit"),
    ("100.5%", r"rate '100\.5%' exceeds 100% of the line rate"),
    ("1Mpps@l1", "rate '1Mpps@l1': a layer applies to bit rates only"),
    ("50%@l1", "rate '50%@l1': a layer applies to bit rates only"),
    ("1Gbps@l3", "rate '1Gbps@l3': layer 'l3' is unknown"),
    (True, "rate True is a bool, not a rate"),
    (False, "rate False is a bool"),
    (1000, "rate 1000 has no unit; write e.g. Rate"),
    (None, "rate None is a NoneType, not a rate"),
    ([1], r"rate \[1\] is a list"),
])
def test_bad_rates(value: Any, match: str) -> None:
    with raises(match):
        Rate(value)
    with raises(match.replace("rate", "tx_rate", 1)):
        as_rate(value, what="tx_rate")


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((0, "pps"), {}, r"rate \(0, 'pps'\) is not above zero"),
    ((-1.5, "Gbit/s"), {}, r"rate \(-1\.5, 'Gbit/s'\) is not above zero"),
    ((math.nan, "pps"), {}, r"rate \(nan, 'pps'\) is not finite"),
    ((math.inf, "%"), {}, r"rate \(inf, '%'\) is not finite"),
    ((101, "%"), {}, r"rate \(101, '%'\) exceeds 100%"),
    ((True, "pps"), {}, "is a bool"),
    ((5, "parsecs"), {}, "unknown unit 'parsecs'"),
    ((5, 3), {}, "unit 3 is not a string"),
    ((5, "pps"), {"layer": "l1"}, "a layer applies to bit rates only"),
    ((5, "%"), {"layer": "l1"}, "a layer applies to bit rates only"),
    ((5, "bps"), {"layer": "l9"}, "layer 'l9' is unknown"),
    (("5Gbps@l1",), {"layer": "l2"}, "names layer 'l1', but layer='l2' was given too"),
    (("5Gbps", "bps"), {}, "give a number with a unit, or a string alone"),
    ((Rate("1Gbps@l1"), "bps"), {}, "a Rate already has its unit"),
    ((Rate("1Gbps@l1"),), {"layer": "l2"}, "has layer 'l1', not 'l2'"),
])
def test_bad_rate_arguments(args: tuple[Any, ...], kwargs: dict[str, Any], match: str) -> None:
    with raises(match):
        Rate(*args, **kwargs)


def test_rate_errors_are_value_errors() -> None:
    with pytest.raises(ValueError, match="fast"):
        Rate("fast")


# ---- Duration ----------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "seconds", "ns", "text"), [
    ("10s", 10.0, 10_000_000_000, "10s"),
    ("500ms", 0.5, 500_000_000, "500ms"),
    ("250us", 250e-6, 250_000, "250us"),
    ("250\u00b5s", 250e-6, 250_000, "250us"),
    ("100ns", 100e-9, 100, "100ns"),
    ("2m", 120.0, 120_000_000_000, "2m"),
    ("2min", 120.0, 120_000_000_000, "2m"),
    ("1h", 3600.0, 3_600_000_000_000, "1h"),
    ("90s", 90.0, 90_000_000_000, "1.5m"),
    ("100s", 100.0, 100_000_000_000, "100s"),
    ("10", 10.0, 10_000_000_000, "10s"),
    (2.5, 2.5, 2_500_000_000, "2.5s"),
    (0.1, 0.1, 100_000_000, "100ms"),
    (0, 0.0, 0, "0s"),
    ("0ms", 0.0, 0, "0s"),
    ("1.5ns", 1.5e-9, 2, "1.5ns"),  # ns rounds half to even
    ("2.5ns", 2.5e-9, 2, "2.5ns"),
    (timedelta(milliseconds=1500), 1.5, 1_500_000_000, "1.5s"),
])
def test_durations(value: Any, seconds: float, ns: int, text: str) -> None:
    d = Duration(value)
    assert (d.seconds, d.ns, str(d)) == (seconds, ns, text)
    assert Duration(str(d)) == d == Duration(d) == as_duration(value)
    assert repr(d) == f"Duration({text!r})"


@given(st.floats(min_value=0, max_value=1e12), st.sampled_from(["", "s", "ms", "us", "ns", "m",
                                                                 "h"]))
def test_duration_round_trip(value: float, unit: str) -> None:
    d = Duration(f"{value!r}{unit}")
    assert Duration(str(d)) == d
    assert Duration(str(Duration(value))).seconds == value


def test_duration_order() -> None:
    assert Duration("1ms") < Duration("1s") < Duration("1m")
    assert max(Duration("59s"), Duration("1m")) == Duration(60)


@pytest.mark.parametrize(("value", "match"), [
    ("-1s", "duration '-1s' is negative"),
    (-0.5, "duration -0.5 is negative"),
    ("nan", "duration 'nan' is not finite"),
    (math.inf, "duration inf is not finite"),
    ("1e999999999s", "is too long"),
    ("soon", "duration 'soon': cannot parse"),
    ("10 parsecs", "duration '10 parsecs': unknown unit 'parsecs'"),
    ("1s@l1", "cannot parse"),
    (True, "duration True is a bool"),
    (None, "duration None is a NoneType"),
])
def test_bad_durations(value: Any, match: str) -> None:
    with raises(match):
        Duration(value)
    with raises(match.replace("duration", "timeout", 1)):
        as_duration(value, what="timeout")


# ---- Size --------------------------------------------------------------------------------

def test_sizes() -> None:
    assert Size(64).bytes == 64 and Size("1518B").bytes == 1518 and Size(" 1518 ").bytes == 1518
    assert Size(Size(9604)) == Size(9604) and as_size("64B") == Size(64)
    assert str(Size(64)) == "64B" and repr(Size(64)) == "Size(64)" and Size(str(Size(99))) == Size(99)
    assert int(Size(128)) == 128 and Size(64) < Size(65)
    assert Size(64).mean_frame_size == 64.0


@pytest.mark.parametrize(("value", "match"), [
    (63, "frame size 63 is outside 64..9604 bytes"),
    (9605, "frame size 9605 is outside"),
    ("60B", "frame size '60B' is outside"),
    (64.0, "frame size 64.0 is not a whole number of bytes"),
    (True, "frame size True is not a whole number"),
    ("64b", "frame size '64b': cannot parse"),
    ("9KB", "frame size '9KB': cannot parse"),
    (None, "frame size None is not a whole number"),
])
def test_bad_sizes(value: Any, match: str) -> None:
    with raises(match):
        Size(value)
    with raises(match.replace("frame size", "size", 1)):
        as_size(value, what="size")
