"""Y.1564 services: their bandwidth profile, classifier and acceptance criteria.

A service (an EVC or one class of service of it) is a bandwidth profile -- CIR, EIR and the
burst sizes CBS/EBS of MEF 10.3 -- the frame size it is tested with, the fields that classify
its frames (VLAN, PCP, DSCP, UDP destination port) and its service acceptance criteria (SAC).
With ``stream=`` (anything RFC 2544's ``stream=`` takes: a udp()/tcp() spec, a template, a
weighted mix) the service sends that traffic; its classifier is then read from the
stream's frames, and its DSCP/PCP (and colours) are marked on them.

A colour-aware service (``colour="dscp"`` or ``colour="pcp"``) marks its frames green or
yellow in that field: the load up to the CIR goes green (``green=``, e.g. DSCP 10, AF11),
the load above it yellow (``yellow=``, e.g. DSCP 12, AF12). The SAC is judged on the green
frames; the yellow ones are counted apart.

Every figure carries its unit: rates are bit rates ("10Mbit/s"), counted at L2 with the FCS
as Y.1564 and MEF count information rates; a rate given at another layer is converted with
the service's frame size. Delays are durations ("10ms"), ratios percentages ("0.1%"). A bare
number is refused: ``ftd=10`` could be seconds or milliseconds.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import timedelta
from decimal import Decimal
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..traffic.mix import Mix, as_mix
from ..traffic.replay import ReplayFlow
from ..units import Duration, Rate, as_duration, as_rate, as_size, frame_bits

__all__ = ["COLOUR_MODES", "Classifier", "Sac", "Service", "check_services",
           "check_stream_directions"]

#: How a colour-aware service marks its colour, and the values each field takes.
COLOUR_MODES = {"dscp": (0, 63), "pcp": (0, 7)}

DEFAULT_FRAME_SIZE = 512
_PERCENT = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*%\s*")
_BYTES = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(B|kB|KB|KiB|MB|MiB)\s*")
_BYTE_UNITS = {"B": 1, "kB": 1000, "KB": 1000, "KiB": 1024, "MB": 1000**2, "MiB": 1024**2}
_LEADING_NUMBER = re.compile(r"\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_SAC_EXAMPLES = {"flr": "'0.1%'", "ftd": "'10ms'", "fdv": "'500us'", "availability": "'99.9%'"}


def _has_unit(x: str) -> bool:
    """Whether text after its leading number names a unit ('10ms', not '10' or '1e-3')."""
    m = _LEADING_NUMBER.match(x)
    return bool((x[m.end():] if m else x).strip())


def _where(service: str | None) -> str:
    return f"service {service!r}: " if service is not None else ""


def _is_real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _sac_duration(x: object, field_name: str, service: str | None) -> float:
    what = f"{_where(service)}sac {field_name}"
    example = f"write e.g. {field_name}={_SAC_EXAMPLES[field_name]}"
    if isinstance(x, (Duration, timedelta)):
        return as_duration(x, what=what).seconds
    if _is_real(x) or (isinstance(x, str) and not _has_unit(x)):
        raise NetloadConfigError(f"{what}={x!r} has no unit; {example}")
    if not isinstance(x, str):
        raise NetloadConfigError(f"{what}={x!r} is a {type(x).__name__}, not a duration; "
                                 f"{example}")
    return as_duration(x, what=what).seconds


def _sac_ratio(x: object, field_name: str, service: str | None) -> float:
    what = f"{_where(service)}sac {field_name}"
    example = f"write e.g. {field_name}={_SAC_EXAMPLES[field_name]}"
    if _is_real(x) or (isinstance(x, str) and "%" not in x):
        raise NetloadConfigError(f"{what}={x!r} has no unit; {example}")
    if not isinstance(x, str):
        raise NetloadConfigError(f"{what}={x!r} is a {type(x).__name__}, not a percentage; "
                                 f"{example}")
    m = _PERCENT.fullmatch(x)
    if m is None:
        raise NetloadConfigError(f"{what}={x!r}: cannot read it as a percentage; {example}")
    ratio = float(Decimal(m.group(1)) / 100)
    if not 0.0 <= ratio <= 1.0:
        raise NetloadConfigError(f"{what}={x!r} is outside 0%..100%; {example}")
    return ratio


@dataclass(frozen=True, init=False)
class Sac:
    """Service acceptance criteria; a criterion left None is not judged.

    ``Sac(flr="0.1%", ftd="10ms", fdv="500us", availability="99.9%")``: the frame loss
    ratio and the availability as percentages, the frame transfer delay (mean one-way
    delay) and the frame delay variation (a high percentile minus the minimum delay) as
    durations with a unit. Stored as ``flr_ratio``, ``ftd_s``, ``fdv_s`` and
    ``availability_ratio``. ``service`` only names the service in error messages.
    """

    flr_ratio: float | None
    ftd_s: float | None
    fdv_s: float | None
    availability_ratio: float | None

    def __init__(self, flr: object = None, ftd: object = None, fdv: object = None,
                 availability: object = None, *, service: str | None = None) -> None:
        values = {
            "flr_ratio": None if flr is None else _sac_ratio(flr, "flr", service),
            "ftd_s": None if ftd is None else _sac_duration(ftd, "ftd", service),
            "fdv_s": None if fdv is None else _sac_duration(fdv, "fdv", service),
            "availability_ratio": None if availability is None
            else _sac_ratio(availability, "availability", service),
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)

    @classmethod
    def of(cls, x: object, service: str | None = None) -> Sac:
        """``x`` as a Sac: a Sac, None (nothing judged) or a mapping of Sac's arguments."""
        if x is None:
            return cls()
        if isinstance(x, Sac):
            return x
        if isinstance(x, Mapping):
            unknown = sorted(set(x) - set(_SAC_EXAMPLES))
            if unknown:
                raise NetloadConfigError(
                    f"{_where(service)}sac has unknown keys {unknown}; use "
                    f"{', '.join(_SAC_EXAMPLES)}, e.g. sac={{'flr': '0.1%', 'ftd': '10ms'}}")
            return cls(**x, service=service)
        raise NetloadConfigError(f"{_where(service)}sac={x!r} is a {type(x).__name__}; give a "
                                 "Sac or a dict like {'flr': '0.1%', 'ftd': '10ms'}")

    @property
    def empty(self) -> bool:
        return all(getattr(self, f.name) is None for f in fields(self))

    def __str__(self) -> str:
        parts = []
        if self.flr_ratio is not None:
            parts.append(f"FLR <= {fmt.loss_ratio_exact(self.flr_ratio)}")
        if self.ftd_s is not None:
            parts.append(f"FTD <= {fmt.time_ns_exact(self.ftd_s * 1e9)}")
        if self.fdv_s is not None:
            parts.append(f"FDV <= {fmt.time_ns_exact(self.fdv_s * 1e9)}")
        if self.availability_ratio is not None:
            parts.append(f"availability >= {fmt.percent(self.availability_ratio)}")
        return ", ".join(parts) or "no criteria"

    def as_dict(self) -> dict[str, float | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


_CLASSIFIER_FIELDS = ("vlan", "pcp", "dscp", "dport")


@dataclass(frozen=True)
class Classifier:
    """What classifies a service's frames; None means "any value"."""

    vlan: int | None = None
    pcp: int | None = None
    dscp: int | None = None
    dport: int | None = None

    def overlap(self, other: Classifier) -> dict[str, str] | None:
        """None when no frame can match both; else per field how both match it
        ("both 100", "'any' and 46")."""
        out: dict[str, str] = {}
        for name in _CLASSIFIER_FIELDS:
            a, b = getattr(self, name), getattr(other, name)
            if a is not None and b is not None and a != b:
                return None
            if a is None and b is None:
                out[name] = "both any"
            elif a == b:
                out[name] = f"both {a}"
            else:
                out[name] = f"{'any' if a is None else a} and {'any' if b is None else b}"
        return out

    def as_dict(self) -> dict[str, int | None]:
        return {name: getattr(self, name) for name in _CLASSIFIER_FIELDS}


def _bit_rate(x: object, field_name: str, service: str, frame_size: int) -> tuple[Rate, float]:
    what = f"service {service!r}: {field_name}"
    example = f"write e.g. {field_name}='10Mbit/s'"
    if _is_real(x) or (isinstance(x, str) and not _has_unit(x)):
        raise NetloadConfigError(f"{what}={x!r} has no unit; {example}")
    rate = as_rate(x, what=what)  # type: ignore[arg-type]
    if rate.kind != "bps":
        kind = "a packet rate" if rate.kind == "pps" else "a share of the line rate"
        raise NetloadConfigError(f"{what}={x!r} is {kind}; Y.1564 information rates are bit "
                                 f"rates: {example}")
    bps = rate.bps(frame_size, "l2")
    if not math.isfinite(bps) or bps < 0:
        raise NetloadConfigError(f"{what}={x!r} is not a finite rate >= 0; {example}")
    return rate, bps


def _burst_bytes(x: object, field_name: str, service: str) -> int:
    what = f"service {service!r}: {field_name}"
    example = f"give bytes, e.g. {field_name}=12176 or {field_name}='12kB'"
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        n = int(x)
    elif isinstance(x, str) and (m := _BYTES.fullmatch(x)) is not None:
        value = float(m.group(1)) * _BYTE_UNITS[m.group(2)]
        if value != int(value):
            raise NetloadConfigError(f"{what}={x!r} is not a whole number of bytes; {example}")
        n = int(value)
    else:
        raise NetloadConfigError(f"{what}={x!r} is not a burst size; {example}")
    if n < 0:
        raise NetloadConfigError(f"{what}={x!r} is negative; {example}")
    return n


def _field_int(x: object, field_name: str, service: str, low: int, high: int,
               meaning: str) -> int | None:
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or not low <= int(x) <= high:
        raise NetloadConfigError(f"service {service!r}: {field_name}={x!r} is not a {meaning}; "
                                 f"give a whole number in {low}..{high} (or None for any)")
    return int(x)


@dataclass(frozen=True, init=False)
class Service:
    """One Y.1564 service: bandwidth profile, frame size, classifier and SAC.

    ``Service("voice", cir="10Mbit/s", eir="5Mbit/s", cbs="12kB", ebs=12176, dscp=46,
    sac={"flr": "0.1%", "ftd": "10ms", "fdv": "1ms", "availability": "99.9%"})``.
    ``cir_bps``/``eir_bps`` are L2 bit rates (frame bytes with the FCS); ``cbs_bytes`` and
    ``ebs_bytes`` are 0 when not given. ``colour="dscp", green=10, yellow=12`` (or
    ``colour="pcp"`` with a ``vlan``) makes it colour-aware: its load up to the CIR is
    sent green, the rest yellow, in that field.
    """

    name: str
    cir: Rate
    eir: Rate | None
    cir_bps: float
    eir_bps: float
    cbs_bytes: int
    ebs_bytes: int
    frame_size: int
    dscp: int | None
    pcp: int | None
    vlan: int | None
    dport: int | None
    sac: Sac
    colour: str | None
    """None: colour-blind; "dscp" or "pcp": the field that carries the colour."""
    green: int | None
    """The colour field's value of green frames (the load up to the CIR)."""
    yellow: int | None
    """The colour field's value of yellow frames (the load above the CIR)."""
    wire: str = field(default="", repr=False)
    """The wire the service runs on ("p0->p1"), where a test runs services on several
    (Y.1564 with direction="both": each direction is a service); "" on the one wire.
    Services on different wires never overlap."""
    stream: Mix | None = field(default=None, repr=False)
    """The service's traffic (traffic.mix.Mix: anything RFC 2544's `stream=` takes), at
    the service's frame size; its VLAN, PCP, DSCP and L4 destination port are the
    classifier's, its DSCP/PCP marked with the service's (and its colours'). None: UDP
    built from the service's own fields."""

    def __init__(self, name: str, cir: object, eir: object = None, cbs: object = None,
                 ebs: object = None, frame_size: object = DEFAULT_FRAME_SIZE,
                 dscp: object = None, pcp: object = None, vlan: object = None,
                 sac: object = None, dport: object = None, colour: object = None,
                 green: object = None, yellow: object = None, stream: object = None) -> None:
        if not isinstance(name, str) or not name.strip():
            raise NetloadConfigError(f"service name {name!r}: give a non-empty string, e.g. "
                                     "'voice'")
        size = as_size(frame_size, what=f"service {name!r}: frame_size").bytes  # type: ignore[arg-type]
        no_cir = cir is None or (_rate_is_zero(cir))
        if eir is not None and not _rate_is_zero(eir) and no_cir:
            raise NetloadConfigError(f"service {name!r}: EIR without CIR (eir={eir!r}, "
                                     f"cir={cir!r}); give cir='...Mbit/s' > 0, Y.1564 tests "
                                     "a service from its CIR")
        if cir is None:
            raise NetloadConfigError(f"service {name!r}: cir is missing; write e.g. "
                                     "cir='10Mbit/s'")
        cir_rate, cir_bps = _bit_rate(cir, "cir", name, size)
        if cir_bps <= 0:
            raise NetloadConfigError(f"service {name!r}: cir={cir!r} is zero; give the "
                                     "committed rate > 0, e.g. cir='10Mbit/s'")
        eir_rate, eir_bps = (None, 0.0) if eir is None else _bit_rate(eir, "eir", name, size)
        values: dict[str, Any] = {
            "name": name, "cir": cir_rate, "eir": eir_rate, "cir_bps": cir_bps,
            "eir_bps": eir_bps,
            "cbs_bytes": 0 if cbs is None else _burst_bytes(cbs, "cbs", name),
            "ebs_bytes": 0 if ebs is None else _burst_bytes(ebs, "ebs", name),
            "frame_size": size,
            "dscp": _field_int(dscp, "dscp", name, 0, 63, "DSCP"),
            "pcp": _field_int(pcp, "pcp", name, 0, 7, "PCP (802.1p priority)"),
            "vlan": _field_int(vlan, "vlan", name, 1, 4094, "VLAN id"),
            "dport": _field_int(dport, "dport", name, 0, 65535, "UDP destination port"),
            "sac": Sac.of(sac, name),
        }
        if stream is not None:
            values["stream"] = _stream(name, stream, values)
        values.update(_colour(name, colour, green, yellow, values))
        if stream is not None:
            values.update(_stream_marks(name, values))
        for key, value in values.items():
            object.__setattr__(self, key, value)

    @classmethod
    def of(cls, x: object) -> Service:
        """``x`` as a Service: a Service, or a mapping of Service's keyword arguments."""
        if isinstance(x, Service):
            return x
        if isinstance(x, Mapping):
            allowed = {"name", "cir", "eir", "cbs", "ebs", "frame_size", "dscp", "pcp",
                       "vlan", "sac", "dport", "colour", "green", "yellow", "stream"}
            unknown = sorted(set(x) - allowed)
            shown = x.get("name", "?")
            if unknown:
                raise NetloadConfigError(f"service {shown!r}: unknown keys {unknown}; use "
                                         f"{', '.join(sorted(allowed))}")
            if "name" not in x:
                raise NetloadConfigError(f"service {dict(x)!r} has no name; add "
                                         "name='voice'")
            return cls(**x)
        raise NetloadConfigError(f"service {x!r} is a {type(x).__name__}; give a Service or a "
                                 "dict of its arguments, e.g. {'name': 'voice', 'cir': "
                                 "'10Mbit/s'}")

    @property
    def classifier(self) -> Classifier:
        """What classifies the service's frames (its green ones when colour-aware)."""
        return self.coloured("green")

    @property
    def colour_aware(self) -> bool:
        return self.colour is not None

    def coloured(self, colour: str) -> Classifier:
        """The classifier of the service's `colour` ("green" or "yellow") frames: the
        colour's value in the colour field; colour-blind, the service's own fields."""
        if colour not in ("green", "yellow"):
            raise NetloadConfigError(f"colour={colour!r}: give 'green' or 'yellow'")
        value = getattr(self, colour)
        pcp = value if self.colour == "pcp" else self.pcp
        dscp = value if self.colour == "dscp" else self.dscp
        return Classifier(self.vlan, pcp, dscp, self.dport)

    @property
    def classifiers(self) -> tuple[Classifier, ...]:
        """Every classifier of the service's frames: green and yellow when colour-aware."""
        if self.colour is None:
            return (self.classifier,)
        return (self.coloured("green"), self.coloured("yellow"))

    @property
    def max_bps(self) -> float:
        """CIR + EIR at L2."""
        return self.cir_bps + self.eir_bps

    @property
    def burst_bytes(self) -> int:
        return self.cbs_bytes + self.ebs_bytes

    def l1_bps(self, l2_bps: float) -> float:
        """An L2 rate of this service's frames as the L1 (line) rate it takes."""
        return l2_bps * frame_bits(self.frame_size, "l1") / frame_bits(self.frame_size, "l2")

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "cir_bps": self.cir_bps, "eir_bps": self.eir_bps,
            "cbs_bytes": self.cbs_bytes, "ebs_bytes": self.ebs_bytes,
            "frame_size": self.frame_size, **self.classifier.as_dict(),
            "sac": self.sac.as_dict(), "colour": self.colour, "green": self.green,
            "yellow": self.yellow,
        }


