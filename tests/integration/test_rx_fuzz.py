"""The RX classifier fed random frames: every frame read is counted once, signed or foreign.

A pcap of random frames goes through the engine's RX on a net_pcap port: lengths from 0 bytes to
jumbo, random bytes, valid signature trailers with random stream ids, sequence numbers and
timestamps, truncated trailers, and frames the engine itself generated (captured off a net_ring
port) mixed in, whole, repeated or cut short. A Python model of the classifier says which
frames are signed, for which stream, so the counts are checked exactly: per stream, frames and
bytes; foreign frames; and signed + foreign == frames read == frames in the file.

It runs as a regular integration test, and under ASan/UBSan in scripts/sanitize.sh, where the
native core is built with sanitizers and every RX buffer is poisoned outside its frame's bytes
(native/src/rx.c, asan_fence): there a read past a frame's end aborts the engine host.
NETLOAD_FUZZ_SEEDS (comma-separated) and NETLOAD_FUZZ_FRAMES change the seeds and the frames
per seed.
"""

from __future__ import annotations

import os
import random
import struct
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from netutil import write_pcap

from pytest_netload._native_facts import SIGNATURE_FORMAT

from pytest_netload.engine.client import Engine, LoadedStream, Port
from pytest_netload.measure.frames import EXPECT_BYTES, EXPECT_KEEP, FrameRule
from pytest_netload.traffic.expect import ANY, expect
from pytest_netload.traffic.packets import UDP, Eth, IPv4, field
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine host runs DPDK: needs root"),
]

SIGNATURE = struct.Struct(SIGNATURE_FORMAT)  # magic, stream id, sequence number, TX TSC
MAGIC = 0x4E4C
ETH_HEADER = 14
JUMBO = 9018  # bytes written (no FCS): a 9000-byte MTU frame plus its Ethernet header
SEEDS = [int(s) for s in os.environ.get("NETLOAD_FUZZ_SEEDS", "1,2").split(",") if s.strip()]
FRAMES = int(os.environ.get("NETLOAD_FUZZ_FRAMES", "3000"))
T4 = (Eth(dst="02:00:00:00:00:02") / IPv4(src="198.18.0.1", dst="198.19.0.1") / UDP()).build()


def classify(frame: bytes, run_ids: set[int]) -> int | None:
    """The stream id netload_rx_burst counts `frame` for, or None (foreign)."""
    if len(frame) < SIGNATURE.size + ETH_HEADER:
        return None
    magic, stream_id, _seq, _tsc = SIGNATURE.unpack_from(frame, len(frame) - SIGNATURE.size)
    return stream_id if magic == MAGIC and stream_id in run_ids else None


def random_length(rng: random.Random, low: int = 0) -> int:
    pick = rng.random()
    if pick < 0.35:
        return rng.randint(low, 64)
    if pick < 0.85:
        return rng.randint(max(low, 60), 1518)
    return rng.randint(max(low, 1519), JUMBO)


def fuzz_frames(rng: random.Random, n: int, ids: list[int], real: list[bytes]) -> list[bytes]:
    """`n` frames: random ones, signed ones with random fields, cut trailers, real ones."""
    stamps = [0, 1, (1 << 64) - 1, 1 << 63]
    frames: list[bytes] = []
    next_real = 0
    for _ in range(n):
        kind = rng.random()
        if kind < 0.25:  # random bytes, any length
            frames.append(rng.randbytes(random_length(rng)))
        elif kind < 0.55:  # a valid trailer on random bytes, random fields
            body = rng.randbytes(random_length(rng, SIGNATURE.size + ETH_HEADER)
                                 - SIGNATURE.size)
            stream_id = rng.choice([*ids, rng.randrange(1 << 16), 4095, 4096, 0xFFFF])
            seq = rng.choice([rng.randrange(1 << 32), 0, (1 << 32) - 1, rng.randrange(64)])
            tsc = rng.choice([*stamps, rng.randrange(1 << 64)])
            frames.append(body + SIGNATURE.pack(MAGIC, stream_id, seq, tsc))
        elif kind < 0.65:  # a trailer cut short: too short to be signed, or cut mid-trailer
            whole = rng.randbytes(rng.randint(0, 40)) + SIGNATURE.pack(
                MAGIC, rng.choice(ids), rng.randrange(1 << 32), rng.randrange(1 << 64))
            frames.append(whole[: rng.randint(0, len(whole) - 1)])
        elif real:  # frames the engine generated: in order, repeated, or cut short
            frame = real[next_real % len(real)]
            next_real += rng.random() < 0.9  # now and then the same frame again
            if rng.random() < 0.1:
                frame = frame[: rng.randint(0, len(frame))]
            frames.append(frame)
    return frames


