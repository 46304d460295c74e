"""The RFC 2544 procedures' traffic: udp()/tcp() specs, template rewrites (VLAN tags,
replies), every form `stream=` takes (traffic/mix.py), and the streams it makes for a wire:
addresses from the topology, the port's VLAN outermost, the reverse wire's reply, and a
stream that does not fit its wire refused naming the port."""

from __future__ import annotations

import ipaddress
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology.model import PortSpec, Topology, Wire
from pytest_netload.traffic.mix import (
    MAX_PARTS,
    Mix,
    as_mix,
    bidirectional,
    check_on_wire,
    template_label,
)
from pytest_netload.traffic.packets import TCP, UDP, Eth, IPv4, IPv6, Template, Vlan, field
from pytest_netload.traffic.rewrite import addresses, mirrored, pop_vlan, push_vlan, vlan_ids
from pytest_netload.traffic.streams import SIGNATURE_BYTES, Stream, TcpSpec, UdpSpec, tcp, udp

MAC0, MAC1, DUT0, DUT1 = ("02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:01:01",
                          "02:00:00:00:01:02")


def topology(v6: bool = False, vlans: tuple[int | None, int | None] = (None, None),
             both: bool = True) -> Topology:
    ips = (("2001:db8:0::2", "2001:db8:0::1", "2001:db8:1::2", "2001:db8:1::1") if v6 else
           ("198.18.0.2", "198.18.0.1", "198.19.0.2", "198.19.0.1"))
    ports = (PortSpec("p0", "net_null0", None, MAC0, ip=ips[0], peer_mac=DUT0, peer_ip=ips[1],
                      vlan=vlans[0]),
             PortSpec("p1", "net_null1", None, MAC1, ip=ips[2], peer_mac=DUT1, peer_ip=ips[3],
                      vlan=vlans[1]))
    wires = (Wire("p0", "p1"), Wire("p1", "p0")) if both else (Wire("p0", "p1"),)
    return Topology("lab", ports, wires)


def both_ways(mix: Mix, size: int | str = 256, **kw: Any) -> tuple[list[Any], list[Any]]:
    topo = topology(**kw)
    fwd, rev = topo.flows()
    return (mix.streams_for(fwd, size, ports=topo.ports),
            mix.streams_for(rev, size, reverse=True, forward_flow=fwd, ports=topo.ports))


def tpid_at(t: Template, offset: int) -> int:
    return int(struct.unpack_from("!H", t.headers, offset)[0])


# ---- udp() and tcp() on a wire ------------------------------------------------------------

def test_udp_and_tcp_take_the_wire_addresses() -> None:
    fwd = topology().flows()[0]
    for spec, proto in ((udp(), 17), (tcp(), 6)):
        s = spec.for_flow(fwd)
        got = addresses(s.template)
        assert (got.dst_mac, got.src_mac, got.src_ip, got.dst_ip) == (
            DUT0, MAC0, "198.18.0.2", "198.19.0.2")
        assert s.template.l4_proto == proto and s.frame_sizes == (64 if proto == 17 else 74,)
    assert isinstance(tcp(), TcpSpec) and tcp().flags == "A"
    assert tcp(flags="S").for_flow(fwd).template.headers[-7] == 0x02  # SYN


def test_a_spec_without_size_takes_the_least_frame_its_headers_fit() -> None:
    fwd = topology(v6=True).flows()[0]
    s = udp().for_flow(fwd)
    assert s.frame_sizes == (14 + 40 + 8 + SIGNATURE_BYTES + 4,)
    assert udp(size=128).for_flow(fwd).frame_sizes == (128,)
    with pytest.raises(NetloadConfigError, match="frame size 64"):
        udp("2001:db8::1", "2001:db8::2", size=64)


@given(outer=st.integers(1, 4094), inner=st.integers(1, 4094),
       port=st.one_of(st.none(), st.integers(1, 4094)))
def test_the_port_vlan_is_outermost_and_the_spec_tags_inside(outer: int, inner: int,
                                                            port: int | None) -> None:
    fwd = topology(vlans=(port, None)).flows()[0]
    t = udp(vlan=(outer, inner)).for_flow(fwd).template
    want = (outer, inner) if port in (None, outer) else (port, outer, inner)
    assert vlan_ids(t) == want
    assert tpid_at(t, 12) == 0x88A8 and tpid_at(t, 12 + 4 * (len(want) - 1)) == 0x8100
    assert t.l3_offset == 14 + 4 * len(want)
    assert vlan_ids(udp().for_flow(fwd).template) == (() if port is None else (port,))