def _colour(name: str, colour: object, green: object, yellow: object,
            values: Mapping[str, Any]) -> dict[str, Any]:
    """The colour fields of service `name`, checked against its other `values`."""
    if colour is None:
        if green is not None or yellow is not None:
            raise NetloadConfigError(
                f"service {name!r}: green={green!r}/yellow={yellow!r} without colour; add "
                "colour='dscp' (or 'pcp') to mark the service's frames by colour")
        return {"colour": None, "green": None, "yellow": None}
    if not isinstance(colour, str) or colour not in COLOUR_MODES:
        raise NetloadConfigError(f"service {name!r}: colour={colour!r}: give 'dscp' or 'pcp' "
                                 "(the field that carries the colour), or None (colour-blind)")
    mode = str(colour)
    low, high = COLOUR_MODES[mode]
    meaning = "DSCP" if mode == "dscp" else "PCP (802.1p priority)"
    out: dict[str, Any] = {"colour": mode}
    for which, x in (("green", green), ("yellow", yellow)):
        if x is None:
            raise NetloadConfigError(
                f"service {name!r}: colour={colour!r} needs {which}=: the {meaning} of its "
                f"{which} frames, e.g. green={10 if mode == 'dscp' else 2}, "
                f"yellow={12 if mode == 'dscp' else 1}")
        out[which] = _field_int(x, which, name, low, high, meaning)
    if out["green"] == out["yellow"]:
        raise NetloadConfigError(f"service {name!r}: green and yellow are both {green!r}; give "
                                 "them distinct values so the colours are told apart")
    if values.get(mode) is not None:
        raise NetloadConfigError(
            f"service {name!r}: {mode}={values[mode]!r} and colour={mode!r}: with colour "
            f"the green and yellow values set the {meaning}; leave {mode} out")
    if mode == "pcp" and values.get("vlan") is None and values.get("stream") is not None:
        raise NetloadConfigError(
            f"service {name!r}: colour='pcp' needs a VLAN tag to carry the PCP, but its "
            "stream's frames have none: build a tag into the stream (udp(vlan=100), or "
            "Eth() / Vlan(100) / IPv4() / UDP()), or use colour='dscp'")
    if mode == "pcp" and values.get("vlan") is None:
        raise NetloadConfigError(f"service {name!r}: colour='pcp' needs a VLAN tag to carry "
                                 "the PCP; give vlan=, e.g. vlan=100, or use colour='dscp'")
    return out


