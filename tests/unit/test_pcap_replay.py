"""from_pcap: a capture read into flows, their signed frames, their timing, and the
errors a bad capture gets. Captures are written with scapy's writers (and, for the
large one and the damaged ones, record by record with struct)."""

from __future__ import annotations

import struct
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload import NetloadConfigError, from_pcap
from pytest_netload.traffic.mix import as_mix
from pytest_netload.traffic.pcap import MAX_TEMPLATES, dissect
from pytest_netload.traffic.replay import signed_frame

scapy_all = pytest.importorskip("scapy.all")
Ether, IP, IPv6, UDP, TCP, ARP, Dot1Q, Raw = (scapy_all.Ether, scapy_all.IP, scapy_all.IPv6,
                                               scapy_all.UDP, scapy_all.TCP, scapy_all.ARP,
                                               scapy_all.Dot1Q, scapy_all.Raw)
MACS = {"src": "02:00:00:00:00:01", "dst": "02:00:00:00:00:02"}


def write(path: Path, packets: list[Any], times: list[float] | None = None, *,
          ng: bool = False, nano: bool = True) -> Path:
    writer = scapy_all.PcapNgWriter(str(path)) if ng else \
        scapy_all.PcapWriter(str(path), nano=nano)
    with writer as w:
        for i, p in enumerate(packets):
            p.time = 1_700_000_000 + (times[i] if times else i * 1e-3)
            w.write(p)
    return path


