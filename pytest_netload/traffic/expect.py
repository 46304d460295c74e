"""Expected frames: the frame a stream's packets should be when they come back, as a
value and a mask over the frame's first bytes (`measure.frames.FrameRule`), which the
engine compares in its RX path (native/src/rx_expect.c).

``expect(ttl="sent-1", src="dut_mac", dst="rx_mac", dscp=10, vlan=None)`` says how the
DUT changes the frame it was sent; everything not named must come back as sent. The
rule is built from the stream's own template: the fields the engine varies per packet
(the stream's field ops), the checksums (unless ``checksums=True``), the length fields
of a stream of several frame sizes and the names in ``ignore`` are masked out;
``vlan=None`` expects the first VLAN tag popped (the layout shifts by 4 bytes).
A whole expected frame (a scapy packet, a `Template`, or bytes) may be given instead,
its `ignore`d fields masked likewise.

Values: an int, ``"sent"`` (as sent), ``"sent-1"`` / ``"sent+N"`` (relative to the sent
value), ``ANY`` (don't care), a MAC or IP address as text, or a name the caller resolves
(``names``: ``"dut_mac"``, ``"rx_mac"``, ``"tx_mac"``; the harness passes the topology's).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure.frames import EXPECT_BYTES, FieldRef, FrameRule
from pytest_netload.traffic.packets import Template, from_bytes, from_scapy

__all__ = ["ANY", "Expect", "expect", "field_refs"]

_TPIDS = (0x8100, 0x88A8, 0x9100)
_RELATIVE = re.compile(r"^sent\s*(?:([+-])\s*(\d+))?$")
SIGNATURE_BYTES = 16


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Any()
"""A field whose value does not matter: ``expect(ttl=ANY)``."""
_UNSET: Any = object()

# keyword -> the field it names (IPv4 name, IPv6 name)
_KEYWORDS = {"ttl": ("ip.ttl", "ip.hlim"), "hlim": ("ip.ttl", "ip.hlim"),
             "src": ("eth.src", "eth.src"), "dst": ("eth.dst", "eth.dst"),
             "ip_src": ("ip.src", "ip.src"), "ip_dst": ("ip.dst", "ip.dst"),
             "dscp": ("ip.dscp", "ip.dscp"), "ecn": ("ip.ecn", "ip.ecn"),
             "pcp": ("vlan.pcp", "vlan.pcp")}


def field_refs(t: Template) -> dict[str, FieldRef]:
    """The named fields of template `t`'s headers, for edits, masks and diffs."""
    h = t.headers
    out: dict[str, FieldRef] = {"eth.dst": FieldRef("eth.dst", 0, 6, fmt="mac"),
                                "eth.src": FieldRef("eth.src", 6, 6, fmt="mac")}
    off, i = 12, 0
    while off + 4 <= len(h) and int.from_bytes(h[off:off + 2], "big") in _TPIDS and (
            t.l3_offset < 0 or off + 4 <= t.l3_offset):
        for key in ("vlan", f"vlan{i}") if i == 0 else (f"vlan{i}",):
            out[f"{key}.pcp"] = FieldRef(f"{key}.pcp", off + 2, 2, 0xE000)
            out[f"{key}.id"] = FieldRef(f"{key}.id", off + 2, 2, 0x0FFF)
        off, i = off + 4, i + 1
    out["eth.type"] = FieldRef("eth.type", off, 2, fmt="hex")
    l3, l4 = t.l3_offset, t.l4_offset
    if t.l3_proto == 4:
        for name, at, width, bits, fmt in (
                ("ip.dscp", 1, 1, 0xFC, "int"), ("ip.ecn", 1, 1, 0x03, "int"),
                ("ip.len", 2, 2, 0, "int"), ("ip.id", 4, 2, 0, "int"),
                ("ip.frag", 6, 2, 0, "hex"), ("ip.ttl", 8, 1, 0, "int"),
                ("ip.proto", 9, 1, 0, "int"), ("ip.chksum", 10, 2, 0, "hex"),
                ("ip.src", 12, 4, 0, "ipv4"), ("ip.dst", 16, 4, 0, "ipv4")):
            out[name] = FieldRef(name, l3 + at, width, bits, fmt)
    elif t.l3_proto == 6:
        for name, at, width, bits, fmt in (
                ("ip.dscp", 0, 2, 0x0FC0, "int"), ("ip.ecn", 0, 2, 0x0030, "int"),
                ("ip.flow", 0, 4, 0x000FFFFF, "hex"), ("ip.len", 4, 2, 0, "int"),
                ("ip.nh", 6, 1, 0, "int"), ("ip.hlim", 7, 1, 0, "int"),
                ("ip.src", 8, 16, 0, "ipv6"), ("ip.dst", 24, 16, 0, "ipv6")):
            out[name] = FieldRef(name, l3 + at, width, bits, fmt)
    if t.l4_proto:
        key = "udp" if t.l4_proto == 17 else "tcp"
        parts = [("sport", 0, 2, "int"), ("dport", 2, 2, "int")]
        parts += ([("len", 4, 2, "int"), ("chksum", 6, 2, "hex")] if t.l4_proto == 17 else
                  [("seq", 4, 4, "int"), ("ack", 8, 4, "int"), ("flags", 13, 1, "hex"),
                   ("window", 14, 2, "int"), ("chksum", 16, 2, "hex")])
        for name, at, width, fmt in parts:
            out[f"{key}.{name}"] = FieldRef(f"{key}.{name}", l4 + at, width, 0, fmt)
    return out


