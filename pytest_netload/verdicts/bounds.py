"""Bounds the assertion helpers check against: ``"< 50us"``, ``"<= 1.5ms"``, ``">= 250kpps"``.

A bound is a comparison operator and a value. Time bounds are held in ns, exactly as written:
``"< 1.5ms"`` is 1,500,000 ns, computed in decimal and rounded to a float once. Rate bounds keep
their :class:`~pytest_netload.units.Rate` (a packet rate, a bit rate at a layer, or a share of
the line rate), since comparing a measured pps with a bit rate needs a frame size.

Accepted forms:

- time: ``"< 50us"``, ``"<=1.5ms"``, ``"< 2 us"``, ``"<200ns"``, ``"50us"`` (no operator:
  ``<=``), a plain number of ns (``50_000`` is ``<= 50us``), a :class:`units.Duration` or a
  ``datetime.timedelta`` (``<=``). Units: ns, us (or µs), ms, s. A string needs a unit.
- rate: ``"> 1Mpps"``, ``">= 250kpps"``, ``">= 9.5Gbit/s@l1"``, ``"95%"``, ``"250kpps"``
  (no operator: ``>=``, "at least") or a :class:`units.Rate` (``>=``).

Operators are ``<``, ``<=``, ``>``, ``>=`` (``≤`` and ``≥`` read as ``<=`` and ``>=``).
``str(bound)`` is a canonical text that parses back to an equal bound.
"""

from __future__ import annotations

import math
import numbers
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Context, Decimal, InvalidOperation

from ..errors import NetloadConfigError
from ..format import time_ns_exact
from ..units import Duration, Rate, as_rate, check_layer

__all__ = [
    "OPERATORS",
    "Bound",
    "format_ns",
    "parse_rate_bound",
    "parse_time_bound",
]

#: The comparison operators a bound may use.
OPERATORS: tuple[str, ...] = ("<", "<=", ">", ">=")
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}
_OP_ALIASES = {"\u2264": "<=", "\u2265": ">="}
_OP_TEXT = re.compile(r"\s*(<=|>=|<|>|\u2264|\u2265)?\s*(.*?)\s*", re.DOTALL)

_CTX = Context(prec=60)  # exact for the products and quotients here
_TIME_QUANTITY = re.compile(
    r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\s\d.+-][^\s]*)?")
# unit -> ns per unit (format.time_ns_exact writes the largest giving a value >= 1)
_NS_PER_UNIT = {
    "ns": Decimal(1), "us": Decimal(10) ** 3, "\u00b5s": Decimal(10) ** 3,
    "\u03bcs": Decimal(10) ** 3, "ms": Decimal(10) ** 6, "s": Decimal(10) ** 9,
}
_TIME_FORMS = "write '< 50us', '<= 1ms' or a number of ns"
_RATE_FORMS = "write '>= 250kpps', '> 1Mpps', '>= 9.5Gbit/s@l1', '95%' or a Rate"


@dataclass(frozen=True)
class Bound:
    """``op`` (one of OPERATORS) and ``value``: ns for a time bound; for a rate bound the
    rate's own value (pps, bit/s or percent), with the Rate in ``rate``.

    ``text`` is the canonical form, e.g. ``"< 50us"`` or ``">= 250kpps"``; parsing it gives
    back an equal Bound.
    """

    op: str
    value: float
    text: str
    rate: Rate | None = None

    def __post_init__(self) -> None:
        if self.op not in _COMPARE:
            raise NetloadConfigError(f"bound operator {self.op!r}: use one of "
                                     f"{', '.join(OPERATORS)}")

    def holds(self, x: float) -> bool:
        """``x op value``: True when ``x`` meets the bound (never for NaN)."""
        return compare(x, self.op, self.value)

    @property
    def is_upper(self) -> bool:
        """True for ``<`` and ``<=``: the bound caps the value from above."""
        return self.op in ("<", "<=")

    def __str__(self) -> str:
        return self.text


def compare(x: float, op: str, value: float) -> bool:
    """``x op value`` for an operator of OPERATORS."""
    return bool(_COMPARE[op](x, value))


def _is_real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


#: ``value_ns`` exactly, in the largest of s, ms, us, ns giving a value >= 1 (``"50us"``,
#: ``"1.5ms"``): it reads back as the same float. The one implementation is format.py's.
format_ns = time_ns_exact


def _op_and_rest(x: str) -> tuple[str | None, str]:
    m = _OP_TEXT.fullmatch(x)
    assert m is not None  # the pattern matches every string
    op = m.group(1)
    return _OP_ALIASES.get(op, op) if op is not None else None, m.group(2)


def _time_bound(op: str, value_ns: float) -> Bound:
    return Bound(op, value_ns, f"{op} {format_ns(value_ns)}")


def _check_op(op: str, ops: tuple[str, ...], name: str, x: object, forms: str) -> str:
    if op not in ops:
        raise NetloadConfigError(f"{name}={x!r}: operator {op!r} does not apply here; use "
                                 f"{' or '.join(repr(o) for o in ops)} ({forms})")
    return op


