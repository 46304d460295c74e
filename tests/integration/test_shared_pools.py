"""Streams share the engine's TX pools (issue 16, item 5): frames stay right, streams scale.

A shared pool's mbuf holds whichever template it was last built from; the engine copies the
stream's template in when the mbuf's tag (the template's serial) differs. So frames from the
shared pools must be byte for byte those of a private pre-filled pool (``pool_mbufs``), with
several streams interleaved on one worker, checksums right when streams alternate, and a new
stream never sending a freed one's bytes. 10,000 streams load on the default 1024 MB.
"""

from __future__ import annotations

import os
import struct
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_engine_frames import checksum_problems, l4_checksum_offset, masked

from pytest_netload._native_facts import MAX_STREAMS, SIGNATURE_FORMAT
from pytest_netload.engine.client import Engine
from pytest_netload.errors import NetloadConfigError
from pytest_netload.traffic.packets import TCP, UDP, Eth, IPv4, IPv6, field
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine host runs DPDK: needs root"),
]

SIGNATURE = struct.Struct(SIGNATURE_FORMAT)
COUNT = 300


def _streams(tag: str = "") -> list[Stream]:
    """Four streams whose templates differ in every layer, some sizes shared (one pool class)."""
    a = (Eth() / IPv4(src="198.18.0.1", dst="198.19.0.1") / UDP(sport=1, dport=9)).build()
    b = (Eth(src="02:00:00:00:00:0b") / IPv4(src="198.18.7.7", dst="198.19.9.9", ttl=3) /
         UDP(sport=777, dport=888)).build()
    c = (Eth() / IPv6(src="2001:db8::1", dst="2001:db8::2") / TCP(sport=5, dport=6)).build()
    d = (Eth() / IPv4() / UDP()).build()
    return [
        Stream(a, size=64, name=f"a{tag}", fields=[
            field(a, "ip.src", "inc", min="198.18.0.1", max="198.18.0.9"),
            field(a, "udp.sport", "random", min=1024, max=65535)]),
        Stream(b, size=[64, 594, 1518], name=f"b{tag}", fields=[
            field(b, 42, "set", width=2, value=0xAAAA),  # payload bytes of its own
            field(b, "ip.tos", "random"),  # odd offset in the IPv4 header sum
            field(b, "udp.dport", "dec", min=100, max=120, step=3)]),
        Stream(c, size=[127, 200], name=f"c{tag}", fields=[  # odd length: odd trailer
            field(c, "tcp.seq", "inc", step=1_000_000)]),
        Stream(d, size=128, name=f"d{tag}", fields=[
            field(d, 60, "set", width=8, value=0x5555_5555_5555_5555)]),
    ]


def _capture(engine: Engine, vdev_name: Callable[[str], str], empty_pcap: Path, tmp_path: Path,
             streams: list[tuple[Stream, int]], count: int,
             interleaved: bool = True) -> tuple[dict[int, list[bytes]], list[int]]:
    """Load each (stream, pool_mbufs) on one net_pcap port, send `count` of each in one run
    (one TX queue: one worker interleaves them burst by burst), and return the frames by
    stream id, in order, with the ids in load order."""
    from scapy.utils import RawPcapReader

    out = tmp_path / f"{vdev_name('tx')}.pcap"
    port = engine.port(f"{vdev_name('net_pcap')},tx_pcap={out},rx_pcap={empty_pcap}")
    try:
        loaded = [engine.load(port, s, pool_mbufs=mbufs) for s, mbufs in streams]
        r = engine.run([(s, count) for s in loaded], [], burst=8)
        assert [s.tx_packets for s in r.streams] == [count] * len(loaded)
    finally:
        port.close()  # flushes the pcap file; frees the streams
    by_id: dict[int, list[bytes]] = defaultdict(list)
    order = []
    for data, _meta in RawPcapReader(str(out)):
        frame = bytes(data)
        stream_id = SIGNATURE.unpack(frame[-SIGNATURE.size:])[1]
        by_id[stream_id].append(frame)
        order.append(stream_id)
    switches = sum(1 for x, y in zip(order, order[1:]) if x != y)
    assert switches >= len(loaded) * 4 or not interleaved, \
        "the streams did not interleave on the worker"
    return by_id, [s.stream_id for s in loaded]


def _without_ids(frame: bytes, stream: Stream) -> bytes:
    """The frame with what differs between two loads of one stream zeroed: the trailer's
    stream id and TX time, and the L4 checksum that covers them."""
    t = stream.template
    variable = set(range(len(frame) - SIGNATURE.size + 2, len(frame) - SIGNATURE.size + 4))
    variable |= set(range(len(frame) - 8, len(frame)))
    if t.l4_proto:
        variable |= {l4_checksum_offset(t), l4_checksum_offset(t) + 1}
    return masked(frame, variable)


