"""Streams: a packet template, frame sizes and field ops, compiled into the engine's spec dict.

Pure Python; ``Stream.compile()`` returns plain types only, since the spec crosses a process
boundary (execnet) to the engine host. The engine types that dict as
``engine.protocol.StreamSpec``, field for field (this layer is below the engine and never
imports it).
"""

from __future__ import annotations

import functools
import ipaddress
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as _dc_field
from types import MappingProxyType
from typing import Any

from pytest_netload import _native_facts
from pytest_netload.errors import NetloadConfigError
from pytest_netload.traffic.packets import FieldOp, Layer, LayerStack, Template, from_scapy
from pytest_netload.units import FCS_BYTES

SIGNATURE_BYTES = _native_facts.SIGNATURE_BYTES

#: Frame-size mixes by name: {frame size with FCS: weight}. Simple IMIX is 7:4:1 of 64/594/1518.
IMIX_PRESETS: Mapping[str, Mapping[int, int]] = MappingProxyType({
    "imix": MappingProxyType({64: 7, 594: 4, 1518: 1}),
    "imix-simple": MappingProxyType({64: 7, 594: 4, 1518: 1}),
})
MAX_SEQUENCE = 65535  # frame-size sequence entries per stream
MAX_FRAMES = 64  # distinct frame sizes per stream; the facade checks the native core agrees

SizeSpec = int | Sequence[int] | Mapping[int, int] | str


def smooth_weighted_round_robin(weights: Sequence[int]) -> list[int]:
    """One period of smooth weighted round robin: index i appears weights[i] times, spread out."""
    total, current = sum(weights), [0] * len(weights)
    order: list[int] = []
    for _ in range(total):
        for i, weight in enumerate(weights):
            current[i] += weight
        best = max(range(len(weights)), key=current.__getitem__)  # the first one on ties
        current[best] -= total
        order.append(best)
    return order


def _as_template(template: object) -> Template:
    if isinstance(template, Template):
        return template
    if isinstance(template, (Layer, LayerStack)):
        return template.build()
    if any(cls.__module__.startswith("scapy") for cls in type(template).__mro__):
        return from_scapy(template)
    raise NetloadConfigError(f"template {template!r} is not a Template, a layer stack or a scapy "
                             "packet; build one with Eth() / IPv4() / UDP()")


