"""The marks a classifier reads in a stream (traffic.rewrite.marks), setting them
(`marked`: DSCP in the IPv4 TOS and IPv6 traffic class, PCP in the outermost tag),
readdressing a template to a port pair (RFC 2889), and a Y.1564 service's stream=:
its classifier read from the stream, and what it cannot carry refused naming the fix."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from pytest_netload import bidirectional, from_pcap, udp
from pytest_netload.bench.settings import Rfc2889Mark
from pytest_netload.errors import NetloadConfigError
from pytest_netload.traffic.mix import as_mix
from pytest_netload.traffic.packets import UDP, Eth, IPv4, IPv6, Vlan, field
from pytest_netload.traffic.rewrite import addresses, marked, marks, readdressed
from pytest_netload.y1564 import Service, check_services, check_stream_directions

V6 = (Eth() / Vlan(100, pcp=3) / IPv6() / UDP(sport=4000, dport=5000)).build()
V4 = (Eth() / IPv4(tos=0x2A << 2 | 1) / UDP(dport=53)).build()


def test_marks_read_tag_dscp_and_ports_and_the_replys_port() -> None:
    assert marks(V6) == marks(V6, ()) and (marks(V6).vlan, marks(V6).pcp) == (100, 3)
    assert (marks(V6).dscp, marks(V6).dport) == (0, 5000)
    assert marks(V6, reply=True).dport == 4000
    assert (marks(V4).vlan, marks(V4).pcp, marks(V4).dscp, marks(V4).dport) == \
        (None, None, 0x2A, 53)
    varied = [field(V4, "udp.dport", "inc", min=1, max=9)]
    assert marks(V4, varied).dport is None  # a field op varies it: any


def test_marked_sets_dscp_keeping_ecn_and_pcp_keeping_the_vid() -> None:
    v6 = marked(V6, dscp=46, pcp=5)
    assert (marks(v6).dscp, marks(v6).pcp, marks(v6).vlan) == (46, 5, 100)
    assert v6.headers[18] >> 4 == 6  # still IPv6
    v4 = marked(V4, dscp=10)
    assert marks(v4).dscp == 10 and v4.headers[v4.l3_offset + 1] & 0x03 == 1  # ECN kept
    v4.frame(128)  # the IPv4 checksum is the frame's, computed at build


@pytest.mark.parametrize(("template", "kw", "needle"), [
    (V4, {"pcp": 1}, "has no VLAN tag to carry PCP 1"),
    ((Eth() / Vlan(5)).build(), {"dscp": 3}, "has no IPv4 or IPv6 header to carry DSCP 3"),
])
def test_marks_a_stream_cannot_carry_are_refused(template, kw, needle) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NetloadConfigError, match=needle):
        marked(template, what="the stream", **kw)


def test_a_field_op_on_the_marked_byte_is_refused() -> None:
    ops = [field(V6, "vlan.id", "inc", min=1, max=9)]
    with pytest.raises(NetloadConfigError, match="rewrites the VLAN tag that carries the PCP"):
        marked(V6, ops, pcp=2)


def test_readdressed_takes_the_pairs_macs_and_ips_of_its_family() -> None:
    out = readdressed(V6, src_mac="02:00:00:00:00:0a", dst_mac="02:00:00:00:00:0b",
                      src_ip="2001:db8::a", dst_ip="2001:db8::b")
    a = addresses(out)
    assert (a.src_mac, a.dst_mac, a.src_ip, a.dst_ip) == (
        "02:00:00:00:00:0a", "02:00:00:00:00:0b", "2001:db8::a", "2001:db8::b")
    kept = readdressed(V6, src_mac="02:00:00:00:00:0a", dst_mac="02:00:00:00:00:0b",
                       src_ip="10.0.0.1", dst_ip="10.0.0.2")  # another family: its own stay
    assert addresses(kept).src_ip == addresses(V6).src_ip


def test_a_mix_marks_each_stream_and_agrees_or_says_any() -> None:
    mix = as_mix([(udp(vlan=7, dport=80), 1), (V6, 1)]).marked(dscp=12)
    assert mix.marks().dscp == 12 and mix.marks().vlan is None  # 7 and 100: any
    with pytest.raises(NetloadConfigError, match="give the spec one"):
        as_mix(udp()).marked(pcp=3, what="the stream")


def test_a_service_reads_its_classifier_from_its_stream() -> None:
    s = Service("video", cir="10Mbit/s", stream=V6, dscp=34)
    assert s.classifier.as_dict() == {"vlan": 100, "pcp": 3, "dscp": 34, "dport": 5000}
    a = Service("a", cir="1Mbit/s", stream=udp(vlan=10))
    b = Service("b", cir="1Mbit/s", stream=udp(vlan=20))
    assert len(check_services([a, b], None)) == 2  # different VLANs: no overlap
    with pytest.raises(NetloadConfigError, match="overlap"):
        check_services([a, Service("c", cir="1Mbit/s", stream=udp(vlan=10))], None)


@pytest.mark.parametrize(("kw", "needle"), [
    ({"stream": udp(), "vlan": 3}, ("vlan=3 beside stream=: the stream's frames carry "
                                    "their own VLAN tags")),
    ({"stream": udp(), "dport": 3}, "dport=3 beside stream="),
    ({"stream": "imix"}, "stream='imix' is not a stream; the service's frame_size"),
    ({"stream": (Eth() / Vlan(5)).build(), "colour": "dscp", "green": 1, "yellow": 2},
     "the stream of service 'x' has no IPv4 or IPv6 header to carry DSCP 1"),
    ({"stream": V4, "colour": "pcp", "green": 1, "yellow": 2},
     "colour='pcp' needs a VLAN tag to carry the PCP, but its stream's frames have none"),
])
def test_what_a_services_stream_cannot_do_is_refused(kw, needle) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NetloadConfigError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        Service("x", cir="1Mbit/s", **kw)


def test_a_bidirectional_stream_needs_both_directions() -> None:
    s = Service("x", cir="1Mbit/s", stream=bidirectional(udp(), udp(dport=7)))
    check_stream_directions([s], "both")
    with pytest.raises(NetloadConfigError, match="add direction='both'"):
        check_stream_directions([s], "one")


def test_a_replayed_capture_is_refused_where_frames_must_be_sized_and_marked(
        tmp_path: Path) -> None:
    """A capture keeps its frames' sizes and bytes: a Y.1564 service (its frame_size, its
    DSCP/PCP) and RFC 2889's meshes (the marker's frame_size, each pair's addresses)
    refuse it, naming what to give instead."""
    frame = (Eth() / IPv4() / UDP()).build().frame(128)
    path = tmp_path / "one.pcap"
    with open(path, "wb") as f:  # one frame, a nanosecond pcap
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        f.write(struct.pack("<IIII", 1, 0, len(frame), len(frame)) + frame)
    with pytest.raises(NetloadConfigError, match="service 'x': stream= replays a capture"):
        Service("x", cir="1Mbit/s", stream=from_pcap(path))
    mark = pytest.mark.rfc2889(stream=from_pcap(path)).mark
    with pytest.raises(NetloadConfigError, match="RFC 2889's meshes send frames of the "
                                                 "marker's frame_size"):
        Rfc2889Mark.from_marker(mark)
