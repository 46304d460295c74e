"""A capture replayed: `from_pcap(path)` and the streams of its flows.

`from_pcap` reads a pcap or pcapng file into flows (`traffic.pcap`). Each flow is
one engine stream (several past the engine's 64 templates a stream: `FlowPart`),
accounted on its own by the signature every frame carries: its templates are the
flow's distinct frames, its sequence the flow's frame order. A
frame gets the 16-byte signature appended (and padding up to the 60-byte minimum):
the IPv4 total length, IPv6 payload length and UDP length grow with it, and the
checksums are filled (the engine keeps them per packet). Ethernet padding after an
IP packet is dropped first, so the signature follows the packet's own bytes.

A `Replay` is sent in one of two ways:

- at the capture's timing (`Replay.timing`, run by `RateController.replay`): each
  flow paced by the capture's gaps between its own packets, its first packet at its
  offset from the capture's start (all flows start on the run's one deadline, so
  their union keeps the capture's timing), a speed-up dividing every gap; looped
  with the capture's period (its span plus `loop_gap`);
- at any rate or rate pattern, as a mix: its streams are the weighted parts (each
  one's share of the packets), so `stream=from_pcap(...)` is the traffic of an
  RFC 2544 procedure at `frame_sizes=["pcap"]`, and `Replay.streams()` the weighted
  streams a `rate_controller` paces.
"""

from __future__ import annotations

import ipaddress
import os
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_netload import _native_facts
from pytest_netload.errors import NetloadConfigError
from pytest_netload.traffic.packets import Template, _csum, from_bytes
from pytest_netload.traffic.pcap import (
    DEFAULT_MAX_FLOWS,
    DEFAULT_MAX_TEMPLATES,
    MAX_TEMPLATES,
    Capture,
    Flow,
    dissect,
    read_capture,
)
from pytest_netload.units import FCS_BYTES, MAX_FRAME_BYTES, MIN_FRAME_BYTES

__all__ = ["PCAP_SIZE", "FlowPart", "FlowTiming", "Replay", "ReplayFlow", "ReplayStream",
           "flow_key", "flow_parts", "from_pcap", "signed_frame"]

SIGNATURE_BYTES = _native_facts.SIGNATURE_BYTES
DEFAULT_MTU = 1500  # the L3 packet a port and DUT take: a frame over it with the signature
# appended carries the signature in place instead
PCAP_SIZE = "pcap"  # the frame size of a replay: every frame keeps its captured size
_ADDRESSES = ("keep", "wire")


@dataclass(frozen=True, eq=False)
class FlowPart:
    """What one engine stream of a replay sends: a flow's frames (at most the engine's
    templates per stream; a flow with more is several parts), and which of its packets
    use them: their frame index and time (ns since the capture's first frame)."""

    flow: Flow
    label: str
    frames: tuple[bytes, ...]
    ends: tuple[int, ...]
    sequence: np.ndarray
    times_ns: np.ndarray

    @property
    def packets(self) -> int:
        return len(self.sequence)

    # the flow's header layout, the same for every packet of a flow
    @property
    def l3_offset(self) -> int:
        return self.flow.l3_offset

    @property
    def l4_offset(self) -> int:
        return self.flow.l4_offset

    @property
    def l3_proto(self) -> int:
        return self.flow.l3_proto

    @property
    def l4_proto(self) -> int:
        return self.flow.l4_proto


def flow_parts(flows: tuple[Flow, ...]) -> tuple[FlowPart, ...]:
    """Every flow as its engine streams, in the order of the flows."""
    out = []
    for i, flow in enumerate(flows):
        chunks = flow.chunks()
        for k, (first, used) in enumerate(chunks):
            label = f"pcap#{i + 1}" + (f".{k + 1}" if len(chunks) > 1 else "") + \
                f" {flow.label}"
            frames = tuple(flow.frames[first:first + MAX_TEMPLATES])
            out.append(FlowPart(flow, label, frames,
                                tuple(flow.ends[first:first + MAX_TEMPLATES]),
                                (flow.sequence[used] - first).astype(np.uint16),
                                flow.times_ns[used]))
    return tuple(out)


