"""Unit tests of pytest_netload.verdicts.bounds: parsing time and rate bounds."""

from __future__ import annotations

import math
from datetime import timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.units import Duration, Rate
from pytest_netload.verdicts.bounds import (
    OPERATORS,
    Bound,
    format_ns,
    parse_rate_bound,
    parse_time_bound,
)

# ---- time bounds ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "op", "value_ns", "canonical"),
    [
        ("< 50us", "<", 50_000.0, "< 50us"),
        ("<=1.5ms", "<=", 1_500_000.0, "<= 1.5ms"),
        ("< 2 us", "<", 2_000.0, "< 2us"),
        ("<200ns", "<", 200.0, "< 200ns"),
        ("50us", "<=", 50_000.0, "<= 50us"),
        ("  >= 3ns ", ">=", 3.0, ">= 3ns"),
        ("> 0.5ns", ">", 0.5, "> 0.5ns"),
        ("<= 1500us", "<=", 1_500_000.0, "<= 1.5ms"),
        ("< 1e3us", "<", 1_000_000.0, "< 1ms"),
        ("< 2s", "<", 2e9, "< 2s"),
        ("< 7\u00b5s", "<", 7_000.0, "< 7us"),
        ("< 7\u03bcs", "<", 7_000.0, "< 7us"),
        ("\u2264 1ms", "<=", 1e6, "<= 1ms"),
        ("\u2265 1ms", ">=", 1e6, ">= 1ms"),
        ("< 0ns", "<", 0.0, "< 0ns"),
        ("<.5us", "<", 500.0, "< 500ns"),
    ],
)
def test_time_bound_strings(text: str, op: str, value_ns: float, canonical: str) -> None:
    bound = parse_time_bound(text, name="p99")
    assert (bound.op, bound.value, bound.text, bound.rate) == (op, value_ns, canonical, None)
    assert str(bound) == canonical
    assert parse_time_bound(bound.text) == bound


def test_time_bound_is_decimal_exact() -> None:
    # 0.1ms in binary floating point would be 100000.00000000001 ns
    assert parse_time_bound("< 0.1ms").value == 100_000.0
    assert parse_time_bound("< 1.1us").value == 1_100.0


@pytest.mark.parametrize(
    ("value", "value_ns", "text"),
    [
        (50_000, 50_000.0, "<= 50us"),
        (1.5, 1.5, "<= 1.5ns"),
        (0, 0.0, "<= 0ns"),
        (Duration("50us"), 50_000.0, "<= 50us"),
        (Duration("1.5ms"), 1_500_000.0, "<= 1.5ms"),
        (timedelta(microseconds=20), 20_000.0, "<= 20us"),
    ],
)
def test_time_bound_numbers_and_durations(value: object, value_ns: float, text: str) -> None:
    bound = parse_time_bound(value)
    assert (bound.op, bound.value, bound.text) == ("<=", value_ns, text)


def test_time_bound_default_op_and_passthrough() -> None:
    assert parse_time_bound("50us", default_op=">").op == ">"
    assert parse_time_bound(5, default_op=">=").text == ">= 5ns"
    bound = parse_time_bound("< 1us")
    assert parse_time_bound(bound) is bound


