"""How numbers read: times, packet rates, bit rates, counts, shares, loss ratios.

Every number a person reads (the terminal summary and progress line, assertion messages,
exception text, the ``netload`` command, baselines, trends and the HTML report) is
formatted here, so one figure reads the same wherever it is shown.

Measured figures: one rule of digits for every medium
-----------------------------------------------------

A measured figure is shown to a fixed number of significant digits, trailing zeros kept
(they say how precise the figure is, and columns line up):

- a time (:func:`time_ns`, :func:`time_s`): 3 significant digits, in the largest of s, ms,
  us, ns giving a value >= 1: ``812ns``, ``61.2us``, ``1.50ms``, ``2.00s``;
- a packet rate (:func:`rate_pps`) or a bit rate (:func:`bitrate`): 4 significant digits,
  in the largest of G, M, k or none: ``20.00 kpps``, ``1.490 Mpps``, ``672.0 Mbit/s``;
- a share (:func:`share`): 4 significant digits of a percentage: ``61.72%``;
- in the base unit (ns, pps, bit/s) never more than one decimal: ``5.0ns``, ``0.4ns``,
  ``12.0 pps`` (latencies are whole ns; a tenth says enough of a clock's resolution).

The value is rounded to its digits before the unit is chosen, so 999.96 ns reads
``1.00us``, never ``1000ns``. Zero is ``0`` in the base unit (``0ns``, ``0 pps``).
Negative values keep their sign (an IPDV of ``-250ns``).

A figure that is only a lower bound (a throughput the generator's ceiling bounded, the DUT
never saturated) is written with :func:`at_least`: ``>= 241.5 kpps`` (TEXT),
``≥ 241.5 kpps`` (HTML).

A relative change (:func:`change`) is a signed percentage with one decimal (``+10.0%``).
A count (:func:`count`) is a whole number with thousands separators, ``100,003``; a mean
count keeps 3 significant digits below 100 (``12.5``). A loss ratio (:func:`loss_ratio`) is
``0``, or in scientific notation with 3 significant digits below 1e-3 (``2.03e-05``), else a
share (``38.00%``).

Given figures: exact
--------------------

A figure the user gave or that must read back as the same float (a bound, a setting, a
confidence level, a tolerance) is written exactly, in its shortest form:

- :func:`time_ns_exact`: ``50us``, ``1.5ms``; it reads back as the same float (bounds);
- :func:`time_s_exact`: a duration as :class:`units.Duration` writes it, ``10s``, ``2m``
  (HTML: the shortest decimal in s, ms, µs or ns, ``60 s``);
- :func:`percent`: ``95%``, ``0.1%`` (to 15 significant digits, so 1 - 0.1 is ``90%``);
- :func:`loss_ratio_exact`: ``0``, ``1e-06``, ``0.5%``;
- :func:`rate_pps_exact`: ``41,601 pps``, whole pps with thousands separators: the rates
  of assertion messages and of the procedures' reasons, read as a bound is compared.

The two media
-------------

- **TEXT** (the default): the terminal, progress lines, assertion messages, exception text,
  logs, JUnit properties, the command line. ASCII only: ``us``, never ``µs``. A time is
  written as bounds and durations are typed, its unit right after the number (``61.2us``),
  and so is ``%`` (``61.72%``, ``95%``); every other unit follows one space
  (``1.490 Mpps``, ``672.0 Mbit/s``, ``1,234 frames``). Nothing to show: ``-``.
- **HTML** (the acceptance report): ``µs``; every unit, ``%`` too, follows one space
  (``61.2 µs``, ``1.490 Mpps``, ``61.72 %``), as the report's headings write "95 % CI".
  Nothing to show: an en dash ``–``.

The digits are the same in both media; only the unit spelling, the space before a unit,
the dash and the form of a given duration differ. A frame size is a name (``64B``,
``imix``, :func:`frame_size`), the same in both. None, NaN and infinities (and anything
not a real number) read as the medium's dash, except in :func:`time_ns_exact` and the TEXT
:func:`time_s_exact`, whose callers hold a checked float.

This module is of the base layer: it imports nothing of the package but units and errors.
"""

