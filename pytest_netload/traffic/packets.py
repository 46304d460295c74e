"""Packet templates (Ethernet, 802.1Q, IPv4/6, UDP/TCP), a scapy adapter, field-modifier specs.

Pure Python. A Template holds the headers of one stream and pads them into frames with lengths
and checksums filled; a FieldOp is a per-packet header rewrite that the native engine performs.
Compose layers like scapy: ``(Eth() / IPv4() / UDP()).build()``.
"""

from __future__ import annotations

import ipaddress
import re
import struct
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as _dc_field
from types import MappingProxyType
from typing import Any

from pytest_netload.errors import NetloadConfigError
from pytest_netload.extras import require
from pytest_netload.units import FCS_BYTES, MAX_FRAME_BYTES, MIN_FRAME_BYTES

FIELD_WIDTHS = (1, 2, 4, 6, 8)
FIELD_OPS = ("set", "inc", "dec", "random")
_TPIDS = (0x8100, 0x88A8, 0x9100)
_ETH_EXPERIMENTAL = 0x88B5  # IEEE 802 local experimental ethertype: a stack without L3
_IP_PROTO_TESTING = 253  # RFC 3692 experimentation: IPv4 without L4 (IPv6 gets 59, no next header)
_TCP_FLAGS = "FSRPAUEC"

Addr = str | int | ipaddress.IPv4Address | ipaddress.IPv6Address
Mac = str | bytes | int


def _uint(what: str, value: object, bits: int) -> int:
    top = (1 << bits) - 1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise NetloadConfigError(f"{what}={value!r} is invalid; use an integer in 0..{top}")
    return value


def _mac(what: str, value: object) -> bytes:
    if isinstance(value, (bytes, bytearray)) and len(value) == 6:
        return bytes(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _uint(what, value, 48).to_bytes(6, "big")
    if isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]{1,2}([:-][0-9a-fA-F]{1,2}){5}", value):
        return bytes(int(part, 16) for part in re.split("[:-]", value))
    raise NetloadConfigError(f"{what}={value!r} is not a MAC; use 'aa:bb:cc:dd:ee:ff', 6 bytes "
                             "or an int")


def _ip(what: str, value: object, version: int) -> bytes:
    try:
        addr = None if isinstance(value, bool) else ipaddress.ip_address(value)  # type: ignore
    except ValueError:
        addr = None
    if addr is None or addr.version != version:
        raise NetloadConfigError(f"{what}={value!r} is not an IPv{version} address; pass a string "
                                 "or an int")
    return addr.packed


class Layer(ABC):
    """One header; compose with ``/`` and finish with ``.build()``."""

    def __truediv__(self, other: Layer | LayerStack) -> LayerStack:
        return LayerStack((self,)) / other

    def build(self) -> Template:
        return LayerStack((self,)).build()

    @abstractmethod
    def encode(self, following: tuple[Layer, ...]) -> bytes:
        """The header bytes, given the layers that follow it (lengths and checksums zero)."""

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


def _ethertype(following: tuple[Layer, ...], outer: bool) -> int:
    if not following:
        return _ETH_EXPERIMENTAL
    nxt = following[0]
    if isinstance(nxt, Vlan):
        if nxt.tpid is not None:
            return nxt.tpid
        stacked = outer and len(following) > 1 and isinstance(following[1], Vlan)
        return 0x88A8 if stacked else 0x8100
    return 0x0800 if isinstance(nxt, IPv4) else 0x86DD


def _ip_proto(following: tuple[Layer, ...], none: int) -> int:
    return none if not following else (17 if isinstance(following[0], UDP) else 6)


class Eth(Layer):
    """Ethernet II header; ``type`` None: taken from the next layer."""

    def __init__(self, dst: Mac = "02:00:00:00:00:02", src: Mac = "02:00:00:00:00:01",
                 type: int | None = None) -> None:
        self.dst, self.src = _mac("Eth dst", dst), _mac("Eth src", src)
        self.type = None if type is None else _uint("Eth type", type, 16)

    def encode(self, following: tuple[Layer, ...]) -> bytes:
        etype = _ethertype(following, outer=True) if self.type is None else self.type
        return self.dst + self.src + struct.pack("!H", etype)