def test_shared_frames_equal_prefilled(engine: Engine, vdev_name: Callable[[str], str],
                                       empty_pcap: Path, tmp_path: Path) -> None:
    """Each stream twice, shared and in a private pre-filled pool, all eight interleaved on one
    worker: the same frames, byte for byte (but for the trailer's id and time), checksums
    right on every frame of both."""
    shared, private = _streams(), _streams()
    by_id, ids = _capture(engine, vdev_name, empty_pcap, tmp_path,
                          [(s, 0) for s in shared] + [(s, 511) for s in private], COUNT)
    n = len(shared)
    for k, stream in enumerate(shared):
        mine, twin = by_id[ids[k]], by_id[ids[n + k]]
        assert len(mine) == len(twin) == COUNT, stream.label
        for i, (f, g) in enumerate(zip(mine, twin)):
            where = f"stream {stream.label} frame {i}"
            assert _without_ids(f, stream) == _without_ids(g, stream), where
            assert checksum_problems(f, stream.template) == [], where
            assert checksum_problems(g, stream.template) == [], where
            assert SIGNATURE.unpack(f[-SIGNATURE.size:])[2] == i, where


def test_freed_stream_template_never_sent(engine: Engine, vdev_name: Callable[[str], str],
                                          empty_pcap: Path, tmp_path: Path) -> None:
    """A stream freed and a new one of the same sizes loaded: the pool's mbufs still hold the
    old template, and the old stream id may come back, but its serial never does: every frame
    of the new stream is its own template."""
    old = _streams("-old")
    _capture(engine, vdev_name, empty_pcap, tmp_path, [(s, 0) for s in old], COUNT)
    # Same sizes and layers, every constant byte different.
    t = (Eth(src="02:00:00:00:00:0c", dst="02:00:00:00:00:0d") /
         IPv4(src="10.1.2.3", dst="10.4.5.6", ttl=99) / UDP(sport=4321, dport=1234)).build()
    payload = field(t, 42, "set", width=2, value=0x3C3C)
    new = [Stream(t, size=[64, 594, 1518], name="new", fields=[
        payload, field(t, "udp.sport", "inc", min=10, max=20)]),
           Stream(t, size=128, name="new-128", fields=[payload])]
    by_id, ids = _capture(engine, vdev_name, empty_pcap, tmp_path, [(s, 0) for s in new], COUNT)
    for stream, stream_id in zip(new, ids):
        spec = stream.compile(SIGNATURE.size)
        tmpl = stream.template
        variable = {tmpl.l3_offset + 10, tmpl.l3_offset + 11,
                    l4_checksum_offset(tmpl), l4_checksum_offset(tmpl) + 1}
        for op in stream.fields:
            if op.op != "set":
                variable |= set(range(op.offset, op.offset + op.width))
        expected = [bytearray(f) for f in spec["frames"]]
        for f in expected:
            for op in stream.fields:
                if op.op == "set":
                    f[op.offset: op.offset + op.width] = op.min.to_bytes(op.width, "big")
        for i, frame in enumerate(by_id[stream_id]):
            index = stream.sequence[i % len(stream.sequence)]
            body = len(frame) - SIGNATURE.size
            assert masked(frame[:body], variable) == masked(bytes(expected[index][:body]),
                                                             variable), f"{stream.label} {i}"
            assert checksum_problems(frame, tmpl) == [], f"{stream.label} {i}"


def _many(n: int, sizes: int | list[int]) -> list[Stream]:
    tmpl = (Eth() / IPv4(src="198.18.0.1", dst="198.19.0.1") / UDP(dport=9)).build()
    return [Stream(tmpl, size=sizes, name=f"s{i}",
                   fields=[field(tmpl, "udp.sport", "inc", min=1, max=1000)])
            for i in range(n)]


@pytest.mark.parametrize("sizes", [[64, 594, 1518]], ids=["imix"])
def test_ten_thousand_streams(tmp_path: Path, sizes: int | list[int]) -> None:
    """10,000 streams load on the default 1024 MB engine and each sends its count to net_null;
    the TX pools stay one per size class. (10,000 streams of 64 B: on RX, below.)"""
    count = 20
    with Engine(log_dir=str(tmp_path)) as engine:
        port = engine.port("net_null0")
        before = engine.memory()
        loaded = [engine.load(port, s) for s in _many(10_000, sizes)]
        memory = engine.memory()
        r = engine.run([(s, count) for s in loaded], [])
        assert len(r.streams) == 10_000
        assert [s.tx_packets for s in r.streams] == [count] * 10_000
        assert sum(s.tx_unsent for s in r.streams) == 0
    assert memory["shared_pools"] == (1 if sizes == 64 else 3)
    assert memory["private_pools"] == 0
    # The templates and stream state: a few KB a stream, nothing like a pool each.
    assert memory["heap_used_bytes"] - before["heap_used_bytes"] < 400 << 20, memory