@given(base=st.ip_addresses(v=4), n=st.integers(2, 300), m=st.integers(2, 300))
def test_src_ips_and_dst_ips_step_over_consecutive_addresses(
        base: ipaddress.IPv4Address, n: int, m: int) -> None:
    fwd = topology().flows()[0]
    spec = udp(str(base), "198.19.0.2", src_ips=n, dst_ips=m, flows=4)
    if int(base) + n - 1 > int(ipaddress.IPv4Address("255.255.255.255")):
        with pytest.raises(NetloadConfigError, match=f"src_ips={n}"):
            spec.for_flow(fwd)
        return
    s = spec.for_flow(fwd)
    ops = {op.name: op for op in s.fields}
    assert set(ops) == {"l4.sport", "ip.src", "ip.dst"}
    assert (ops["ip.src"].min, ops["ip.src"].max) == (int(base), int(base) + n - 1)
    assert (ops["ip.dst"].min, ops["ip.dst"].max) == (
        int(ipaddress.IPv4Address("198.19.0.2")), int(ipaddress.IPv4Address("198.19.0.2")) + m - 1)
    assert all(op.op == "inc" for op in s.fields)
    s.compile(SIGNATURE_BYTES)


def test_ipv6_addresses_step_within_their_64() -> None:
    fwd = topology(v6=True).flows()[0]
    s = udp(dst_ips=1000).for_flow(fwd)
    (op,) = [o for o in s.fields if o.name == "ip.dst"]
    assert op.width == 8 and op.max - op.min == 999
    with pytest.raises(NetloadConfigError, match=r"runs past its /64 \(2001:db8:1::/64\)"):
        udp(dst="2001:db8:1::ffff:ffff:ffff:fff0", dst_ips=100).for_flow(fwd)


# ---- template rewrites -----------------------------------------------------------------

TEMPLATES = st.builds(
    lambda v6, l4, tags, sport, dport: (
        (Eth(dst=DUT0, src=MAC0) / _tags(tags) / (IPv6() if v6 else IPv4())
         / (TCP(sport=sport, dport=dport) if l4 else UDP(sport=sport, dport=dport))).build()),
    st.booleans(), st.booleans(), st.lists(st.integers(1, 4094), max_size=2),
    st.integers(0, 65535), st.integers(0, 65535))


def _tags(vids: list[int]) -> Any:
    from pytest_netload.traffic.packets import LayerStack

    return LayerStack(tuple(Vlan(v) for v in vids)) if vids else LayerStack(())


@settings(max_examples=60)
@given(t=TEMPLATES, vid=st.integers(1, 4094))
def test_push_then_pop_gives_the_template_back_with_its_field_ops(t: Template, vid: int) -> None:
    ops = (field(t, "ip.dst", "inc", min=0, max=9), field(t, "l4.sport", "random"))
    tagged, moved = push_vlan(t, vid, ops)
    assert vlan_ids(tagged) == (vid, *vlan_ids(t))
    assert tagged.l3_offset == t.l3_offset + 4 and tagged.l4_offset == t.l4_offset + 4
    assert [op.offset for op in moved] == [tagged.fields["ip.dst"][0], tagged.fields["l4.sport"][0]]
    assert tagged.frame(256, 16)[16:] == t.frame(252, 16)[12:]  # same packet behind the tag
    back, ops_back = pop_vlan(tagged, moved)
    assert back.headers == t.headers and ops_back == ops
    assert pop_vlan(t, ops) == (pop_vlan(t, ops) if vlan_ids(t) else (t, ops))


@settings(max_examples=60)
@given(t=TEMPLATES)
def test_the_reply_swaps_addresses_ports_and_field_ops(t: Template) -> None:
    ops = (field(t, "ip.src", "inc", min=1, max=5),)
    reply, moved = mirrored(t, ops, src_mac=MAC1, dst_mac=DUT1)
    a, b = addresses(t), addresses(reply)
    assert (b.src_ip, b.dst_ip, b.src_mac, b.dst_mac) == (a.dst_ip, a.src_ip, MAC1, DUT1)
    l4 = t.l4_offset
    assert reply.headers[l4:l4 + 2] == t.headers[l4 + 2:l4 + 4]
    assert moved[0].name == "ip.dst" and moved[0].offset == t.fields["ip.dst"][0]
    twice, ops_twice = mirrored(reply, moved, src_mac=MAC0, dst_mac=DUT0)
    assert twice.headers == t.headers and ops_twice == ops
    reply.frame(256, 16)  # sums fill for the swapped headers