def _shifted(ref: FieldRef, by: int) -> FieldRef:
    return FieldRef(ref.name, ref.offset - by, ref.width, ref.bits, ref.fmt)


def _address(ref: FieldRef, text: str, what: str) -> int:
    try:
        if ref.fmt == "mac":
            raw = bytes(int(x, 16) for x in re.split("[:-]", text))
            if len(raw) != 6:
                raise ValueError(text)
            return int.from_bytes(raw, "big")
        if ref.fmt in ("ipv4", "ipv6"):
            return int(ipaddress.ip_address(text))
    except ValueError:
        pass
    raise NetloadConfigError(f"{what}={text!r}: not a value for {ref.name}; give an int, "
                             "'sent', 'sent-1', ANY, an address, or a name the harness knows "
                             "('dut_mac', 'rx_mac', 'tx_mac')")


def _resolve(ref: FieldRef, spec: Any, sent: int, names: Mapping[str, str], what: str) -> int:
    top = (ref.bits or (1 << 8 * ref.width) - 1)
    top >>= (top & -top).bit_length() - 1
    if isinstance(spec, bool):
        raise NetloadConfigError(f"{what}={spec!r}: give a number, not a bool")
    if isinstance(spec, int):
        value = spec
    elif isinstance(spec, str) and _RELATIVE.match(spec.strip()):
        sign, n = _RELATIVE.match(spec.strip()).groups()  # type: ignore[union-attr]
        value = sent + (int(n) if sign == "+" else -int(n) if sign else 0)
    elif isinstance(spec, str) and spec in names:
        value = _address(ref, names[spec], what)
    elif isinstance(spec, str) and spec.endswith("_mac"):
        raise NetloadConfigError(
            f"{what}={spec!r}: this run knows no {spec} (it knows {sorted(names) or 'none'}); "
            "give the address itself, or run through the harness, which names the topology's")
    elif isinstance(spec, str):
        value = _address(ref, spec, what)
    else:
        raise NetloadConfigError(f"{what}={spec!r}: give an int, 'sent', 'sent-1', ANY or an "
                                 "address")
    if not 0 <= value <= top:
        raise NetloadConfigError(f"{what}={spec!r} gives {value} for {ref.name}, outside "
                                 f"0..{top}")
    return value


def _write(buf: bytearray, ref: FieldRef, value: int) -> None:
    raw = int.from_bytes(buf[ref.offset:ref.offset + ref.width], "big")
    if ref.bits:
        shift = (ref.bits & -ref.bits).bit_length() - 1
        raw = (raw & ~ref.bits) | ((value << shift) & ref.bits)
    else:
        raw = value
    buf[ref.offset:ref.offset + ref.width] = raw.to_bytes(ref.width, "big")


