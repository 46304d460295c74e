"""Unit tests of pytest_netload.traffic.packets: headers, lengths and checksums checked against scapy."""

from __future__ import annotations

import dataclasses
import ipaddress
import struct
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import MissingExtra, NetloadConfigError
from pytest_netload.traffic.packets import (
    FIELD_OPS,
    TCP,
    UDP,
    Eth,
    FieldOp,
    IPv4,
    IPv6,
    LayerStack,
    Template,
    Vlan,
    field,
    from_bytes,
    from_scapy,
)

scapy_all = pytest.importorskip("scapy.all")
SEther, SIP, SIPv6 = scapy_all.Ether, scapy_all.IP, scapy_all.IPv6
SUDP, STCP, SRaw, SDot1Q = scapy_all.UDP, scapy_all.TCP, scapy_all.Raw, scapy_all.Dot1Q


def scapy_rebuilt(frame: bytes) -> bytes:
    """The frame parsed by scapy, lengths and checksums deleted and recomputed by scapy."""
    pkt = SEther(frame)
    for layer_cls in (SIP, SIPv6, SUDP, STCP):
        if layer_cls in pkt:
            for key in ("chksum", "len", "plen"):
                pkt[layer_cls].fields.pop(key, None)
    return bytes(pkt)


def raises(match: str) -> Any:
    """pytest.raises for a NetloadConfigError whose message matches ``match``."""
    return pytest.raises(NetloadConfigError, match=match)


# ---- hypothesis strategies ---------------------------------------------------------------

ports = st.integers(0, 0xFFFF)
vlan_tags = st.lists(st.builds(Vlan, st.integers(0, 4095), st.integers(0, 7), st.integers(0, 1)),
                     max_size=3)
ipv4_layers = st.builds(IPv4, st.ip_addresses(v=4).map(str), st.integers(0, 2**32 - 1),
                        ttl=st.integers(0, 255), tos=st.integers(0, 255),
                        id=st.integers(0, 0xFFFF), df=st.booleans())
ipv6_layers = st.builds(IPv6, st.ip_addresses(v=6).map(str), st.ip_addresses(v=6),
                        hlim=st.integers(0, 255), tc=st.integers(0, 255),
                        flow=st.integers(0, 0xFFFFF))
l4_layers = st.one_of(
    st.none(),
    st.builds(UDP, ports, ports),
    st.builds(TCP, ports, ports, st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1),
              st.text("FSRPAUEC", max_size=4), st.integers(0, 0xFFFF)),
)


@st.composite
def stacks(draw: st.DrawFn) -> LayerStack:
    eth = Eth(draw(st.binary(min_size=6, max_size=6)), draw(st.integers(0, 2**48 - 1)))
    stack = LayerStack((eth,))
    for tag in draw(vlan_tags):
        stack = stack / tag
    ip = draw(st.one_of(st.none(), ipv4_layers, ipv6_layers))
    if ip is not None:
        stack = stack / ip
        l4 = draw(l4_layers)
        if l4 is not None:
            stack = stack / l4
    return stack


# ---- frames against scapy ----------------------------------------------------------------

@settings(deadline=None, max_examples=200)
@given(stacks(), st.integers(64, 1518), st.integers(0, 32))
def test_frame_lengths_and_checksums_match_scapy(stack: LayerStack, size: int,
                                                 trailer: int) -> None:
    t = stack.build()
    size = max(size, t.min_frame_size(trailer))
    frame = t.frame(size, trailer)
    assert len(frame) == size - 4
    assert scapy_rebuilt(frame) == frame
    pkt = SEther(frame)
    if t.l3_proto == 4:
        assert pkt[SIP].len == len(frame) - t.l3_offset
    if t.l3_proto == 6:
        assert pkt[SIPv6].plen == len(frame) - t.l3_offset - 40
    if t.l4_proto == 17:
        assert pkt[SUDP].len == len(frame) - t.l4_offset
    assert frame[len(t.headers):] == bytes(len(frame) - len(t.headers))