def parse_time_bound(x: object, *, name: str = "bound", default_op: str = "<=",
                     ops: tuple[str, ...] = OPERATORS) -> Bound:
    """A time bound in ns from ``"< 50us"``, ``"50us"``, a number of ns or a Duration.

    Without an operator the bound is ``default_op``. ``name`` is the argument the errors
    name (e.g. ``p99``); ``ops`` limits the operators allowed.
    """
    if isinstance(x, Bound):
        if x.rate is not None:
            raise NetloadConfigError(f"{name}={x!r} is a rate bound, not a time bound; "
                                     f"{_TIME_FORMS}")
        _check_op(x.op, ops, name, x, _TIME_FORMS)
        return x
    if isinstance(x, (Duration, timedelta)):
        seconds = Duration(x).seconds
        value = float(_CTX.multiply(Decimal(repr(seconds)), _NS_PER_UNIT["s"]))
        return _time_bound(_check_op(default_op, ops, name, x, _TIME_FORMS), value)
    if _is_real(x):
        value = float(x)  # type: ignore[arg-type]
        if math.isnan(value) or math.isinf(value):
            raise NetloadConfigError(f"{name}={x!r} is not finite; {_TIME_FORMS}")
        if value < 0:
            raise NetloadConfigError(f"{name}={x!r} is negative; a time bound is >= 0 ns "
                                     f"({_TIME_FORMS})")
        return _time_bound(_check_op(default_op, ops, name, x, _TIME_FORMS), value + 0.0)
    if not isinstance(x, str):
        raise NetloadConfigError(f"{name}={x!r} is not a bound; {_TIME_FORMS}")
    op, rest = _op_and_rest(x)
    op = _check_op(op or default_op, ops, name, x, _TIME_FORMS)
    m = _TIME_QUANTITY.fullmatch(rest)
    if m is None:
        raise NetloadConfigError(f"{name}={x!r} is not a bound; {_TIME_FORMS}")
    number_text, unit = m.group(1), m.group(2)
    if unit is None:
        raise NetloadConfigError(f"{name}={x!r} has no unit; write e.g. '{op} {number_text}ns'"
                                 f" or '{op} {number_text}us' (only a plain number, not a "
                                 "string, is read as ns)")
    if unit not in _NS_PER_UNIT:
        raise NetloadConfigError(f"{name}={x!r}: unknown time unit {unit!r}; use ns, us, ms or "
                                 f"s ({_TIME_FORMS})")
    try:
        exact = _CTX.multiply(Decimal(number_text), _NS_PER_UNIT[unit])
        value = float(exact)
    except (ArithmeticError, InvalidOperation):  # decimal.Overflow of an absurd exponent
        value = math.inf
    if math.isinf(value):
        raise NetloadConfigError(f"{name}={x!r} is too large; give a finite time")
    if value < 0:
        raise NetloadConfigError(f"{name}={x!r} is negative; a time bound is >= 0 "
                                 f"({_TIME_FORMS})")
    return _time_bound(op, value + 0.0)


def parse_rate_bound(x: object, *, name: str = "bound", default_op: str = ">=",
                     ops: tuple[str, ...] = OPERATORS, layer: str | None = None) -> Bound:
    """A rate bound from ``">= 250kpps"``, ``"1Gbit/s"``, ``"95%"`` or a Rate.

    Without an operator (and for a Rate) the bound is ``default_op`` ("at least"). A bit rate
    written without ``@layer`` counts ``layer`` when one is given (else units' default, L2);
    a Rate object keeps its own layer.
    """
    if isinstance(x, Bound):
        if x.rate is None:
            raise NetloadConfigError(f"{name}={x!r} is a time bound, not a rate bound; "
                                     f"{_RATE_FORMS}")
        _check_op(x.op, ops, name, x, _RATE_FORMS)
        return x
    if layer is not None:
        check_layer(layer, what=f"{name}: layer")
    if isinstance(x, Rate):
        op, rate = _check_op(default_op, ops, name, x, _RATE_FORMS), x
    elif isinstance(x, str):
        parsed_op, rest = _op_and_rest(x)
        op = _check_op(parsed_op or default_op, ops, name, x, _RATE_FORMS)
        if not rest:
            raise NetloadConfigError(f"{name}={x!r} is not a rate bound; {_RATE_FORMS}")
        try:
            rate = as_rate(rest, what=name)
        except NetloadConfigError as exc:
            raise NetloadConfigError(f"{name}={x!r} is not a rate bound ({exc}); "
                                     f"{_RATE_FORMS}") from None
        if rate.kind == "bps" and layer is not None and "@" not in rest:
            rate = Rate(rate.value, "bit/s", layer=layer)
    else:
        raise NetloadConfigError(f"{name}={x!r} is not a rate bound; {_RATE_FORMS}")
    return Bound(op, rate.value, f"{op} {rate}", rate)