def first_rule(frame: bytes, rules: list[FrameRule]) -> int:
    """The rule rx_expect.c counts a signed `frame` for (-1: unmatched)."""
    body = frame[:len(frame) - SIGNATURE.size][:EXPECT_BYTES]
    for i, rule in enumerate(rules):
        if rule.span <= len(body) and rule.matches(body):
            return i
    return -1


RealFrames = tuple[list[bytes], Port, LoadedStream]


@pytest.fixture(scope="module")
def real_frames(engine: Engine, vdev_name: Callable[[str], str]) -> Iterator[RealFrames]:
    """IMIX frames of one stream with random fields, as the engine sends them (captured
    off a net_ring port); the port that holds the stream (open for the module); the stream."""
    port = engine.port(vdev_name("net_ring"))
    stream = engine.load(port, Stream(T4, size="imix", name="fuzz-real", fields=[
        field(T4, "udp.sport", "random", min=1024, max=65535),
        field(T4, "ip.src", "inc", min="198.18.0.1", max="198.18.0.254"),
    ]))
    r = engine.run([stream], [port], count=400, capture=400, capture_snaplen=JUMBO)
    frames = [data for _ns, length, data in r.captured if len(data) == length]
    assert len(frames) == 400, f"captured {len(frames)} whole frames of 400 sent"
    yield frames, port, stream
    port.close()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("mode", ["plain", "capture+timing"])
def test_random_frames_are_counted_once_each(
    engine: Engine, real_frames: RealFrames, vdev_name: Callable[[str], str], tmp_path: Path,
    seed: int, mode: str,
) -> None:
    frames_real, holder, real = real_frames
    other = engine.load(holder, Stream(T4, size=128, name=f"fuzz-other-{seed}-{mode}"))
    elsewhere = engine.load(holder, Stream(T4, name=f"fuzz-not-in-run-{seed}-{mode}"))
    run_ids = {real.stream_id, other.stream_id}
    rng = random.Random(seed)
    frames = fuzz_frames(rng, FRAMES, [real.stream_id, other.stream_id, elsewhere.stream_id],
                         frames_real)
    rx_file = tmp_path / "fuzz.pcap"
    write_pcap(rx_file, frames)
    options = {"capture": 64, "capture_snaplen": 256, "timing_samples": 512} \
        if mode == "capture+timing" else {"capture": 0}
    # a rule over all 128 bytes (random ones: only frames made for it match), the frame
    # as sent, and one that never matches what the engine sent
    rules = {real.name: [FrameRule(rng.randbytes(EXPECT_BYTES), b"\xff" * EXPECT_BYTES),
                         expect(ttl="sent-1").rule(real.source), expect().rule(real.source)],
             other.name: [expect(ttl=ANY, dscp=ANY).rule(other.source)]}
    port = engine.port(f"{vdev_name('net_pcap')},rx_pcap={rx_file},tx_pcap={tmp_path / 'tx.pcap'}")
    try:
        # start_delay_s=0: frames polled before the start deadline would go uncounted.
        r = engine.run([], [port], expect=[real, other], start_delay_s=0, duration_s=1.5,
                       expect_frames=rules, **options)
    finally:
        port.close()
        other.free()
        elsewhere.free()

    expected = Counter(classify(f, run_ids) for f in frames)
    expected_bytes: Counter[int | None] = Counter()
    for f in frames:
        expected_bytes[classify(f, run_ids)] += len(f)
    counters = r.ports[port.device]
    read = int(r.rx_queues["packets"][0])
    assert (counters["ipackets"], counters["ierrors"], read) == (len(frames), 0, len(frames)), \
        f"seed {seed}: the pcap held {len(frames)} frames; port counters {counters}"
    by_id = {s.stream_id: s for s in r.streams}
    signed = sum(s.rx_packets for s in r.streams)
    assert signed + r.foreign == read, f"seed {seed}: {signed} signed + {r.foreign} foreign"
    assert r.foreign == expected[None], f"seed {seed}"
    for stream_id in run_ids:
        s = by_id[stream_id]
        assert (s.rx_packets, s.rx_bytes) == (expected[stream_id], expected_bytes[stream_id]), \
            f"seed {seed}, stream {stream_id}"
        assert s.duplicates + s.reordered <= s.rx_packets
    assert int(r.rx_queues["bytes"][0]) == sum(len(f) for f in frames)
    for stream in (real, other):
        signed = [f for f in frames if classify(f, run_ids) == stream.stream_id]
        which = [first_rule(f, rules[stream.name]) for f in signed]
        check = r.frames[stream.name]
        assert check.matched == tuple(which.count(i) for i in range(len(rules[stream.name]))), \
            f"seed {seed}, stream {stream.name}"
        assert check.unmatched == which.count(-1), f"seed {seed}, stream {stream.name}"
        kept = [f for f, w in zip(signed, which) if w < 0][:EXPECT_KEEP]
        want = sorted(((SIGNATURE.unpack_from(f, len(f) - SIGNATURE.size)[2], len(f),
                        f[:EXPECT_BYTES]) for f in kept), key=lambda k: k[0])  # stable
        assert [(k.seq, k.length, k.data) for k in check.kept] == want, f"seed {seed}"
    if mode == "capture+timing":
        # the capture ring kept the last 64 frames read, cut to 256 bytes
        kept = [(length, data) for _ns, length, data in r.captured]
        assert kept == [(len(f), f[:256]) for f in frames[-64:]], f"seed {seed}"