# ---- the forms stream= takes ----------------------------------------------------------------

def fwd_template(**ip: Any) -> Any:
    return Eth(dst=DUT0, src=MAC0) / IPv4(src="198.18.0.2", dst="198.19.0.2", **ip) / UDP()


def test_every_form_of_stream() -> None:
    from scapy.layers.inet import IP as SIP
    from scapy.layers.inet import UDP as SUDP
    from scapy.layers.l2 import Ether

    scapy_pkt = Ether(dst=DUT0, src=MAC0) / SIP(src="198.18.0.2", dst="198.19.0.2") / SUDP()
    forms: list[Any] = [udp(), tcp(), fwd_template(), fwd_template().build(), scapy_pkt,
                        Stream(fwd_template(), size=512), [udp(), tcp()],
                        [(udp(), 3), (tcp(), 1)], (udp(), 2), bidirectional(udp()),
                        bidirectional([udp(), tcp()], tcp())]
    for form in forms:
        mix = as_mix(form)
        fwd, rev = both_ways(mix, 256)
        for made in (fwd, rev):
            assert sum(share for _, share in made) == pytest.approx(1.0)
            assert all(s.frame_sizes == (256,) for s, _ in made)
            names = [s.name for s, _ in made]
            assert len(set(names)) == len(names)
    weighted = both_ways(as_mix([(udp(), 3), (tcp(), 1)]))[0]
    assert [(s.template.l4_proto, share) for s, share in weighted] == [(17, 0.75), (6, 0.25)]
    assert as_mix(as_mix(udp())) == as_mix(udp())


@given(weights=st.lists(st.floats(0.01, 1000), min_size=1, max_size=MAX_PARTS))
def test_weights_become_shares_of_each_direction(weights: list[float]) -> None:
    mix = as_mix([(udp(sport=1000 + i), w) for i, w in enumerate(weights)])
    for made in both_ways(mix, 128):
        shares = [share for _, share in made]
        assert sum(shares) == pytest.approx(1.0)
        assert shares == pytest.approx([w / sum(weights) for w in weights])


def test_more_than_max_parts_is_refused() -> None:
    with pytest.raises(NetloadConfigError, match=f"more than {MAX_PARTS} per direction"):
        as_mix([udp()] * (MAX_PARTS + 1))


def test_the_procedure_frame_size_replaces_a_streams_own() -> None:
    ((made, _),), _ = both_ways(as_mix(Stream(fwd_template(), size="imix")), 1024)
    assert made.frame_sizes == (1024,)
    ((imix, _),), _ = both_ways(as_mix(udp()), "imix")
    assert imix.frame_sizes == (64, 594, 1518) and imix.size == "imix"
    with pytest.raises(NetloadConfigError, match="frame size 'imix' is too small.*at least 74 B"):
        both_ways(as_mix(tcp()), "imix")  # IMIX's 64 B frames hold no TCP header


# ---- both directions: the reverse wire gets the reply ---------------------------------------

def test_the_reverse_wire_gets_the_reply_of_a_template() -> None:
    tpl = Eth(dst=DUT0, src=MAC0) / IPv4(src="198.18.0.2", dst="198.19.0.2") / UDP(5, 6)
    t = tpl.build()
    ops = (field(t, "ip.src", "inc", min="198.18.0.2", max="198.18.0.9"),)
    _, rev = both_ways(as_mix(Stream(t, fields=ops)), 128)
    (s, _), = rev
    got = addresses(s.template)
    assert (got.src_mac, got.dst_mac, got.src_ip, got.dst_ip) == (
        MAC1, DUT1, "198.19.0.2", "198.18.0.2")
    h = s.template.headers
    assert struct.unpack_from("!HH", h, s.template.l4_offset) == (6, 5)
    assert [op.name for op in s.fields] == ["ip.dst"]


