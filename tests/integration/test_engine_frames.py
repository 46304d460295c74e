"""The frames the engine writes, captured through a net_pcap port and checked byte by byte.

Per frame: its length follows the stream's size sequence; every byte outside the fields, the
checksums and the trailer equals the template; IPv4 header and UDP/TCP checksums verify; the
16-byte trailer (little-endian magic, stream id, sequence number, TSC) counts 0..N-1. Per field:
inc/dec walk [min, max] by step and wrap, random stays on the grid inside [min, max].
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_netload._native_facts import SIGNATURE_FORMAT

from pytest_netload.engine.client import Engine, LoadedStream
from pytest_netload.traffic.packets import (
    FCS_BYTES,
    TCP,
    UDP,
    Eth,
    FieldOp,
    IPv4,
    IPv6,
    Template,
    Vlan,
    field,
)
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine host runs DPDK: needs root"),
]

SIGNATURE = struct.Struct(SIGNATURE_FORMAT)  # magic, stream id, sequence number, TX TSC
MAGIC = 0x4E4C
COUNT = 1000


def ones_sum(data: bytes) -> int:
    """16-bit one's complement sum (RFC 1071), folded; 0xffff for data whose checksum is right."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return int(total)


def l4_checksum_offset(t: Template) -> int:
    return t.l4_offset + (6 if t.l4_proto == 17 else 16)


def checksum_problems(frame: bytes, t: Template) -> list[str]:
    problems = []
    l3, l4 = t.l3_offset, t.l4_offset
    if t.l3_proto == 4:
        ihl = (frame[l3] & 0x0F) * 4
        if ones_sum(frame[l3: l3 + ihl]) != 0xFFFF:
            problems.append("IPv4 header checksum")
        pseudo = frame[l3 + 12: l3 + 20] + struct.pack("!xBH", t.l4_proto, len(frame) - l4)
    else:
        pseudo = frame[l3 + 8: l3 + 40] + struct.pack("!I3xB", len(frame) - l4, t.l4_proto)
    if ones_sum(pseudo + frame[l4:]) != 0xFFFF:
        problems.append(f"L4 (protocol {t.l4_proto}) checksum")
    at = l4_checksum_offset(t)
    if t.l4_proto == 17 and frame[at: at + 2] == b"\0\0":
        problems.append("UDP checksum 0 (means 'none')")
    return problems


@dataclass
class Capture:
    stream: Stream
    loaded: LoadedStream
    frames: list[bytes]
    spec: dict[str, Any]


@pytest.fixture
def capture(engine: Engine, vdev_name: Callable[[str], str], empty_pcap: Path,
            tmp_path: Path) -> Iterator[Callable[[Stream, int], Capture]]:
    """Sends ``count`` packets of a stream into a pcap file and reads the frames back."""
    from scapy.utils import RawPcapReader

    def run(stream: Stream, count: int) -> Capture:
        out = tmp_path / f"{vdev_name('tx')}.pcap"
        port = engine.port(f"{vdev_name('net_pcap')},tx_pcap={out},rx_pcap={empty_pcap}")
        try:
            loaded = engine.load(port, stream)
            r = engine.run([loaded], [], count=count)
        finally:
            port.close()  # closes (and flushes) the pcap file
        frames = [bytes(data) for data, _meta in RawPcapReader(str(out))]
        (s,) = r.streams
        assert (s.tx_packets, s.tx_unsent, len(frames)) == (count, 0, count)
        assert s.tx_bytes == sum(len(f) for f in frames)
        spec = stream.compile(engine.constants["signature_bytes"])
        return Capture(stream, loaded, frames, spec)

    yield run


def expected_values(op: FieldOp, n: int) -> list[int] | None:
    """The value sequence of an inc/dec/set field; None for random."""
    period = (op.max - op.min) // op.step + 1
    if op.op == "inc":
        return [op.min + op.step * (i % period) for i in range(n)]
    if op.op == "dec":
        return [op.max - op.step * (i % period) for i in range(n)]
    if op.op == "set":
        return [op.min] * n
    return None


def field_value(frame: bytes, op: FieldOp) -> int:
    return int.from_bytes(frame[op.offset: op.offset + op.width], "big")


def masked(data: bytes, positions: set[int]) -> bytes:
    out = bytearray(data)
    for k in positions:
        if k < len(out):
            out[k] = 0
    return bytes(out)


def check_capture(c: Capture) -> None:
    t, stream = c.stream.template, c.stream
    sizes, seq = stream.frame_sizes, stream.sequence
    variable = {t.l3_offset + 10, t.l3_offset + 11} if t.l3_proto == 4 else set()
    if t.l4_proto:
        variable |= {l4_checksum_offset(t), l4_checksum_offset(t) + 1}
    for op in stream.fields:
        variable |= set(range(op.offset, op.offset + op.width))

    tscs = []
    for i, frame in enumerate(c.frames):
        where = f"frame {i}"
        index = seq[i % len(seq)]
        assert len(frame) == sizes[index] - FCS_BYTES, where
        body = len(frame) - SIGNATURE.size
        if masked(frame[:body], variable) != masked(c.spec["frames"][index][:body], variable):
            changed = [k for k in range(body) if frame[k] != c.spec["frames"][index][k]]
            raise AssertionError(f"{where}: bytes {sorted(set(changed) - variable)} differ from "
                                 "the template")
        magic, stream_id, number, tsc = SIGNATURE.unpack(frame[body:])
        assert (magic, stream_id, number) == (MAGIC, c.loaded.stream_id, i), where
        tscs.append(tsc)
        assert checksum_problems(frame, t) == [], where
    assert tscs == sorted(tscs), "TX timestamps go backwards"

    for op in stream.fields:
        values = [field_value(f, op) for f in c.frames]
        expected = expected_values(op, len(values))
        if expected is not None:
            assert values == expected, f"{op.label} ({op.op})"
            continue
        assert all(op.min <= v <= op.max and (v - op.min) % op.step == 0 for v in values), op
        grid = (op.max - op.min) // op.step + 1
        # Small grids: every value drawn at least once (the seed makes this deterministic).
        assert len(set(values)) >= min(grid, 64), f"{op.label}: random values barely vary"