class Vlan(Layer):
    """802.1Q tag; the outer tag of a stack gets TPID 0x88a8 unless ``tpid`` says otherwise."""

    def __init__(self, vid: int, pcp: int = 0, dei: int = 0, tpid: int | None = None) -> None:
        self.vid, self.pcp = _uint("Vlan vid", vid, 12), _uint("Vlan pcp", pcp, 3)
        self.dei = _uint("Vlan dei", dei, 1)
        self.tpid = None if tpid is None else _uint("Vlan tpid", tpid, 16)

    def encode(self, following: tuple[Layer, ...]) -> bytes:
        tci = self.pcp << 13 | self.dei << 12 | self.vid
        return struct.pack("!HH", tci, _ethertype(following, outer=False))


class IPv4(Layer):
    """IPv4 header without options; total length and checksum are filled per frame."""

    version = 4

    def __init__(self, src: Addr = "198.18.0.1", dst: Addr = "198.19.0.1", ttl: int = 64,
                 tos: int = 0, id: int = 0, proto: int | None = None,
                 df: bool = True) -> None:
        self.src, self.dst = _ip("IPv4 src", src, 4), _ip("IPv4 dst", dst, 4)
        self.ttl, self.tos = _uint("IPv4 ttl", ttl, 8), _uint("IPv4 tos", tos, 8)
        self.id = _uint("IPv4 id", id, 16)
        self.proto = None if proto is None else _uint("IPv4 proto", proto, 8)
        self.df = bool(df)

    def encode(self, following: tuple[Layer, ...]) -> bytes:
        proto = _ip_proto(following, _IP_PROTO_TESTING) if self.proto is None else self.proto
        flags = 0x4000 if self.df else 0
        return struct.pack("!BBHHHBBH4s4s", 0x45, self.tos, 0, self.id, flags, self.ttl, proto, 0,
                           self.src, self.dst)


class IPv6(Layer):
    """IPv6 header; payload length is filled per frame."""

    version = 6

    def __init__(self, src: Addr = "2001:2::1", dst: Addr = "2001:2:0:1::1", hlim: int = 64,
                 tc: int = 0, flow: int = 0, nh: int | None = None) -> None:
        self.src, self.dst = _ip("IPv6 src", src, 6), _ip("IPv6 dst", dst, 6)
        self.hlim, self.tc = _uint("IPv6 hlim", hlim, 8), _uint("IPv6 tc", tc, 8)
        self.flow = _uint("IPv6 flow", flow, 20)
        self.nh = None if nh is None else _uint("IPv6 nh", nh, 8)

    def encode(self, following: tuple[Layer, ...]) -> bytes:
        nh = _ip_proto(following, 59) if self.nh is None else self.nh
        first = 6 << 28 | self.tc << 20 | self.flow
        return struct.pack("!IHBB16s16s", first, 0, nh, self.hlim, self.src, self.dst)


class UDP(Layer):
    """UDP header; length and checksum are filled per frame."""

    proto = 17

    def __init__(self, sport: int = 1024, dport: int = 9) -> None:
        self.sport, self.dport = _uint("UDP sport", sport, 16), _uint("UDP dport", dport, 16)

    def encode(self, following: tuple[Layer, ...]) -> bytes:
        return struct.pack("!HHHH", self.sport, self.dport, 0, 0)


class TCP(Layer):
    """TCP header without options; ``flags`` as letters of "FSRPAUEC" or an int."""

    proto = 6

    def __init__(self, sport: int = 1024, dport: int = 9, seq: int = 0, ack: int = 0,
                 flags: str | int = "S", window: int = 65535) -> None:
        self.sport, self.dport = _uint("TCP sport", sport, 16), _uint("TCP dport", dport, 16)
        self.seq, self.ack = _uint("TCP seq", seq, 32), _uint("TCP ack", ack, 32)
        self.window = _uint("TCP window", window, 16)
        if isinstance(flags, str):
            if not set(flags) <= set(_TCP_FLAGS):
                raise NetloadConfigError(f"TCP flags={flags!r} is invalid; use letters of "
                                         f"{_TCP_FLAGS!r} or an int")
            flags = sum(1 << _TCP_FLAGS.index(c) for c in set(flags))
        self.flags = _uint("TCP flags", flags, 8)

    def encode(self, following: tuple[Layer, ...]) -> bytes:
        return struct.pack("!HHIIBBHHH", self.sport, self.dport, self.seq, self.ack, 5 << 4,
                           self.flags, self.window, 0, 0)