def _stream(name: str, stream: object, values: dict[str, Any]) -> Mix:
    """Service `name`'s `stream=` as a Mix, checked: it gives the VLAN and the L4 port
    (so vlan= and dport= are refused beside it). Its VLAN is put in `values`
    (colour='pcp' needs one)."""
    for key, what, how in (("vlan", "VLAN tags", "udp(vlan=100) or Eth() / Vlan(100) / ..."),
                           ("dport", "L4 ports", "udp(dport=5000) or UDP(dport=5000)")):
        if values[key] is not None:
            raise NetloadConfigError(
                f"service {name!r}: {key}={values[key]!r} beside stream=: the stream's frames "
                f"carry their own {what}; build it into the stream ({how}) and drop {key}")
    if isinstance(stream, str):
        raise NetloadConfigError(
            f"service {name!r}: stream={stream!r} is not a stream; the service's frame_size "
            "sets its frames' size: give stream= udp(...), tcp(...), a template (Eth() / "
            "Vlan(100) / IPv6() / UDP()), a Stream or a weighted list of them")
    try:
        mix = as_mix(stream)
    except NetloadConfigError as exc:
        raise NetloadConfigError(f"service {name!r}: {exc}") from None
    if any(isinstance(p.source, ReplayFlow) for p in (*mix.forward, *(mix.reverse or ()))):
        raise NetloadConfigError(
            f"service {name!r}: stream= replays a capture, whose frames keep their captured "
            "sizes and bytes, but a service sends frames of its frame_size marked with its "
            "DSCP/PCP: give a udp()/tcp() spec or a template (Eth() / IPv4() / UDP())")
    values["vlan"] = mix.marks().vlan
    return mix