@settings(deadline=None, max_examples=50)
@given(stacks())
def test_headers_match_scapy_dissection(stack: LayerStack) -> None:
    t = stack.build()
    pkt = SEther(t.frame(t.min_frame_size()))
    eth = stack.layers[0]
    assert isinstance(eth, Eth)
    assert pkt.dst == ":".join(f"{b:02x}" for b in eth.dst)
    for layer in stack.layers:
        if isinstance(layer, IPv4):
            assert (pkt[SIP].src, pkt[SIP].ttl, pkt[SIP].id) == (
                str(ipaddress.IPv4Address(layer.src)), layer.ttl, layer.id)
            assert pkt[SIP].flags.DF == layer.df
        if isinstance(layer, IPv6):
            assert ipaddress.IPv6Address(pkt[SIPv6].dst).packed == layer.dst
            assert (pkt[SIPv6].fl, pkt[SIPv6].tc) == (layer.flow, layer.tc)
        if isinstance(layer, (UDP, TCP)):
            l4 = pkt[SUDP] if isinstance(layer, UDP) else pkt[STCP]
            assert (l4.sport, l4.dport) == (layer.sport, layer.dport)
        if isinstance(layer, TCP):
            assert (int(pkt[STCP].flags), pkt[STCP].seq, pkt[STCP].window) == (
                layer.flags, layer.seq, layer.window)
    tags = [layer for layer in stack.layers if isinstance(layer, Vlan)]
    for i, tag in enumerate(tags):
        off = t.fields[f"vlan{i}.id"][0]
        tci = tag.pcp << 13 | tag.dei << 12 | tag.vid
        assert int.from_bytes(t.headers[off: off + 2], "big") == tci


def test_defaults_use_benchmarking_addresses() -> None:
    pkt = SEther((Eth() / IPv4() / UDP()).build().frame(64))
    assert (pkt.src, pkt.dst) == ("02:00:00:00:00:01", "02:00:00:00:00:02")
    assert (pkt[SIP].src, pkt[SIP].dst, pkt[SIP].proto) == ("198.18.0.1", "198.19.0.1", 17)
    assert ipaddress.ip_address(pkt[SIP].dst) in ipaddress.ip_network("198.18.0.0/15")
    v6 = SEther((Eth() / IPv6() / TCP()).build().frame(100))[SIPv6]
    for addr in (v6.src, v6.dst):
        assert ipaddress.ip_address(addr) in ipaddress.ip_network("2001:2::/48")
    assert v6.nh == 6


def test_ethertypes_and_qinq() -> None:
    assert (Eth() / IPv4()).build().headers[12:14] == b"\x08\x00"
    assert (Eth() / IPv6()).build().headers[12:14] == b"\x86\xdd"
    assert Eth().build().headers[12:14] == b"\x88\xb5"
    qinq = (Eth() / Vlan(10) / Vlan(20) / IPv4()).build().headers
    assert (qinq[12:14], qinq[16:18], qinq[20:22]) == (b"\x88\xa8", b"\x81\x00", b"\x08\x00")
    single = (Eth() / Vlan(10, pcp=5) / IPv6()).build().headers
    assert (single[12:14], single[14:16], single[16:18]) == (b"\x81\x00", b"\xa0\x0a", b"\x86\xdd")
    assert (Eth() / Vlan(1, tpid=0x9100) / IPv4()).build().headers[12:14] == b"\x91\x00"
    assert (Eth(type=0x1234) / IPv4()).build().headers[12:14] == b"\x12\x34"
    assert (Eth() / IPv4()).build().headers[23] == 253
    assert (Eth() / IPv6()).build().headers[20] == 59


def test_udp_checksum_zero_is_sent_as_ffff() -> None:
    probe = (Eth() / IPv4() / UDP(sport=0)).build().frame(64)
    sport = int.from_bytes(probe[40:42], "big")  # the checksum with sport 0 is the sport giving 0
    frame = (Eth() / IPv4() / UDP(sport=sport)).build().frame(64)
    assert frame[40:42] == b"\xff\xff"
    assert scapy_rebuilt(frame) == frame


def test_frame_min_size_and_errors() -> None:
    t = (Eth() / Vlan(1) / Vlan(2) / IPv6() / TCP()).build()
    assert len(t.headers) == 82
    assert t.min_frame_size() == 86 and t.min_frame_size(16) == 102
    assert (Eth() / IPv4() / UDP()).build().min_frame_size(16) == 64
    assert len(t.frame(86)) == 82
    with raises(r"frame size 85 .*use size >= 86"):
        t.frame(85)
    with raises(r"frame size 86 .*16-byte trailer.*use size >= 102"):
        t.frame(86, 16)
    with raises(r"frame size 9605 exceeds .*9604"):
        t.frame(9605)
    assert len(t.frame(9604)) == 9600
    with raises(r"frame size '64' is not an int"):
        t.frame("64")  # type: ignore[arg-type]
    with raises(r"trailer_bytes=-1"):
        t.frame(128, -1)