from __future__ import annotations

import math
import numbers
from decimal import Context, Decimal

from .errors import NetloadConfigError
from .units import Duration

__all__ = [
    "HTML",
    "TEXT",
    "at_least",
    "band",
    "bitrate",
    "change",
    "count",
    "dash",
    "figure",
    "frame_size",
    "loss_ratio",
    "loss_ratio_exact",
    "percent",
    "rate_pps",
    "rate_pps_exact",
    "share",
    "time_ns",
    "time_ns_exact",
    "time_s",
    "time_s_exact",
]

TEXT = "text"
HTML = "html"
_DASH = {TEXT: "-", HTML: "\u2013"}
_AT_LEAST = {TEXT: ">=", HTML: "\u2265"}

TIME_DIGITS = 3
RATE_DIGITS = 4
SHARE_DIGITS = 4
LOSS_SCIENTIFIC_BELOW = 1e-3

# (divisor, TEXT unit, HTML unit), largest first; the last is the base unit
_Units = tuple[tuple[float, str, str], ...]
_TIME_UNITS: _Units = ((1e9, "s", "s"), (1e6, "ms", "ms"), (1e3, "us", "\u00b5s"),
                       (1.0, "ns", "ns"))
_PPS_UNITS: _Units = ((1e9, "Gpps", "Gpps"), (1e6, "Mpps", "Mpps"), (1e3, "kpps", "kpps"),
                      (1.0, "pps", "pps"))
_BPS_UNITS: _Units = ((1e12, "Tbit/s", "Tbit/s"), (1e9, "Gbit/s", "Gbit/s"),
                      (1e6, "Mbit/s", "Mbit/s"), (1e3, "kbit/s", "kbit/s"),
                      (1.0, "bit/s", "bit/s"))
_BASE_DECIMALS = 1  # at most this many decimals in the base unit

_CTX = Context(prec=60)  # exact for the quotients of time_ns_exact and percent
_NS_EXACT = (("s", 9), ("ms", 6), ("us", 3), ("ns", 0))
_HTML_TIME_UNIT = {text: html for _, text, html in _TIME_UNITS}


def _medium(medium: str) -> str:
    if medium not in _DASH:
        raise NetloadConfigError(f"medium {medium!r}: give {TEXT!r} or {HTML!r}")
    return medium


def dash(medium: str = TEXT) -> str:
    """What a medium shows where there is no figure: ``-`` (TEXT) or ``–`` (HTML)."""
    return _DASH[_medium(medium)]


