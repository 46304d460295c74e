"""The user's regression threshold (reports/threshold.py): how it is written, and how it
combines with the noise-band rule of a comparison."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.reports.bands import HIGHER, LOWER, Figure
from pytest_netload.reports.baseline import verdict
from pytest_netload.reports.threshold import (
    beyond_threshold,
    parse_threshold,
    relative_worsening,
    threshold_text,
)


@pytest.mark.parametrize(("text", "value"), [
    ("5%", 0.05), (" 5 % ", 0.05), ("0.5%", 0.005), ("12.5%", 0.125), (".5%", 0.005),
    ("0%", 0.0), ("1000%", 10.0), ("", None), ("none", None), ("None", None)])
def test_a_percentage_reads_as_a_share(text: str, value: float | None) -> None:
    assert parse_threshold(text) == value


@pytest.mark.parametrize(("text", "words"), [
    ("5", "has no % sign"), ("0.05", "has no % sign"), ("x%", "is not a percentage"),
    ("%", "is not a percentage"), ("5%%", "is not a percentage"), ("nan%", "not a percentage"),
    ("-5%", "cannot be negative"), ("-0.1%", "cannot be negative"),
    ("1001%", "more than 1000%"), ("five percent", "is not a percentage")])
def test_bad_input_says_what_to_write(text: str, words: str) -> None:
    with pytest.raises(NetloadConfigError) as info:
        parse_threshold(text)
    message = str(info.value)
    assert words in message and repr(text) in message and "such as 5%" in message


@given(st.floats(0, 1000, allow_nan=False).map(lambda x: round(x, 6)))
def test_every_percentage_round_trips(percent: float) -> None:
    value = parse_threshold(f"{percent}%")
    assert value == pytest.approx(percent / 100)
    assert threshold_text(value).endswith("%")


def test_worsening_is_signed_by_direction() -> None:
    assert relative_worsening(100.0, 90.0, higher_is_better=True) == pytest.approx(0.1)
    assert relative_worsening(100.0, 90.0, higher_is_better=False) == pytest.approx(-0.1)
    assert relative_worsening(0.0, 1e-6, higher_is_better=False) == math.inf
    assert relative_worsening(0.0, 0.0, higher_is_better=False) == 0.0
    assert beyond_threshold(100.0, 94.0, True, 0.05)
    assert not beyond_threshold(100.0, 96.0, True, 0.05)
    assert beyond_threshold(100.0, 106.0, False, 0.05)   # latency 6 % up
    assert beyond_threshold(100.0, 106.0, True, 0.05, worse=False)   # throughput 6 % up


def _fig(value: float, half: float, direction: str) -> Figure:
    return Figure(value, value - half, value + half, direction, "ns", "test band", half / 2)


bands = st.tuples(st.floats(1.0, 1e6), st.floats(0.0, 1e4))


@given(base=bands, cur=bands, direction=st.sampled_from([HIGHER, LOWER]),
       threshold=st.one_of(st.none(), st.floats(0.0, 2.0)))
def test_a_regression_needs_both_the_bands_apart_and_the_threshold_passed(
        base: tuple[float, float], cur: tuple[float, float], direction: str,
        threshold: float | None) -> None:
    b, c = _fig(*base, direction), _fig(*cur, direction)
    word, note = verdict(b, c, threshold)
    band_word, _ = verdict(b, c, None)
    worse = relative_worsening(b.value, c.value, direction == HIGHER)
    limit = threshold or 0.0
    if word == "regressed":
        assert band_word == "regressed" and worse > limit
    if band_word == "regressed" and worse > limit:
        assert word == "regressed"
    if word == "improved":
        assert band_word == "improved" and -worse > limit
    if word == "unchanged" and band_word != "unchanged":
        assert note.startswith(("worse beyond the noise", "better beyond the noise"))
    # a larger threshold never turns a figure into a regression
    if word != "regressed" and threshold is not None:
        assert verdict(b, c, threshold * 2 + 0.01)[0] != "regressed"


def test_the_threshold_spares_a_change_beyond_the_noise_but_small() -> None:
    base, cur = _fig(10_000.0, 10.0, LOWER), _fig(10_300.0, 10.0, LOWER)   # +3 %, bands apart
    assert verdict(base, cur) == ("regressed", "")
    within = "worse beyond the noise, but within the 5% threshold"
    assert verdict(base, cur, 0.05) == ("unchanged", within)
    assert verdict(base, cur, 0.02) == ("regressed", "")
    # a large change inside wide bands is still noise, whatever the threshold
    assert verdict(_fig(100.0, 30.0, LOWER), _fig(130.0, 30.0, LOWER), 0.0)[0] == "unchanged"