# ---- layer validation --------------------------------------------------------------------

@pytest.mark.parametrize(("make", "match"), [
    (lambda: Eth(dst="zz:00:00:00:00:00"), r"Eth dst='zz:00:00:00:00:00' is not a MAC"),
    (lambda: Eth(src=b"\x00" * 5), r"Eth src=b'\\x00\\x00\\x00\\x00\\x00' is not a MAC"),
    (lambda: Eth(src=2**48), r"Eth src=281474976710656 is invalid"),
    (lambda: Eth(type=0x10000), r"Eth type=65536 is invalid"),
    (lambda: Vlan(4096), r"Vlan vid=4096 is invalid; use an integer in 0..4095"),
    (lambda: Vlan(1, pcp=8), r"Vlan pcp=8"),
    (lambda: IPv4(src="2001:2::1"), r"IPv4 src='2001:2::1' is not an IPv4 address"),
    (lambda: IPv4(dst="198.18.0.256"), r"IPv4 dst='198.18.0.256'"),
    (lambda: IPv4(ttl=256), r"IPv4 ttl=256"),
    (lambda: IPv4(src=True), r"IPv4 src=True"),
    (lambda: IPv6(dst="198.18.0.1"), r"IPv6 dst='198.18.0.1' is not an IPv6 address"),
    (lambda: IPv6(flow=1 << 20), r"IPv6 flow=1048576"),
    (lambda: UDP(sport=70000), r"UDP sport=70000 is invalid"),
    (lambda: UDP(dport=-1), r"UDP dport=-1"),
    (lambda: TCP(flags="SX"), r"TCP flags='SX' is invalid"),
    (lambda: TCP(seq=2**32), r"TCP seq=4294967296"),
    (lambda: TCP(flags=True), r"TCP flags=True"),
])
def test_layer_errors_name_the_value(make: object, match: str) -> None:
    with raises(match):
        make()  # type: ignore[operator]


@pytest.mark.parametrize(("stack", "match"), [
    (lambda: IPv4() / UDP(), r"'IPv4 / UDP' must start with Eth\(\)"),
    (lambda: Eth() / UDP(), r"UDP cannot follow Eth"),
    (lambda: Eth() / IPv4() / Vlan(3), r"Vlan cannot follow IPv4"),
    (lambda: Eth() / IPv4() / IPv6(), r"IPv6 cannot follow IPv4"),
    (lambda: Eth() / IPv4() / UDP() / TCP(), r"TCP cannot follow UDP"),
    (lambda: Eth() / Eth(), r"Eth cannot follow Eth"),
])
def test_layer_order_errors(stack: object, match: str) -> None:
    with raises(match):
        stack().build()  # type: ignore[operator]


def test_stack_composition() -> None:
    a = Eth() / Vlan(3)
    b = IPv4() / UDP()
    assert (a / b).build() == (Eth() / Vlan(3) / IPv4() / UDP()).build()
    assert "Vlan(vid=3" in repr(a.layers[1])
    assert Eth().build().l3_offset == -1


# ---- template fields ---------------------------------------------------------------------

def test_ipv4_udp_fields() -> None:
    t = (Eth() / IPv4() / UDP()).build()
    assert (t.l3_offset, t.l3_proto, t.l4_offset, t.l4_proto) == (14, 4, 34, 17)
    assert dict(t.fields) == {
        "eth.dst": (0, 6), "eth.src": (6, 6), "eth.type": (12, 2), "ip.tos": (15, 1),
        "ip.id": (18, 2), "ip.ttl": (22, 1), "ip.src": (26, 4), "ip.dst": (30, 4),
        "udp.sport": (34, 2), "udp.dport": (36, 2), "l4.sport": (34, 2), "l4.dport": (36, 2)}


def test_ipv6_tcp_vlan_stack_fields() -> None:
    t = (Eth() / Vlan(1) / Vlan(2) / IPv6() / TCP()).build()
    f = t.fields
    assert f["vlan.id"] == f["vlan.tci"] == f["vlan0.id"] == (14, 2)
    assert f["vlan1.id"] == f["vlan1.tci"] == (18, 2)
    assert (t.l3_offset, t.l4_offset) == (22, 62)
    assert f["ipv6.src_hi"] == (30, 8) and f["ip.src"] == (38, 8)
    assert f["ipv6.dst_hi"] == (46, 8) and f["ip.dst"] == (54, 8)
    assert f["ip.hlim"] == (29, 1)
    assert f["tcp.seq"] == (66, 4) and f["tcp.ack"] == (70, 4)
    assert f["l4.dport"] == f["tcp.dport"] == (64, 2)
    low = ipaddress.IPv6Address("2001:2::1").packed[8:]
    assert t.headers[f["ip.src"][0]: f["ip.src"][0] + 8] == low
    with pytest.raises(TypeError):
        t.fields["x"] = (0, 1)  # type: ignore[index]