def test_ten_thousand_streams_counted_on_rx(tmp_path: Path) -> None:
    """10,000 streams through a net_ring loop on the default 1024 MB engine (issue 16 item
    5): every frame classified to its stream, its sequence tracked and its latency taken,
    none lost, and every stream's latency histogram whole (paged histograms)."""
    count = 32
    with Engine(log_dir=str(tmp_path)) as engine:
        port = engine.port("net_ring_many0")
        loaded = [engine.load(port, s) for s in _many(10_000, 64)]
        r = engine.run([(s, count) for s in loaded], [port], drain_s=0.1)
    assert len(r.streams) == 10_000
    bad = [s for s in r.streams if (s.tx_packets, s.rx_packets, s.lost, s.duplicates,
                                    s.reordered, s.latency_samples, s.hist_unrecorded)
           != (count, count, 0, 0, 0, count, 0)]
    assert not bad, bad[:3]
    for s in (r.streams[0], r.streams[4_999], r.streams[-1]):
        assert s.latency is not None and s.latency.total == count
        p99 = s.latency_result().percentile(99).value_ns  # a bucket's midpoint: within 0.8 %
        assert s.latency_min_ns * 0.99 <= p99 <= s.latency_max_ns * 1.01, (s, p99)


def test_stream_limit_names_count_and_fix(tmp_path: Path) -> None:
    """Past NETLOAD_MAX_STREAMS loaded streams, loading fails with the limit and the fix."""
    tmpl = (Eth() / IPv4() / UDP()).build()
    stream = Stream(tmpl, size=64, name="x")
    with Engine(log_dir=str(tmp_path)) as engine:
        port = engine.port("net_null0")
        for _ in range(MAX_STREAMS):
            engine.load(port, stream)
        with pytest.raises(NetloadConfigError, match=rf"{MAX_STREAMS} streams are loaded.*free"):
            engine.load(port, stream)


_FIELDS = {
    "ip.src inc": lambda t: field(t, "ip.src", "inc", min="198.18.0.1", max="198.18.3.0"),
    "ip.tos random": lambda t: field(t, "ip.tos", "random"),
    "ip.id dec": lambda t: field(t, "ip.id", "dec", min=3, max=60000, step=7),
    "udp.sport random": lambda t: field(t, "udp.sport", "random", min=1, max=65535),
    "udp.dport set": lambda t: field(t, "udp.dport", "set", value=4791),
}


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(streams=st.lists(
    st.tuples(st.lists(st.integers(64, 1518), min_size=1, max_size=3),
              st.sets(st.sampled_from(sorted(_FIELDS)), max_size=3),
              st.integers(0, 255)),
    min_size=1, max_size=4))
def test_shared_equals_prefilled_any_mix(engine: Engine, vdev_name: Callable[[str], str],
                                         empty_pcap: Path, tmp_path: Path,
                                         streams: list[tuple[list[int], set[str], int]]) -> None:
    """Any few streams of any sizes and fields, interleaved: shared and pre-filled agree."""
    def make(k: int, sizes: list[int], fields: set[str], ttl: int) -> Stream:
        t = (Eth() / IPv4(src="198.18.0.1", dst=f"198.19.{k}.{ttl}", ttl=ttl) /
             UDP(sport=k, dport=9)).build()
        return Stream(t, size=sizes, name=f"mix{k}", fields=[_FIELDS[f](t) for f in sorted(fields)])

    made = [make(k, *s) for k, s in enumerate(streams)]
    twins = [make(k, *s) for k, s in enumerate(streams)]
    by_id, ids = _capture(engine, vdev_name, empty_pcap, tmp_path,
                          [(s, 0) for s in made] + [(s, 255) for s in twins], 64,
                          interleaved=len(made) > 1)
    for k, stream in enumerate(made):
        mine, twin = by_id[ids[k]], by_id[ids[len(made) + k]]
        assert len(mine) == len(twin) == 64
        for i, (f, g) in enumerate(zip(mine, twin)):
            assert _without_ids(f, stream) == _without_ids(g, stream), f"{stream.label} {i}"
            assert checksum_problems(f, stream.template) == [], f"{stream.label} {i}"