def in_place(frame: bytes, flow: Flow | FlowPart, l3_end: int, trailer_bytes: int,
             mtu: int) -> bool:
    """Whether `frame` carries its signature over its payload's last bytes: appended, its
    L3 packet would be over `mtu` (or the frame over what a port sends)."""
    l3 = flow.l3_offset if flow.l3_offset >= 0 else 14
    end = l3_end if flow.l3_offset >= 0 else len(frame)
    return end + trailer_bytes - l3 > mtu or end + trailer_bytes > MAX_FRAME_BYTES


def _payload_at(frame: bytes, flow: Flow | FlowPart) -> int:
    """Where the frame's payload starts: after its UDP/TCP header, else its IP header."""
    if flow.l4_proto == 6:
        return flow.l4_offset + max(20, (frame[flow.l4_offset + 12] >> 4) * 4)
    if flow.l4_proto:
        return flow.l4_offset + 8
    if flow.l3_proto == 6:
        return flow.l3_offset + 40
    if flow.l3_proto:
        return flow.l3_offset + (frame[flow.l3_offset] & 0x0F) * 4
    return 14


def signed_frame(frame: bytes, flow: Flow | FlowPart, l3_end: int, trailer_bytes: int,
                 mtu: int = DEFAULT_MTU) -> bytes:
    """`frame` with room for a `trailer_bytes` signature at its end (zeros here; the engine
    writes it per packet), Ethernet padding after its IP packet dropped, padded to the
    60-byte minimum, lengths grown and checksums filled for a zero trailer. A frame whose
    L3 packet would then be over `mtu` keeps its size: the signature takes its payload's
    last bytes (NetloadConfigError where its payload is shorter)."""
    l3, l4 = flow.l3_offset, flow.l4_offset
    if in_place(frame, flow, l3_end, trailer_bytes, mtu):
        end = l3_end if l3 >= 0 else len(frame)
        if end - _payload_at(frame, flow) < trailer_bytes:
            raise NetloadConfigError(
                f"a {len(frame)}-byte frame of flow {getattr(flow, 'label', '?')} has no room "
                f"for the {trailer_bytes}-byte signature under mtu={mtu}, nor a payload to "
                "carry it: give from_pcap a larger mtu= (the ports' and DUT's), or "
                "signature=False")
        body = bytearray(frame[:end])
        body[end - trailer_bytes:] = bytes(trailer_bytes)
        _fill_sums(body, flow, end, udp_zero=False)
        return bytes(body)
    body = bytearray(frame[:l3_end] if l3 >= 0 else frame)
    room = max(trailer_bytes, MIN_FRAME_BYTES - len(body))
    body += bytes(room)
    length = len(body)
    if flow.l3_proto == 4:
        struct.pack_into("!H", body, l3 + 2, length - l3)
    elif flow.l3_proto == 6:
        struct.pack_into("!H", body, l3 + 4, length - l3 - 40)
    if flow.l4_proto == 17:
        struct.pack_into("!H", body, l4 + 4, length - l4)
    _fill_sums(body, flow, length, udp_zero=False)
    return bytes(body)


def _fill_sums(body: bytearray, flow: Flow | FlowPart, end: int, *, udp_zero: bool) -> None:
    """The IPv4 header checksum and the UDP/TCP checksum of the IP packet that ends at
    `end` recomputed in place; `udp_zero`: a UDP checksum of 0 (none) stays 0."""
    l3, l4 = flow.l3_offset, flow.l4_offset
    if flow.l3_proto == 4:
        ihl = (body[l3] & 0x0F) * 4
        struct.pack_into("!H", body, l3 + 10, 0)
        struct.pack_into("!H", body, l3 + 10, _csum(body[l3:l3 + ihl]))
    if flow.l4_proto:
        at = l4 + (6 if flow.l4_proto == 17 else 16)
        if udp_zero and flow.l4_proto == 17 and body[at:at + 2] == b"\0\0":
            return
        struct.pack_into("!H", body, at, 0)
        if flow.l3_proto == 4:
            pseudo = bytes(body[l3 + 12:l3 + 20]) + struct.pack("!xBH", flow.l4_proto,
                                                                  end - l4)
        else:
            pseudo = bytes(body[l3 + 8:l3 + 40]) + struct.pack("!I3xB", end - l4,
                                                                 flow.l4_proto)
        csum = _csum(body[l4:end], start=0xFFFF - _csum(pseudo))
        struct.pack_into("!H", body, at, 0xFFFF if csum == 0 and flow.l4_proto == 17 else csum)


