"""Template rewrites that make one stream fit another wire: VLAN tags pushed or popped,
addresses read, and the mirror image (the reply) of a template.

Pure Python over `packets.Template` and its `FieldOp`s: a rewrite that moves header
bytes moves the field ops that write them too, so a user's modifiers (RFC 2544 §12:
many addresses, many ports) keep rewriting the same header field.
"""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pytest_netload.errors import NetloadConfigError
from pytest_netload.traffic.packets import FieldOp, Template, from_bytes

__all__ = ["Addresses", "Marks", "addresses", "marked", "marks", "mirrored", "pop_vlan",
           "push_vlan", "readdressed", "vlan_ids"]

_TPIDS = (0x8100, 0x88A8, 0x9100)
_TAG_AT = 12  # the first tag follows the two MACs
_TAG_BYTES = 4


def _mac_text(raw: bytes) -> str:
    return ":".join(f"{b:02x}" for b in raw)


def vlan_ids(template: Template) -> tuple[int, ...]:
    """The VLAN ids of the template's tags, outermost first; () when untagged."""
    h, out, off = template.headers, [], _TAG_AT
    end = template.l3_offset if template.l3_offset >= 0 else len(h)
    while off + _TAG_BYTES <= end and struct.unpack_from("!H", h, off)[0] in _TPIDS:
        out.append(struct.unpack_from("!H", h, off + 2)[0] & 0x0FFF)
        off += _TAG_BYTES
    return tuple(out)


@dataclass(frozen=True)
class Addresses:
    """What a template's headers say about where its frames go."""

    dst_mac: str
    src_mac: str
    ip_version: int | None
    """4, 6, or None for a template without an IP header."""
    src_ip: str | None
    dst_ip: str | None


def addresses(template: Template) -> Addresses:
    h, l3 = template.headers, template.l3_offset
    src = dst = None
    if template.l3_proto == 4:
        src, dst = (str(ipaddress.IPv4Address(h[l3 + o: l3 + o + 4])) for o in (12, 16))
    elif template.l3_proto == 6:
        src, dst = (str(ipaddress.IPv6Address(h[l3 + o: l3 + o + 16])) for o in (8, 24))
    return Addresses(_mac_text(h[0:6]), _mac_text(h[6:12]), template.l3_proto or None, src, dst)


def _rebuilt(template: Template, headers: bytes, shift: int) -> Template:
    """`headers` as a template whose L3/L4 offsets moved by `shift` bytes; named fields
    are found again, and the template's own names behind the tag move with it."""
    moved = {k: (o + shift if o >= _TAG_AT else o, w) for k, (o, w) in template.fields.items()}
    out = from_bytes(headers,
                     l3_offset=template.l3_offset + shift if template.l3_offset >= 0 else -1,
                     l4_offset=template.l4_offset + shift if template.l4_offset >= 0 else -1,
                     l3_proto=template.l3_proto, l4_proto=template.l4_proto)
    own = {k: v for k, v in moved.items() if k not in out.fields and v[0] + v[1] <= len(headers)}
    return Template(out.headers, out.l3_offset, out.l3_proto, out.l4_offset, out.l4_proto,
                    {**out.fields, **own})


def _shifted(fields: Sequence[FieldOp], shift: int) -> tuple[FieldOp, ...]:
    return tuple(replace(op, offset=op.offset + shift) if op.offset >= _TAG_AT else op
                 for op in fields)


def push_vlan(template: Template, vid: int, fields: Sequence[FieldOp] = ()
              ) -> tuple[Template, tuple[FieldOp, ...]]:
    """A tag with `vid` pushed outermost (after the MACs), and the field ops moved behind
    it. The tag's TPID is 0x8100 on an untagged frame, 0x88a8 (802.1ad) on a tagged one."""
    h = template.headers
    tpid = 0x88A8 if vlan_ids(template) else 0x8100
    headers = h[:_TAG_AT] + struct.pack("!HH", tpid, vid & 0x0FFF) + h[_TAG_AT:]
    return _rebuilt(template, headers, _TAG_BYTES), _shifted(fields, _TAG_BYTES)