@pytest.mark.parametrize(
    ("op", "x", "held"),
    [
        ("<", 49_999.0, True), ("<", 50_000.0, False), ("<", 50_001.0, False),
        ("<=", 49_999.0, True), ("<=", 50_000.0, True), ("<=", 50_001.0, False),
        (">", 49_999.0, False), (">", 50_000.0, False), (">", 50_001.0, True),
        (">=", 49_999.0, False), (">=", 50_000.0, True), (">=", 50_001.0, True),
    ],
)
def test_holds(op: str, x: float, held: bool) -> None:
    bound = parse_time_bound(f"{op} 50us")
    assert bound.holds(x) is held
    assert bound.holds(math.nan) is False
    assert bound.is_upper is (op in ("<", "<="))


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("fast", "p99='fast' is not a bound; write '< 50us', '<= 1ms' or a number of ns"),
        ("", "p99='' is not a bound"),
        ("<", "p99='<' is not a bound"),
        ("< 50", "p99='< 50' has no unit; write e.g. '< 50ns'"),
        ("50", "p99='50' has no unit"),
        ("< 50xs", "p99='< 50xs': unknown time unit 'xs'; use ns, us, ms or s"),
        ("< 50min", "unknown time unit 'min'"),
        ("< -5us", "p99='< -5us' is negative"),
        ("< 1e999999999s", "is too large"),
        ("<< 5us", "is not a bound"),
        ("< 5 us us", "is not a bound"),
        (-1, "p99=-1 is negative"),
        (math.nan, "p99=nan is not finite"),
        (math.inf, "p99=inf is not finite"),
        (True, "p99=True is not a bound"),
        (None, "p99=None is not a bound"),
        ([50], "p99=[50] is not a bound"),
        (Rate("1Mpps"), "p99=Rate('1Mpps') is not a bound"),
    ],
)
def test_time_bound_errors(value: object, fragment: str) -> None:
    with pytest.raises(NetloadConfigError) as info:
        parse_time_bound(value, name="p99")
    assert fragment in str(info.value)


def test_time_bound_operator_limits() -> None:
    with pytest.raises(NetloadConfigError, match=r"x='> 5us': operator '>' does not apply"):
        parse_time_bound("> 5us", name="x", ops=("<", "<="))
    with pytest.raises(NetloadConfigError, match="rate bound, not a time bound"):
        parse_time_bound(parse_rate_bound("1Mpps"), name="x")


def test_bound_rejects_unknown_operator() -> None:
    with pytest.raises(NetloadConfigError, match="bound operator '=='"):
        Bound("==", 1.0, "== 1ns")


@pytest.mark.parametrize(
    ("value_ns", "text"),
    [
        (0.0, "0ns"), (0.5, "0.5ns"), (1.0, "1ns"), (999.0, "999ns"), (1000.0, "1us"),
        (1500.0, "1.5us"), (50_000.0, "50us"), (1_000_000.0, "1ms"), (2.5e9, "2.5s"),
        (1e30, "1E+21s"), (1e-9, "1E-9ns"),
    ],
)
def test_format_ns(value_ns: float, text: str) -> None:
    assert format_ns(value_ns) == text
    assert parse_time_bound(f"< {text}").value == value_ns


_UNIT_NS = {"ns": 1, "us": 10**3, "\u00b5s": 10**3, "ms": 10**6, "s": 10**9}


@given(
    op=st.sampled_from([*OPERATORS, "\u2264", "\u2265", ""]),
    number=st.decimals(min_value=0, max_value=10**12, places=6, allow_nan=False,
                       allow_infinity=False),
    unit=st.sampled_from(sorted(_UNIT_NS)),
    space1=st.sampled_from(["", " ", "  "]),
    space2=st.sampled_from(["", " "]),
)
def test_time_bound_round_trip(op: str, number: Decimal, unit: str, space1: str,
                               space2: str) -> None:
    bound = parse_time_bound(f"{op}{space1}{number}{space2}{unit}")
    assert bound.op == {"": "<=", "\u2264": "<=", "\u2265": ">="}.get(op, op)
    assert bound.value == float(number * _UNIT_NS[unit])
    assert parse_time_bound(bound.text) == bound
    assert parse_time_bound(str(bound)) == bound
    if bound.op == "<=":
        assert parse_time_bound(bound.value) == bound
    assert bound.holds(bound.value) is (bound.op in ("<=", ">="))


@given(st.floats(min_value=0, max_value=1e300, allow_nan=False, allow_infinity=False),
       st.sampled_from(OPERATORS))
def test_time_bound_round_trip_of_any_float(value_ns: float, op: str) -> None:
    bound = parse_time_bound(value_ns, default_op=op)
    assert bound.value == value_ns
    assert parse_time_bound(bound.text) == bound


