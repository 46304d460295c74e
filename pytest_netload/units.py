"""Explicit units: packet and bit rates with their layer, durations, frame sizes.

Pure Python. A frame size counts the Ethernet frame *including* its 4-byte FCS (as
`traffic.Stream` does). A bit rate says which bytes it counts (its *layer*):

- ``"l1"``: on the wire: frame + FCS + 7 B preamble + 1 B SFD + 12 B inter-frame gap (size + 20)
- ``"l2"``: the Ethernet frame including its FCS (size) -- the default
- ``"l2-nofcs"``: the bytes the generator wrote, without the FCS (size - 4); what veth, AF_XDP
  and pcap carry

Ethernet line rates (10 Gbit/s, ...) are L1 bit rates: at 10 Gbit/s and 64 B frames a port
carries at most 10e9 / (84 * 8) = 14,880,952.38 frames per second.

Parsing and formatting are decimal-exact: ``Rate("1.1Mpps") == Rate(1100000, "pps")``, and
``Rate(str(r)) == r`` for every rate (likewise Duration and Size).
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from datetime import timedelta
from decimal import ROUND_HALF_EVEN, Context, Decimal
from typing import Protocol, TypeAlias, runtime_checkable

from pytest_netload import _native_facts
from pytest_netload.errors import NetloadConfigError

__all__ = [
    "FCS_BYTES",
    "LAYERS",
    "LAYER_EXTRA_BYTES",
    "LAYER_OVERHEAD_BYTES",
    "LAYER_TEXT",
    "MAX_FRAME_BYTES",
    "MAX_FRAME_SIZE_BYTES",
    "MIN_FRAME_BYTES",
    "MIN_FRAME_SIZE_BYTES",
    "PREAMBLE_IFG_BYTES",
    "RATE_KINDS",
    "Duration",
    "FrameSizeLike",
    "HasMeanFrameSize",
    "Rate",
    "Size",
    "as_duration",
    "as_rate",
    "as_size",
    "check_layer",
    "frame_bits",
    "layer_overhead_bytes",
]

FCS_BYTES = 4
MIN_FRAME_BYTES = _native_facts.MIN_FRAME_BYTES  # IEEE 802.3 minimum frame, FCS excluded
MAX_FRAME_BYTES = _native_facts.MAX_FRAME_BYTES  # jumbo limit, FCS excluded (netload_api.h)
LAYERS = ("l1", "l2", "l2-nofcs")
PREAMBLE_IFG_BYTES = 20  # 7 B preamble + 1 B SFD + 12 B inter-frame gap
#: Bytes a layer counts on top of a frame size that *includes* the FCS.
LAYER_EXTRA_BYTES = {"l1": PREAMBLE_IFG_BYTES, "l2": 0, "l2-nofcs": -FCS_BYTES}
#: Bytes a layer counts on top of the frame *without* its FCS (what the engine's byte counters
#: hold; the same table as results.LAYER_OVERHEAD_BYTES).
LAYER_OVERHEAD_BYTES = {layer: extra + FCS_BYTES for layer, extra in LAYER_EXTRA_BYTES.items()}
LAYER_TEXT = {
    "l1": "L1: frame+FCS+preamble+IFG",
    "l2": "L2: frame incl. FCS",
    "l2-nofcs": "frame without FCS",
}
MIN_FRAME_SIZE_BYTES = MIN_FRAME_BYTES + FCS_BYTES  # 64
MAX_FRAME_SIZE_BYTES = MAX_FRAME_BYTES + FCS_BYTES  # 9604
RATE_KINDS = ("pps", "bps", "percent")
#: The longest time a run may take for each of its duration, drain and start delay: 24 h,
#: the native core's NETLOAD_MAX_RUN_S.
MAX_RUN_S = _native_facts.MAX_RUN_S
#: The shortest trial: 1 ms (a few bursts even at 100 Mpps; a shorter one sends too few
#: frames to judge).
MIN_TRIAL_S = 1e-3
_DEFAULT_LAYER = "l2"
_RATE_EXAMPLES = "write e.g. '1.5Mpps', '9.5Gbit/s' or '95%'"

# unit -> (kind, multiplier to pps / bit/s / percent)
_RATE_UNITS: dict[str, tuple[str, Decimal]] = {"%": ("percent", Decimal(1))}
for _prefix, _exp in (("", 0), ("k", 3), ("M", 6), ("G", 9), ("T", 12)):
    _RATE_UNITS[f"{_prefix}pps"] = ("pps", Decimal(10) ** _exp)
    _RATE_UNITS[f"{_prefix}bit/s"] = ("bps", Decimal(10) ** _exp)
    _RATE_UNITS[f"{_prefix}bps"] = ("bps", Decimal(10) ** _exp)
del _prefix, _exp
# formatting: the largest prefix whose value is >= 1
_RATE_FORMAT = {
    "pps": [("Tpps", 12), ("Gpps", 9), ("Mpps", 6), ("kpps", 3), ("pps", 0)],
    "bps": [("Tbit/s", 12), ("Gbit/s", 9), ("Mbit/s", 6), ("kbit/s", 3), ("bit/s", 0)],
    "percent": [("%", 0)],
}
_DURATION_UNITS = {
    "h": Decimal(3600), "m": Decimal(60), "min": Decimal(60), "s": Decimal(1),
    "ms": Decimal("1e-3"), "us": Decimal("1e-6"), "\u00b5s": Decimal("1e-6"),
    "\u03bcs": Decimal("1e-6"), "ns": Decimal("1e-9"),
}
_DURATION_FORMAT = ("h", "m", "s", "ms", "us", "ns")

_CTX = Context(prec=60)  # exact for every product and quotient here, whatever the global context
_NUMBER = r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|inf(?:inity)?|nan)"
_QUANTITY = re.compile(rf"\s*({_NUMBER})\s*([^\s@]*)\s*(?:@\s*(\S*)\s*)?", re.IGNORECASE)


MAX_TEXT_CHARS = 100
"""The longest text read as a rate, duration or size ('1.5Mpps@l2-nofcs' is 16)."""


def _check_length(x: object, what: str, examples: str) -> None:
    """Refuse a text too long to be a quantity (its digits would also exceed int())."""
    if isinstance(x, str) and len(x) > MAX_TEXT_CHARS:
        raise NetloadConfigError(f"{what} {x[:20]!r}... ({len(x):,} characters) is too long "
                                 f"to be one; {examples}")


@runtime_checkable
class HasMeanFrameSize(Protocol):
    """Anything with a mean frame size in bytes, FCS included (a `traffic.Stream`)."""

    @property
    def mean_frame_size(self) -> float: ...


# ---- layers ------------------------------------------------------------------------------


def check_layer(layer: object, *, what: str = "rate layer") -> str:
    """``layer`` if it is one of LAYERS, else NetloadConfigError naming ``what`` and LAYERS."""
    if isinstance(layer, str) and layer in LAYER_EXTRA_BYTES:
        return layer
    listed = "; ".join(f"{name!r} ({LAYER_TEXT[name]})" for name in LAYERS)
    raise NetloadConfigError(f"{what} {layer!r} is unknown; use one of {listed}")


def layer_overhead_bytes(layer: str) -> int:
    """Bytes the layer adds to a frame counted *without* its FCS (l1: 24, l2: 4, l2-nofcs: 0)."""
    return LAYER_OVERHEAD_BYTES[check_layer(layer)]


def frame_bits(size: float, layer: str) -> float:
    """Bits a frame of ``size`` bytes (FCS included) counts at ``layer``.

    Affine in ``size``, so the mean over a frame-size mix (IMIX) is the bits of the mean size.
    """
    extra = LAYER_EXTRA_BYTES[check_layer(layer)]
    if not _is_real(size) or not math.isfinite(size) or size <= FCS_BYTES:
        raise NetloadConfigError(f"frame size {size!r} is invalid; give bytes with the FCS "
                                 f"included, more than {FCS_BYTES} (Ethernet: "
                                 f"{MIN_FRAME_SIZE_BYTES}..{MAX_FRAME_SIZE_BYTES})")
    return 8.0 * (float(size) + extra)


# ---- number helpers ----------------------------------------------------------------------


def _is_real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _decimal(x: object) -> Decimal:
    """The shortest decimal that reads back as ``x`` (ints exactly)."""
    if isinstance(x, numbers.Integral):
        return Decimal(int(x))
    return Decimal(repr(float(x)))  # type: ignore[arg-type]


def _fmt_decimal(d: Decimal) -> str:
    d = d.normalize(_CTX)
    return format(d, "f") if -7 < d.adjusted() < 16 else str(d)


def _shortest(value: float, units: list[tuple[str, Decimal]]) -> str:
    """``value`` in the first of ``units`` (largest first) giving >= 1 in at most 17 digits.

    The last unit must be a power of ten (an exact division), the fallback.
    """
    d = _decimal(value)
    for unit, mult in units:
        q = _CTX.divide(d, mult)
        if q >= 1 and len(q.normalize(_CTX).as_tuple().digits) <= 17 and _CTX.multiply(q, mult) == d:
            return _fmt_decimal(q) + unit
    unit, mult = units[-1]
    return _fmt_decimal(_CTX.divide(d, mult)) + unit


# ---- Rate --------------------------------------------------------------------------------


@dataclass(frozen=True, init=False)
class Rate:
    """A packet rate, a bit rate at a layer, or a share of the line rate.

    Construct from a string -- ``Rate("1.5Mpps")``, ``Rate("250kpps")``, ``Rate("9.5Gbit/s")``,
    ``Rate("100Mbps")`` (bps means bit/s; SI prefixes k M G T, decimal), ``Rate("95%")`` -- or
    from a number and a unit -- ``Rate(1000, "pps")``, ``Rate(1e9, "bit/s", layer="l1")``,
    ``Rate(95, "%")`` -- or copy one: ``Rate(other)``.

    A bit rate counts the bytes of its ``layer`` (default "l2"; see LAYERS). The layer may also
    end the string: ``Rate("9.5Gbit/s@l1")``. Packet rates and percentages carry no layer
    (``layer`` is None): a percentage is always a share of the L1 line rate.

    ``value`` is in pps, bit/s or percent. Equal rates have the same kind, value and layer;
    rates of different kinds (or bit rates of different layers) do not order: comparing them
    raises TypeError, since that needs a frame size.
    """

    kind: str
    value: float
    layer: str | None

    def __init__(self, value: Rate | str | float, unit: str | None = None, *,
                 layer: str | None = None) -> None:
        kind, number, lay = _rate_fields(value, unit, layer, "rate")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "value", number)
        object.__setattr__(self, "layer", lay)

    def __str__(self) -> str:
        units = [(unit, Decimal(10) ** exp) for unit, exp in _RATE_FORMAT[self.kind]]
        text = _shortest(self.value, units)
        return f"{text}@{self.layer}" if self.kind == "bps" else text

    def __repr__(self) -> str:
        return f"Rate({str(self)!r})"

    def _order_key(self, other: object, op: str) -> tuple[float, float]:
        if not isinstance(other, Rate):
            raise TypeError(f"'{op}' not supported between Rate and {type(other).__name__}")
        if (self.kind, self.layer) != (other.kind, other.layer):
            raise TypeError(f"cannot order {self} and {other} without a frame size (and a line "
                            "rate): convert both with .pps(frame_size, line_rate_bps) first")
        return self.value, other.value

    def __lt__(self, other: object) -> bool:
        a, b = self._order_key(other, "<")
        return a < b

    def __le__(self, other: object) -> bool:
        a, b = self._order_key(other, "<=")
        return a <= b

    def __gt__(self, other: object) -> bool:
        a, b = self._order_key(other, ">")
        return a > b

    def __ge__(self, other: object) -> bool:
        a, b = self._order_key(other, ">=")
        return a >= b

    def pps(self, frame_size: FrameSizeLike | None = None,
            line_rate_bps: float | None = None) -> float:
        """Packets per second for frames of ``frame_size`` bytes (FCS included).

        ``frame_size`` may be a Stream (anything with ``mean_frame_size``): the mean over its
        packet sequence is exact for IMIX, since pps = bps / mean(frame_bits) and frame_bits
        is affine in the size. A packet rate needs no frame size. A percentage needs
        ``line_rate_bps``, the port's L1 bit rate.
        """
        if self.kind == "pps":
            return self.value
        size = _mean_size(frame_size, self)
        if self.kind == "bps":
            assert self.layer is not None
            return self.value / frame_bits(size, self.layer)
        return self.value / 100.0 * self._line_rate(line_rate_bps) / frame_bits(size, "l1")

    def bps(self, frame_size: FrameSizeLike, layer: str = _DEFAULT_LAYER,
            line_rate_bps: float | None = None) -> float:
        """Bits per second counted at ``layer`` for frames of ``frame_size`` bytes (see pps)."""
        check_layer(layer)
        if self.kind == "bps" and layer == self.layer:
            return self.value
        if self.kind == "percent" and layer == "l1":
            return self.value / 100.0 * self._line_rate(line_rate_bps)
        size = _mean_size(frame_size, self)
        return self.pps(size, line_rate_bps) * frame_bits(size, layer)

    def _line_rate(self, line_rate_bps: float | None) -> float:
        if line_rate_bps is None:
            raise NetloadConfigError(
                f"rate '{self}' is a share of the line rate, but the topology declares none "
                "(veth has none); give the rate in pps or bit/s")
        if not _is_real(line_rate_bps) or not math.isfinite(line_rate_bps) or line_rate_bps <= 0:
            raise NetloadConfigError(f"line rate {line_rate_bps!r} bit/s is invalid; give a "
                                     "positive L1 bit rate, e.g. 10e9")
        return float(line_rate_bps)


def _mean_size(frame_size: object, rate: Rate) -> float:
    if isinstance(frame_size, Size):
        return float(frame_size.bytes)
    if isinstance(frame_size, HasMeanFrameSize) and not _is_real(frame_size):
        return float(frame_size.mean_frame_size)
    if _is_real(frame_size):
        return float(frame_size)  # type: ignore[arg-type]
    raise NetloadConfigError(f"rate '{rate}' needs a frame size to convert, got {frame_size!r}; "
                             "give bytes with the FCS included, a Size or a Stream")


def _rate_fields(x: object, unit: object, layer: object,
                 what: str) -> tuple[str, float, str | None]:
    """(kind, value, layer) of a Rate argument, or NetloadConfigError naming it."""
    shown = repr(x) if unit is None else f"({x!r}, {unit!r})"
    if isinstance(x, Rate):
        if unit is not None:
            raise NetloadConfigError(f"{what} {shown}: a Rate already has its unit; drop "
                                     f"{unit!r}")
        if layer is not None and layer != x.layer:
            raise NetloadConfigError(f"{what} {x!r} has layer {x.layer!r}, not {layer!r}; "
                                     "write the layer once")
        return x.kind, x.value, x.layer
    if isinstance(x, bool) or (not isinstance(x, str) and not _is_real(x)):
        raise NetloadConfigError(f"{what} {shown} is a {type(x).__name__}, not a rate; "
                                 f"{_RATE_EXAMPLES}")
    text_layer: str | None = None
    _check_length(x, what, _RATE_EXAMPLES)
    if isinstance(x, str):
        if unit is not None:
            raise NetloadConfigError(f"{what} {shown}: give a number with a unit, or a string "
                                     f"alone; {_RATE_EXAMPLES}")
        m = _QUANTITY.fullmatch(x)
        if m is None:
            raise NetloadConfigError(f"{what} {x!r}: cannot parse it as a number and a unit; "
                                     f"{_RATE_EXAMPLES}")
        number, unit_text, text_layer = Decimal(m.group(1)), m.group(2), m.group(3)
        if text_layer is not None:
            check_layer(text_layer, what=f"{what} {shown}: layer")
    else:
        number, unit_text = _decimal(x), unit
        if unit_text is None and (number.is_nan() or number.is_infinite() or number <= 0):
            raise NetloadConfigError(f"{what} {shown} is not a rate: it is not a positive "
                                     f"finite number, and it has no unit; {_RATE_EXAMPLES}")
        if unit_text is None:
            raise NetloadConfigError(f"{what} {shown} has no unit; write e.g. Rate({x!r}, 'pps')"
                                     f" or a string like '1.5Mpps', '9.5Gbit/s' or '95%'")
        if not isinstance(unit_text, str):
            raise NetloadConfigError(f"{what} {shown}: unit {unit_text!r} is not a string; "
                                     f"use one of {', '.join(_RATE_UNITS)}")
    if not unit_text:
        raise NetloadConfigError(f"{what} {shown} has no unit; {_RATE_EXAMPLES}")
    if unit_text not in _RATE_UNITS:
        near = [u for u in _RATE_UNITS if u.lower() == unit_text.lower()]
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise NetloadConfigError(f"{what} {shown}: unknown unit {unit_text!r}{hint}; use one of "
                                 f"{', '.join(_RATE_UNITS)}")
    kind, mult = _RATE_UNITS[unit_text]
    if text_layer is not None and layer is not None and text_layer != layer:
        raise NetloadConfigError(f"{what} {shown} names layer {text_layer!r}, but layer="
                                 f"{layer!r} was given too; write the layer once")
    lay = (text_layer if text_layer is not None else check_layer(layer, what=f"{what} {shown}: layer")
           if layer is not None else None)
    if kind != "bps" and lay is not None:
        raise NetloadConfigError(f"{what} {shown}: a layer applies to bit rates only; drop "
                                 f"{lay!r} or give the rate in bit/s")
    if number.is_nan() or number.is_infinite():
        raise NetloadConfigError(f"{what} {shown} is not finite; give a finite number")
    try:
        value = float(_CTX.multiply(number, mult))
    except ArithmeticError:  # decimal.Overflow of an absurd exponent
        value = math.inf
    if not math.isfinite(value):
        raise NetloadConfigError(f"{what} {shown} is too large; give a finite rate")
    if value <= 0:
        raise NetloadConfigError(f"{what} {shown} is not above zero; give a positive rate "
                                 "(leave a stream out to send nothing)")
    if kind == "percent" and value > 100:
        raise NetloadConfigError(f"{what} {shown} exceeds 100% of the line rate; give a share "
                                 "above 0 and at most 100%")
    return kind, value, (lay or _DEFAULT_LAYER) if kind == "bps" else None


def as_rate(x: Rate | str | float, *, what: str = "rate") -> Rate:
    """``x`` as a Rate (a string or another Rate); errors name the parameter ``what``."""
    if isinstance(x, Rate):
        return x
    kind, value, layer = _rate_fields(x, None, None, what)
    rate = object.__new__(Rate)
    for key, val in (("kind", kind), ("value", value), ("layer", layer)):
        object.__setattr__(rate, key, val)
    return rate


# ---- Duration ----------------------------------------------------------------------------


@dataclass(frozen=True, order=True, init=False)
class Duration:
    """A non-negative time span: ``Duration("10s")``, "500ms", "250us", "100ns", "2m", "1h".

    A number (or a string without a unit) is seconds; a ``datetime.timedelta`` works too, as does
    ``Duration(other)``. Zero is allowed: APIs that take a duration read 0 as "no bound".
    ``ns`` is rounded half to even from the shortest decimal of ``seconds``.
    """

    seconds: float

    def __init__(self, value: Duration | str | float | timedelta) -> None:
        object.__setattr__(self, "seconds", _duration_seconds(value, "duration"))

    @property
    def ns(self) -> int:
        return int(_CTX.multiply(_decimal(self.seconds), Decimal(10**9)).to_integral_value(
            rounding=ROUND_HALF_EVEN))

    def __str__(self) -> str:
        if self.seconds == 0:
            return "0s"
        return _shortest(self.seconds, [(u, _DURATION_UNITS[u]) for u in _DURATION_FORMAT])

    def __repr__(self) -> str:
        return f"Duration({str(self)!r})"


def _duration_seconds(x: object, what: str) -> float:
    if isinstance(x, Duration):
        return x.seconds
    if isinstance(x, timedelta):
        x = x.total_seconds()
    _check_length(x, what, "write e.g. '10s', '500ms' or '1h'")
    if isinstance(x, str):
        m = _QUANTITY.fullmatch(x)
        if m is None or m.group(3) is not None:
            raise NetloadConfigError(f"{what} {x!r}: cannot parse it as a number and a unit; "
                                     "write e.g. '10s', '500ms', '250us', '2m' or '1h'")
        number, unit = Decimal(m.group(1)), m.group(2) or "s"
        if unit not in _DURATION_UNITS:
            raise NetloadConfigError(f"{what} {x!r}: unknown unit {unit!r}; use one of "
                                     f"{', '.join(_DURATION_UNITS)}")
        mult = _DURATION_UNITS[unit]
    elif _is_real(x):
        number, mult = _decimal(x), Decimal(1)
    else:
        raise NetloadConfigError(f"{what} {x!r} is a {type(x).__name__}, not a duration; give "
                                 "seconds or a string like '10s' or '500ms'")
    if number.is_nan() or number.is_infinite():
        raise NetloadConfigError(f"{what} {x!r} is not finite; give a finite duration (0 means "
                                 "no bound where an API allows it)")
    try:
        seconds = float(_CTX.multiply(number, mult))
    except ArithmeticError:  # decimal.Overflow of an absurd exponent
        seconds = math.inf
    if not math.isfinite(seconds):
        raise NetloadConfigError(f"{what} {x!r} is too long; give a finite duration")
    if seconds < 0:
        raise NetloadConfigError(f"{what} {x!r} is negative; give a duration >= 0")
    return seconds + 0.0  # no -0.0


def as_duration(x: Duration | str | float | timedelta, *, what: str = "duration") -> Duration:
    """``x`` as a Duration; errors name the parameter ``what``."""
    if isinstance(x, Duration):
        return x
    duration = object.__new__(Duration)
    object.__setattr__(duration, "seconds", _duration_seconds(x, what))
    return duration


def run_seconds(x: Duration | str | float | timedelta, *, what: str,
                zero_ok: bool = False) -> float:
    """A time a run spends (a trial or run duration, a drain, a warm-up) in seconds:
    finite, at most 24 h (MAX_RUN_S), and > 0 unless ``zero_ok`` (where 0 means "none").
    Errors name ``what`` and the value as given."""
    seconds = as_duration(x, what=what).seconds
    if seconds == 0 and not zero_ok:
        raise NetloadConfigError(f"{what} {x!r} is zero; give a duration > 0, e.g. '10s'")
    if 0 < seconds < 1e-9:
        raise NetloadConfigError(f"{what} {x!r} is shorter than 1 ns, the engine's resolution; "
                                 "give e.g. '1ms' or '10s'")
    if seconds > MAX_RUN_S:
        raise NetloadConfigError(
            f"{what} {x!r} is {seconds:g} s, more than 24 h ({MAX_RUN_S} s), the longest a run "
            "may take; split a longer soak into runs of at most 24 h")
    return seconds


# ---- Size --------------------------------------------------------------------------------


@dataclass(frozen=True, order=True, init=False)
class Size:
    """An Ethernet frame size in bytes, FCS included: ``Size(64)``, ``Size("1518B")``.

    Whole bytes from MIN_FRAME_SIZE_BYTES (64) to MAX_FRAME_SIZE_BYTES (9604).
    """

    bytes: int

    def __init__(self, value: Size | str | int) -> None:
        object.__setattr__(self, "bytes", _size_bytes(value, "frame size"))

    @property
    def mean_frame_size(self) -> float:
        return float(self.bytes)

    def __int__(self) -> int:
        return self.bytes

    def __index__(self) -> int:
        return self.bytes

    def __str__(self) -> str:
        return f"{self.bytes}B"

    def __repr__(self) -> str:
        return f"Size({self.bytes})"


_SIZE_TEXT = re.compile(r"\s*(\d+)\s*B?\s*")


def _size_bytes(x: object, what: str) -> int:
    if isinstance(x, Size):
        return x.bytes
    _check_length(x, what, "write whole bytes with the FCS included, e.g. 64 or '1518B'")
    if isinstance(x, str):
        m = _SIZE_TEXT.fullmatch(x)
        if m is None:
            raise NetloadConfigError(f"{what} {x!r}: cannot parse it; write whole bytes with the "
                                     "FCS included, e.g. 64, '64B' or '1518B'")
        n = int(m.group(1))
    elif isinstance(x, numbers.Integral) and not isinstance(x, bool):
        n = int(x)
    else:
        raise NetloadConfigError(f"{what} {x!r} is not a whole number of bytes; give an int with "
                                 "the FCS included, e.g. 64 or '1518B'")
    if not MIN_FRAME_SIZE_BYTES <= n <= MAX_FRAME_SIZE_BYTES:
        raise NetloadConfigError(f"{what} {x!r} is outside {MIN_FRAME_SIZE_BYTES}.."
                                 f"{MAX_FRAME_SIZE_BYTES} bytes (FCS included); give a size in "
                                 "that range")
    return n


def as_size(x: Size | str | int, *, what: str = "frame size") -> Size:
    """``x`` as a Size; errors name the parameter ``what``."""
    if isinstance(x, Size):
        return x
    size = object.__new__(Size)
    object.__setattr__(size, "bytes", _size_bytes(x, what))
    return size


#: A frame size: bytes with the FCS (int or a mean as float), a Size, or a Stream.
FrameSizeLike: TypeAlias = float | int | Size | HasMeanFrameSize