# ---- ARP and IPv6 ND: the parser of frames that ask for a port's address --------------

OURS = {"ipv4": "198.18.0.2", "ipv6": "2001:2::2"}
PEER_MAC = bytes.fromhex("020000000009")


def _icmp6_sum(src: bytes, dst: bytes, icmp: bytes) -> int:
    data = src + dst + struct.pack("!IxxxB", len(icmp), 58) + icmp
    data += b"\0" * (len(data) % 2)
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def nd_frames(rng: random.Random, n: int, family: str) -> list[bytes]:
    """Frames shaped like ARP or neighbour discovery, well formed or not: requests for the
    port's address (untagged, or on a VLAN it is not on), for other addresses, with
    random header fields and options, cut short anywhere, and random bytes of those types."""
    import ipaddress

    ours4 = ipaddress.ip_address(OURS["ipv4"]).packed
    ours6 = ipaddress.ip_address(OURS["ipv6"]).packed
    src6 = ipaddress.ip_address("2001:2::1").packed
    frames: list[bytes] = []
    for _ in range(n):
        tag = struct.pack("!HH", 0x8100, rng.randrange(1, 4095)) if rng.random() < 0.15 else b""
        eth = b"\xff" * 6 + PEER_MAC + tag
        kind = rng.random()
        if kind < 0.4:  # ARP
            target = ours4 if rng.random() < 0.6 else rng.randbytes(4)
            fields = [1, 0x0800, 6, 4, 1]
            if rng.random() < 0.3:  # one field wrong
                i = rng.randrange(5)
                fields[i] = rng.randrange(1 << (8 if i in (2, 3) else 16))
            body = struct.pack("!HHBBH", *fields) + PEER_MAC + bytes([198, 18, 0, 1]) \
                + b"\0" * 6 + target
            frame = eth + b"\x08\x06" + body + rng.randbytes(rng.randint(0, 30))
        elif kind < 0.8:  # ICMPv6 NS / NA with options
            target = ours6 if rng.random() < 0.6 else rng.randbytes(16)
            icmp_type = rng.choice([135, 135, 135, 136, rng.randrange(256)])
            options = b"".join(
                bytes([rng.choice([1, 2, rng.randrange(256)]), rng.choice([0, 1, 2, 255])])
                + rng.randbytes(6) for _ in range(rng.randint(0, 3)))
            icmp = bytes([icmp_type, 0 if rng.random() < 0.9 else 1]) + b"\0\0" + b"\0" * 4 \
                + target + options
            plen = len(icmp) if rng.random() < 0.8 else rng.randrange(1 << 16)
            hlim = 255 if rng.random() < 0.9 else rng.randrange(255)
            src = src6 if rng.random() < 0.9 else b"\0" * 16
            ip = struct.pack("!IHBB", 6 << 28, plen, 58, hlim) + src + ours6
            frame = eth + b"\x86\xdd" + ip + icmp
        else:  # random bytes behind an ARP, IPv6 or VLAN type
            frame = eth + rng.choice([b"\x08\x06", b"\x86\xdd", b"\x81\x00"]) + \
                rng.randbytes(rng.randint(0, 200))
        if rng.random() < 0.2:
            frame = frame[: rng.randint(0, len(frame))]
        frames.append(frame)
    return frames