# ---- one stream per template kind -------------------------------------------------------------


def _ipv4_udp() -> Stream:
    t = (Eth() / IPv4() / UDP()).build()
    return Stream(t, size=128, name="ipv4-udp", fields=[
        field(t, "eth.src", "inc", min=1, max=1000),  # 6 bytes
        field(t, "ip.tos", "random"),  # odd offset, inside the IPv4 header sum
        field(t, "ip.id", "inc", min=65530, max=65535),  # reaches max, then wraps
        field(t, "ip.ttl", "set", value=7),
        field(t, "ip.src", "random", min="10.0.0.1", max="10.0.0.200", step=7),
        field(t, "udp.sport", "inc", min=10, max=15, step=2),  # wraps before passing max
        field(t, "udp.dport", "dec", min=100, max=120, step=3),
        field(t, 43, "random", width=8),  # odd offset in the payload
        field(t, 51, "dec", width=1, min=3, max=250),
        field(t, 60, "inc", width=4, min=0xFFFF_FFF0, max=0xFFFF_FFFF),
    ])


def _ipv4_tcp() -> Stream:
    t = (Eth() / IPv4() / TCP()).build()
    return Stream(t, size=[86, 87], name="ipv4-tcp", fields=[  # an odd length: odd trailer
        field(t, "tcp.seq", "inc", step=1_000_000),
        field(t, "tcp.sport", "random", min=5, max=9),
        field(t, "ip.dst", "dec", min="198.19.0.0", max="198.19.0.9"),
    ])


def _ipv6_udp() -> Stream:
    t = (Eth() / IPv6() / UDP()).build()
    return Stream(t, size=[90, 91, 200], name="ipv6-udp", fields=[
        field(t, "ip.src", "inc", min="2001:2::1", max="2001:2::5"),  # low 64 bits
        field(t, "ipv6.dst_hi", "random"),
        field(t, "udp.sport", "random", min=1),
        field(t, "ip.hlim", "dec", min=1, max=3),
    ])


def _ipv6_tcp() -> Stream:
    t = (Eth() / IPv6() / TCP(flags="PA")).build()
    return Stream(t, size=[110, 111], name="ipv6-tcp", fields=[
        field(t, "tcp.ack", "random"),
        field(t, "ip.dst", "random", min="2001:2:0:1::1", max="2001:2:0:1::ffff"),
    ])


def _vlan_ipv4_udp() -> Stream:
    t = (Eth() / Vlan(vid=5, pcp=3) / IPv4() / UDP()).build()
    return Stream(t, size=[68, 69], name="vlan-ipv4-udp", fields=[
        field(t, "vlan.id", "inc", min=100, max=103),  # keeps PCP 3
        field(t, "ip.dst", "random", min="198.19.0.0", max="198.19.255.255"),
    ])


def _qinq_ipv6_tcp() -> Stream:
    t = (Eth() / Vlan(vid=10) / Vlan(vid=20) / IPv6() / TCP()).build()
    return Stream(t, size=130, name="qinq-ipv6-tcp", fields=[
        field(t, "vlan1.id", "dec", min=1, max=4095, step=100),
        field(t, "tcp.dport", "inc", min=65000, max=65535, step=7),
    ])


def _imix_ipv4_udp() -> Stream:
    t = (Eth() / IPv4() / UDP()).build()
    return Stream(t, size="imix", name="imix-ipv4-udp", fields=[
        field(t, "udp.sport", "inc", min=1024, max=1024 + 100),
        field(t, "ip.src", "random", min="198.18.0.0", max="198.18.255.255"),
    ])


def _plain_sizes() -> Stream:
    t = (Eth() / IPv4() / UDP()).build()  # no fields: the template's own checksums
    return Stream(t, size=[64, 65, 127, 594, 1517, 1518], name="sizes")


STREAMS = [_ipv4_udp, _ipv4_tcp, _ipv6_udp, _ipv6_tcp, _vlan_ipv4_udp, _qinq_ipv6_tcp,
           _imix_ipv4_udp, _plain_sizes]


@pytest.mark.parametrize("make", STREAMS, ids=[f.__name__.strip("_") for f in STREAMS])
def test_frames_fields_checksums_and_trailer(capture: Callable[[Stream, int], Capture],
                                             make: Callable[[], Stream]) -> None:
    check_capture(capture(make(), COUNT))


def test_vlan_id_field_keeps_pcp(capture: Callable[[Stream, int], Capture]) -> None:
    c = capture(_vlan_ipv4_udp(), 8)
    tcis = [int.from_bytes(f[14:16], "big") for f in c.frames]
    assert [tci >> 13 for tci in tcis] == [3] * 8
    assert [tci & 0xFFF for tci in tcis] == [100, 101, 102, 103] * 2


def test_random_fields_repeat_with_the_seed(capture: Callable[[Stream, int], Capture]) -> None:
    t = (Eth() / IPv4() / UDP()).build()
    ops = [field(t, "udp.sport", "random"), field(t, "ip.src", "random")]

    def values(seed: int) -> list[tuple[int, ...]]:
        c = capture(Stream(t, fields=ops, seed=seed, name=f"seed{seed}"), 200)
        return [tuple(field_value(f, op) for op in ops) for f in c.frames]

    first = values(1)
    assert values(1) == first  # every run restarts the generator from the seed
    assert values(2) != first