_FOLLOWERS: dict[type[Layer], tuple[type[Layer], ...]] = {
    Eth: (Vlan, IPv4, IPv6), Vlan: (Vlan, IPv4, IPv6), IPv4: (UDP, TCP), IPv6: (UDP, TCP),
    UDP: (), TCP: (),
}


@dataclass(frozen=True)
class LayerStack:
    """Layers composed with ``/``; ``.build()`` makes the Template."""

    layers: tuple[Layer, ...]

    def __truediv__(self, other: Layer | LayerStack) -> LayerStack:
        if isinstance(other, Layer):
            return LayerStack((*self.layers, other))
        if isinstance(other, LayerStack):
            return LayerStack(self.layers + other.layers)
        return NotImplemented

    def build(self) -> Template:
        names = " / ".join(type(layer).__name__ for layer in self.layers)
        if type(self.layers[0]) is not Eth:
            raise NetloadConfigError(f"layers {names!r} must start with Eth(); prepend Eth() /")
        for prev, layer in zip(self.layers, self.layers[1:]):
            if type(layer) not in _FOLLOWERS[type(prev)]:
                raise NetloadConfigError(
                    f"layers {names!r}: {type(layer).__name__} cannot follow "
                    f"{type(prev).__name__}; use Eth / [Vlan ...] / [IPv4|IPv6 [/ UDP|TCP]]")
        out = bytearray()
        l3 = l4 = -1
        l3p = l4p = 0
        for i, layer in enumerate(self.layers):
            if isinstance(layer, (IPv4, IPv6)):
                l3, l3p = len(out), layer.version
            elif isinstance(layer, (UDP, TCP)):
                l4, l4p = len(out), layer.proto
            out += layer.encode(self.layers[i + 1:])
        return from_bytes(bytes(out), l3_offset=l3, l4_offset=l4, l3_proto=l3p, l4_proto=l4p)


def _csum(data: bytes | bytearray, start: int = 0) -> int:
    """Internet checksum (RFC 1071) of ``data``; ``start`` adds a partial sum."""
    if len(data) % 2:
        data = bytes(data) + b"\0"
    total: int = start + sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