def asks_for_us(frame: bytes, family: str) -> bool:
    """Whether native/src/nd.c counts `frame` as a request for the port's address (an
    untagged port with OURS[family]): the same rules, on the first 128 bytes."""
    import ipaddress

    f = frame[:128]
    if len(f) < 14 or f[12:14] == b"\x81\x00":
        return False  # too short, or tagged (the port is untagged)
    if family == "ipv4":
        a = f[14:]
        return (f[12:14] == b"\x08\x06" and len(a) >= 28
                and struct.unpack("!HHBBH", a[:8]) == (1, 0x0800, 6, 4, 1)
                and a[24:28] == ipaddress.ip_address(OURS["ipv4"]).packed)
    ip = f[14:]
    return (f[12:14] == b"\x86\xdd" and len(ip) >= 64 and ip[0] >> 4 == 6 and ip[6] == 58
            and ip[7] == 255 and ip[40] == 135 and ip[41] == 0
            and ip[48:64] == ipaddress.ip_address(OURS["ipv6"]).packed)


def read_pcap(path: Path) -> list[bytes]:
    data = path.read_bytes()
    frames, at = [], 24
    while at + 16 <= len(data):
        caplen = struct.unpack_from("<I", data, at + 8)[0]
        frames.append(data[at + 16: at + 16 + caplen])
        at += 16 + caplen
    return frames


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_arp_and_nd_frames_are_parsed_safely_and_answered_exactly(
    engine: Engine, vdev_name: Callable[[str], str], tmp_path: Path, seed: int, family: str,
) -> None:
    """Every request for the port's address is counted, answered or rate-limited (never
    both, never neither); every reply that left is well formed; nothing else is answered.
    Under ASan/UBSan (scripts/sanitize.sh) any read past a frame aborts the engine host."""
    import ipaddress

    frames = nd_frames(random.Random(seed), FRAMES, family)
    rx_file, tx_file = tmp_path / "nd.pcap", tmp_path / "replies.pcap"
    write_pcap(rx_file, frames)
    port = engine.port(f"{vdev_name('net_pcap')},rx_pcap={rx_file},tx_pcap={tx_file}")
    try:
        port.set_address(OURS[family])
        r = engine.run([], [port], start_delay_s=0, duration_s=1.0)
        stats = port.nd_stats()
    finally:
        port.close()  # the pcap PMD writes tx_file on close
    assert r.foreign == len(frames) == int(r.rx_queues["packets"][0])
    asked = sum(asks_for_us(f, family) for f in frames)
    requests, replies = (("arp_requests", "arp_replies") if family == "ipv4" else
                         ("ns_received", "na_sent"))
    assert stats[requests] == asked, (stats, asked)
    assert stats[replies] + stats["rate_limited"] == asked, stats
    assert 0 < stats[replies] <= 32 + 1000 * 1.5, stats  # the bucket: a burst, then 1/ms
    sent = read_pcap(tx_file)
    assert len(sent) == stats[replies] - stats["tx_refused"], stats
    ours = ipaddress.ip_address(OURS[family]).packed
    # a reply goes to the requester: its Ethernet source, or (ND) the source link-layer
    # address option it gave, or all nodes (a solicitation from ::, duplicate detection)
    to = {PEER_MAC, bytes.fromhex("333300000001")} | {
        f[i + 2:i + 8] for f in frames for i in range(len(f) - 7) if f[i:i + 2] == b"\x01\x01"}
    for reply in sent:
        assert reply[6:12] == bytes.fromhex(port.mac.replace(":", ""))
        assert reply[:6] == PEER_MAC if family == "ipv4" else reply[:6] in to
        if family == "ipv4":
            assert reply[12:14] == b"\x08\x06" and len(reply) == 60
            assert struct.unpack("!HHBBH", reply[14:22]) == (1, 0x0800, 6, 4, 2)
            assert reply[28:32] == ours and reply[32:38] == PEER_MAC
        else:
            ip, icmp = reply[14:54], reply[54:]
            assert reply[12:14] == b"\x86\xdd" and ip[6:8] == b"\x3a\xff" and ip[8:24] == ours
            assert icmp[0] == 136 and icmp[4] in (0x60, 0x20) and icmp[8:24] == ours
            assert icmp[24:26] == b"\x02\x01" and icmp[26:32] == reply[6:12]
            assert _icmp6_sum(ip[8:24], ip[24:40], icmp[:32]) == 0xFFFF
