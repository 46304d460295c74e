"""Marker arguments as tables: one `Field` per argument, read by `parse_marker`.

A marker's settings class (bench/settings.py) lists its arguments in a table, in the
order the marker's help and errors name them: each `Field` says which attribute of
the class it fills and how its value is read (`Reader`: the argument's name and value
in, the parsed value out, a `NetloadConfigError` naming both for a bad value). What
depends on two arguments at once is checked after the table, by the class.

The readers here are the ones several markers share; a marker's own stay beside its
table. No pytest: a marker is anything with `name`, `args` and `kwargs`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import NetloadConfigError
from ..units import Rate, as_rate, run_seconds

__all__ = ["Field", "MarkLike", "Reader", "count", "duration", "flag", "marker_kwargs",
           "number", "optional", "parse_fields", "rate", "resolution"]

Reader = Callable[[str, Any], Any]
"""(argument, value) -> the parsed value; NetloadConfigError naming the argument."""


class MarkLike(Protocol):
    """What a marker gives: pytest.Mark has these."""

    @property
    def name(self) -> str: ...
    @property
    def args(self) -> tuple[Any, ...]: ...
    @property
    def kwargs(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Field:
    """One marker argument: the settings attribute it fills and its reader."""

    attr: str
    read: Reader


def marker_kwargs(mark: MarkLike, allowed: tuple[str, ...]) -> dict[str, Any]:
    """The marker's keyword arguments; NetloadConfigError for a positional one or one
    the marker does not take (the first by name), naming what it takes."""
    if mark.args:
        raise NetloadConfigError(
            f"positional arguments {list(mark.args)!r}: write them as keywords "
            f"({', '.join(allowed)})")
    unknown = sorted(set(mark.kwargs) - set(allowed))
    if unknown:
        raise NetloadConfigError(
            f"unknown argument {unknown[0]!r}; {mark.name} takes {', '.join(allowed)}: "
            "rename or remove it")
    return dict(mark.kwargs)


def parse_fields(fields: Mapping[str, Field], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Each given argument read by its field, in the order given: {attribute: value}."""
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        field = fields[key]
        out[field.attr] = field.read(key, value)
    return out


# ---- readers ------------------------------------------------------------------------------


def count(low: int, high: int) -> Reader:
    """A whole number in [low, high] (not a bool)."""
    def read(name: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise NetloadConfigError(f"{name}={value!r}: give a whole number from {low} to {high}")
        return value
    return read


def number(low: float, high: float, example: str) -> Reader:
    """A number (int or float, not a bool) in [low, high], as a float."""
    def read(name: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not low <= value <= high:
            raise NetloadConfigError(f"{name}={value!r}: give a number from {low:g} to "
                                     f"{high:g}, e.g. {example}")
        return float(value)
    return read


def flag(name: str, value: Any) -> bool:
    """True or False, nothing else."""
    if not isinstance(value, bool):
        raise NetloadConfigError(f"{name}={value!r}: give True or False")
    return value


def duration(zero_ok: bool = False) -> Reader:
    """A time a run spends (units.run_seconds): > 0 (or >= 0), at most 24 h, in seconds."""
    def read(name: str, value: Any) -> float:
        return run_seconds(value, what=name, zero_ok=zero_ok)
    return read


def rate(name: str, value: Any) -> Rate:
    """A Rate (units.as_rate: pps, bit/s at a layer, or a share of the line rate)."""
    return as_rate(value, what=name)


def optional(read: Reader) -> Reader:
    """None as it is, anything else through `read`."""
    def read_optional(name: str, value: Any) -> Any:
        return None if value is None else read(name, value)
    return read_optional


def resolution(name: str, value: Any) -> float | Rate:
    """A search resolution: a ratio in (0, 1) of the lower bound, or a rate > 0."""
    if isinstance(value, (str, Rate)):
        fix = ("give a ratio of the lower bound in (0, 1), e.g. 0.005, or a rate, e.g. "
               "'100pps' or '1Mbit/s'")
        try:
            parsed = as_rate(value, what=name)
        except NetloadConfigError:
            raise NetloadConfigError(f"{name}={value!r}: {fix}") from None
        if parsed.kind == "percent":
            raise NetloadConfigError(
                f"{name}={value!r}: a share of the line rate is not a search resolution; "
                f"{fix}")
        if not (math.isfinite(parsed.value) and parsed.value > 0):
            raise NetloadConfigError(f"{name}={value!r}: {fix}")
        return parsed
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not 0 < value < 1:  # NaN compares false; isfinite overflows on huge ints
        raise NetloadConfigError(
            f"{name}={value!r}: give a ratio of the lower bound in (0, 1), e.g. 0.005 "
            "(0.5 %), or a rate, e.g. '100pps' or '1Mbit/s'")
    return float(value)