def _resummed(frame: bytes, part: FlowPart, end: int) -> bytes:
    """An unsigned frame whose addresses were rewritten, its checksums filled again."""
    body = bytearray(frame.ljust(MIN_FRAME_BYTES, b"\0"))
    _fill_sums(body, part, end, udp_zero=True)
    return bytes(body)


def _rewritten(frame: bytes, flow: FlowPart, *, src_mac: bytes | None, dst_mac: bytes | None,
               src_ip: bytes | None, dst_ip: bytes | None) -> bytes:
    out = bytearray(frame)
    if dst_mac is not None:
        out[0:6] = dst_mac
    if src_mac is not None:
        out[6:12] = src_mac
    l3 = flow.l3_offset
    if src_ip is not None and dst_ip is not None:
        at = (12, 16) if flow.l3_proto == 4 else (8, 24)
        out[l3 + at[0]:l3 + at[0] + len(src_ip)] = src_ip
        out[l3 + at[1]:l3 + at[1] + len(dst_ip)] = dst_ip
    return bytes(out)


def flow_key(frame: bytes) -> bytes:
    """The engine's key of an IP frame's flow (`engine.protocol.StreamSpec.flow_key`):
    family, protocol, whether ports follow, source and destination address (16 bytes
    each), source and destination port; b"" for a frame that is not IPv4 or IPv6."""
    key = dissect(frame).key
    if key[0] == "l2":
        return b""
    family, src, dst, proto, sport, dport = key[:6]
    ports = sport is not None
    return bytes([family, proto, int(ports)]) + src.ljust(16, b"\0") + dst.ljust(16, b"\0") \
        + struct.pack("!HH", sport if ports else 0, dport if ports else 0)


def _mac(text: str) -> bytes:
    return bytes(int(x, 16) for x in str(text).split(":"))


class ReplayStream:
    """One flow of a replay as the engine loads it: what `engine.load` and a rate
    controller take (a `traffic.Stream` in all they read of one)."""

    fields: tuple[Any, ...] = ()
    seed: int | None = None
    stamp_every: int = 1
    size = PCAP_SIZE

    def __init__(self, name: str, part: FlowPart, frames: list[bytes], *,
                 signature: bool = True, resum: bool = False, mtu: int = DEFAULT_MTU) -> None:
        self.name = name
        self.part = part
        self.signature = signature
        self.mtu = mtu
        self._resum = resum  # unsigned frames whose addresses were rewritten
        self._frames = frames  # as sent, without the signature's room
        first = frames[0]
        if part.l4_proto == 6:
            head = part.l4_offset + max(20, (first[part.l4_offset + 12] >> 4) * 4)
        elif part.l4_proto:
            head = part.l4_offset + 8
        elif part.l3_proto == 6:
            head = part.l3_offset + 40
        elif part.l3_proto:
            head = part.l3_offset + (first[part.l3_offset] & 0x0F) * 4
        else:
            head = 14
        self.template: Template = from_bytes(
            first[:head], l3_offset=part.l3_offset, l4_offset=part.l4_offset,
            l3_proto=part.l3_proto, l4_proto=part.l4_proto)

    @property
    def label(self) -> str:
        return self.name

    def _signed(self, trailer_bytes: int) -> list[bytes]:
        if not self.signature:  # as captured, padded to the least frame a port sends
            return [_resummed(f, self.part, end) if self._resum and self.part.l3_proto
                    else f.ljust(MIN_FRAME_BYTES, b"\0")
                    for f, end in zip(self._frames, self.part.ends)]
        return [signed_frame(f, self.part, end, trailer_bytes, self.mtu)
                for f, end in zip(self._frames, self.part.ends)]

    @property
    def frame_sizes(self) -> tuple[int, ...]:
        """Each template's size as sent (signature included), FCS included."""
        return tuple(len(f) + FCS_BYTES for f in self._signed(SIGNATURE_BYTES))

    @property
    def sequence(self) -> tuple[int, ...]:
        return tuple(self.part.sequence.tolist())

    @property
    def mean_frame_size(self) -> float:
        """Bytes with FCS and signature, over the flow's packets."""
        sizes = np.array(self.frame_sizes, dtype=np.float64)
        return float(sizes[self.part.sequence].mean())

    def compile(self, trailer_bytes: int) -> dict[str, Any]:
        """The engine spec (the fields of `engine.protocol.StreamSpec`)."""
        frames = self._signed(trailer_bytes)
        f = self.part
        return {"name": self.name, "frames": frames,
                "sizes": [len(x) + FCS_BYTES for x in frames],
                "sequence": f.sequence.tolist(),
                "l3_offset": f.l3_offset, "l4_offset": f.l4_offset,
                "l3_proto": f.l3_proto, "l4_proto": f.l4_proto, "fields": [], "seed": 0,
                "stamp_every": 1, "signature": self.signature,
                "flow_key": b"" if self.signature else flow_key(frames[0])}