# ---- rate bounds ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "op", "rate", "canonical"),
    [
        ("> 1Mpps", ">", Rate("1Mpps"), "> 1Mpps"),
        (">= 250kpps", ">=", Rate("250kpps"), ">= 250kpps"),
        (">=250kpps", ">=", Rate("250kpps"), ">= 250kpps"),
        ("250kpps", ">=", Rate("250kpps"), ">= 250kpps"),
        ("95%", ">=", Rate("95%"), ">= 95%"),
        (">= 9.5Gbit/s@l1", ">=", Rate("9.5Gbit/s@l1"), ">= 9.5Gbit/s@l1"),
        ("1Gbit/s", ">=", Rate("1Gbit/s@l2"), ">= 1Gbit/s@l2"),
        ("\u2265 1Mpps", ">=", Rate("1Mpps"), ">= 1Mpps"),
        ("< 1Mpps", "<", Rate("1Mpps"), "< 1Mpps"),
    ],
)
def test_rate_bound_strings(text: str, op: str, rate: Rate, canonical: str) -> None:
    bound = parse_rate_bound(text, name="at_least")
    assert (bound.op, bound.rate, bound.value, bound.text) == (op, rate, rate.value, canonical)
    assert parse_rate_bound(bound.text) == bound


def test_rate_bound_from_rate_objects_means_at_least() -> None:
    bound = parse_rate_bound(Rate("250kpps"))
    assert (bound.op, bound.rate, bound.text) == (">=", Rate("250kpps"), ">= 250kpps")
    kept = parse_rate_bound(Rate(1e9, "bit/s", layer="l2"), layer="l1")
    assert kept.rate == Rate("1Gbit/s@l2")  # a Rate keeps its own layer
    assert parse_rate_bound(bound) is bound


def test_rate_bound_layer_applies_to_bit_rates_without_one() -> None:
    assert parse_rate_bound("1Gbit/s", layer="l1").rate == Rate("1Gbit/s@l1")
    assert parse_rate_bound("1Gbit/s@l2", layer="l1").rate == Rate("1Gbit/s@l2")
    assert parse_rate_bound("1Mpps", layer="l1").rate == Rate("1Mpps")


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("fast", "at_least='fast' is not a rate bound"),
        ("", "at_least='' is not a rate bound"),
        (">=", "at_least='>=' is not a rate bound"),
        (">= 250kpp", "unknown unit 'kpp'"),
        (">= 250KPPS", "did you mean 'kpps'"),
        (">= 0pps", "not above zero"),
        (">= 101%", "exceeds 100%"),
        (250_000, "at_least=250000 is not a rate bound"),
        (None, "at_least=None is not a rate bound"),
        (parse_time_bound("< 5us"), "time bound, not a rate bound"),
    ],
)
def test_rate_bound_errors(value: object, fragment: str) -> None:
    with pytest.raises(NetloadConfigError) as info:
        parse_rate_bound(value, name="at_least")
    assert fragment in str(info.value)
    assert "'>= 250kpps'" in str(info.value)


def test_rate_bound_operator_limits_and_layer() -> None:
    with pytest.raises(NetloadConfigError, match=r"operator '<' does not apply.*'>' or '>='"):
        parse_rate_bound("< 1Mpps", name="at_least", ops=(">", ">="))
    with pytest.raises(NetloadConfigError, match="layer 'l3' is unknown"):
        parse_rate_bound("1Mpps", name="at_least", layer="l3")


@given(
    value=st.floats(min_value=1e-3, max_value=1e13, allow_nan=False, allow_infinity=False),
    unit=st.sampled_from(["pps", "bit/s", "%"]),
    layer=st.sampled_from(["l1", "l2", "l2-nofcs"]),
    op=st.sampled_from([*OPERATORS, ""]),
)
def test_rate_bound_round_trip(value: float, unit: str, layer: str, op: str) -> None:
    if unit == "%":
        value = min(value, 100.0)
    rate = Rate(value, unit, layer=layer if unit == "bit/s" else None)
    bound = parse_rate_bound(f"{op} {rate}")
    assert bound.op == (op or ">=")
    assert bound.rate == rate and bound.value == rate.value
    assert parse_rate_bound(bound.text) == bound
    assert parse_rate_bound(rate, default_op=bound.op) == bound
