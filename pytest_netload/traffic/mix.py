"""What a procedure sends: the `stream=` of the RFC 2544 procedures in any of its forms,
made into the engine's streams for each wire.

`as_mix` takes what a user gives (a `udp()`/`tcp()` spec, a `Template`, a layer stack, a
scapy packet, a `Stream`, several of them weighted, or a `bidirectional(...)` pair) and
checks it before any traffic. `Mix.streams_for(flow, size)` makes the streams of one
wire at one frame size: the procedure's frame size applies, the sending port's VLAN is
the outermost tag, the reverse wire gets the reply (addresses swapped) unless the pair
names its own, and every stream is checked against the wire's addresses
(`check_on_wire`), so a template built for the wrong port fails naming that port.

Pure Python: a flow is anything with `tx` and `rx` port specs (`topology.model.Flow`).
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pytest_netload.errors import NetloadConfigError
from pytest_netload.traffic.packets import FieldOp, Layer, LayerStack, Template
from pytest_netload.traffic.replay import PCAP_SIZE, Replay, ReplayFlow
from pytest_netload.traffic.rewrite import (
    Marks,
    addresses,
    marked,
    marks,
    mirrored,
    pop_vlan,
    push_vlan,
    readdressed,
    vlan_ids,
)
from pytest_netload.traffic.streams import (
    IMIX_PRESETS,
    SIGNATURE_BYTES,
    L4Spec,
    Stream,
    _as_template,
    vlan_tags,
)

__all__ = ["MAX_PARTS", "Mix", "Part", "as_mix", "bidirectional", "check_on_wire",
           "template_label"]

MAX_PARTS = 8  # weighted streams per direction: each is a loaded stream with its own pools

FORMS = ("udp(...) or tcp(...), a Template or layers (Eth() / IPv4() / UDP()), a scapy "
         "packet, a Stream, a list of those or of (stream, weight) pairs, a replayed "
         "capture (from_pcap(path)), or bidirectional(forward, reverse)")


@dataclass(frozen=True)
class Part:
    """One stream of a mix and its weight (a share of the packets of its direction)."""

    source: L4Spec | Stream | ReplayFlow
    weight: float = 1.0

    @property
    def label(self) -> str:
        """The stream's name, else its layers: "udp", "tcp", "vlan-ipv6-udp", "qinq-ipv4-tcp"."""
        if isinstance(self.source, ReplayFlow):
            return self.source.label
        if isinstance(self.source, L4Spec):
            return self.source.name or self.source.protocol
        return self.source.name or template_label(self.source.template)


def template_label(template: Template) -> str:
    tags = len(vlan_ids(template))
    parts = ["vlan" if tags == 1 else "qinq" if tags == 2 else f"{tags}tags" if tags else "",
             {4: "ipv4", 6: "ipv6"}.get(template.l3_proto, "eth"),
             {17: "udp", 6: "tcp"}.get(template.l4_proto, "")]
    return "-".join(p for p in parts if p)