@dataclass(frozen=True)
class Template:
    """Headers of one stream, their L3/L4 offsets and named fields (name -> (offset, width))."""

    headers: bytes
    l3_offset: int = -1
    l3_proto: int = 0
    l4_offset: int = -1
    l4_proto: int = 0
    fields: Mapping[str, tuple[int, int]] = _dc_field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", bytes(self.headers))
        object.__setattr__(self, "fields", MappingProxyType(dict(self.fields)))
        _validate(self)

    def __hash__(self) -> int:
        return hash((self.headers, self.l3_offset, self.l3_proto, self.l4_offset, self.l4_proto,
                     tuple(sorted(self.fields.items()))))

    def min_frame_size(self, trailer_bytes: int = 0) -> int:
        """Smallest frame size (FCS included) that holds the headers and the trailer."""
        _uint("trailer_bytes", trailer_bytes, 16)
        return max(MIN_FRAME_BYTES, len(self.headers) + trailer_bytes) + FCS_BYTES

    def check_size(self, size: int, trailer_bytes: int = 0) -> int:
        """Raise unless a ``size``-byte frame (FCS included) fits; return its length without FCS."""
        need, top = self.min_frame_size(trailer_bytes), MAX_FRAME_BYTES + FCS_BYTES
        if isinstance(size, bool) or not isinstance(size, int):
            raise NetloadConfigError(f"frame size {size!r} is not an int; pass bytes, FCS included")
        if size > top:
            raise NetloadConfigError(f"frame size {size} exceeds the jumbo limit {top} (FCS "
                                     f"included); use size <= {top}")
        if size < need:
            raise NetloadConfigError(
                f"frame size {size} (FCS included) is too small for {len(self.headers)} header "
                f"bytes, a {trailer_bytes}-byte trailer and the FCS; use size >= {need}")
        return size - FCS_BYTES

    def frame(self, size: int, trailer_bytes: int = 0) -> bytes:
        """The frame of ``size`` bytes (FCS included, not returned): zero payload, sums filled."""
        length = self.check_size(size, trailer_bytes)
        l3, l4 = self.l3_offset, self.l4_offset
        buf = bytearray(length)
        buf[: len(self.headers)] = self.headers
        pseudo = b""
        if self.l3_proto == 4:
            ihl = (buf[l3] & 0x0F) * 4
            struct.pack_into("!H", buf, l3 + 2, length - l3)
            struct.pack_into("!H", buf, l3 + 10, 0)
            struct.pack_into("!H", buf, l3 + 10, _csum(buf[l3: l3 + ihl]))
            pseudo = bytes(buf[l3 + 12: l3 + 20]) + struct.pack("!xBH", self.l4_proto, length - l4)
        elif self.l3_proto == 6:
            struct.pack_into("!H", buf, l3 + 4, length - l3 - 40)
            pseudo = bytes(buf[l3 + 8: l3 + 40]) + struct.pack("!I3xB", length - l4, self.l4_proto)
        if self.l4_proto:
            at = l4 + (6 if self.l4_proto == 17 else 16)
            if self.l4_proto == 17:
                struct.pack_into("!H", buf, l4 + 4, length - l4)
            struct.pack_into("!H", buf, at, 0)
            csum = _csum(buf[l4:], start=0xFFFF - _csum(pseudo))
            struct.pack_into("!H", buf, at, 0xFFFF if csum == 0 and self.l4_proto == 17 else csum)
        return bytes(buf)


def _validate(t: Template) -> None:
    n, h, l3, l4 = len(t.headers), t.headers, t.l3_offset, t.l4_offset
    if not 14 <= n <= MAX_FRAME_BYTES:
        raise NetloadConfigError(f"template of {n} bytes: use 14..{MAX_FRAME_BYTES} header bytes, "
                                 "an Ethernet header first")
    for what, off, proto, ok in (("l3", l3, t.l3_proto, (4, 6)), ("l4", l4, t.l4_proto, (6, 17))):
        if proto not in (0, *ok):
            raise NetloadConfigError(f"{what}_proto={proto!r} is invalid; use 0, {ok[0]} or "
                                     f"{ok[1]}")
        if (proto == 0) != (off == -1):
            raise NetloadConfigError(f"{what}_offset={off!r} with {what}_proto={proto}: "
                                     "pass both or neither")
        if off != -1 and (not isinstance(off, int) or not 14 <= off < n or off % 2):
            raise NetloadConfigError(f"{what}_offset={off!r} is invalid for {n} header bytes; "
                                     f"use an even offset in 14..{n - 1} (checksums sum 16-bit "
                                     "words)")
    if t.l4_proto and not t.l3_proto:
        raise NetloadConfigError(f"l4_proto={t.l4_proto} needs an IP header for its checksum; "
                                 "pass l3_offset and l3_proto")
    if t.l3_proto == 4:
        ihl = (h[l3] & 0x0F) * 4
        if h[l3] >> 4 != 4 or ihl < 20 or l3 + ihl > n:
            raise NetloadConfigError(f"no IPv4 header at l3_offset={l3} (first byte {h[l3]:#04x}); "
                                     "fix the offset")
        if t.l4_proto and (l4 != l3 + ihl or h[l3 + 9] != t.l4_proto):
            raise NetloadConfigError(f"l4_offset={l4}/l4_proto={t.l4_proto} disagree with the IPv4 "
                                     f"header (ends at {l3 + ihl}, protocol {h[l3 + 9]}); fix one")
    if t.l3_proto == 6:
        if h[l3] >> 4 != 6 or l3 + 40 > n:
            raise NetloadConfigError(f"no IPv6 header at l3_offset={l3} (first byte {h[l3]:#04x}); "
                                     "fix the offset")
        if t.l4_proto and (l4 < l3 + 40 or (l4 == l3 + 40 and h[l3 + 6] != t.l4_proto)):
            raise NetloadConfigError(f"l4_offset={l4}/l4_proto={t.l4_proto} disagree with the IPv6 "
                                     f"header at {l3} (next header {h[l3 + 6]}); fix one")
    if t.l4_proto:
        hlen = 8 if t.l4_proto == 17 else 20
        if t.l4_proto == 6 and l4 + hlen <= n:
            hlen = max(hlen, (h[l4 + 12] >> 4) * 4)
        if l4 + hlen > n:
            raise NetloadConfigError(f"the {hlen}-byte L4 header at l4_offset={l4} overruns the "
                                     f"{n} header bytes; include the whole UDP/TCP header")
    for name, (off, width) in t.fields.items():
        if width not in FIELD_WIDTHS or not 0 <= off <= n - width:
            raise NetloadConfigError(f"template field {name!r}=({off}, {width}) is outside the "
                                     f"{n} header bytes or not {FIELD_WIDTHS} wide; fix it")