def test_a_spec_on_the_reverse_wire_swaps_its_own_addresses_and_ranges() -> None:
    spec = udp("198.18.0.2", "198.19.0.2", src_ips=4)
    (s, _), = both_ways(as_mix(spec))[1]
    got = addresses(s.template)
    assert (got.src_ip, got.dst_ip, got.dst_mac) == ("198.19.0.2", "198.18.0.2", DUT1)
    assert [op.name for op in s.fields] == ["ip.dst"]


def test_a_pair_gives_the_reverse_wire_its_own_streams() -> None:
    fwd, rev = both_ways(bidirectional(udp(), [(tcp(), 1), (udp(), 1)]))
    assert [s.template.l4_proto for s, _ in fwd] == [17]
    assert [s.template.l4_proto for s, _ in rev] == [6, 17]
    with pytest.raises(NetloadConfigError, match="one direction of another"):
        bidirectional(bidirectional(udp()))


@pytest.mark.parametrize("vlans", [(100, None), (None, 200), (100, 200)])
def test_each_wire_is_tagged_with_its_sending_ports_vlan(vlans: tuple[int | None, ...]) -> None:
    user = Eth(dst=DUT0, src=MAC0) / Vlan(vlans[0] or 7) / IPv4(
        src="198.18.0.2", dst="198.19.0.2") / UDP()
    fwd, rev = both_ways(as_mix(user), 128, vlans=vlans)
    assert vlan_ids(fwd[0][0].template) == (vlans[0] or 7,)
    # the forward port's tag is not the reverse port's: it goes, the reverse port's comes
    want = () if vlans[0] is not None else (7,)
    if vlans[1] is not None:
        want = (vlans[1], *want)
    assert vlan_ids(rev[0][0].template) == want
    qinq = both_ways(as_mix(udp(vlan=(10, 20))), 128, vlans=vlans)
    assert vlan_ids(qinq[0][0][0].template)[-2:] == (10, 20)
    assert template_label(qinq[0][0][0].template).endswith("ipv4-udp")


# ---- a stream against its wire ----------------------------------------------------------

@given(mac=st.binary(min_size=6, max_size=6))
def test_only_the_wires_peer_mac_is_taken(mac: bytes) -> None:
    text = ":".join(f"{b:02x}" for b in mac)
    tpl = Eth(dst=text, src=MAC0) / IPv4(src="198.18.0.2", dst="198.19.0.2") / UDP()
    topo = topology()
    stream = Stream(tpl, size=128, name="mine")
    if text == DUT0:
        check_on_wire(stream, topo.flows()[0], topo.ports)
        return
    with pytest.raises(NetloadConfigError) as info:
        check_on_wire(stream, topo.flows()[0], topo.ports)
    assert "wire p0->p1" in str(info.value) and "port p0's peer_mac" in str(info.value)
    assert f"Eth(dst='{DUT0}')" in str(info.value)


def test_an_ipv4_stream_on_an_ipv6_wire_names_the_port() -> None:
    with pytest.raises(NetloadConfigError, match="port p0's ip 2001:db8::2 is IPv6"):
        both_ways(as_mix(udp("198.18.0.2", "198.19.0.2")), 128, v6=True)


def test_a_wire_without_addresses_takes_any_ip_and_a_hairpin_its_own() -> None:
    bare = Topology("bare", (PortSpec("p0", "net_null0", None, MAC0),
                             PortSpec("p1", "net_null1", None, MAC1)),
                    (Wire("p0", "p1"),))
    tpl = Eth(dst=MAC1, src=MAC0) / IPv6() / TCP()
    as_mix(tpl).streams_for(bare.flows()[0], 128, ports=bare.ports)
    loop = Topology("loop", (PortSpec("p0", "net_null0", None, MAC0, ip="198.18.0.2"),),
                    (Wire("p0", "p0"),))
    as_mix(udp()).streams_for(loop.flows()[0], 128, ports=loop.ports)


def test_l2_templates_pass_the_address_checks() -> None:
    (s, _), = both_ways(as_mix(Eth(dst=DUT0, src=MAC0)), 128)[0]
    assert s.template.l3_proto == 0 and template_label(s.template) == "eth"


def test_specs_are_l4specs() -> None:
    assert isinstance(udp(), UdpSpec) and not isinstance(udp(), TcpSpec)
    assert udp().protocol == "udp" and tcp().protocol == "tcp"