def _stream_marks(name: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The classifier fields the service's stream gives: its L4 destination port, and
    its DSCP and PCP where neither the service nor its colour sets them. Its frames
    must carry the marks the service writes (an IP header for DSCP, a tag for PCP):
    refused here, before any traffic."""
    mix: Mix = values["stream"]
    mode = values.get("colour")
    for colour in ("green", "yellow") if mode is not None else ("green",):
        writes = {"dscp": values["dscp"], "pcp": values["pcp"]}
        if mode is not None:
            writes[mode] = values[colour]
        mix.marked(**writes, what=f"the stream of service {name!r}")
    found = mix.marks()
    out: dict[str, Any] = {"dport": found.dport}
    for key in ("dscp", "pcp"):
        if values[key] is None and values.get("colour") != key:
            out[key] = getattr(found, key)
    return out


def _rate_is_zero(x: object) -> bool:
    if _is_real(x):
        return float(x) == 0  # type: ignore[arg-type]
    if isinstance(x, Rate):
        return x.value == 0
    if isinstance(x, str):
        m = _LEADING_NUMBER.match(x)
        return m is not None and float(m.group(0)) == 0
    return False


def _check_line_rate(line_rate_bps: object) -> float:
    if not _is_real(line_rate_bps) or not math.isfinite(line_rate_bps) \
            or line_rate_bps <= 0:  # type: ignore[operator]
        raise NetloadConfigError(f"line_rate_bps={line_rate_bps!r}: give the port's L1 bit "
                                 "rate > 0, e.g. 10e9, or None where it has none")
    return float(line_rate_bps)  # type: ignore[arg-type]


def check_services(services: Iterable[Service | Mapping[str, Any]],
                   line_rate_bps: float | None) -> tuple[Service, ...]:
    """The services as Service objects, checked together: at least one, unique names, no
    two classifiers a frame could match both, and -- with a line rate (the port's L1 bit
    rate; None: not checkable) -- each CIR+EIR and the sum of the CIRs (the service
    performance test sends every service at its CIR at once) within it, compared at L1."""
    if isinstance(services, (str, bytes, Mapping)) or not isinstance(services, Iterable):
        raise NetloadConfigError(f"services={services!r}: give a list of Service objects or "
                                 "dicts")
    out = tuple(Service.of(s) for s in services)
    if not out:
        raise NetloadConfigError("services is empty; give at least one Service")
    seen: set[str] = set()
    for s in out:
        if s.name in seen:
            raise NetloadConfigError(f"service name {s.name!r} is used twice; give every "
                                     "service its own name")
        seen.add(s.name)
    for i, a in enumerate(out):
        for b in out[i + 1:]:
            how = next((h for ca in a.classifiers for cb in b.classifiers
                        if (h := ca.overlap(cb)) is not None), None) if a.wire == b.wire else None
            if how is not None:
                detail = ", ".join(f"{k} {v}" for k, v in how.items())
                raise NetloadConfigError(
                    f"services {a.name!r} and {b.name!r} overlap: a frame can match both "
                    f"({detail}); give them distinct dscp/pcp/vlan/dport")
    if line_rate_bps is None:
        return out
    line = _check_line_rate(line_rate_bps)
    for s in out:
        l1 = s.l1_bps(s.max_bps)
        if l1 > line * (1 + 1e-12):
            what = "CIR+EIR" if s.eir_bps else "CIR"
            raise NetloadConfigError(
                f"service {s.name!r}: {what} {fmt.bitrate(s.max_bps)} (L2) is "
                f"{fmt.bitrate(l1)} at L1 with {s.frame_size}B frames, above the line rate "
                f"{fmt.bitrate(line)}; lower cir/eir or use a faster port")
    total = sum(s.l1_bps(s.cir_bps) for s in out)
    if total > line * (1 + 1e-12):
        shares = ", ".join(f"{s.name!r} {fmt.bitrate(s.l1_bps(s.cir_bps))}" for s in out)
        raise NetloadConfigError(
            f"the services' CIRs add up to {fmt.bitrate(total)} at L1 ({shares}), above the "
            f"line rate {fmt.bitrate(line)}: the service performance test sends them all at "
            "once; lower their cir or test fewer services together")
    return out


def check_stream_directions(services: Iterable[Service], direction: str) -> None:
    """A service whose stream is bidirectional(...) needs direction="both" (the y1564
    marker's), which tests it on the marker's wire and on its reverse."""
    for s in services:
        if s.stream is not None and s.stream.reverse is not None and direction != "both":
            raise NetloadConfigError(
                f"service {s.name!r}: stream=bidirectional(...) names the reverse wire's "
                "streams, but direction is 'one': add direction='both' to "
                "@pytest.mark.y1564, or give the forward streams alone")