def _standard_fields(h: bytes, l3: int, l3p: int, l4: int, l4p: int) -> dict[str, tuple[int, int]]:
    f = {"eth.dst": (0, 6), "eth.src": (6, 6), "eth.type": (12, 2)}
    off, i = 12, 0
    while off + 4 <= len(h) and int.from_bytes(h[off: off + 2], "big") in _TPIDS and (
            l3 < 0 or off + 4 <= l3):
        for key in (f"vlan{i}", "vlan") if i == 0 else (f"vlan{i}",):
            f[f"{key}.tci"] = f[f"{key}.id"] = (off + 2, 2)
        off, i = off + 4, i + 1
    if l3p == 4:
        f.update({"ip.tos": (l3 + 1, 1), "ip.id": (l3 + 4, 2), "ip.ttl": (l3 + 8, 1),
                  "ip.src": (l3 + 12, 4), "ip.dst": (l3 + 16, 4)})
    elif l3p == 6:
        f.update({"ip.hlim": (l3 + 7, 1), "ipv6.src_hi": (l3 + 8, 8), "ip.src": (l3 + 16, 8),
                  "ipv6.dst_hi": (l3 + 24, 8), "ip.dst": (l3 + 32, 8)})
    if l4p:
        for key in ("udp" if l4p == 17 else "tcp", "l4"):
            f.update({f"{key}.sport": (l4, 2), f"{key}.dport": (l4 + 2, 2)})
        if l4p == 6:
            f.update({"tcp.seq": (l4 + 4, 4), "tcp.ack": (l4 + 8, 4)})
    return f


def from_bytes(data: bytes, *, l3_offset: int = -1, l4_offset: int = -1, l3_proto: int = 0,
               l4_proto: int = 0) -> Template:
    """A Template from raw header bytes (Ethernet first, no payload); names the fields found."""
    data = bytes(data)
    Template(data, l3_offset, l3_proto, l4_offset, l4_proto)  # validate before naming fields
    return Template(data, l3_offset, l3_proto, l4_offset, l4_proto,
                    _standard_fields(data, l3_offset, l3_proto, l4_offset, l4_proto))