def test_template_is_frozen_and_hashable() -> None:
    t = (Eth() / IPv4() / UDP()).build()
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.l3_offset = 0  # type: ignore[misc]
    assert hash(t) == hash((Eth() / IPv4() / UDP()).build())
    assert {t: 1}[(Eth() / IPv4() / UDP()).build()] == 1


# ---- from_bytes / from_scapy -------------------------------------------------------------

def test_from_bytes_raw_template() -> None:
    raw = bytes(SEther() / SDot1Q(vlan=7) / SIP() / SUDP())
    t = from_bytes(raw, l3_offset=18, l4_offset=38, l3_proto=4, l4_proto=17)
    assert t.fields["vlan.id"] == (14, 2) and t.fields["udp.dport"] == (40, 2)
    frame = t.frame(200)
    assert scapy_rebuilt(frame) == frame
    plain = from_bytes(bytes(16))
    assert (plain.l3_proto, plain.l4_proto) == (0, 0) and len(plain.frame(64)) == 60


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"l3_offset": 15, "l3_proto": 4}, r"l3_offset=15 is invalid .* even offset"),
    ({"l3_offset": 100, "l3_proto": 4}, r"l3_offset=100 is invalid for 42 header bytes"),
    ({"l3_offset": 14}, r"l3_offset=14 with l3_proto=0: pass both"),
    ({"l3_offset": 14, "l3_proto": 5}, r"l3_proto=5 is invalid"),
    ({"l4_offset": 34, "l4_proto": 17}, r"l4_proto=17 needs an IP header"),
    ({"l3_offset": 14, "l3_proto": 6}, r"no IPv6 header at l3_offset=14 \(first byte 0x45\)"),
    ({"l3_offset": 16, "l3_proto": 4}, r"no IPv4 header at l3_offset=16"),
    ({"l3_offset": 14, "l3_proto": 4, "l4_offset": 36, "l4_proto": 17},
     r"l4_offset=36/l4_proto=17 disagree with the IPv4 header \(ends at 34, protocol 17\)"),
    ({"l3_offset": 14, "l3_proto": 4, "l4_offset": 34, "l4_proto": 6},
     r"l4_offset=34/l4_proto=6 disagree .* protocol 17"),
    ({"l3_offset": 14, "l3_proto": 4, "l4_offset": 35, "l4_proto": 17}, r"l4_offset=35"),
])
def test_from_bytes_errors(kwargs: dict[str, int], match: str) -> None:
    raw = bytes(SEther() / SIP() / SUDP())
    with raises(match):
        from_bytes(raw, **kwargs)


def test_from_bytes_short_headers() -> None:
    with raises(r"template of 10 bytes"):
        from_bytes(bytes(10))
    raw = bytes(SEther() / SIP(proto=6))
    with raises(r"20-byte L4 header at l4_offset=34 overruns the 40 header bytes"):
        from_bytes(raw + bytes(6), l3_offset=14, l3_proto=4, l4_offset=34, l4_proto=6)
    with raises(r"template field 'x'=\(40, 4\) is outside"):
        Template(bytes(42), fields={"x": (40, 4)})


@pytest.mark.parametrize("pkt", [
    SEther() / SIP() / SUDP() / SRaw(b"payload"),
    SEther(dst="02:00:00:00:00:09") / SDot1Q(vlan=3, prio=2) / SIP(ttl=9) / STCP(flags="PA"),
    SEther() / SIP(options=[scapy_all.IPOption_RR()]) / SUDP(sport=7),
    SEther() / SIPv6() / scapy_all.IPv6ExtHdrFragment() / SUDP(),
    SEther() / SIPv6(src="2001:db8::1") / STCP(options=[("MSS", 1460), ("NOP", None)]),
    SEther() / SDot1Q(vlan=1) / SDot1Q(vlan=2) / SIPv6() / SUDP(),
])
def test_from_scapy_frames_equal_scapy_frames(pkt: Any) -> None:
    t = from_scapy(pkt)
    raw = bytes(pkt)
    assert raw.startswith(t.headers)
    for size in (t.min_frame_size(), 128, 1518):
        padded = pkt.copy()
        l4 = padded.getlayer(SUDP) or padded.getlayer(STCP)
        l4.remove_payload()
        padded = padded / SRaw(bytes(size - 4 - len(t.headers)))
        assert t.frame(size) == bytes(padded)
        assert scapy_rebuilt(t.frame(size)) == t.frame(size)