def _real(x: object) -> float | None:
    """``x`` as a finite float; None for None, NaN, infinities, bools and non-numbers."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return None
    value = float(x)
    return value if math.isfinite(value) else None


def _unit_sep(unit: str, medium: str, glued: bool) -> str:
    return unit if glued and medium == TEXT else f" {unit}"


def _scale(value: float, units: _Units, digits: int) -> tuple[float, str, str, int]:
    """(divisor, TEXT unit, HTML unit, decimals) for ``value`` at ``digits`` significant
    digits: the unit is chosen after rounding, so 999.96 ns is 1.00 us."""
    rounded = float(f"{value:.{digits - 1}e}")
    div, text, html = next((u for u in units if abs(rounded) >= u[0]), units[-1])
    if rounded == 0:
        return div, text, html, 0
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(rounded / div))))
    if div == units[-1][0]:
        decimals = min(decimals, _BASE_DECIMALS)
    return div, text, html, decimals


def _number(x: float, decimals: int) -> str:
    text = f"{x:.{decimals}f}"
    return text.lstrip("-") if float(text) == 0 else text


def _scaled(x: object, units: _Units, digits: int, medium: str, glued: bool) -> str:
    medium = _medium(medium)
    value = _real(x)
    if value is None:
        return _DASH[medium]
    div, text, html, decimals = _scale(value, units, digits)
    unit = html if medium == HTML else text
    return _number(value / div, decimals) + _unit_sep(unit, medium, glued)


# ---- measured figures --------------------------------------------------------------------


def time_ns(value_ns: object, medium: str = TEXT) -> str:
    """A time in ns, 3 significant digits: ``"812ns"``, ``"61.2us"``, ``"1.50ms"``,
    ``"2.00s"`` (TEXT); ``"61.2 µs"`` (HTML)."""
    return _scaled(value_ns, _TIME_UNITS, TIME_DIGITS, medium, glued=True)


def time_s(seconds: object, medium: str = TEXT) -> str:
    """A time in seconds, as :func:`time_ns` shows it: 0.184 -> ``"184ms"``."""
    value = _real(seconds)
    return time_ns(None if value is None else value * 1e9, medium)


def rate_pps(pps: object, medium: str = TEXT) -> str:
    """A packet rate, 4 significant digits: ``"146.4 kpps"``, ``"1.490 Mpps"``,
    ``"12.0 pps"``."""
    return _scaled(pps, _PPS_UNITS, RATE_DIGITS, medium, glued=False)


def bitrate(bps: object, medium: str = TEXT) -> str:
    """A bit rate, 4 significant digits: ``"672.0 Mbit/s"``, ``"10.00 Gbit/s"``."""
    return _scaled(bps, _BPS_UNITS, RATE_DIGITS, medium, glued=False)


def count(x: object, medium: str = TEXT) -> str:
    """A number of frames, packets or samples: ``"1,625,488"``; a mean of counts below 100
    that is not whole keeps 3 significant digits (``"12.5"``)."""
    medium = _medium(medium)
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return f"{int(x):,}"
    value = _real(x)
    if value is None:
        return _DASH[medium]
    return f"{value:,.0f}" if abs(value) >= 100 or value == int(value) else f"{value:.3g}"


def share(ratio: object, medium: str = TEXT) -> str:
    """A measured ratio as a percentage, 4 significant digits: 0.6171875 -> ``"61.72%"``
    (TEXT), ``"61.72 %"`` (HTML)."""
    medium = _medium(medium)
    value = _real(ratio)
    if value is None:
        return _DASH[medium]
    pct = value * 100
    rounded = float(f"{pct:.{SHARE_DIGITS - 1}e}")
    decimals = 0 if rounded == 0 else max(0, SHARE_DIGITS - 1 - math.floor(
        math.log10(abs(rounded))))
    return _number(pct, decimals) + _unit_sep("%", medium, glued=True)


def loss_ratio(ratio: object, medium: str = TEXT) -> str:
    """A loss ratio: ``"0"``, below 1e-3 scientific with 3 significant digits
    (``"2.03e-05"``), else a :func:`share` (``"38.00%"``)."""
    medium = _medium(medium)
    value = _real(ratio)
    if value is None:
        return _DASH[medium]
    if value == 0:
        return "0"
    if abs(value) < LOSS_SCIENTIFIC_BELOW:
        return f"{value:.2e}"
    return share(value, medium)


def change(ratio: object, medium: str = TEXT) -> str:
    """A relative change (current / baseline - 1) as a signed percentage with one decimal:
    ``"+10.0%"``, ``"-2.5%"``, ``"+0.0%"``; HTML ``"+10.0 %"``. Changes are read as a
    direction and a size, so they keep one decimal whatever their size."""
    medium = _medium(medium)
    value = _real(ratio)
    if value is None:
        return _DASH[medium]
    text = f"{value * 100:+.1f}"
    if float(text) == 0:
        text = "+0.0"
    return text + _unit_sep("%", medium, glued=True)


# ---- given figures, exact ----------------------------------------------------------------


def _exact_ns(d: Decimal) -> tuple[str, str]:
    """(number, unit) of an exact number of ns, in the largest of s, ms, us, ns giving a
    value >= 1: the decimal moved by a power of ten, never rounded."""
    for unit, exp in _NS_EXACT:
        q = _CTX.divide(d, Decimal(10) ** exp)
        if abs(q) >= 1 or exp == 0:
            q = q.normalize(_CTX)
            return (format(q, "f") if -7 < q.adjusted() < 16 else str(q)), unit
    raise AssertionError("unreachable")  # pragma: no cover


def time_ns_exact(value_ns: float) -> str:
    """``value_ns`` exactly, in the largest of s, ms, us, ns that gives a value >= 1.

    ``"50us"``, ``"1.5ms"``, ``"200ns"``, ``"0.5ns"``. The text is the shortest decimal of
    the float moved by a power of ten, so it reads back as the same float (bounds). TEXT
    only: the unit is ASCII and follows the number, as a bound is typed.
    """
    number, unit = _exact_ns(Decimal(repr(float(value_ns))))
    return number + unit


def time_s_exact(seconds: object, medium: str = TEXT) -> str:
    """A given time span in seconds exactly. TEXT: as :class:`units.Duration` writes it
    (``"10s"``, ``"250ms"``, ``"2m"``; a value no Duration holds, negative or NaN, as its
    repr with ``s``). HTML: the shortest decimal in s, ms, µs or ns (``"60 s"``,
    ``"250 ms"``); the dash for no figure."""
    medium = _medium(medium)
    if medium == TEXT:
        try:
            return str(Duration(seconds))  # type: ignore[arg-type]
        except NetloadConfigError:
            return f"{seconds!r}s"
    value = _real(seconds)
    if value is None:
        return _DASH[medium]
    number, unit = _exact_ns(_CTX.multiply(Decimal(repr(value)), Decimal(10) ** 9))
    return f"{number} {_HTML_TIME_UNIT[unit]}"


def loss_ratio_exact(ratio: object, medium: str = TEXT) -> str:
    """A given loss ratio (a tolerance, a goal, an ``at_most``) exactly, in the form of
    :func:`loss_ratio`: ``"0"``, below 1e-3 the shortest scientific form (``"1e-06"``,
    ``"2.5e-05"``), else a :func:`percent` (``"0.5%"``)."""
    medium = _medium(medium)
    value = _real(ratio)
    if value is None:
        return _DASH[medium]
    if value == 0:
        return "0"
    if abs(value) >= LOSS_SCIENTIFIC_BELOW:
        return percent(value, medium)
    d = Decimal(repr(value)).normalize(_CTX)
    sign, digits, _ = d.as_tuple()
    text = str(digits[0]) + ("." + "".join(map(str, digits[1:])) if len(digits) > 1 else "")
    return f"{'-' if sign else ''}{text}e{d.adjusted():+03d}"


def rate_pps_exact(pps: object) -> str:
    """A packet rate in whole pps with thousands separators: ``"41,601 pps"`` (below 100
    pps, 4 significant digits: ``"12.5 pps"``). The form assertion messages and the
    procedures' reasons use, so a rate reads as the number a bound is checked against. TEXT;
    ``-`` for no figure."""
    value = _real(pps)
    if value is None:
        return _DASH[TEXT]
    return f"{value:,.0f} pps" if abs(value) >= 100 else f"{value:.4g} pps"


def percent(ratio: object, medium: str = TEXT) -> str:
    """A given share (a confidence, a tolerance, a load step) as a percentage in its
    shortest decimal to 15 significant digits: 0.95 -> ``"95%"``, 0.001 -> ``"0.1%"``,
    0.07 -> ``"7%"``, and 1 - 0.1 -> ``"90%"`` (float noise does not show); HTML
    ``"95 %"``."""
    medium = _medium(medium)
    value = _real(ratio)
    if value is None:
        return _DASH[medium]
    d = Decimal(f"{value * 100:.15g}").normalize(_CTX)
    text = format(d, "f") if -7 < d.adjusted() < 16 else str(d)
    return text + _unit_sep("%", medium, glued=True)


# ---- labels and compound figures ---------------------------------------------------------


def frame_size(size: object, medium: str = TEXT) -> str:
    """A frame size as a name: ``"64B"`` for bytes, a mix by its name (``"imix"``), the
    medium's dash for None."""
    if size is None:
        return dash(medium)
    return f"{size}B" if isinstance(size, int) and not isinstance(size, bool) else str(size)