@dataclass(frozen=True)
class Mix:
    """Weighted streams for each direction. `reverse` None: the reverse wire (with
    direction="both") gets the reply of each forward stream."""

    forward: tuple[Part, ...]
    reverse: tuple[Part, ...] | None = None

    def parts(self, reverse: bool) -> tuple[Part, ...]:
        return self.reverse if reverse and self.reverse is not None else self.forward

    def describe(self, reverse: bool = False) -> list[dict[str, Any]]:
        """The parts of one direction for records: label, kind, weight."""
        parts = self.parts(reverse)
        total = sum(p.weight for p in parts)
        return [{"stream": p.label, "kind": _kind(p.source), "share": p.weight / total}
                for p in parts]

    def marked(self, *, dscp: int | None = None, pcp: int | None = None,
               what: str = "the stream") -> Mix:
        """This mix with every stream's DSCP (IPv4 TOS, IPv6 traffic class) and the PCP of
        its outermost VLAN tag set where given (a Y.1564 service's marks, its colour);
        NetloadConfigError naming `what` where a stream has no IP header or no tag."""
        if dscp is None and pcp is None:
            return self

        def part(p: Part) -> Part:
            return replace(p, source=_marked(p.source, dscp, pcp, what))

        return Mix(tuple(part(p) for p in self.forward),
                   None if self.reverse is None else tuple(part(p) for p in self.reverse))

    def marks(self, reverse: bool = False) -> Marks:
        """What a classifier reads in the frames of one direction (VLAN id, PCP, DSCP, L4
        destination port): each field where every stream agrees on it, else None."""
        mirror = reverse and self.reverse is None
        found = [_marks(p.source, mirror) for p in self.parts(reverse)]
        return Marks(*(getattr(found[0], k) if len({getattr(m, k) for m in found}) == 1
                       else None for k in ("vlan", "pcp", "dscp", "dport")))

    def streams_for(self, flow: Any, size: int | str, *, reverse: bool = False,
                    forward_flow: Any = None, ports: Sequence[Any] = (),
                    name: str | None = None, readdress: bool = False
                    ) -> list[tuple[Stream, float]]:
        """The streams of this mix on `flow`'s wire at frame size `size`, each with its share
        of the wire's load (the shares sum to 1). `reverse`: `flow` is the reverse wire of
        a both-ways run, whose forward wire is `forward_flow`; a stream the pair does not
        name for it is the reply of the forward one. `ports` (every port of the topology)
        lets `check_on_wire` name a destination that is another port's address. `name`
        prefixes the streams' names (they must be unique within a run). `readdress`: each
        stream is sent between `flow`'s MACs and IPs whatever its own (RFC 2889: one
        template for every port pair)."""
        parts = self.parts(reverse)
        mirror = reverse and self.reverse is None
        total = sum(p.weight for p in parts)
        wire = f"{flow.tx.name}->{flow.rx.name}"
        out: list[tuple[Stream, float]] = []
        for i, part in enumerate(parts):
            label = part.label if name is None else f"{name}#{i + 1}" if len(parts) > 1 \
                else name
            unique = f"{label} {wire}"
            if any(s.name == unique for s, _ in out):
                unique = f"{label}#{i + 1} {wire}"
            stream: Stream | Any
            if isinstance(part.source, ReplayFlow):
                stream = _replayed(part.source, flow, size, unique, mirror)
            elif size == PCAP_SIZE:
                raise NetloadConfigError(
                    f"frame size {PCAP_SIZE!r} sends a capture's own frames, but stream "
                    f"{unique!r} is not a replay: give stream=from_pcap(path), or frame sizes "
                    "in bytes")
            else:
                template, fields = _bind(part.source, flow, mirror=mirror,
                                         forward_flow=forward_flow, readdress=readdress)
                _check_fits(template, unique, size, wire)
                stream = Stream(template, size=size, fields=fields, name=unique,
                                seed=getattr(part.source, "seed", None),
                                stamp_every=part.source.stamp_every)
            check_on_wire(stream, flow, ports)
            out.append((stream, part.weight / total))
        return out


def _replayed(source: ReplayFlow, flow: Any, size: int | str, name: str, mirror: bool) -> Any:
    """A replayed flow's stream on `flow`'s wire: its frames keep their own sizes."""
    if size != PCAP_SIZE:
        raise NetloadConfigError(
            f"stream {name!r} replays {source.replay.path!r}, whose frames keep their "
            f"captured sizes, but the procedure asks for frame size {size!r}: give "
            f"frame_sizes=[{PCAP_SIZE!r}] (the marker's or the call's)")
    if mirror:
        raise NetloadConfigError(
            f"stream {name!r} replays a capture on one wire; direction='both' needs the "
            "reverse wire's traffic: give bidirectional(from_pcap(a), from_pcap(b)), or "
            "direction='one'")
    return source.stream_on(flow, name)


def _check_fits(template: Template, name: str, size: int | str, wire: str) -> None:
    """The frame size holds the stream's headers and the engine's signature."""
    need = template.min_frame_size(SIGNATURE_BYTES)
    smallest = min(IMIX_PRESETS[size]) if isinstance(size, str) and size in IMIX_PRESETS \
        else size
    if isinstance(smallest, int) and smallest < need:
        tags = vlan_ids(template)
        why = f" (VLAN {'/'.join(map(str, tags))} included)" if tags else ""
        raise NetloadConfigError(
            f"stream {name!r} on wire {wire}: frame size {size!r} is too small for its "
            f"{len(template.headers)} header bytes{why} and the engine's "
            f"{SIGNATURE_BYTES}-byte signature; give frame_sizes of at least {need} B for this "
            "stream (64 B frames carry an untagged IPv4 UDP stream only)")


def _kind(source: L4Spec | Stream | ReplayFlow) -> str:
    if isinstance(source, ReplayFlow):
        return "template"  # its frames, captured (results.schema.json's kinds); named pcap#N
    if isinstance(source, L4Spec):
        return source.protocol
    return "template"


