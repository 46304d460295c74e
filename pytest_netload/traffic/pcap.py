"""A capture read into flows: what `from_pcap` replays.

The file is read frame by frame with scapy's streaming readers (`RawPcapReader`,
which opens pcap and pcapng alike); nothing holds the whole capture. Each frame is
dissected just enough to find its flow (the IPv4/IPv6 5-tuple, the addresses and
protocol of a fragment or another IP protocol, or the MACs and ethertype of a
non-IP frame) and the L3/L4 offsets the engine keeps checksums at. A flow keeps
its distinct frames (up to the capture's budget, `max_templates`; past it a packet
is sent as the first frame of its size in its flow), the frame index of each packet
and each packet's time since the capture's first frame: 12 bytes a packet, whatever
its size. A flow of more than `MAX_TEMPLATES` distinct frames (the engine's
templates per stream) is sent as several streams (`Flow.chunks`).

Pure Python (numpy for the per-packet arrays); scapy is the `scapy` extra.
"""

from __future__ import annotations

import os
import struct
from array import array
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_netload import _native_facts
from pytest_netload.errors import NetloadConfigError
from pytest_netload.extras import require
from pytest_netload.units import MAX_FRAME_BYTES

__all__ = ["DLT_EN10MB", "MAX_TEMPLATES", "Capture", "Flow", "dissect", "read_capture"]

DLT_EN10MB = 1  # Ethernet: the one link type a generator port sends
MAX_TEMPLATES = _native_facts.MAX_FRAMES  # distinct frames one engine stream holds
MAX_FLOW_FRAMES = _native_facts.MAX_GAPS  # packets of one flow: its gaps are one phase's table
DEFAULT_MAX_FLOWS = 1024
DEFAULT_MAX_TEMPLATES = 4096  # distinct frames a capture keeps: 6 MB of 1500-byte frames
_TPIDS = (0x8100, 0x88A8, 0x9100)
_TEMPLATE_POLICIES = ("auto", "exact", "by_size")
_LINKTYPES = {0: "BSD loopback (DLT_NULL)", 101: "raw IP (DLT_RAW)", 105: "802.11",
              113: "Linux cooked (DLT_LINUX_SLL)", 127: "802.11 radiotap",
              228: "raw IPv4", 229: "raw IPv6", 276: "Linux cooked v2 (DLT_LINUX_SLL2)"}


@dataclass(frozen=True)
class Dissected:
    """What a frame's headers say: its flow key, L3/L4 offsets (-1: none) and protocols,
    and where its IP packet ends (the frame's length for a non-IP frame: Ethernet
    padding is not known there)."""

    key: tuple[Any, ...]
    l3_offset: int
    l3_proto: int
    l4_offset: int
    l4_proto: int
    l3_end: int


def dissect(frame: bytes) -> Dissected:
    """The flow key and offsets of one Ethernet frame (FCS not included)."""
    off = 12
    while off + 4 <= len(frame) and struct.unpack_from("!H", frame, off)[0] in _TPIDS:
        off += 4
    ethertype = struct.unpack_from("!H", frame, off)[0] if off + 2 <= len(frame) else 0
    l3 = off + 2
    if ethertype == 0x0800 and len(frame) >= l3 + 20 and frame[l3] >> 4 == 4:
        ihl = (frame[l3] & 0x0F) * 4
        total = struct.unpack_from("!H", frame, l3 + 2)[0]
        if ihl >= 20 and total >= ihl and l3 + ihl <= len(frame):
            proto = frame[l3 + 9]
            fragment = struct.unpack_from("!H", frame, l3 + 6)[0] & 0x3FFF  # MF + offset
            end = min(l3 + total, len(frame))
            addrs = (frame[l3 + 12:l3 + 16], frame[l3 + 16:l3 + 20])
            return _with_l4(4, addrs, proto, l3, l3 + ihl, end, frame, fragment == 0)
    if ethertype == 0x86DD and len(frame) >= l3 + 40 and frame[l3] >> 4 == 6:
        payload = struct.unpack_from("!H", frame, l3 + 4)[0]
        end = min(l3 + 40 + payload, len(frame))
        addrs = (frame[l3 + 8:l3 + 24], frame[l3 + 24:l3 + 40])
        return _with_l4(6, addrs, frame[l3 + 6], l3, l3 + 40, end, frame, True)
    return Dissected(("l2", frame[6:12], frame[0:6], ethertype, off), -1, 0, -1, 0, len(frame))


