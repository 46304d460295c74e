"""Unit tests of pytest_netload.format: one rule per medium for every number people read."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_netload import format as fmt
from pytest_netload.errors import NetloadConfigError
from pytest_netload.format import HTML, TEXT

NAN, INF = float("nan"), float("inf")
NOTHING = [None, NAN, INF, -INF, "12", True]  # each reads as the medium's dash


@pytest.mark.parametrize(("value_ns", "text", "html"), [
    (0, "0ns", "0 ns"), (0.0, "0ns", "0 ns"), (-0.0, "0ns", "0 ns"),
    (0.4, "0.4ns", "0.4 ns"), (0.41666, "0.4ns", "0.4 ns"),       # one decimal in ns
    (5, "5.0ns", "5.0 ns"), (61.5, "61.5ns", "61.5 ns"), (812, "812ns", "812 ns"),
    (812.4, "812ns", "812 ns"), (999.4, "999ns", "999 ns"),
    (999.96, "1.00us", "1.00 \u00b5s"),                            # rounded, then scaled
    (1000, "1.00us", "1.00 \u00b5s"), (3300, "3.30us", "3.30 \u00b5s"),
    (61_234, "61.2us", "61.2 \u00b5s"), (75_007.5, "75.0us", "75.0 \u00b5s"),
    (1.5e6, "1.50ms", "1.50 ms"), (8_044_543.5, "8.04ms", "8.04 ms"),
    (2e9, "2.00s", "2.00 s"), (5e12, "5000s", "5000 s"),
    (-250, "-250ns", "-250 ns"), (-61_234, "-61.2us", "-61.2 \u00b5s"),
])
def test_time_ns(value_ns: float, text: str, html: str) -> None:
    assert fmt.time_ns(value_ns) == fmt.time_ns(value_ns, TEXT) == text
    assert fmt.time_ns(value_ns, HTML) == html
    assert text.isascii()


@pytest.mark.parametrize(("seconds", "text", "html"), [
    (0.184, "184ms", "184 ms"), (10, "10.0s", "10.0 s"), (2.5e-6, "2.50us", "2.50 \u00b5s"),
    (0, "0ns", "0 ns"),
])
def test_time_s(seconds: float, text: str, html: str) -> None:
    assert fmt.time_s(seconds) == text and fmt.time_s(seconds, HTML) == html


@pytest.mark.parametrize(("pps", "text", "html"), [
    (0, "0 pps", "0 pps"), (12, "12.0 pps", "12.0 pps"), (812, "812.0 pps", "812.0 pps"),
    (20_000, "20.00 kpps", "20.00 kpps"), (146_447.9, "146.4 kpps", "146.4 kpps"),
    (999_960, "1.000 Mpps", "1.000 Mpps"), (1.49e6, "1.490 Mpps", "1.490 Mpps"),
    (9_184_337.8, "9.184 Mpps", "9.184 Mpps"), (14_880_952, "14.88 Mpps", "14.88 Mpps"),
    (2.5e9, "2.500 Gpps", "2.500 Gpps"),
])
def test_rate_pps(pps: float, text: str, html: str) -> None:
    assert fmt.rate_pps(pps) == text and fmt.rate_pps(pps, HTML) == html


@pytest.mark.parametrize(("pps", "text"), [
    (41_601, "41,601 pps"), (1_000_000, "1,000,000 pps"), (146_447.9, "146,448 pps"),
    (100, "100 pps"), (12.5, "12.5 pps"), (0, "0 pps"), (None, "-"), (NAN, "-"),
])
def test_rate_pps_exact(pps: Any, text: str) -> None:
    assert fmt.rate_pps_exact(pps) == text


@pytest.mark.parametrize(("bps", "text", "html"), [
    (0, "0 bit/s", "0 bit/s"), (512, "512.0 bit/s", "512.0 bit/s"),
    (4_315_000, "4.315 Mbit/s", "4.315 Mbit/s"), (98_413_001.5, "98.41 Mbit/s", "98.41 Mbit/s"),
    (672e6, "672.0 Mbit/s", "672.0 Mbit/s"), (1e10, "10.00 Gbit/s", "10.00 Gbit/s"),
    (4e12, "4.000 Tbit/s", "4.000 Tbit/s"),
])
def test_bitrate(bps: float, text: str, html: str) -> None:
    assert fmt.bitrate(bps) == text and fmt.bitrate(bps, HTML) == html


@pytest.mark.parametrize(("x", "text"), [
    (0, "0"), (1000, "1,000"), (1_625_488, "1,625,488"), (58127.0, "58,127"),
    (12.5, "12.5"), (12.0, "12"), (99.94, "99.9"), (1234.5, "1,234"), (-3, "-3"),
])
def test_count(x: float, text: str) -> None:
    assert fmt.count(x) == fmt.count(x, HTML) == text


@pytest.mark.parametrize(("ratio", "text", "html"), [
    (0, "0%", "0 %"), (0.6171875, "61.72%", "61.72 %"), (1, "100.0%", "100.0 %"),
    (0.38, "38.00%", "38.00 %"), (0.00123, "0.1230%", "0.1230 %"), (0.0019, "0.1900%", "0.1900 %"),
])
def test_share(ratio: float, text: str, html: str) -> None:
    assert fmt.share(ratio) == text and fmt.share(ratio, HTML) == html


@pytest.mark.parametrize(("ratio", "text", "html"), [
    (0, "0", "0"), (2.03e-05, "2.03e-05", "2.03e-05"), (1.2e-5, "1.20e-05", "1.20e-05"),
    (0.00099, "9.90e-04", "9.90e-04"), (0.001, "0.1000%", "0.1000 %"),
    (0.38, "38.00%", "38.00 %"), (1, "100.0%", "100.0 %"),
])
def test_loss_ratio(ratio: float, text: str, html: str) -> None:
    assert fmt.loss_ratio(ratio) == text and fmt.loss_ratio(ratio, HTML) == html


@pytest.mark.parametrize(("ratio", "text", "html"), [
    (0.1, "+10.0%", "+10.0 %"), (-0.025, "-2.5%", "-2.5 %"), (0, "+0.0%", "+0.0 %"),
    (-0.0001, "+0.0%", "+0.0 %"), (1.5, "+150.0%", "+150.0 %"),
])
def test_change(ratio: float, text: str, html: str) -> None:
    assert fmt.change(ratio) == text and fmt.change(ratio, HTML) == html


@pytest.mark.parametrize(("ratio", "text", "html"), [
    (0, "0", "0"), (1e-6, "1e-06", "1e-06"), (2.5e-5, "2.5e-05", "2.5e-05"),
    (1e-4, "1e-04", "1e-04"), (1.23456789e-7, "1.23456789e-07", "1.23456789e-07"),
    (0.001, "0.1%", "0.1 %"), (0.005, "0.5%", "0.5 %"),
])
def test_loss_ratio_exact(ratio: float, text: str, html: str) -> None:
    assert fmt.loss_ratio_exact(ratio) == text and fmt.loss_ratio_exact(ratio, HTML) == html


@given(st.floats(min_value=1e-300, max_value=1e-3, exclude_max=True))
def test_loss_ratio_exact_reads_back_as_the_same_float(ratio: float) -> None:
    assert float(fmt.loss_ratio_exact(ratio)) == ratio


@pytest.mark.parametrize(("ratio", "text", "html"), [
    (0.95, "95%", "95 %"), (0.999, "99.9%", "99.9 %"), (0.001, "0.1%", "0.1 %"),
    (0.07, "7%", "7 %"), (0.005, "0.5%", "0.5 %"), (1, "100%", "100 %"), (0, "0%", "0 %"),
    (1 - 0.1, "90%", "90 %"), (0.123456789, "12.3456789%", "12.3456789 %"),
])
def test_percent(ratio: float, text: str, html: str) -> None:
    assert fmt.percent(ratio) == text and fmt.percent(ratio, HTML) == html


@pytest.mark.parametrize(("value_ns", "text"), [
    (0.0, "0ns"), (0.5, "0.5ns"), (1.0, "1ns"), (999.0, "999ns"), (1000.0, "1us"),
    (1500.0, "1.5us"), (50_000.0, "50us"), (1_000_000.0, "1ms"), (2.5e9, "2.5s"),
    (1e30, "1E+21s"), (1e-9, "1E-9ns"),
])
def test_time_ns_exact(value_ns: float, text: str) -> None:
    assert fmt.time_ns_exact(value_ns) == text


_NS_PER_UNIT = {"ns": 0, "us": 3, "ms": 6, "s": 9}


def _read_back(text: str) -> float:
    unit = next(u for u in ("ns", "us", "ms", "s") if text.endswith(u))
    return float(Decimal(text.removesuffix(unit)).scaleb(_NS_PER_UNIT[unit]))


@given(st.floats(min_value=0, max_value=1e300, allow_nan=False, allow_infinity=False))
def test_time_ns_exact_reads_back_as_the_same_float(value_ns: float) -> None:
    text = fmt.time_ns_exact(value_ns)
    assert text.isascii()
    assert _read_back(text) == value_ns


@given(st.floats(min_value=0, max_value=1e300, allow_nan=False, allow_infinity=False))
def test_time_ns_exact_is_what_bounds_parse(value_ns: float) -> None:
    from pytest_netload.verdicts.bounds import format_ns, parse_time_bound

    assert format_ns(value_ns) == fmt.time_ns_exact(value_ns)
    assert parse_time_bound(f"<= {fmt.time_ns_exact(value_ns)}").value == value_ns


@given(st.floats(min_value=-1e15, max_value=1e15, allow_nan=False, allow_infinity=False))
def test_time_ns_is_the_value_to_three_digits(value_ns: float) -> None:
    text = fmt.time_ns(value_ns)
    assert text.isascii()
    if float(text.rstrip("nsum")) != 0:
        assert text.startswith("-") == (value_ns < 0)
    # 3 significant digits: within half a unit of the third; in ns within 0.05 (one decimal)
    assert math.isclose(_read_back(text.lstrip("-")), abs(value_ns), rel_tol=5e-3,
                        abs_tol=0.0501)


@pytest.mark.parametrize("value", NOTHING)
@pytest.mark.parametrize("function", [fmt.time_ns, fmt.time_s, fmt.rate_pps, fmt.bitrate,
                                      fmt.count, fmt.share, fmt.loss_ratio, fmt.percent,
                                      fmt.loss_ratio_exact, fmt.change])
def test_nothing_reads_as_the_dash(function: Any, value: Any) -> None:
    assert function(value) == "-"
    assert function(value, HTML) == "\u2013"


def test_dash_and_frame_size() -> None:
    assert fmt.dash() == "-" and fmt.dash(HTML) == "\u2013"
    assert fmt.frame_size(64) == fmt.frame_size(64, HTML) == "64B"
    assert fmt.frame_size("imix") == "imix"
    assert fmt.frame_size(None) == "-" and fmt.frame_size(None, HTML) == "\u2013"


@pytest.mark.parametrize(("args", "text"), [
    ((61_234, 59_800, 63_100, "ns"), "61.2us [59.8, 63.1]"),
    ((13_000, 12_600, 13_400, "ns"), "13.0us [12.6, 13.4]"),
    ((500e3, 500e3, 502e3, "pps"), "500.0 kpps [500.0, 502.0]"),
    ((200e3, 200e3, INF, "pps"), "200.0 kpps [200.0, inf)"),
    ((200e3, -INF, 210e3, "pps"), "200.0 kpps (-inf, 210.0]"),
    ((13_000, -INF, INF, "ns"), "13.0us (no band)"),
    ((1234, 1200, 1300, "frames"), "1,234 frames [1,200, 1,300]"),
    ((0.184, 0.18, 0.19, "s"), "184ms [180, 190]"),
    ((None, 1, 2, "ns"), "-"),
])
def test_band(args: tuple[Any, ...], text: str) -> None:
    assert fmt.band(*args) == text


def test_band_in_html() -> None:
    assert fmt.band(75_007.5, 74_800, 75_300, "ns", HTML) == "75.0 \u00b5s [74.8, 75.3]"


@pytest.mark.parametrize(("unit", "text"), [
    ("ns", "61.2us"), ("s", "61234s"), ("pps", "61.23 kpps"), ("bit/s", "61.23 kbit/s"),
    ("frames", "61,234 frames"),
])
def test_figure(unit: str, text: str) -> None:
    assert fmt.figure(61_234, unit) == text


def test_bad_medium_and_unit() -> None:
    with pytest.raises(NetloadConfigError, match="medium 'md': give 'text' or 'html'"):
        fmt.time_ns(1.0, "md")
    with pytest.raises(NetloadConfigError, match="unit 'kg'"):
        fmt.figure(1.0, "kg")


def test_text_is_ascii() -> None:
    for value in (0.5, 61_234, 1.5e6, 2e9):
        assert fmt.time_ns(value).isascii() and fmt.band(value, value, value, "ns").isascii()