def _clear(mask: bytearray, ref: FieldRef) -> None:
    for i, b in enumerate(ref.mask_bits()):
        if ref.offset + i < len(mask):
            mask[ref.offset + i] &= ~b & 0xFF


@dataclass(frozen=True)
class Expect:
    """How a stream's frames should come back (`expect` makes one); `rule` builds its
    `FrameRule` for one stream."""

    changes: tuple[tuple[str, Any], ...] = ()
    ignore: tuple[str, ...] = ()
    pop_vlan: bool = False
    frame: Template | None = field(default=None, repr=False)
    checksums: bool = False
    label: str = "expected"
    only: bool = False

    def describe(self) -> str:
        """Its changes as text: "ip.ttl=sent-1, eth.src=dut_mac, vlan popped"."""
        parts = [f"{k}={v}" for k, v in self.changes]
        if self.pop_vlan:
            parts.append("vlan popped")
        if self.frame is not None:
            parts.append("a whole frame")
        if self.ignore:
            parts.append("ignoring " + ", ".join(self.ignore))
        if self.only:
            return ", ".join(parts) + " (nothing else compared)"
        return ", ".join(parts) or "as sent"

    def rule(self, stream: Any, names: Mapping[str, str] | None = None) -> FrameRule:
        """The `FrameRule` of `stream` (a `traffic.Stream`) under this expectation;
        `names` resolves "dut_mac" and the like."""
        names = dict(names or {})
        tpl = self.frame if self.frame is not None else stream.template
        refs = field_refs(tpl)
        ipv6 = tpl.l3_proto == 6
        headers = bytearray(tpl.headers)
        ignored: list[FieldRef] = []
        named: list[FieldRef] = []
        for key, spec in self.changes:
            name = _KEYWORDS[key][ipv6] if key in _KEYWORDS else key
            if name not in refs:
                raise NetloadConfigError(
                    f"expect({key}=...): the stream's frame has no {name} (its fields: "
                    f"{', '.join(sorted(refs))})")
            ref = refs[name]
            if spec is ANY:
                ignored.append(ref)
                continue
            named.append(ref)
            sent = ref.value(bytes(headers))
            _write(headers, ref, _resolve(ref, spec, sent or 0, names, key))
        for name in self.ignore:
            if name not in refs:
                raise NetloadConfigError(f"expect(ignore=[{name!r}]): no such field; the "
                                         f"frame's fields: {', '.join(sorted(refs))}")
            ignored.append(refs[name])
        sizes = tuple(stream.frame_sizes)
        ops = tuple(stream.fields)
        if self.checksums and (len(sizes) > 1 or ops):
            raise NetloadConfigError(
                "expect(checksums=True): the stream varies its frames (several sizes or field "
                "ops), so its checksums differ frame to frame; leave checksums out")
        edited = Template(bytes(headers), tpl.l3_offset, tpl.l3_proto, tpl.l4_offset,
                          tpl.l4_proto, dict(tpl.fields))
        size = max(sizes[0], edited.min_frame_size(SIGNATURE_BYTES))
        frame = bytearray(edited.frame(size, SIGNATURE_BYTES))
        n = len(headers)
        mask = bytearray(b"\xff" * n)
        for op in ops:
            for i in range(op.offset, op.offset + op.width):
                if i < n:
                    mask[i] = 0
        if not self.checksums:
            for name in ("ip.chksum", "udp.chksum", "tcp.chksum"):
                if name in refs:
                    _clear(mask, refs[name])
        if len(sizes) > 1:
            for name in ("ip.len", "udp.len"):
                if name in refs:
                    _clear(mask, refs[name])
        for ref in ignored:
            _clear(mask, ref)
        if self.only:  # the named fields alone
            mask = bytearray(n)
            for ref in named:
                for i, b in enumerate(ref.mask_bits()):
                    mask[ref.offset + i] |= b
        out_refs = list(refs.values())
        value = bytes(frame[:n])
        if self.pop_vlan:
            tag = int.from_bytes(tpl.headers[12:14], "big")
            if tag not in _TPIDS:
                raise NetloadConfigError(
                    "expect(vlan=None): the stream's frames carry no VLAN tag to pop; leave "
                    "vlan out")
            value = value[:12] + value[16:]
            mask = mask[:12] + mask[16:]
            out_refs = [r if r.offset < 12 else _shifted(r, 4) for r in out_refs
                        if not (12 <= r.offset < 16) or r.name == "eth.type"]
            out_refs = [r for r in out_refs if not r.name.startswith("vlan")]
        value, mask = value[:EXPECT_BYTES], mask[:EXPECT_BYTES]
        seen: set[tuple[int, int, int]] = set()
        unique = []
        for r in out_refs:  # aliases (vlan, vlan0) named once
            if (r.offset, r.width, r.bits) not in seen:
                seen.add((r.offset, r.width, r.bits))
                unique.append(r)
        out_refs = unique
        return FrameRule(bytes(v & m for v, m in zip(value, mask)), bytes(mask), self.label,
                         tuple(out_refs))