def pop_vlan(template: Template, fields: Sequence[FieldOp] = ()
             ) -> tuple[Template, tuple[FieldOp, ...]]:
    """The outermost tag removed (the template as it was before `push_vlan`); field ops
    that wrote the tag itself are dropped."""
    if not vlan_ids(template):
        return template, tuple(fields)
    h = template.headers
    headers = h[:_TAG_AT] + h[_TAG_AT + _TAG_BYTES:]
    kept = [op for op in fields
            if op.offset + op.width <= _TAG_AT or op.offset >= _TAG_AT + _TAG_BYTES]
    return _rebuilt(template, headers, -_TAG_BYTES), _shifted(kept, -_TAG_BYTES)


def _swaps(template: Template) -> list[tuple[int, int, int]]:
    """(offset a, offset b, width) of the header regions a reply swaps: the IP source and
    destination, and the L4 source and destination ports."""
    l3, l4 = template.l3_offset, template.l4_offset
    out = []
    if template.l3_proto == 4:
        out.append((l3 + 12, l3 + 16, 4))
    elif template.l3_proto == 6:
        out.append((l3 + 8, l3 + 24, 16))
    if template.l4_proto:
        out.append((l4, l4 + 2, 2))
    return out


def mirrored(template: Template, fields: Sequence[FieldOp], *, src_mac: str, dst_mac: str
             ) -> tuple[Template, tuple[FieldOp, ...]]:
    """The reply to `template`: its IP source and destination swapped, its L4 ports
    swapped, and the MACs of the reverse wire (`src_mac`, `dst_mac`). A field op that
    rewrites a swapped field rewrites its counterpart (a source range becomes a
    destination range); one on a MAC stays where it is."""
    swaps = _swaps(template)
    buf = bytearray(template.headers)
    for a, b, width in swaps:
        buf[a: a + width], buf[b: b + width] = template.headers[b: b + width], \
            template.headers[a: a + width]
    buf[0:6] = bytes.fromhex(dst_mac.replace(":", "").replace("-", ""))
    buf[6:12] = bytes.fromhex(src_mac.replace(":", "").replace("-", ""))
    out = Template(bytes(buf), template.l3_offset, template.l3_proto, template.l4_offset,
                   template.l4_proto, template.fields)
    ops = []
    for op in fields:
        for a, b, width in swaps:
            for here, there in ((a, b), (b, a)):
                if here <= op.offset and op.offset + op.width <= here + width:
                    op = replace(op, offset=there + op.offset - here, name=_swapped_name(op.name))
                    break
            else:
                continue
            break
        ops.append(op)
    return out, tuple(ops)


_NAME_SWAPS = {"src": "dst", "dst": "src", "sport": "dport", "dport": "sport",
               "src_hi": "dst_hi", "dst_hi": "src_hi"}


def _swapped_name(name: str | None) -> str | None:
    if name is None or "." not in name:
        return name
    layer, _, part = name.partition(".")
    return f"{layer}.{_NAME_SWAPS.get(part, part)}"


# ---- the marks a classifier reads: DSCP, the outermost tag's PCP ----------------------------


@dataclass(frozen=True)
class Marks:
    """What a DUT's classifier reads in a template's frames; None where the frames carry
    none (no tag, no IP header, no UDP/TCP header) or a field op varies it."""

    vlan: int | None
    pcp: int | None
    dscp: int | None
    dport: int | None


def _written(fields: Sequence[FieldOp], offset: int, width: int) -> FieldOp | None:
    """The first field op that writes a byte of [offset, offset + width)."""
    return next((op for op in fields
                 if op.offset < offset + width and offset < op.offset + op.width), None)


def _dscp_at(template: Template) -> int | None:
    h, l3 = template.headers, template.l3_offset
    if template.l3_proto == 4:
        return h[l3 + 1] >> 2
    if template.l3_proto == 6:
        return ((h[l3] & 0x0F) << 2) | (h[l3 + 1] >> 6)
    return None