def from_scapy(pkt: Any) -> Template:
    """A Template from a scapy packet; the payload after its UDP/TCP header is dropped."""
    require("scapy.layers.inet", "scapy", "from_scapy()")
    from scapy.layers.inet import IP
    from scapy.layers.inet import TCP as STCP
    from scapy.layers.inet import UDP as SUDP
    from scapy.layers.inet6 import IPv6 as SIPv6
    from scapy.layers.l2 import Ether
    from scapy.packet import NoPayload
    if not isinstance(pkt, Ether):
        raise NetloadConfigError(f"scapy packet {pkt!r} does not start with Ether(); prepend "
                                 "Ether() /")
    raw = bytes(pkt)
    l3s: list[tuple[int, int]] = []
    l4s: list[tuple[int, int, int]] = []
    layer: Any = Ether(raw)
    while not isinstance(layer, NoPayload):
        off, kind = len(raw) - len(bytes(layer)), type(layer)
        if kind is IP or kind is SIPv6:
            l3s.append((off, 4 if kind is IP else 6))
        elif (kind is SUDP or kind is STCP) and l3s and not l4s:
            l4s.append((off, 17, 8) if kind is SUDP else (off, 6, layer.dataofs * 4))
        layer = layer.payload
    if len(l3s) > 1:
        raise NetloadConfigError(
            f"scapy packet {pkt.summary()!r} has {len(l3s)} IP headers (a tunnel); pass its bytes "
            "to from_bytes(...) with the offsets of the IP/L4 headers whose sums the engine keeps")
    l3, l3p = l3s[0] if l3s else (-1, 0)
    l4, l4p, hlen = l4s[0] if l4s else (-1, 0, 0)
    headers = raw[: l4 + hlen] if l4s else raw
    return from_bytes(headers, l3_offset=l3, l4_offset=l4, l3_proto=l3p, l4_proto=l4p)