def _marked(source: L4Spec | Stream | ReplayFlow, dscp: int | None, pcp: int | None,
            what: str) -> L4Spec | Stream | ReplayFlow:
    if isinstance(source, ReplayFlow):
        raise NetloadConfigError(
            f"{what} replays a capture, whose frames are sent as captured: they cannot be "
            f"marked with DSCP {dscp} / PCP {pcp}; give a udp()/tcp() spec or a template")
    if isinstance(source, L4Spec):
        if pcp is not None and source.vlan is None:
            raise NetloadConfigError(
                f"{what} has no VLAN tag to carry PCP {pcp}: give the spec one "
                f"({source.protocol}(vlan=100)), or mark the service by DSCP")
        return replace(source, dscp=source.dscp if dscp is None else dscp,
                       pcp=source.pcp if pcp is None else pcp)
    template = marked(source.template, source.fields, dscp=dscp, pcp=pcp, what=what)
    return Stream(template, size=source.size, fields=source.fields, name=source.name,
                  seed=source.seed, stamp_every=source.stamp_every)


def _marks(source: L4Spec | Stream | ReplayFlow, mirror: bool) -> Marks:
    if isinstance(source, ReplayFlow):
        return Marks(None, None, None, None)  # a capture's frames: any
    if isinstance(source, L4Spec):
        tags = vlan_tags(source.vlan)
        return Marks(tags[0] if tags else None, source.pcp if tags else None, source.dscp,
                     source.dport)  # a spec's reply keeps its ports (_bind)
    return marks(source.template, source.fields, reply=mirror)


def _bind(source: L4Spec | Stream, flow: Any, *, mirror: bool, forward_flow: Any,
          readdress: bool = False) -> tuple[Template, tuple[FieldOp, ...]]:
    """The headers and field ops of `source` on `flow`'s wire."""
    if isinstance(source, L4Spec):
        spec = source
        if readdress:
            spec = replace(spec, src=None, dst=None)
        if mirror:
            spec = replace(spec, src=spec.dst, dst=spec.src, src_ips=spec.dst_ips,
                           dst_ips=spec.src_ips)
        bound = spec.for_flow(flow)
        return bound.template, bound.fields
    template, fields = source.template, source.fields
    if mirror:
        own = getattr(forward_flow.tx, "vlan", None) if forward_flow is not None else None
        if own is not None and vlan_ids(template)[:1] == (own,):
            template, fields = pop_vlan(template, fields)  # the forward port's tag: not ours
        template, fields = mirrored(template, fields, src_mac=flow.src_mac,
                                    dst_mac=flow.dst_mac)
    if readdress:
        template = readdressed(template, src_mac=flow.src_mac, dst_mac=flow.dst_mac,
                               src_ip=flow.src_ip, dst_ip=flow.dst_ip)
    port_vlan = getattr(flow.tx, "vlan", None)
    if port_vlan is not None and vlan_ids(template)[:1] != (port_vlan,):
        template, fields = push_vlan(template, port_vlan, fields)
    return template, tuple(fields)


def _source(value: Any) -> L4Spec | Stream:
    """One stream of a mix, checked; templates, layers and scapy packets become Streams."""
    if isinstance(value, str):
        fix = (f"stream={value!r} is a frame size, not a stream: the procedure's "
               f"frame_sizes apply to every stream, so give frame_sizes=[{value!r}]"
               if value in IMIX_PRESETS else f"stream={value!r} is not a stream")
        raise NetloadConfigError(f"{fix}; stream= takes {FORMS}")
    if isinstance(value, Stream):
        return value  # its template and field ops; the procedure's frame size replaces its own
    if isinstance(value, L4Spec):
        if value.size is not None:
            raise NetloadConfigError(
                f"stream {value.name or value.protocol + '()'!r} has its own size="
                f"{value.size!r}, but the procedure's frame sizes apply to the stream: drop "
                f"size= and give the procedure frame_sizes=[...] (e.g. [128] or ['imix'])")
        return value
    if isinstance(value, (Template, Layer, LayerStack)) or any(
            cls.__module__.startswith("scapy") for cls in type(value).__mro__):
        template = _as_template(value)
        return Stream(template, size=template.min_frame_size())  # its size: the procedure's
    raise NetloadConfigError(f"stream={value!r} is not a stream; stream= takes {FORMS}")