def at_least(figure: str, medium: str = TEXT) -> str:
    """A formatted figure that is only a lower bound: ``">= 241.5 kpps"`` (TEXT, ASCII),
    ``"≥ 241.5 kpps"`` (HTML); the medium's dash stays a dash."""
    medium = _medium(medium)
    if figure == _DASH[medium]:
        return figure
    return f"{_AT_LEAST[medium]} {figure}"


_FIGURE_UNITS = ("ns", "s", "pps", "bit/s", "frames", "addresses", "ratio")


def figure(value: object, unit: str, medium: str = TEXT) -> str:
    """A measured figure by its unit ("ns", "s", "pps", "bit/s", "frames", "addresses" or
    "ratio", as baselines and trends keep it): :func:`time_ns`, :func:`time_s`,
    :func:`rate_pps`, :func:`bitrate`, :func:`count` with " frames" or " addresses", or
    :func:`loss_ratio` (a loss or an availability: "0", "2.03e-05", "99.97%")."""
    if unit == "ns":
        return time_ns(value, medium)
    if unit == "s":
        return time_s(value, medium)
    if unit == "pps":
        return rate_pps(value, medium)
    if unit == "bit/s":
        return bitrate(value, medium)
    if unit in ("frames", "addresses"):
        text = count(value, medium)
        return text if text == dash(medium) else f"{text} {unit}"
    if unit == "ratio":
        return loss_ratio(value, medium)
    raise NetloadConfigError(f"unit {unit!r}: give one of {', '.join(_FIGURE_UNITS)}")