@dataclass(frozen=True)
class FieldOp:
    """A header rewrite done by the engine per packet: set / inc / dec / random over [min, max]."""

    offset: int
    width: int
    op: str
    min: int
    max: int
    step: int = 1
    name: str | None = _dc_field(default=None, compare=False)

    @property
    def label(self) -> str:
        return f"field {self.name!r}" if self.name else f"field at offset {self.offset}"

    def __post_init__(self) -> None:
        lab = self.label
        _check_op_width(lab, self.op, self.width)
        for key in ("offset", "min", "max", "step"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise NetloadConfigError(f"{lab}: {key} {value!r} is invalid; use an int >= 0")
            if key in ("min", "max") and value >> 8 * self.width:
                raise NetloadConfigError(f"{lab}: {key} {value} does not fit {self.width} bytes; "
                                         f"use a value <= {(1 << 8 * self.width) - 1}")
        if self.min > self.max:
            raise NetloadConfigError(f"{lab}: min {self.min} > max {self.max}; swap them "
                                     "(op 'dec' counts down)")
        if self.op == "set" and self.min != self.max:
            raise NetloadConfigError(f"{lab}: op 'set' writes one value, not "
                                     f"{self.min}..{self.max}; pass value= to field(), or use op "
                                     "'inc' or 'random'")
        if self.step < 1 or (self.max > self.min and self.step > self.max - self.min):
            raise NetloadConfigError(f"{lab}: step {self.step} is invalid for "
                                     f"{self.min}..{self.max}; use 1 <= step <= "
                                     f"{max(1, self.max - self.min)}")

    def check(self, frame_len: int, trailer_offset: int) -> None:
        """Raise unless the field lies inside a ``frame_len``-byte frame, before its trailer."""
        end, trailer = self.offset + self.width, frame_len - trailer_offset
        where = f"{self.label} (bytes {self.offset}..{end - 1})"
        if end > frame_len:
            raise NetloadConfigError(f"{where} lies outside the {frame_len}-byte frame (FCS "
                                     f"excluded); use frame size >= {end + trailer + FCS_BYTES}")
        if end > trailer_offset:
            raise NetloadConfigError(
                f"{where} overlaps the {trailer}-byte signature trailer at bytes {trailer_offset}.."
                f"{frame_len - 1}; use frame size >= {end + trailer + FCS_BYTES} or move the field")

    def as_spec(self) -> dict[str, int | str]:
        """The engine's view: plain types, without the name."""
        return {"offset": self.offset, "width": self.width, "op": self.op, "min": self.min,
                "max": self.max, "step": self.step}


def _check_op_width(lab: str, op: object, width: object) -> None:
    if op not in FIELD_OPS:
        raise NetloadConfigError(f"{lab}: op {op!r} is unknown; use one of {', '.join(FIELD_OPS)}")
    if width not in FIELD_WIDTHS:
        raise NetloadConfigError(f"{lab}: width {width!r} is unsupported; use one of "
                                 f"{FIELD_WIDTHS}")


def _field_value(t: Template, name: str | None, lab: str, value: object, width: int,
                 offset: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, (bytes, bytearray)) and len(value) == width:
        return int.from_bytes(value, "big")
    if isinstance(value, (str, ipaddress.IPv4Address)) and width == 4:
        return int.from_bytes(_ip(lab, value, 4), "big")
    if isinstance(value, str) and width == 6:
        return int.from_bytes(_mac(lab, value), "big")
    if name in ("ip.src", "ip.dst", "ipv6.src_hi", "ipv6.dst_hi") and t.l3_proto == 6:
        packed = _ip(lab, value, 6)
        if name.endswith("_hi"):
            return int.from_bytes(packed[:8], "big")
        if packed[:8] != t.headers[offset - 8: offset]:
            upper = ipaddress.IPv6Address(t.headers[offset - 8: offset] + bytes(8))
            raise NetloadConfigError(f"{lab}={value!r} differs from the template's upper 64 bits "
                                     f"({upper}/64); change the template or rewrite 'ipv6.*_hi'")
        return int.from_bytes(packed[8:], "big")
    raise NetloadConfigError(f"{lab}={value!r} is no value for a {width}-byte field; pass an int")


def field(template: Template, name_or_offset: str | int, op: str, *, min: Any = None,
          max: Any = None, value: Any = None, step: int = 1,
          width: int | None = None) -> FieldOp:
    """A FieldOp on a named template field, or on a raw byte offset given ``width``.

    Addresses and MACs may be strings. ``vlan*.id`` takes VLAN ids (0..4095) and keeps the
    template's PCP/DEI bits; ``vlan*.tci`` takes the whole TCI.
    """
    name = name_or_offset if isinstance(name_or_offset, str) else None
    if name is not None:
        if name not in template.fields:
            known = ", ".join(sorted(template.fields))
            raise NetloadConfigError(f"field {name!r} is not in this template; use one of {known} "
                                     "or a byte offset and width=")
        offset, own = template.fields[name]
        if width is not None and width != own:
            raise NetloadConfigError(f"field {name!r}: width {width} is not its width {own}; "
                                     "omit width=")
        width = own
    elif isinstance(name_or_offset, int) and not isinstance(name_or_offset, bool):
        offset = name_or_offset
        if width is None:
            raise NetloadConfigError(f"field at offset {offset}: a raw offset needs width=, one "
                                     f"of {FIELD_WIDTHS}")
        if not 0 <= offset < MAX_FRAME_BYTES:
            raise NetloadConfigError(f"field at offset {offset}: give a byte offset from 0 to "
                                     f"{MAX_FRAME_BYTES - 1} (inside the largest frame)")
    else:
        raise NetloadConfigError(f"field {name_or_offset!r} is neither a name nor a byte offset")
    lab = f"field {name!r}" if name else f"field at offset {offset}"
    _check_op_width(lab, op, width)
    if op == "set":
        if value is None or min is not None or max is not None:
            raise NetloadConfigError(f"{lab}: op 'set' takes value= only, got value={value!r}, "
                                     f"min={min!r}, max={max!r}")
        min = max = value
    elif value is not None:
        raise NetloadConfigError(f"{lab}: value={value!r} is for op 'set'; pass min=/max= "
                                 f"with op {op!r}")
    vlan_id = name is not None and re.fullmatch(r"vlan\d*\.id", name) is not None
    top = 0xFFF if vlan_id else (1 << 8 * width) - 1
    lo_key, hi_key = ("value", "value") if op == "set" else ("min", "max")
    lo = _field_value(template, name, f"{lab}: {lo_key}", 0 if min is None else min, width,
                      offset)
    hi = _field_value(template, name, f"{lab}: {hi_key}", top if max is None else max, width,
                      offset)
    if vlan_id:
        for key, v in (("min", lo), ("max", hi)):
            if not 0 <= v <= 0xFFF:
                raise NetloadConfigError(f"{lab}: {key} {v} is not a VLAN id; use 0..4095, "
                                         "or 'vlan.tci' for the whole TCI")
        pcp_dei = int.from_bytes(template.headers[offset: offset + 2], "big") & 0xF000
        lo, hi = lo | pcp_dei, hi | pcp_dei
    return FieldOp(offset, width, op, lo, hi, step, name)