def _with_l4(version: int, addrs: tuple[bytes, bytes], proto: int, l3: int, l4: int,
             end: int, frame: bytes, whole: bool) -> Dissected:
    hlen = 8 if proto == 17 else 20 if proto == 6 else 0
    if whole and hlen and l4 + hlen <= end:
        if proto == 6:
            hlen = max(20, (frame[l4 + 12] >> 4) * 4)
        if l4 + hlen <= end:
            ports = struct.unpack_from("!HH", frame, l4)
            return Dissected((version, *addrs, proto, *ports, l3), l3, version, l4, proto, end)
    return Dissected((version, *addrs, proto, None, None, l3), l3, version, -1, 0, end)


def flow_label(key: tuple[Any, ...]) -> str:
    """A flow key as text: "udp 10.0.0.1:1024>10.0.0.2:53", "ipv6-58 a::1>a::2", "eth-0x0806"."""
    import ipaddress

    if key[0] == "l2":
        return (f"eth-{key[3]:#06x} {':'.join(f'{b:02x}' for b in key[1])}>"
                f"{':'.join(f'{b:02x}' for b in key[2])}")
    src, dst = (ipaddress.ip_address(a) for a in key[1:3])
    name = {17: "udp", 6: "tcp"}.get(key[3], f"ipv{key[0]}-{key[3]}")
    if key[4] is None:
        return f"{name} {src}>{dst}"
    if key[0] == 6:
        return f"{name} [{src}]:{key[4]}>[{dst}]:{key[5]}"
    return f"{name} {src}:{key[4]}>{dst}:{key[5]}"


class Flow:
    """One flow of a capture: its distinct frames (as captured, FCS not included), the
    frame index of each of its packets and each packet's time (ns since the capture's
    first frame). `substituted`: packets sent as the first frame of their size in the
    flow (past the capture's budget of distinct frames, `Budget`)."""

    def __init__(self, key: tuple[Any, ...], d: Dissected) -> None:
        self.key = key
        self.label = flow_label(key)
        self.l3_offset, self.l3_proto = d.l3_offset, d.l3_proto
        self.l4_offset, self.l4_proto = d.l4_offset, d.l4_proto
        self.frames: list[bytes] = []
        self.ends: list[int] = []  # each frame's L3 end (its Ethernet padding after it)
        self._index: dict[bytes, int] = {}
        self._by_size: dict[int, int] = {}
        self._seq = array("I")
        self._times = array("q")
        self.substituted = 0
        self.bytes = 0

    def add(self, frame: bytes, d: Dissected, time_ns: int, budget: Budget, where: str) -> None:
        at = self._index.get(frame)
        if at is None and budget.full():
            if budget.policy == "exact":
                raise NetloadConfigError(
                    f"{where}: the capture has more than max_templates={budget.limit} "
                    "distinct frames; give a larger max_templates= (memory: each is kept), "
                    "templates='auto' (past it, a packet is sent as the first frame of its "
                    "size in its flow), or cut the capture with max_frames=")
            at = self._by_size.get(len(frame))
            if at is not None:
                self.substituted += 1
        if at is None:
            at = len(self.frames)
            self.frames.append(frame)
            self.ends.append(d.l3_end)
            self._index[frame] = at
            self._by_size.setdefault(len(frame), at)
            budget.used += 1
        if len(self._seq) >= MAX_FLOW_FRAMES:
            raise NetloadConfigError(
                f"{where}: flow {self.label} has more than {MAX_FLOW_FRAMES} packets, the "
                "longest gap table of one stream; cut the capture with max_frames=")
        self._seq.append(at)
        self._times.append(time_ns)
        self.bytes += len(frame)

    @property
    def packets(self) -> int:
        return len(self._seq)

    @property
    def sequence(self) -> np.ndarray:
        """The frame index of each packet (uint32)."""
        return np.frombuffer(self._seq, dtype=np.uint32)

    @property
    def times_ns(self) -> np.ndarray:
        """Each packet's time, ns since the capture's first frame (int64)."""
        return np.frombuffer(self._times, dtype=np.int64)

    def chunks(self) -> list[tuple[int, np.ndarray]]:
        """The flow as engine streams of at most MAX_TEMPLATES frames each: (first frame
        index, which of the flow's packets use its frames)."""
        seq = self.sequence
        return [(c, (seq >= c) & (seq < c + MAX_TEMPLATES))
                for c in range(0, len(self.frames), MAX_TEMPLATES)]