def test_from_scapy_offsets_and_non_ip() -> None:
    t = from_scapy(SEther() / SDot1Q(vlan=3) / SIPv6() / STCP())
    assert (t.l3_offset, t.l3_proto, t.l4_offset, t.l4_proto) == (18, 6, 58, 6)
    assert t.fields["tcp.sport"] == (58, 2) and t.fields["vlan.id"] == (14, 2)
    arp = from_scapy(SEther() / scapy_all.ARP())
    assert (arp.l3_proto, arp.l4_proto, len(arp.headers)) == (0, 0, 42)
    icmp = from_scapy(SEther() / SIP() / scapy_all.ICMP())
    assert (icmp.l3_offset, icmp.l4_offset, len(icmp.headers)) == (14, -1, 42)


def test_from_scapy_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with raises(r"does not start with Ether\(\)"):
        from_scapy(SIP() / SUDP())
    with raises(r"has 2 IP headers \(a tunnel\)"):
        from_scapy(SEther() / SIP() / SIP() / SUDP())
    monkeypatch.setitem(sys.modules, "scapy.layers.inet", None)
    with pytest.raises(MissingExtra, match=r"pip install 'pytest-netload\[scapy\]'"):
        from_scapy(SEther() / SIP() / SUDP())


# ---- field ops ---------------------------------------------------------------------------

V4 = (Eth() / Vlan(5, pcp=5, dei=1) / IPv4() / UDP()).build()
V6 = (Eth() / IPv6() / UDP()).build()


def test_field_by_name_and_defaults() -> None:
    op = field(V4, "udp.sport", "inc", min=1000, max=2000, step=10)
    assert op == FieldOp(38, 2, "inc", 1000, 2000, 10)
    assert op.name == "udp.sport"
    assert op.as_spec() == {"offset": 38, "width": 2, "op": "inc", "min": 1000, "max": 2000,
                            "step": 10}
    assert field(V4, "l4.dport", "random") == FieldOp(40, 2, "random", 0, 0xFFFF)
    assert field(V4, "ip.ttl", "dec").max == 255
    assert field(V4, "eth.src", "random").max == 2**48 - 1
    assert field(V4, "udp.sport", "set", value=7) == FieldOp(38, 2, "set", 7, 7)
    assert field(V4, 44, "inc", width=8).max == 2**64 - 1
    assert {o for o in FIELD_OPS} == {"set", "inc", "dec", "random"}


def test_field_address_strings() -> None:
    op = field(V4, "ip.src", "inc", min="198.18.0.1", max="198.18.0.255")
    assert (op.offset, op.width, op.min, op.max) == (30, 4, 0xC6120001, 0xC61200FF)
    assert field(V4, "ip.dst", "set", value=ipaddress.IPv4Address("10.0.0.1")).min == 0x0A000001
    mac = field(V4, "eth.dst", "set", value="02:00:00:00:00:ff")
    assert mac.min == 0x0200000000FF and mac.width == 6
    assert field(V4, "eth.dst", "set", value=b"\x02\x00\x00\x00\x00\x01").min == 0x020000000001
    low = field(V6, "ip.src", "inc", min="2001:2::1", max="2001:2::ffff")
    assert (low.offset, low.width, low.min, low.max) == (30, 8, 1, 0xFFFF)
    high = field(V6, "ipv6.dst_hi", "set", value="2001:2:0:7::")
    assert (high.offset, high.min) == (38, 0x2001000200000007)
    with raises(r"field 'ip.src': min='2001:3::1' differs from the template's upper 64 bits "
                r"\(2001:2::/64\)"):
        field(V6, "ip.src", "inc", min="2001:3::1", max="2001:2::9")
    with raises(r"field 'ip.src': min='2001:2::1' is not an IPv4 address"):
        field(V4, "ip.src", "inc", min="2001:2::1")
    with raises(r"field 'udp.sport': min='1000' is no value for a 2-byte field; pass an int"):
        field(V4, "udp.sport", "inc", min="1000")