@dataclass(frozen=True)
class FlowTiming:
    """One flow at the capture's timing: its first packet `start_ns` after the run's start,
    then `gaps_ps[k mod n]` after packet k (the last one the loop's wrap to its first)."""

    start_ns: int
    gaps_ps: np.ndarray
    packets: int
    """Packets of one pass over the capture."""


@dataclass(frozen=True, eq=False)
class ReplayFlow:
    """One stream of a replay (a flow, or a part of one) as a part of a mix
    (`traffic.mix.Part.source`)."""

    replay: Replay
    index: int
    stamp_every: int = 1
    seed: int | None = None
    name: str | None = None

    @property
    def part(self) -> FlowPart:
        return self.replay.parts[self.index]

    @property
    def label(self) -> str:
        return self.part.label

    def stream_on(self, wire: Any, name: str) -> ReplayStream:
        """This flow's stream on `wire` (a topology Flow): its MACs the wire's, and with
        addresses='wire' its IP addresses too."""
        return self.replay.stream(self.index, name=name, wire=wire)


class Replay:
    """A capture's flows, ready to send (`from_pcap` makes one)."""

    def __init__(self, capture: Capture, *, loop_gap_ns: int | None = None,
                 addresses: str = "keep", signature: bool = True,
                 mtu: int = DEFAULT_MTU) -> None:
        if addresses not in _ADDRESSES:
            raise NetloadConfigError(f"addresses={addresses!r}: give 'keep' (the captured IP "
                                     "addresses) or 'wire' (the wire's, from the topology)")
        self.capture = capture
        self.addresses = addresses
        n = capture.packets
        if loop_gap_ns is None:
            loop_gap_ns = capture.span_ns // (n - 1) if n > 1 and capture.span_ns else 1_000_000
        if isinstance(loop_gap_ns, bool) or not isinstance(loop_gap_ns, int) or loop_gap_ns < 1:
            raise NetloadConfigError(f"loop_gap={loop_gap_ns!r} ns: give the gap between the "
                                     "last frame and the first of the next pass, >= 1 ns")
        self.loop_gap_ns = loop_gap_ns

        if not isinstance(signature, bool):
            raise NetloadConfigError(f"signature={signature!r}: give True (a signature "
                                     "appended to every frame) or False (frames as captured)")
        self.signature = signature
        if isinstance(mtu, bool) or not isinstance(mtu, int) or \
                not 68 <= mtu <= MAX_FRAME_BYTES - 14:
            raise NetloadConfigError(f"mtu={mtu!r}: give the L3 MTU of the ports and the DUT "
                                     f"(68 to {MAX_FRAME_BYTES - 14}; 1500 for Ethernet, 9000 "
                                     "for jumbo frames)")
        self.mtu = mtu
        self.parts: tuple[FlowPart, ...] = flow_parts(capture.flows)
        if not signature:
            _check_unsigned(self)
        """The engine streams: one per flow, several for a flow of more distinct frames
        than a stream holds."""
        if len(self.parts) > _native_facts.MAX_STREAMS:
            raise NetloadConfigError(
                f"capture {capture.path!r} makes {len(self.parts)} streams, more than the "
                f"engine's {_native_facts.MAX_STREAMS}; give templates='by_size' or a smaller "
                "max_templates=, or filter the capture")

    @property
    def path(self) -> str:
        return self.capture.path

    @property
    def flows(self) -> tuple[Flow, ...]:
        return self.capture.flows

    @property
    def packets(self) -> int:
        return self.capture.packets

    @property
    def period_ns(self) -> int:
        """One pass at the capture's timing: its span and the loop gap."""
        return self.capture.span_ns + self.loop_gap_ns

    @property
    def substituted(self) -> int:
        """Packets sent as the first frame of their size in their flow (past max_templates)."""
        return sum(f.substituted for f in self.flows)

    @property
    def signed_in_place(self) -> int:
        """Packets whose signature takes their payload's last bytes (no room under mtu)."""
        if not self.signature:
            return 0
        n = 0
        for p in self.parts:
            over = [in_place(f, p, end, SIGNATURE_BYTES, self.mtu)
                    for f, end in zip(p.frames, p.ends)]
            n += int(np.count_nonzero(np.array(over, dtype=bool)[p.sequence]))
        return n

    @property
    def mean_frame_size(self) -> float:
        """Bytes with FCS and signature, over every packet of the capture."""
        return sum(self.stream(i).mean_frame_size * p.packets
                   for i, p in enumerate(self.parts)) / self.packets

    def weights(self) -> list[float]:
        """Each stream's share of the capture's packets."""
        return [p.packets / self.packets for p in self.parts]

    def mix_parts(self) -> tuple[ReplayFlow, ...]:
        """The streams as parts of a mix (`traffic.mix`)."""
        return tuple(ReplayFlow(self, i) for i in range(len(self.parts)))

    def stream(self, index: int, *, name: str | None = None, wire: Any = None) -> ReplayStream:
        """Stream `index` (of `parts`) for the engine; on `wire` (a topology Flow) its MACs
        (and with addresses='wire' its IPs) are the wire's."""
        part = self.parts[index]
        label = name or part.label
        if wire is None:
            return ReplayStream(label, part, list(part.frames), signature=self.signature,
                                mtu=self.mtu)
        if getattr(wire.tx, "vlan", None) is not None:
            raise NetloadConfigError(
                f"replay {self.path!r}: port {wire.tx.name} tags its frames (vlan "
                f"{wire.tx.vlan}), but a replay sends the captured frames as they are; use "
                "a port without a vlan, or capture the traffic with its tag")
        src_ip = dst_ip = None
        if self.addresses == "wire" and part.l3_proto:
            src_ip, dst_ip = (_wire_ip(wire, key, part, label) for key in ("src_ip", "dst_ip"))
        frames = [_rewritten(f, part, src_mac=_mac(wire.src_mac), dst_mac=_mac(wire.dst_mac),
                             src_ip=src_ip, dst_ip=dst_ip) for f in part.frames]
        return ReplayStream(label, part, frames, signature=self.signature,
                            resum=src_ip is not None, mtu=self.mtu)

    def streams(self, wire: Any = None) -> list[tuple[ReplayStream, float]]:
        """Every stream with its share of the packets: what `rate_controller.run` paces at
        a rate or pattern. `wire`: a topology Flow whose MACs the frames take."""
        return [(self.stream(i, wire=wire), w) for i, w in enumerate(self.weights())]

    def timing(self, speed: float = 1.0) -> list[FlowTiming]:
        """Each stream's schedule at the capture's timing, every gap divided by `speed`."""
        if isinstance(speed, bool) or not isinstance(speed, (int, float)) or \
                not 0 < speed < float("inf"):
            raise NetloadConfigError(f"speed={speed!r}: give a positive factor (1: the "
                                     "capture's timing, 2: twice as fast)")
        period_ps = round(self.period_ns * 1000 / speed)
        return [_timing(p.times_ns, period_ps, speed) for p in self.parts]

    def summary(self) -> str:
        c = self.capture
        parts = [f"{c.path}: {c.packets} frames in {len(self.flows)} flows ("
                 f"{len(self.parts)} streams) over "
                 f"{c.span_ns / 1e9:.6f} s (timestamps to {c.resolution_ns} ns), "
                 f"mean {self.mean_frame_size:.1f} B with the signature"]
        if not c.complete:
            parts.append("read up to max_frames (the rest of the file is not replayed)")
        if self.signed_in_place:
            parts.append(f"{self.signed_in_place} frames carry the signature over their "
                         f"payload's last {SIGNATURE_BYTES} bytes (no room under "
                         f"mtu={self.mtu})")
        if self.substituted:
            parts.append(f"{self.substituted} frames sent as the first frame of their size "
                         "in their flow (past max_templates distinct frames)")
        parts.append(f"loop gap {self.loop_gap_ns} ns; IP addresses: {self.addresses}")
        if not self.signature:
            parts.append("no signature: frames as captured, counted on RX by their flow "
                         "(packets and bytes only)")
        return "; ".join(parts)

    def __repr__(self) -> str:
        return f"<Replay {self.summary()}>"