@dataclass
class Budget:
    """Distinct frames the whole capture keeps (`max_templates`), and the policy past it."""

    limit: int
    policy: str
    used: int = 0

    def full(self) -> bool:
        return self.policy == "by_size" or self.used >= self.limit


@dataclass(frozen=True)
class Capture:
    """A capture read into flows, in the order of their first packet."""

    path: str
    flows: tuple[Flow, ...]
    packets: int
    bytes: int
    span_ns: int
    """From the first frame to the last."""
    complete: bool
    """False when max_frames stopped the reading before the file's end."""
    resolution_ns: int
    """The capture's timestamp resolution (1000 for a microsecond pcap)."""


def read_capture(path: str | os.PathLike[str], *, max_frames: int | None = None,
                 max_flows: int = DEFAULT_MAX_FLOWS, templates: str = "auto",
                 max_templates: int = DEFAULT_MAX_TEMPLATES) -> Capture:
    """Read `path` (pcap or pcapng, Ethernet) into flows, one frame at a time.

    NetloadConfigError, naming the file, the frame number and the fix, for a file that
    is not a capture, a link type other than Ethernet, a truncated record or file, a
    frame the capture cut short (its snap length), an empty capture, more flows than
    `max_flows`, or a flow over the engine's limits (see `Flow.add`)."""
    if templates not in _TEMPLATE_POLICIES:
        raise NetloadConfigError(f"templates={templates!r}: give one of "
                                 f"{', '.join(map(repr, _TEMPLATE_POLICIES))}")
    for key, value in (("max_frames", max_frames), ("max_flows", max_flows),
                       ("max_templates", max_templates)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise NetloadConfigError(f"{key}={value!r}: give a whole number >= 1")
    top = _native_facts.MAX_STREAMS
    if max_flows > top:
        raise NetloadConfigError(f"max_flows={max_flows}: the engine holds {top} streams "
                                 f"(one per flow) at most; give at most {top}")
    name = os.fspath(path)
    if not os.path.isfile(name):
        raise NetloadConfigError(f"capture {name!r}: no such file; give the path of a .pcap "
                                 "or .pcapng file")
    budget = Budget(max_templates, templates)
    utils = require("scapy.utils", "scapy", "from_pcap()")
    try:
        reader = utils.RawPcapReader(name)
    except Exception as exc:  # scapy raises Scapy_Exception (an Exception) for bad magic
        raise NetloadConfigError(
            f"capture {name!r} is not a pcap or pcapng file ({exc}); write it with tcpdump "
            "-w, tshark -w or wireshark") from exc
    with reader:
        flows, packets, total, first, last, resolution, complete, end = _read(
            reader, name, max_frames, max_flows, budget)
        if complete:
            _check_whole(reader, name, packets, end)
    if not packets:
        raise NetloadConfigError(f"capture {name!r} holds no frames; capture some traffic "
                                 "into it first")
    return Capture(name, tuple(flows.values()), packets, total, last - first, complete,
                   resolution)


def _read(reader: Any, name: str, max_frames: int | None, max_flows: int,
          budget: Budget) -> tuple[dict[Any, Flow], int, int, int, int, int, bool, int]:
    flows: dict[Any, Flow] = {}
    packets = total = 0
    first = last = 0
    resolution = 1
    end = reader.f.tell()  # the offset after the last frame read
    ng = hasattr(reader, "interfaces")
    if not ng and not getattr(reader, "nano", False):
        resolution = 1000
    for frame, meta in reader:
        n = packets + 1
        where = f"capture {name!r} frame {n}"
        linktype = meta.linktype if ng else reader.linktype
        if linktype != DLT_EN10MB:
            found = _LINKTYPES.get(linktype, "unknown")
            raise NetloadConfigError(
                f"{where}: link type {linktype} ({found}); only Ethernet (DLT_EN10MB, 1) "
                "can be replayed from a port: capture on an Ethernet interface (not 'any', "
                "whose frames are Linux cooked), or convert with editcap -T ether")
        if ng:
            resol = meta.tsresol or 1000000
            ticks = ((meta.tshigh or 0) << 32) | (meta.tslow or 0)
            time_ns = ticks * 1_000_000_000 // resol
            resolution = max(resolution, 1_000_000_000 // resol)
            wirelen = meta.wirelen
        else:
            scale = 1 if getattr(reader, "nano", False) else 1000
            time_ns = meta.sec * 1_000_000_000 + meta.usec * scale
            wirelen = meta.wirelen
            if len(frame) < meta.caplen:
                raise NetloadConfigError(
                    f"{where}: the file ends inside this frame ({len(frame)} of its "
                    f"{meta.caplen} bytes): the capture is truncated; copy it whole, or "
                    f"cut it before this frame (editcap -r {name} out.pcap 1-{n - 1})")
        if wirelen is not None and len(frame) < wirelen:
            raise NetloadConfigError(
                f"{where}: captured {len(frame)} of its {wirelen} bytes (the capture's "
                "snap length cut it); capture again with the whole frame (tcpdump -s 0)")
        if len(frame) > MAX_FRAME_BYTES:
            raise NetloadConfigError(
                f"{where}: {len(frame)} bytes, more than a port sends ({MAX_FRAME_BYTES} "
                "without FCS); filter out such frames, or turn off segmentation offload "
                "(ethtool -K IFACE gro off gso off tso off) where the capture was taken")
        if len(frame) < 14:
            raise NetloadConfigError(f"{where}: {len(frame)} bytes, shorter than an Ethernet "
                                     "header; the capture is damaged: filter the frame out")
        if packets == 0:
            first = time_ns
        if time_ns < last:
            time_ns = last  # out of order stamps (several capture queues): never backwards
        last = time_ns
        d = dissect(frame)
        flow = flows.get(d.key)
        if flow is None:
            if len(flows) >= max_flows:
                raise NetloadConfigError(
                    f"{where}: more than max_flows={max_flows} flows; each flow is an engine "
                    "stream (accounted on its own): give a larger max_flows= (at most "
                    f"{_native_facts.MAX_STREAMS}), or filter the capture")
            flow = flows[d.key] = Flow(d.key, d)
        flow.add(frame, d, time_ns - first, budget, where)
        packets += 1
        total += len(frame)
        end = reader.f.tell()
        if max_frames is not None and packets >= max_frames:
            return flows, packets, total, first, last, resolution, False, end
    return flows, packets, total, first, last, resolution, True, end


def _check_whole(reader: Any, name: str, packets: int, end: int) -> None:
    """The readers stop quietly at a record or block the file ends inside: what follows
    the last frame (`end`, its offset) must be whole pcapng blocks, or nothing in a pcap."""
    f = reader.f
    try:
        size = os.path.getsize(name)
    except OSError:
        return
    if type(f).__name__ == "GzipFile" or end >= size:
        return
    if hasattr(reader, "interfaces"):  # pcapng: trailing blocks (statistics) chain to the end
        with open(name, "rb") as raw:
            raw.seek(end)
            while end + 12 <= size:
                head = raw.read(8)
                length = struct.unpack(reader.endian + "I", head[4:8])[0]
                if length < 12 or length % 4 or end + length > size:
                    break
                raw.seek(end + length)
                end += length
    if end < size:
        raise NetloadConfigError(
            f"capture {name!r}: {size - end} bytes after frame {packets} are not a whole "
            f"record (the file is truncated); copy it whole, or keep the frames before it "
            f"(editcap -r {name} out.pcap 1-{packets})")