def _from_raw(data: bytes) -> Template:
    """A whole expected frame given as bytes: its headers found by scapy where it is
    installed (so its IP and L4 fields have names), else Ethernet's alone."""
    try:
        import scapy.layers.inet  # binds IP/UDP/TCP under Ether
        import scapy.layers.inet6  # noqa: F401
        from scapy.layers.l2 import Ether
    except ImportError:
        return from_bytes(data)
    return from_scapy(Ether(data))


def expect(frame: Any = None, *, ttl: Any = _UNSET, hlim: Any = _UNSET, src: Any = _UNSET,
           dst: Any = _UNSET, ip_src: Any = _UNSET, ip_dst: Any = _UNSET, dscp: Any = _UNSET,
           ecn: Any = _UNSET, pcp: Any = _UNSET, vlan: Any = _UNSET,
           fields: Mapping[str, Any] | None = None, ignore: Sequence[str] = (),
           checksums: bool = False, label: str = "expected", only: bool = False) -> Expect:
    """The expected frame of a stream: as sent, but for the fields named.

    ``ttl`` (IPv6: the hop limit; ``hlim`` the same), ``src``/``dst`` (Ethernet MACs),
    ``ip_src``/``ip_dst``, ``dscp``, ``ecn``, ``pcp`` (the first VLAN tag's priority),
    ``vlan`` (its VLAN id; None: the tag popped), ``fields`` (any named field:
    ``{"udp.dport": 9}``, see `field_refs`), ``ignore`` (field names whose value does
    not matter), ``checksums`` (compare the IP/UDP/TCP checksums too), ``label`` (what
    records and reports call it), ``only`` (compare the named fields alone, e.g. a
    colour: ``expect(dscp=12, only=True)``). `frame`: a whole expected frame (scapy packet,
    `Template`, layer stack or bytes) instead of the stream's own template.
    """
    changes: list[tuple[str, Any]] = []
    for key, value in (("ttl", ttl), ("hlim", hlim), ("src", src), ("dst", dst),
                       ("ip_src", ip_src), ("ip_dst", ip_dst), ("dscp", dscp), ("ecn", ecn),
                       ("pcp", pcp)):
        if value is not _UNSET:
            changes.append((key, value))
    pop = vlan is None
    if vlan is not _UNSET and vlan is not None:
        changes.append(("vlan.id", vlan))
    for key, value in (fields or {}).items():
        changes.append((str(key), value))
    if isinstance(ignore, str):
        ignore = (ignore,)
    tpl: Template | None = None
    if frame is not None:
        if isinstance(frame, (bytes, bytearray)):
            tpl = _from_raw(bytes(frame))
        elif isinstance(frame, Template):
            tpl = frame
        elif hasattr(frame, "build") and not hasattr(frame, "summary"):
            tpl = frame.build()
        else:
            tpl = from_scapy(frame)
    if not isinstance(only, bool) or (only and not changes):
        raise NetloadConfigError(f"expect(only={only!r}): give True with the fields to "
                                 "compare (e.g. expect(dscp=12, only=True)), or leave it out")
    if not isinstance(checksums, bool):
        raise NetloadConfigError(f"expect(checksums={checksums!r}): give True or False")
    if not isinstance(label, str) or not label:
        raise NetloadConfigError(f"expect(label={label!r}): give a name, e.g. 'green'")
    return Expect(tuple(changes), tuple(str(n) for n in ignore), pop, tpl, checksums, label,
                  only)