def marks(template: Template, fields: Sequence[FieldOp] = (), *, reply: bool = False) -> Marks:
    """The template's classifier fields: the outermost tag's VLAN id and PCP, the DSCP
    (IPv4 TOS, IPv6 traffic class, bits 7-2) and the L4 destination port; with `reply`,
    those of its mirror image (the L4 source port is the reply's destination)."""
    tagged = bool(vlan_ids(template)) and _written(fields, _TAG_AT + 2, 2) is None
    tci = struct.unpack_from("!H", template.headers, _TAG_AT + 2)[0] if tagged else 0
    l3 = template.l3_offset
    dscp = _dscp_at(template) if l3 >= 0 and _written(fields, l3, 2) is None else None
    port_at = template.l4_offset + (0 if reply else 2)
    dport = struct.unpack_from("!H", template.headers, port_at)[0] \
        if template.l4_proto and _written(fields, port_at, 2) is None else None
    return Marks(tci & 0x0FFF if tagged else None, tci >> 13 if tagged else None, dscp, dport)


def marked(template: Template, fields: Sequence[FieldOp] = (), *, dscp: int | None = None,
           pcp: int | None = None, what: str = "the stream") -> Template:
    """The template with its DSCP (IPv4 TOS, IPv6 traffic class, bits 7-2; the ECN bits
    kept) and the PCP of its outermost VLAN tag set, where given. NetloadConfigError,
    naming `what`, where the frames have no IP header (DSCP) or no tag (PCP), or one of
    `fields` rewrites that byte (it would overwrite the mark)."""
    h, l3 = bytearray(template.headers), template.l3_offset
    if dscp is not None:
        if template.l3_proto not in (4, 6):
            raise NetloadConfigError(
                f"{what} has no IPv4 or IPv6 header to carry DSCP {dscp}: send IP traffic "
                "(udp(), or Eth() / IPv4() / UDP()), or mark the service by PCP in a VLAN tag")
        op = _written(fields, l3, 2)
        if op is not None:
            raise NetloadConfigError(
                f"{what}: its field op {op.label} rewrites the byte that carries the DSCP "
                f"({dscp}); drop that field op or leave the DSCP to the stream")
        if template.l3_proto == 4:
            h[l3 + 1] = (dscp << 2) | (h[l3 + 1] & 0x03)
        else:
            tc = (dscp << 2) | ((h[l3 + 1] >> 4) & 0x03)
            h[l3] = 0x60 | (tc >> 4)
            h[l3 + 1] = ((tc & 0x0F) << 4) | (h[l3 + 1] & 0x0F)
    if pcp is not None:
        if not vlan_ids(template):
            raise NetloadConfigError(
                f"{what} has no VLAN tag to carry PCP {pcp}: build a tag into the stream "
                "(udp(vlan=100), or Eth() / Vlan(100) / IPv4() / UDP()), or mark the service "
                "by DSCP")
        op = _written(fields, _TAG_AT + 2, 2)
        if op is not None:
            raise NetloadConfigError(
                f"{what}: its field op {op.label} rewrites the VLAN tag that carries the PCP "
                f"({pcp}); drop that field op or leave the PCP to the stream")
        tci = struct.unpack_from("!H", h, _TAG_AT + 2)[0]
        struct.pack_into("!H", h, _TAG_AT + 2, (pcp << 13) | (tci & 0x1FFF))
    return Template(bytes(h), template.l3_offset, template.l3_proto, template.l4_offset,
                    template.l4_proto, template.fields)


def readdressed(template: Template, *, src_mac: str, dst_mac: str, src_ip: str | None,
                dst_ip: str | None) -> Template:
    """The template sent from `src_mac` to `dst_mac` (RFC 2889: one template for every
    port pair), and between `src_ip` and `dst_ip` where both are given and of the
    template's IP family (else its own addresses stay, for check_on_wire to judge)."""
    h, l3 = bytearray(template.headers), template.l3_offset
    h[0:6] = bytes.fromhex(dst_mac.replace(":", "").replace("-", ""))
    h[6:12] = bytes.fromhex(src_mac.replace(":", "").replace("-", ""))
    if src_ip is not None and dst_ip is not None and template.l3_proto in (4, 6):
        src, dst = ipaddress.ip_address(src_ip), ipaddress.ip_address(dst_ip)
        if src.version == dst.version == template.l3_proto:
            at, width = (12, 4) if template.l3_proto == 4 else (8, 16)
            h[l3 + at: l3 + at + width] = src.packed
            h[l3 + at + width: l3 + at + 2 * width] = dst.packed
    return Template(bytes(h), template.l3_offset, template.l3_proto, template.l4_offset,
                    template.l4_proto, template.fields)