def _weight(value: Any, of: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or value <= 0:
        raise NetloadConfigError(f"stream weight {value!r} (of {of!r}): give a positive number, "
                                 "a share of the packets, e.g. [(udp(), 3), (tcp(), 1)]")
    return float(value)


def _is_weighted(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and \
        isinstance(value[1], (int, float)) and not isinstance(value[0], (int, float))


def _parts(value: Any) -> tuple[Part, ...]:
    if isinstance(value, Replay):  # its flows, each its own stream: not bound by MAX_PARTS
        return tuple(Part(flow, w) for flow, w in zip(value.mix_parts(), value.weights()))
    if isinstance(value, Mix):
        raise NetloadConfigError("bidirectional(...) cannot be one direction of another "
                                 "bidirectional(...); give each direction its streams")
    if _is_weighted(value):
        return (Part(_source(value[0]), _weight(value[1], value[0])),)
    if isinstance(value, (list, tuple)):
        if not value:
            raise NetloadConfigError(f"stream=[] is empty; give at least one stream: {FORMS}")
        parts = tuple(Part(_source(v[0]), _weight(v[1], v[0])) if _is_weighted(v)
                      else Part(_source(v)) for v in value)
        if len(parts) > MAX_PARTS:
            raise NetloadConfigError(f"stream= lists {len(parts)} streams, more than "
                                     f"{MAX_PARTS} per direction; merge some (a udp() spec "
                                     "varies ports and addresses with flows=, src_ips=, "
                                     "dst_ips=)")
        return parts
    return (Part(_source(value)),)


def as_mix(value: Any) -> Mix:
    """`stream=` of a procedure or the rfc2544 marker, checked: any of FORMS."""
    if isinstance(value, Mix):
        return value
    return Mix(_parts(value))


def bidirectional(forward: Any, reverse: Any = None) -> Mix:
    """Streams for both wires of a `direction="both"` run: `forward` on the marker's wire,
    `reverse` on its reverse wire (default: the reply of each forward stream, its
    addresses and ports swapped). Each is any form `stream=` takes."""
    return Mix(_parts(forward), None if reverse is None else _parts(reverse))


# ---- a stream against its wire ------------------------------------------------------------


def _port_ips(port: Any) -> list[tuple[str, str]]:
    return [(key, str(getattr(port, key))) for key in ("ip", "peer_ip")
            if getattr(port, key, None) is not None]


def check_on_wire(stream: Stream, flow: Any, ports: Sequence[Any] = ()) -> None:
    """NetloadConfigError, naming the port and what to check, when `stream`'s frames cannot
    cross `flow`'s wire: a destination MAC that is not the wire's peer, an IP family the
    ports do not have, or a destination (source) address that belongs to the sending
    (receiving) side or to another port of the topology."""
    tx, rx = flow.tx, flow.rx
    got = addresses(stream.template)
    where = f"stream {stream.name or stream.label!r} on wire {tx.name}->{rx.name}"
    peer = (f"port {tx.name}'s peer_mac" if getattr(tx, "peer_mac", None) is not None
            else f"port {rx.name}'s mac")
    if got.dst_mac != flow.dst_mac:
        raise NetloadConfigError(
            f"{where}: its destination MAC {got.dst_mac} is not the wire's peer {flow.dst_mac} "
            f"({peer}); the DUT drops frames to any other MAC: build the template with "
            f"Eth(dst={flow.dst_mac!r}), or pass udp()/tcp(), whose MACs come from the topology")
    if got.ip_version is None:
        return  # an L2 stream: no address to check
    for port in (tx, rx):
        for key, ip in _port_ips(port):
            if ipaddress.ip_address(ip).version != got.ip_version:
                raise NetloadConfigError(
                    f"{where}: the stream is IPv{got.ip_version}, but port {port.name}'s {key} "
                    f"{ip} is IPv{ipaddress.ip_address(ip).version}: send "
                    f"IPv{ipaddress.ip_address(ip).version} on this wire, or give the ports "
                    f"IPv{got.ip_version} addresses (ip, peer_ip) in the topology")
    if tx.name == rx.name:
        return  # a hairpin: the port sends to itself
    sending = {ip: f"port {tx.name}'s {key}" for key, ip in _port_ips(tx)}
    receiving = {ip: f"port {rx.name}'s {key}" for key, ip in _port_ips(rx)}
    others = {str(p.ip): f"port {p.name}'s ip" for p in ports
              if getattr(p, "ip", None) is not None and p.name not in (tx.name, rx.name)}
    want = f" ({rx.ip})" if getattr(rx, "ip", None) is not None else ""
    own = {role: str(ipaddress.ip_address(str(port.ip)))
           for role, port in (("destination", rx), ("source", tx))
           if getattr(port, "ip", None) is not None}  # on a switch, a peer_ip is the far port
    for addr, owners, role in ((got.dst_ip, {**others, **sending}, "destination"),
                               (got.src_ip, receiving, "source")):
        if addr is not None and str(ipaddress.ip_address(addr)) in owners and \
                str(ipaddress.ip_address(addr)) != own.get(role):
            raise NetloadConfigError(
                f"{where}: its {role} IP {addr} is {owners[str(ipaddress.ip_address(addr))]}, "
                f"so the frames would not go to port {rx.name}{want}: is the template built "
                "for another wire? Give it the receiving side's address as destination and the "
                "sending side's as source (or pass udp()/tcp(), whose addresses come from the "
                "topology)")