def test_vlan_id_keeps_pcp_and_dei() -> None:
    tci = 5 << 13 | 1 << 12
    op = field(V4, "vlan.id", "inc", min=100, max=200)
    assert (op.offset, op.width, op.min, op.max) == (14, 2, tci | 100, tci | 200)
    assert field(V4, "vlan0.id", "random").max == tci | 4095
    assert field(V4, "vlan.tci", "set", value=7).min == 7
    with raises(r"field 'vlan.id': max 5000 is not a VLAN id; use 0..4095"):
        field(V4, "vlan.id", "inc", min=1, max=5000)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: field(V4, "udp.sport", "inc", min=2000, max=1000),
     r"field 'udp.sport': min 2000 > max 1000; swap them"),
    (lambda: field(V4, "udp.sport", "inc", max=70000),
     r"field 'udp.sport': max 70000 does not fit 2 bytes; use a value <= 65535"),
    (lambda: field(V4, "udp.sport", "inc", min=-1), r"field 'udp.sport': min -1 is invalid"),
    (lambda: field(V4, "udp.sport", "inc", min=1, max=10, step=10),
     r"field 'udp.sport': step 10 is invalid for 1..10; use 1 <= step <= 9"),
    (lambda: field(V4, "udp.sport", "inc", step=0), r"field 'udp.sport': step 0 is invalid"),
    (lambda: field(V4, "udp.sport", "shuffle"), r"field 'udp.sport': op 'shuffle' is unknown"),
    (lambda: field(V4, "udp.sport", "set"), r"field 'udp.sport': op 'set' takes value= only"),
    (lambda: field(V4, "udp.sport", "set", value=1, min=1),
     r"op 'set' takes value= only, got value=1, min=1"),
    (lambda: field(V4, "udp.sport", "inc", value=1), r"value=1 is for op 'set'"),
    (lambda: field(V4, "tcp.seq", "inc"), r"field 'tcp.seq' is not in this template; use one of"),
    (lambda: field(V4, "udp.sport", "inc", width=4),
     r"field 'udp.sport': width 4 is not its width 2"),
    (lambda: field(V4, 50, "inc"), r"field at offset 50: a raw offset needs width="),
    (lambda: field(V4, 50, "inc", width=3), r"field at offset 50: width 3 is unsupported"),
    (lambda: field(V4, 1.5, "inc", width=2),  # type: ignore[arg-type]
     r"field 1.5 is neither a name nor a byte offset"),
    (lambda: FieldOp(0, 2, "set", 1, 2), r"field at offset 0: op 'set' writes one value, not 1..2"),
    (lambda: FieldOp(-2, 2, "inc", 1, 2), r"field at offset -2: offset -2 is invalid"),
    (lambda: FieldOp(0, 1, "inc", 0, 256), r"max 256 does not fit 1 bytes"),
    (lambda: FieldOp(0, 1, "inc", True, 2), r"min True is invalid"),
])
def test_field_errors_name_field_and_value(call: object, match: str) -> None:
    with raises(match):
        call()  # type: ignore[operator]


def test_field_op_single_value_any_step() -> None:
    assert FieldOp(0, 2, "inc", 5, 5, step=100).step == 100


def test_field_op_check() -> None:
    op = field(V4, "udp.dport", "random")  # bytes 40..41
    op.check(60, 60)
    op.check(60, 42)
    with raises(r"field 'udp.dport' \(bytes 40..41\) overlaps the 19-byte signature trailer at "
                r"bytes 41..59; use frame size >= 65"):
        op.check(60, 41)
    with raises(r"field at offset 58 \(bytes 58..61\) lies outside the 60-byte frame .*"
                r"use frame size >= 66"):
        FieldOp(58, 4, "inc", 0, 9).check(60, 60)


@settings(deadline=None)
@given(st.ip_addresses(v=4), st.integers(1, 2**16), st.sampled_from(["ip.src", "ip.dst"]))
def test_field_ipv4_range_roundtrip(addr: ipaddress.IPv4Address, span: int, name: str) -> None:
    last = ipaddress.IPv4Address(min(int(addr) + span, 2**32 - 1))
    op = field(V4, name, "inc", min=str(addr), max=str(last))
    assert (op.min, op.max) == (int(addr), int(last))
    frame = bytearray(V4.frame(128, 16))
    struct.pack_into("!I", frame, op.offset, op.max)
    assert SEther(bytes(frame))[SIP].getfieldval(name[3:]) == str(last)