def _is_size(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _plan(size: object) -> tuple[Any, tuple[int, ...], tuple[int, ...]]:
    """(stored size spec, distinct sizes, frame index per packet) of a size argument."""
    if isinstance(size, str):
        if size not in IMIX_PRESETS:
            raise NetloadConfigError(f"size {size!r} is not a preset; use one of "
                                     f"{', '.join(IMIX_PRESETS)}, an int, a list or "
                                     "{size: weight}")
        _, sizes, sequence = _plan(IMIX_PRESETS[size])
        return size, sizes, sequence
    if _is_size(size):
        return size, (size,), (0,)  # type: ignore[return-value]
    if isinstance(size, Mapping):
        weights = dict(size)
        for key, weight in weights.items():
            if not _is_size(key):
                raise NetloadConfigError(f"size {key!r} in {weights!r} is not an int frame size")
            if not _is_size(weight) or weight < 1:
                raise NetloadConfigError(f"size {key}: weight {weight!r} is invalid; use an "
                                         "int >= 1")
        if not weights:
            raise NetloadConfigError("size {} is empty; give at least one {size: weight}")
        divisor = math.gcd(*weights.values())
        reduced = [w // divisor for w in weights.values()]
        if sum(reduced) > MAX_SEQUENCE:
            raise NetloadConfigError(f"size weights {weights!r} make a sequence of {sum(reduced)} "
                                     f"packets, more than {MAX_SEQUENCE}; use smaller weights")
        sizes = tuple(weights)
        _check_frames(sizes)
        return MappingProxyType(weights), sizes, tuple(smooth_weighted_round_robin(reduced))
    if isinstance(size, Sequence) and not isinstance(size, (bytes, bytearray)):
        listed = list(size)
        bad = [s for s in listed if not _is_size(s)]
        if not listed or bad:
            raise NetloadConfigError(f"size list {listed!r} is empty or holds non-ints {bad!r}; "
                                     "give frame sizes as ints, FCS included")
        if len(listed) > MAX_SEQUENCE:
            raise NetloadConfigError(f"size list of {len(listed)} entries is longer than "
                                     f"{MAX_SEQUENCE}; shorten it or use {{size: weight}}")
        sizes = tuple(dict.fromkeys(listed))
        _check_frames(sizes)
        return tuple(listed), sizes, tuple(sizes.index(s) for s in listed)
    raise NetloadConfigError(f"size {size!r} is invalid; use an int, a list of ints, "
                             f"{{size: weight}} or one of {', '.join(IMIX_PRESETS)}")


def _check_frames(sizes: tuple[int, ...]) -> None:
    if len(sizes) > MAX_FRAMES:
        raise NetloadConfigError(f"{len(sizes)} distinct frame sizes exceed {MAX_FRAMES} per "
                                 "stream; use fewer sizes or several streams")


@dataclass(frozen=True, init=False)
class Stream:
    """A packet template sent at one or more frame sizes (FCS included), with field ops."""

    template: Template
    size: Any
    fields: tuple[FieldOp, ...]
    name: str | None
    seed: int | None
    stamp_every: int
    _frame_sizes: tuple[int, ...] = _dc_field(init=False, repr=False, compare=False)
    _sequence: tuple[int, ...] = _dc_field(init=False, repr=False, compare=False)

    def __init__(self, template: Template | Layer | LayerStack | Any, size: SizeSpec = 64,
                 fields: Sequence[FieldOp] = (), name: str | None = None,
                 seed: int | None = None, stamp_every: int = 1) -> None:
        tpl = _as_template(template)
        spec, sizes, sequence = _plan(size)
        for frame_size in sizes:
            tpl.check_size(frame_size)
        ops = tuple(fields)
        for op in ops:
            if not isinstance(op, FieldOp):
                raise NetloadConfigError(f"stream field {op!r} is not a FieldOp; make it with "
                                         "packets.field(template, name, op, ...)")
            shortest = min(sizes) - FCS_BYTES
            op.check(shortest, shortest)
        for i, a in enumerate(ops):
            for b in ops[i + 1:]:
                if a.offset < b.offset + b.width and b.offset < a.offset + a.width:
                    raise NetloadConfigError(f"{a.label} and {b.label} overlap; rewrite each byte "
                                             "with one field op")
        if name is not None and (not isinstance(name, str) or not name.isprintable() or not name):
            raise NetloadConfigError(f"stream name {name!r} is invalid; use a printable string")
        if seed is not None and (not _is_size(seed) or not 0 <= seed < 1 << 64):
            raise NetloadConfigError(f"stream seed {seed!r} is invalid; use an int in 0..2**64-1")
        if not _is_size(stamp_every) or not 1 <= stamp_every < 1 << 32:
            raise NetloadConfigError(
                f"stamp_every={stamp_every!r}: give 1 (a TX timestamp in every packet) or N "
                "(every Nth packet; the others carry none and cost RX no latency work)")
        for key, value in (("template", tpl), ("size", spec), ("fields", ops), ("name", name),
                           ("seed", seed), ("stamp_every", stamp_every),
                           ("_frame_sizes", sizes), ("_sequence", sequence)):
            object.__setattr__(self, key, value)

    def __hash__(self) -> int:
        return hash((self.template, self._frame_sizes, self._sequence, self.fields, self.name,
                     self.seed, self.stamp_every))

    @property
    def frame_sizes(self) -> tuple[int, ...]:
        """Distinct frame sizes (FCS included), in frame-index order."""
        return self._frame_sizes

    @property
    def sequence(self) -> tuple[int, ...]:
        """Frame index of each packet, cycled by the engine."""
        return self._sequence

    @property
    def mean_frame_size(self) -> float:
        """Mean frame size in bytes (FCS included) over the sequence."""
        return sum(self._frame_sizes[i] for i in self._sequence) / len(self._sequence)

    @property
    def label(self) -> str:
        """The name, or one made from the protocols and sizes."""
        if self.name:
            return self.name
        t = self.template
        parts = [{4: "ipv4", 6: "ipv6"}.get(t.l3_proto, "eth"),
                 {17: "udp", 6: "tcp"}.get(t.l4_proto)]
        if isinstance(self.size, str):
            parts.append(self.size)
        elif len(self._frame_sizes) <= 4:
            parts.append("+".join(f"{s}B" for s in self._frame_sizes))
        else:
            parts.append(f"{len(self._frame_sizes)}sizes")
        return "-".join(p for p in parts if p)

    def compile(self, trailer_bytes: int) -> dict[str, Any]:
        """The engine spec: frames with ``trailer_bytes`` of room for the signature, plain types
        (the fields of ``engine.protocol.StreamSpec``)."""
        frames = [self.template.frame(s, trailer_bytes) for s in self._frame_sizes]
        for frame in frames:
            for op in self.fields:
                op.check(len(frame), len(frame) - trailer_bytes)
        t, label = self.template, self.label
        seed = self.seed if self.seed is not None else zlib.crc32(label.encode() + t.headers)
        return {
            "name": label,
            "frames": frames,
            "sizes": list(self._frame_sizes),
            "sequence": list(self._sequence),
            "l3_offset": t.l3_offset,
            "l4_offset": t.l4_offset,
            "l3_proto": t.l3_proto,
            "l4_proto": t.l4_proto,
            "fields": [op.as_spec() for op in self.fields],
            "seed": seed,
            "stamp_every": self.stamp_every,
            "signature": True,
            "flow_key": b"",
        }


MAX_TAGS = 2  # VLAN tags a udp()/tcp() spec may carry itself: one, or QinQ (outer, inner)


def _check_count(key: str, value: object, top: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        raise NetloadConfigError(f"{key}={value!r}: give a whole number from 1 to {top} ({what})")
    return value


def vlan_tags(value: object, key: str = "vlan") -> tuple[int, ...]:
    """VLAN ids as a tuple, outermost first: None, an id, or (outer, inner) for QinQ."""
    if value is None:
        return ()
    tags = (value,) if not isinstance(value, (tuple, list)) else tuple(value)
    if not 1 <= len(tags) <= MAX_TAGS or any(
            isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 4094 for v in tags):
        raise NetloadConfigError(
            f"{key}={value!r}: give a VLAN id from 1 to 4094, or (outer, inner) ids for QinQ "
            "(802.1ad), or leave it out")
    return tags


@dataclass(frozen=True)
class L4Spec:
    """A UDP or TCP stream not yet bound to a wire: `udp(...)` and `tcp(...)` make one.

    The fixtures (`rate_controller`, `latency_meter`, `rfc2544`) bind it to
    the wire it is sent on with `for_flow`: MACs always come from the
    topology, IPs too unless given here, and the sending port's `vlan` (topology
    file) is its outermost tag. `flows`, `src_ips` and `dst_ips` vary the source
    port, the source address and the destination address over that many
    consecutive values (RFC 2544 §12); several of them step together, packet by
    packet.
    """

    src: str | None = None
    dst: str | None = None
    size: SizeSpec | None = None
    """Frame size(s) with FCS; None: 64 B, or the least frame its headers fit in (IPv6,
    VLAN tags and TCP take more than 64 B with the engine's signature)."""
    flows: int = 1
    sport: int = 1024
    dport: int = 9
    name: str | None = None
    stamp_every: int = 1
    src_ips: int = 1
    dst_ips: int = 1
    vlan: int | tuple[int, ...] | None = None
    dscp: int = 0
    """DiffServ code point (0-63): the IPv4 TOS / IPv6 traffic class bits 7-2."""
    pcp: int = 0
    """802.1p priority (0-7) of this spec's own VLAN tags (needs `vlan`)."""

    protocol = "udp"

    def __post_init__(self) -> None:
        # each argument on its own first, so a message names the argument that is wrong
        proto = self.protocol.upper()
        for key in ("sport", "dport"):
            port = getattr(self, key)
            if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
                raise NetloadConfigError(f"{key}={port!r}: give a {proto} port from 0 to 65535")
        if not isinstance(self.flows, int) or isinstance(self.flows, bool) or \
                not 1 <= self.flows <= 65536 - self.sport:
            raise NetloadConfigError(
                f"flows={self.flows!r}: give a whole number from 1 to {65536 - self.sport} "
                f"({proto} source ports from sport={self.sport} to 65535)")
        versions = {}
        for key in ("src", "dst"):
            addr = getattr(self, key)
            if addr is None:
                continue
            try:
                versions[key] = ipaddress.ip_address(addr).version if isinstance(addr, str) \
                    else None
            except ValueError:
                versions[key] = None
            if versions[key] is None:
                raise NetloadConfigError(f"{key}={addr!r} is not an IP address; give one as a "
                                         "string, e.g. '198.18.0.2' or '2001:db8::2'")
        if len(set(versions.values())) > 1:
            raise NetloadConfigError(f"src={self.src!r} and dst={self.dst!r} mix IPv4 and IPv6; "
                                     "give both in one family")
        for key in ("src_ips", "dst_ips"):
            _check_count(key, getattr(self, key), 1 << 16,
                         f"consecutive {key[:3]} addresses the stream cycles through")
        vlan_tags(self.vlan)
        if isinstance(self.dscp, bool) or not isinstance(self.dscp, int) or \
                not 0 <= self.dscp <= 63:
            raise NetloadConfigError(f"dscp={self.dscp!r}: give a DiffServ code point from 0 "
                                     "to 63 (e.g. 46 for EF), or leave it out")
        if isinstance(self.pcp, bool) or not isinstance(self.pcp, int) or not 0 <= self.pcp <= 7:
            raise NetloadConfigError(f"pcp={self.pcp!r}: give an 802.1p priority from 0 to 7, "
                                     "or leave it out")
        if self.pcp and self.vlan is None:
            raise NetloadConfigError(f"pcp={self.pcp}: a priority travels in a VLAN tag; give "
                                     "vlan=ID too (or a port `vlan` in the topology file)")
        if self.name is not None and (not isinstance(self.name, str) or not self.name or
                                      not self.name.isprintable()):
            raise NetloadConfigError(f"stream name {self.name!r} is invalid; use a printable "
                                     "string, or leave name out")
        if isinstance(self.stamp_every, bool) or not isinstance(self.stamp_every, int) or \
                not 1 <= self.stamp_every < 1 << 32:
            raise NetloadConfigError(
                f"stamp_every={self.stamp_every!r}: give 1 (a TX timestamp in every packet) "
                "or N (every Nth packet)")
        # the size against a template of this stream's headers, now, not at send time
        if self.size is not None:
            _, sizes, _ = _plan(self.size)
            template = _l4_template(6 if 6 in versions.values() else 4, self.protocol,
                                    len(vlan_tags(self.vlan)))
            for size in sizes:
                template.check_size(size)

    def _l4(self) -> Layer:
        from pytest_netload.traffic.packets import UDP

        return UDP(sport=self.sport, dport=self.dport)

    def tags_on(self, flow: Any) -> tuple[int, ...]:
        """The VLAN tags of this stream on `flow`'s wire: the sending port's `vlan` outermost
        (unless this spec's own tags start with it), then this spec's own."""
        own = vlan_tags(self.vlan)
        port_vlan = getattr(flow.tx, "vlan", None)
        if port_vlan is None or own[:1] == (port_vlan,):
            return own
        return (port_vlan, *own)

    def for_flow(self, flow: Any) -> Stream:
        """This stream's frames for one wire of a topology (a `topology.model.Flow`)."""
        from pytest_netload.traffic.packets import Eth, IPv4, IPv6, Vlan, field

        src_ip = self.src or flow.src_ip or "198.18.0.2"
        dst_ip = self.dst or flow.dst_ip or "198.19.0.2"
        ip_layer = IPv6 if ":" in src_ip else IPv4
        stack: Any = Eth(dst=flow.dst_mac, src=flow.src_mac)
        own = set(range(len(self.tags_on(flow)) - len(vlan_tags(self.vlan)),
                        len(self.tags_on(flow))))
        for i, vid in enumerate(self.tags_on(flow)):
            stack = stack / Vlan(vid, pcp=self.pcp if i in own else 0)
        tos = {"tc": self.dscp << 2} if ip_layer is IPv6 else {"tos": self.dscp << 2}
        template = (stack / ip_layer(src=src_ip, dst=dst_ip, **tos) / self._l4()).build()
        mods = [field(template, "l4.sport", "inc", min=self.sport,
                      max=self.sport + self.flows - 1)] if self.flows > 1 else []
        for key, base, count in (("ip.src", src_ip, self.src_ips),
                                 ("ip.dst", dst_ip, self.dst_ips)):
            if count > 1:
                mods.append(_address_range(template, key, base, count))
        size = self.size
        if size is None:  # 64 B, or the least frame these headers and a signature fit in
            size = max(64, template.min_frame_size(SIGNATURE_BYTES))
        return Stream(template, size=size, fields=mods, stamp_every=self.stamp_every,
                      name=self.name or f"{flow.tx.name}->{flow.rx.name}")


def _address_range(template: Template, key: str, base: str, count: int) -> FieldOp:
    """An inc field op stepping `key` (ip.src / ip.dst) over `count` addresses from `base`."""
    from pytest_netload.traffic.packets import field

    first = ipaddress.ip_address(base)
    try:
        last = first + (count - 1)
    except (ipaddress.AddressValueError, OverflowError):
        last = None
    what = "src_ips" if key == "ip.src" else "dst_ips"
    if last is None or (first.version == 6 and last.packed[:8] != first.packed[:8]):
        raise NetloadConfigError(
            f"{what}={count} from {first}: the range runs past "
            + ("the end of the address space" if last is None else
               f"its /64 ({ipaddress.ip_network(f'{first}/64', strict=False)})")
            + f"; give fewer addresses or a lower {key.split('.')[1]} address")
    return field(template, key, "inc", min=str(first), max=str(last))


@dataclass(frozen=True)
class UdpSpec(L4Spec):
    """A UDP stream not yet bound to a wire: `udp(...)` makes one (see `L4Spec`)."""


@dataclass(frozen=True)
class TcpSpec(L4Spec):
    """A TCP stream not yet bound to a wire: `tcp(...)` makes one (see `L4Spec`).

    Every segment carries the same `flags` (default "A", an ACK: what a DUT sees of an
    established connection) and sequence number; the engine stamps the payload and fills
    the TCP checksum. Stateless: no handshake, so a stateful firewall must allow it.
    """

    flags: str = "A"

    protocol = "tcp"

    def __post_init__(self) -> None:
        from pytest_netload.traffic.packets import TCP

        TCP(flags=self.flags)  # names a bad flag string
        super().__post_init__()

    def _l4(self) -> Layer:
        from pytest_netload.traffic.packets import TCP

        return TCP(sport=self.sport, dport=self.dport, flags=self.flags)


@functools.cache
def _l4_template(ip_version: int, protocol: str = "udp", tags: int = 0) -> Template:
    from pytest_netload.traffic.packets import TCP, UDP, Eth, IPv4, IPv6, Vlan

    stack: Any = Eth()
    for _ in range(tags):
        stack = stack / Vlan(1)
    template: Template = (stack / (IPv6() if ip_version == 6 else IPv4())
                          / (TCP() if protocol == "tcp" else UDP())).build()
    return template


def udp(src: str | None = None, dst: str | None = None, *, size: SizeSpec | None = None,
        flows: int = 1, sport: int = 1024, dport: int = 9, name: str | None = None,
        stamp_every: int = 1, src_ips: int = 1, dst_ips: int = 1,
        vlan: int | tuple[int, ...] | None = None, dscp: int = 0, pcp: int = 0) -> UdpSpec:
    """A UDP stream for whichever wire it is sent on (see `L4Spec`).

    `flows` > 1 varies the UDP source port over that many values, so a DUT
    that hashes on the 5-tuple sees that many flows; `src_ips` / `dst_ips` > 1
    vary the source / destination address over that many consecutive
    addresses (RFC 2544 §12). `size` is a frame size with FCS, a list,
    `{size: weight}` or "imix" (default: 64, or the least frame the headers fit in).
    `vlan` tags the frames (an id, or (outer,
    inner) for QinQ), inside the sending port's own `vlan`; `pcp` sets the 802.1p priority
    of those tags and `dscp` the IP DiffServ code point (a service's colour, Y.1564).
    """
    return UdpSpec(src, dst, size, flows, sport, dport, name, stamp_every, src_ips, dst_ips,
                   vlan, dscp, pcp)


def tcp(src: str | None = None, dst: str | None = None, *, size: SizeSpec | None = None,
        flows: int = 1, sport: int = 1024, dport: int = 9, name: str | None = None,
        stamp_every: int = 1, src_ips: int = 1, dst_ips: int = 1,
        vlan: int | tuple[int, ...] | None = None, flags: str = "A", dscp: int = 0,
        pcp: int = 0) -> TcpSpec:
    """A TCP stream for whichever wire it is sent on: as `udp`, with TCP `flags`
    (letters of "FSRPAUEC"; default "A"). See `TcpSpec`."""
    return TcpSpec(src, dst, size, flows, sport, dport, name, stamp_every, src_ips, dst_ips,
                   vlan, dscp, pcp, flags)


def flow_stream(flow: Any, *, size: SizeSpec = 64, flows: int = 1, name: str | None = None,
                dport: int = 9) -> Stream:
    """A UDP stream for one wire of a topology (a `topology.model.Flow`).

    Addresses and MACs come from the topology so the frames cross its DUT;
    `flows` > 1 varies the UDP source port over that many values (inc), so
    a DUT that hashes on the 5-tuple sees that many flows.
    """
    return UdpSpec(size=size, flows=flows, name=name, dport=dport).for_flow(flow)