def band(value: object, low: object, high: object, unit: str, medium: str = TEXT) -> str:
    """A figure with its interval, the ends in the figure's unit and decimals:
    ``"61.2us [59.8, 63.1]"``, ``"500.0 kpps [500.0, inf)"`` (open above),
    ``"13.0us (no band)"`` (open both ways). ``unit`` as for :func:`figure`."""
    head = figure(value, unit, medium)
    v = _real(value)
    if v is None:
        return head
    if unit in ("frames", "addresses", "ratio"):
        div, decimals = 1.0, 0
    else:
        units, digits, scale = {"ns": (_TIME_UNITS, TIME_DIGITS, 1.0),
                                "s": (_TIME_UNITS, TIME_DIGITS, 1e9),
                                "pps": (_PPS_UNITS, RATE_DIGITS, 1.0),
                                "bit/s": (_BPS_UNITS, RATE_DIGITS, 1.0)}[unit]
        div, _, _, decimals = _scale(v * scale, units, digits)
        div /= scale

    def end(x: object) -> str:
        if isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isinf(float(x)):
            return "inf" if float(x) > 0 else "-inf"
        e = _real(x)
        if e is None:
            return "?"
        if unit == "ratio":
            return loss_ratio(e, medium)
        return f"{e / div:,.{decimals}f}" if unit in ("frames", "addresses") else \
            _number(e / div, decimals)

    lo, hi = end(low), end(high)
    if lo == "-inf" and hi == "inf":
        return f"{head} (no band)"
    return f"{head} {'(' if lo == '-inf' else '['}{lo}, {hi}{')' if hi == 'inf' else ']'}"