def raw_pcap(path: Path, frames: list[bytes], times_ns: list[int], linktype: int = 1,
             snap: dict[int, int] | None = None) -> Path:
    """A nanosecond pcap written record by record (wirelen from `snap` where given)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, linktype))
        for i, (frame, t) in enumerate(zip(frames, times_ns)):
            wire = (snap or {}).get(i, len(frame))
            f.write(struct.pack("<IIII", t // 10**9, t % 10**9, len(frame), wire) + frame)
    return path


def udp4(sport: int = 1000, payload: int = 10, **kw: Any) -> Any:
    return Ether(**MACS) / IP(src="10.0.0.1", dst="10.1.0.2", **kw) / \
        UDP(sport=sport, dport=53) / Raw(bytes(payload))


# ---- flows ----------------------------------------------------------------------------------


def test_frames_are_grouped_into_flows_in_the_order_they_first_appear(tmp_path: Path) -> None:
    packets = [udp4(1000), udp4(1001), udp4(1000, 20),
               Ether(**MACS) / IPv6(src="2001:db8::1", dst="2001:db8::2") / TCP(sport=5, dport=80),
               Ether(src=MACS["src"], dst="ff:ff:ff:ff:ff:ff") / ARP(),
               Ether(**MACS) / Dot1Q(vlan=7) / IP(src="10.0.0.1", dst="10.1.0.2") / UDP(),
               udp4(1000, 200, flags="MF", frag=0), udp4(1001)]
    r = from_pcap(write(tmp_path / "a.pcap", packets))
    labels = [f.label for f in r.flows]
    assert labels[:3] == ["udp 10.0.0.1:1000>10.1.0.2:53", "udp 10.0.0.1:1001>10.1.0.2:53",
                          "tcp [2001:db8::1]:5>[2001:db8::2]:80"]
    assert labels[3].startswith("eth-0x0806 ")
    assert labels[4] == "udp 10.0.0.1:53>10.1.0.2:53"  # tagged: its own flow (its offsets)
    assert labels[5] == "udp 10.0.0.1>10.1.0.2"  # a fragment: no ports to read
    assert [f.packets for f in r.flows] == [2, 2, 1, 1, 1, 1]
    assert r.flows[0].sequence.tolist() == [0, 1] and r.flows[1].sequence.tolist() == [0, 0]
    assert r.flows[1].times_ns.tolist() == pytest.approx([1_000_000, 7_000_000], abs=200)
    assert (r.flows[4].l3_offset, r.flows[4].l4_offset) == (18, 38)
    assert (r.flows[5].l4_offset, r.flows[5].l4_proto) == (-1, 0)
    assert r.packets == 8 and r.capture.span_ns == pytest.approx(7_000_000, abs=200)
    assert r.capture.complete
    assert "8 frames in 6 flows (6 streams)" in r.summary()


def test_pcapng_and_microsecond_pcap_read_alike(tmp_path: Path) -> None:
    packets = [udp4(1000 + i % 2, i) for i in range(6)]
    times = [0, 0.000123, 0.0005, 0.0011, 0.002, 0.0031]
    ng = from_pcap(write(tmp_path / "a.pcapng", packets, times, ng=True))
    us = from_pcap(write(tmp_path / "a.pcap", packets, times, nano=False))
    assert us.capture.resolution_ns == 1000
    for a, b in zip(ng.flows, us.flows):
        assert a.frames == b.frames and a.sequence.tolist() == b.sequence.tolist()
        assert np.abs(a.times_ns - b.times_ns).max() <= 1000


# ---- signed frames --------------------------------------------------------------------------


def _check_sums(frame: bytes) -> Any:
    """The frame re-dissected by scapy with its checksums recomputed equals the frame."""
    p = Ether(frame)
    q = p.copy()
    for layer in (IP, UDP, TCP):
        if layer in q:
            del q[layer].chksum
    if IP in q:
        del q[IP].len
    if UDP in q:
        del q[UDP].len
    if IPv6 in q:
        del q[IPv6].plen
    assert bytes(Ether(bytes(q))) == frame
    return p


@settings(max_examples=60, deadline=None)
@given(payload=st.integers(0, 1400), kind=st.sampled_from(["udp4", "tcp4", "udp6", "tcp6"]),
       padding=st.integers(0, 20))
def test_a_signed_frame_has_the_room_lengths_and_sums_fixed(payload: int, kind: str,
                                                            padding: int) -> None:
    ip = IP(src="10.0.0.1", dst="10.1.0.2") if kind.endswith("4") else \
        IPv6(src="2001:db8::1", dst="2001:db8::2")
    l4 = UDP(sport=7, dport=9) if kind.startswith("udp") else TCP(sport=7, dport=9, flags="PA")
    frame = bytes(Ether(**MACS) / ip / l4 / Raw(bytes(payload))) + \
        b"\xee" * padding  # Ethernet padding after the packet
    d = dissect(frame)
    flow = SimpleNamespace(l3_offset=d.l3_offset, l4_offset=d.l4_offset, l3_proto=d.l3_proto,
                           l4_proto=d.l4_proto)
    out = signed_frame(frame, flow, d.l3_end, 16)  # type: ignore[arg-type]
    assert len(out) == max(len(frame) - padding + 16, 60)
    assert out[:14] == frame[:14]
    p = _check_sums(out)
    assert (UDP in p or TCP in p) and bytes(p[Raw].load)[:payload] == bytes(payload)
    assert out[-16:] == bytes(16)  # the room the engine writes the signature into


def test_a_non_ip_frame_gets_the_room_appended(tmp_path: Path) -> None:
    frame = bytes(Ether(src=MACS["src"], dst="ff:ff:ff:ff:ff:ff") / ARP())
    d = dissect(frame)
    assert d.l3_offset == -1
    r = from_pcap(raw_pcap(tmp_path / "arp.pcap", [frame], [0]))
    spec = r.stream(0).compile(16)
    assert len(frame) == 42  # 18 bytes of room: the signature, and 60 bytes at least
    assert spec["frames"] == [frame + bytes(18)] and spec["l3_offset"] == -1
    assert spec["sizes"] == [64]


def test_a_stream_on_a_wire_takes_its_macs_and_with_addresses_wire_its_ips(
        tmp_path: Path) -> None:
    path = write(tmp_path / "a.pcap", [udp4(1000), udp4(1001)])
    wire = SimpleNamespace(src_mac="02:aa:00:00:00:01", dst_mac="02:bb:00:00:00:02",
                           src_ip="198.18.0.2", dst_ip="198.19.0.2",
                           tx=SimpleNamespace(name="p0", vlan=None),
                           rx=SimpleNamespace(name="p1"))
    kept = Ether(from_pcap(path).stream(0, wire=wire).compile(16)["frames"][0])
    assert (kept.src, kept.dst, kept[IP].src) == ("02:aa:00:00:00:01", "02:bb:00:00:00:02",
                                                   "10.0.0.1")
    moved = Ether(from_pcap(path, addresses="wire").stream(1, wire=wire).compile(16)["frames"][0])
    assert (moved[IP].src, moved[IP].dst, moved[UDP].sport) == ("198.18.0.2", "198.19.0.2", 1001)
    _check_sums(bytes(moved))


# ---- templates ------------------------------------------------------------------------------


def test_a_flow_of_more_distinct_frames_than_a_stream_holds_is_several(tmp_path: Path) -> None:
    n = 3 * MAX_TEMPLATES + 5
    frames = [bytes(udp4(1000, i % 150)) for i in range(n)]
    r = from_pcap(raw_pcap(tmp_path / "a.pcap", frames, [i * 1000 for i in range(n)]))
    (flow,) = r.flows
    assert len(flow.frames) == 150 and len(r.parts) == 3
    assert [p.label for p in r.parts][:2] == [f"pcap#1.1 {flow.label}", f"pcap#1.2 {flow.label}"]
    # every packet is in exactly one part, its frame and its time kept
    sent = sorted((int(t), p.frames[int(k)]) for p in r.parts
                  for k, t in zip(p.sequence, p.times_ns))
    assert sent == [(i * 1000, frames[i]) for i in range(n)]
    assert sum(r.weights()) == pytest.approx(1.0)


def test_past_max_templates_a_frame_is_sent_as_the_first_of_its_size(tmp_path: Path) -> None:
    frames = [bytes(udp4(1000, 10)) + bytes([i]) for i in range(10)]  # one size, distinct
    path = raw_pcap(tmp_path / "a.pcap", frames, [i * 1000 for i in range(10)])
    r = from_pcap(path, max_templates=4)
    assert len(r.flows[0].frames) == 4 and r.substituted == 6
    assert r.flows[0].sequence.tolist() == [0, 1, 2, 3, 0, 0, 0, 0, 0, 0]
    assert "6 frames sent as the first frame of their size" in r.summary()
    assert len(from_pcap(path, templates="by_size").flows[0].frames) == 1
    with pytest.raises(NetloadConfigError, match=r"frame 5: .*max_templates=4 distinct"):
        from_pcap(path, max_templates=4, templates="exact")


# ---- timing ---------------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(gaps=st.lists(st.integers(0, 5_000_000), min_size=1, max_size=60),
       flows=st.lists(st.integers(0, 3), min_size=61, max_size=61),
       speed=st.sampled_from([1.0, 2.0, 0.5, 3.7]), loop_gap=st.integers(1, 10**6))
def test_the_flows_together_keep_the_captures_timing(
        tmp_path_factory: pytest.TempPathFactory, gaps: list[int], flows: list[int],
        speed: float, loop_gap: int) -> None:
    times = [0, *np.cumsum(gaps).tolist()]
    frames = [bytes(udp4(1000 + flows[i], 8)) for i in range(len(times))]
    path = raw_pcap(tmp_path_factory.mktemp("t") / "a.pcap", frames, times)
    r = from_pcap(path, loop_gap=loop_gap)
    period_ps = round((times[-1] + loop_gap) * 1000 / speed)
    for part, t in zip(r.parts, r.timing(speed)):
        assert t.packets == part.packets and len(t.gaps_ps) == part.packets
        assert t.gaps_ps.min() >= 1
        assert int(t.gaps_ps.sum()) == period_ps or part.packets == 1 and \
            int(t.gaps_ps[0]) == max(1, period_ps)
        due_ps = t.start_ns * 1000 + np.concatenate(([0], np.cumsum(t.gaps_ps[:-1])))
        want = part.times_ns * 1000 / speed
        # to the ps; equal stamps leave 1 ps apart; the start is whole ns
        assert np.abs(due_ps - want).max() <= len(due_ps) + 1000


# ---- errors ---------------------------------------------------------------------------------


def test_bad_captures_are_refused_naming_the_file_the_frame_and_the_fix(tmp_path: Path) -> None:
    frame = bytes(udp4())
    good = raw_pcap(tmp_path / "good.pcap", [frame] * 3, [0, 1000, 2000])
    whole = good.read_bytes()
    cases = {
        "cut.pcap": (whole[:-5], r"frame 3: the file ends inside this frame .*truncated"),
        "cut_header.pcap": (whole + b"\x00" * 7, r"7 bytes after frame 3 .*truncated"),
        "text.pcap": (b"hello, not a capture", r"is not a pcap or pcapng file"),
    }
    for name, (data, match) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(NetloadConfigError, match=match):
            from_pcap(tmp_path / name)
    ng = write(tmp_path / "a.pcapng", [udp4(), udp4()], ng=True).read_bytes()
    (tmp_path / "cut.pcapng").write_bytes(ng[:-6])
    with pytest.raises(NetloadConfigError, match=r"bytes after frame 1 .*truncated"):
        from_pcap(tmp_path / "cut.pcapng")
    with pytest.raises(NetloadConfigError, match=r"frame 1: link type 113 \(Linux cooked.*"
                                                 r"only Ethernet \(DLT_EN10MB, 1\)"):
        from_pcap(raw_pcap(tmp_path / "sll.pcap", [frame], [0], linktype=113))
    with pytest.raises(NetloadConfigError, match="holds no frames"):
        from_pcap(raw_pcap(tmp_path / "empty.pcap", [], []))
    with pytest.raises(NetloadConfigError, match=r"frame 2: captured .* snap length.*-s 0"):
        from_pcap(raw_pcap(tmp_path / "snap.pcap", [frame, frame], [0, 1], snap={1: 1514}))
    with pytest.raises(NetloadConfigError, match=r"frame 1: 9700 bytes, more than a port"):
        from_pcap(raw_pcap(tmp_path / "jumbo.pcap", [frame + bytes(9700 - len(frame))], [0]))
    with pytest.raises(NetloadConfigError, match=r"frame 3: more than max_flows=2 flows"):
        from_pcap(raw_pcap(tmp_path / "flows.pcap", [bytes(udp4(p)) for p in (1, 2, 3)],
                           [0, 1, 2]), max_flows=2)
    with pytest.raises(NetloadConfigError, match="no such file"):
        from_pcap(tmp_path / "missing.pcap")
    for kw, match in (({"templates": "all"}, "templates='all'"), ({"max_frames": 0}, "max_frames"),
                      ({"loop_gap": 0}, "loop_gap"), ({"addresses": "nat"}, "addresses")):
        with pytest.raises(NetloadConfigError, match=match):
            from_pcap(good, **kw)
    with pytest.raises(NetloadConfigError, match="speed="):
        from_pcap(good).timing(0)
    r = from_pcap(good, max_frames=2)
    assert r.packets == 2 and not r.capture.complete and "max_frames" in r.summary()


def test_a_large_capture_is_read_frame_by_frame(tmp_path: Path) -> None:
    n = 100_000
    path = tmp_path / "big.pcap"
    base = [bytes(udp4(1000 + f, 100 + f)) for f in range(200)]
    with open(path, "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for i in range(n):
            frame = base[i % 200]
            out.write(struct.pack("<IIII", 0, i * 997, len(frame), len(frame)) + frame)
    size = path.stat().st_size
    tracemalloc.start()
    started = time.perf_counter()
    r = from_pcap(path)
    took = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"\n{n} frames ({size / 1e6:.1f} MB) read in {took:.2f} s, peak {peak / 1e6:.1f} MB")
    assert r.packets == n and len(r.flows) == 200
    assert peak < size / 2  # 12 bytes a packet, the distinct frames once: never the file


# ---- as the traffic of a procedure ----------------------------------------------------------


def test_a_replay_is_a_mix_of_its_streams_at_frame_size_pcap(tmp_path: Path) -> None:
    r = from_pcap(write(tmp_path / "a.pcap", [udp4(1000), udp4(1001), udp4(1000, 300)]))
    mix = as_mix(r)
    assert [p.weight for p in mix.forward] == pytest.approx([2 / 3, 1 / 3])
    assert [d["kind"] for d in mix.describe()] == ["template", "template"]
    port = SimpleNamespace
    wire = SimpleNamespace(tx=port(name="p0", vlan=None, ip=None, peer_ip=None),
                           rx=port(name="p1", ip=None, peer_ip=None),
                           src_mac="02:aa:00:00:00:01", dst_mac="02:bb:00:00:00:02",
                           src_ip=None, dst_ip=None)
    streams = mix.streams_for(wire, "pcap")
    assert [s.name for s, _ in streams] == [
        "pcap#1 udp 10.0.0.1:1000>10.1.0.2:53 p0->p1", "pcap#2 udp 10.0.0.1:1001>10.1.0.2:53 p0->p1"]
    assert streams[0][0].sequence == (0, 1)
    assert streams[0][0].mean_frame_size == pytest.approx((14 + 28 + 10 + 16 + 4 +
                                                           14 + 28 + 300 + 16 + 4) / 2)
    with pytest.raises(NetloadConfigError, match=r"frame_sizes=\['pcap'\]"):
        mix.streams_for(wire, 128)
    with pytest.raises(NetloadConfigError, match="direction='both'"):
        mix.streams_for(wire, "pcap", reverse=True, forward_flow=wire)
    with pytest.raises(NetloadConfigError, match=r"not a replay: give stream=from_pcap"):
        as_mix(scapy_all.Ether(**MACS) / scapy_all.IP() / scapy_all.UDP()).streams_for(
            wire, "pcap")


# ---- without a signature --------------------------------------------------------------------


def test_without_a_signature_frames_leave_as_captured_keyed_by_their_ip_flow(
        tmp_path: Path) -> None:
    short = bytes(udp4(1000, 2))  # 44 bytes: padded to 60 as a port would
    v6 = bytes(Ether(**MACS) / IPv6(src="2001:db8::1", dst="2001:db8::2") / TCP(sport=5, dport=80))
    path = raw_pcap(tmp_path / "a.pcap", [short, v6, bytes(udp4(1000, 2, flags="MF"))],
                    [0, 1000, 2000])
    r = from_pcap(path, signature=False)
    specs = [r.stream(i).compile(16) for i in range(3)]
    assert specs[0]["frames"] == [short + bytes(16)] and specs[1]["frames"] == [v6]
    assert [s["signature"] for s in specs] == [False] * 3
    assert specs[0]["flow_key"] == bytes([4, 17, 1]) + bytes([10, 0, 0, 1]) + bytes(12) + \
        bytes([10, 1, 0, 2]) + bytes(12) + struct.pack("!HH", 1000, 53)
    assert specs[1]["flow_key"][:3] == bytes([6, 6, 1]) and len(specs[1]["flow_key"]) == 39
    assert specs[2]["flow_key"][:3] == bytes([4, 17, 0])  # a fragment: no ports
    assert "no signature" in r.summary()
    assert r.mean_frame_size == pytest.approx((64 + len(v6) + 4 + 64) / 3)


def test_without_a_signature_a_flow_must_be_ip_one_stream_and_its_own(tmp_path: Path) -> None:
    arp = bytes(Ether(src=MACS["src"], dst="ff:ff:ff:ff:ff:ff") / ARP())
    with pytest.raises(NetloadConfigError, match=r"eth-0x0806 .*: not IP.*tcpdump"):
        from_pcap(raw_pcap(tmp_path / "arp.pcap", [arp], [0]), signature=False)
    many = [bytes(udp4(1000, i)) for i in range(MAX_TEMPLATES + 1)]
    path = raw_pcap(tmp_path / "many.pcap", many, list(range(len(many))))
    with pytest.raises(NetloadConfigError, match=r"65 distinct frames, more than the 64"):
        from_pcap(path, signature=False)
    tagged = bytes(Ether(**MACS) / Dot1Q(vlan=7) / IP(src="10.0.0.1", dst="10.1.0.2") /
                   UDP(sport=1000, dport=53) / Raw(bytes(2)))
    with pytest.raises(NetloadConfigError, match=r"the same IP flow as udp 10.0.0.1:1000"):
        from_pcap(raw_pcap(tmp_path / "two.pcap", [bytes(udp4(1000, 2)), tagged], [0, 1]),
                  signature=False)
    with pytest.raises(NetloadConfigError, match="signature="):
        from_pcap(path, signature="no")  # type: ignore[arg-type]


def test_without_a_signature_rewritten_addresses_get_their_checksums_again(
        tmp_path: Path) -> None:
    frames = [bytes(udp4(1000, 30)), bytes(Ether(**MACS) / IP(src="10.0.0.1", dst="10.1.0.2")
                                           / TCP(sport=7, dport=80) / Raw(bytes(5)))]
    path = raw_pcap(tmp_path / "a.pcap", frames, [0, 1000])
    wire = SimpleNamespace(src_mac="02:aa:00:00:00:01", dst_mac="02:bb:00:00:00:02",
                           src_ip="198.18.0.2", dst_ip="198.19.0.2",
                           tx=SimpleNamespace(name="p0", vlan=None))
    r = from_pcap(path, signature=False, addresses="wire")
    for i in range(2):
        spec = r.stream(i, wire=wire).compile(16)
        p = _check_sums(spec["frames"][0])
        assert (p[IP].src, p[IP].dst) == ("198.18.0.2", "198.19.0.2")
        assert spec["flow_key"][3:7] == bytes([198, 18, 0, 2])
    kept = from_pcap(path, signature=False).stream(0, wire=wire).compile(16)["frames"][0]
    assert kept[12:] == frames[0][12:]  # addresses kept: the bytes after the MACs as captured


def test_a_frame_with_no_room_under_the_mtu_carries_the_signature_in_place(
        tmp_path: Path) -> None:
    full = bytes(Ether(**MACS) / IP(src="10.0.0.1", dst="10.1.0.2") /
                 TCP(sport=7, dport=80, flags="A") / Raw((bytes(range(256)) * 6)[:1460]))
    small = bytes(udp4(1000, 100))
    assert len(full) == 1514
    path = raw_pcap(tmp_path / "a.pcap", [full, full, small], [0, 1000, 2000])
    r = from_pcap(path)
    out = r.stream(0).compile(16)["frames"][0]
    assert len(out) == 1514 and out[-16:] == bytes(16)
    assert out[:50] + out[52:-16] == full[:50] + full[52:-16]  # all but the TCP checksum
    p = _check_sums(out)
    assert p[IP].len == 1500
    assert r.signed_in_place == 2 and "2 frames carry the signature over" in r.summary()
    jumbo = from_pcap(path, mtu=9000)
    assert len(jumbo.stream(0).compile(16)["frames"][0]) == 1530
    assert jumbo.signed_in_place == 0
    with pytest.raises(NetloadConfigError, match="mtu="):
        from_pcap(path, mtu=20)