def _timing(times_ns: np.ndarray, period_ps: int, speed: float) -> FlowTiming:
    due = np.rint(times_ns.astype(np.float64) * (1000 / speed)).astype(np.int64)
    # several frames with one stamp (a coarse clock) leave 1 ps apart
    step = np.arange(len(due), dtype=np.int64)
    due = np.maximum.accumulate(due - step) + step
    wrap = max(1, period_ps - int(due[-1]) + int(due[0]))
    table = np.concatenate((np.diff(due), [wrap])).astype(np.uint64)
    return FlowTiming(int(due[0]) // 1000, table, len(due))


def _check_unsigned(replay: Replay) -> None:
    """signature=False: RX tells the flows apart by their IP flow, so each flow must be
    IP, one stream, and its own flow."""
    seen: dict[bytes, str] = {}
    for flow in replay.flows:
        where = f"capture {replay.path!r}, flow {flow.label}"
        key = flow_key(flow.frames[0])
        if not key:
            raise NetloadConfigError(
                f"{where}: not IP, and without a signature a frame is counted by its IP "
                "flow; filter the capture to IP (tcpdump -w out.pcap ip or ip6), or keep "
                "the signature")
        if len(flow.frames) > MAX_TEMPLATES:
            raise NetloadConfigError(
                f"{where}: {len(flow.frames)} distinct frames, more than the "
                f"{MAX_TEMPLATES} of one stream, and without a signature RX counts a flow "
                "as one stream: give templates='by_size' or a smaller max_templates=")
        if key in seen:
            raise NetloadConfigError(
                f"{where}: the same IP flow as {seen[key]} (another VLAN?); without a "
                "signature RX cannot tell them apart: filter one out, or keep the signature")
        seen[key] = flow.label


def _wire_ip(wire: Any, key: str, flow: FlowPart, label: str) -> bytes:
    value = getattr(wire, key, None)
    if value is None:
        raise NetloadConfigError(f"replay flow {label!r}: addresses='wire' needs the wire's "
                                 f"{key} from the topology, and it has none; give the ports "
                                 "ip and peer_ip, or addresses='keep'")
    ip = ipaddress.ip_address(str(value))
    if ip.version != flow.l3_proto:
        raise NetloadConfigError(f"replay flow {label!r} is IPv{flow.l3_proto}, the wire's "
                                 f"{key} {ip} IPv{ip.version}: addresses='wire' rewrites one "
                                 "family; filter the capture to that family")
    return ip.packed


def from_pcap(path: str | os.PathLike[str], *, max_frames: int | None = None,
              max_flows: int = DEFAULT_MAX_FLOWS, templates: str = "auto",
              max_templates: int = DEFAULT_MAX_TEMPLATES, loop_gap: int | None = None,
              addresses: str = "keep", signature: bool = True,
              mtu: int = DEFAULT_MTU) -> Replay:
    """A capture (pcap or pcapng, Ethernet) read into flows to replay, streamed frame by
    frame (scapy's readers; the `scapy` extra).

    `max_frames`: read at most this many frames. `max_flows`: refuse a capture with
    more flows (each is one engine stream, or several past 64 distinct frames).
    `templates`: "auto" (every distinct frame up to `max_templates` for the whole
    capture, then a packet is sent as the first frame of its size in its flow), "exact"
    (refuse a capture with more distinct frames) or "by_size" (the first frame of each
    size in a flow, always). `loop_gap`: ns between the last frame and the first of
    the next pass (default: the capture's mean gap).
    `addresses`: "keep" the captured IP addresses, or take the "wire"'s from the
    topology (the MACs always are the wire's). Every frame gets the signature appended,
    unless its L3 packet would then be over `mtu` (the ports' and DUT's: 1500, or 9000
    with jumbo frames): then the signature takes its payload's last 16 bytes.
    `signature=False`: frames as captured,
    nothing appended (for a DUT a trailer upsets); RX counts each flow's packets and
    bytes by its IP flow, without sequence or latency (a DUT that rewrites addresses or
    ports, NAT, makes them foreign)."""
    capture = read_capture(path, max_frames=max_frames, max_flows=max_flows,
                           templates=templates, max_templates=max_templates)
    return Replay(capture, loop_gap_ns=loop_gap, addresses=addresses, signature=signature,
                  mtu=mtu)
