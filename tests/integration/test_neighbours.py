"""ARP and IPv6 neighbour discovery of the generator's ports, against the Linux kernel.

A port with an address answers ARP requests and neighbour solicitations (on the RX
path during runs, in the engine host between them), announces itself, and resolves
its peer's MAC; nothing is static. The peer here is the kernel: the far end of a veth
pair in a namespace of the test's own (`peer`), or the built-in netns-router.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_netload.engine.client import Engine, Port, Tx
from pytest_netload.engine.neighbours import bring_up
from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.topology.builtin import build
from pytest_netload.topology.model import PortSpec, Topology, Wire
from pytest_netload.traffic.patterns import CBR
from pytest_netload.traffic.streams import flow_stream
from pytest_netload.units import Rate
from netutil import sh

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="veths, namespaces and DPDK need root"),
]



@dataclass
class Peer:
    """A veth pair: `local` in this namespace (the engine opens it), `far` in namespace
    `ns`, where the kernel answers for the addresses the test gives it."""

    ns: str
    local: str
    far: str

    def ip(self, *args: str) -> str:
        return sh("ip", "-n", self.ns, *args)

    def neighbours(self) -> str:
        return self.ip("neigh", "show").strip()


@pytest.fixture
def peer() -> Iterator[Peer]:
    tag = f"ndt{secrets.token_hex(3)}"
    p = Peer(tag, f"{tag}a", f"{tag}b")
    sh("ip", "netns", "add", p.ns)
    try:
        sh("ip", "link", "add", p.local, "type", "veth", "peer", "name", p.far)
        sh("ip", "link", "set", p.far, "netns", p.ns)
        for setting in ("disable_ipv6=1", "forwarding=0"):
            sh("sysctl", "-qw", f"net.ipv6.conf.{p.local}.{setting}", check=False)
        sh("ip", "link", "set", p.local, "arp", "off", "up")
        p.ip("link", "set", "lo", "up")
        p.ip("link", "set", p.far, "up")
        sh("ip", "netns", "exec", p.ns, "sysctl", "-qw", f"net.ipv6.conf.{p.far}.accept_dad=0")
        yield p
    finally:
        sh("ip", "link", "del", p.local, check=False)
        sh("ip", "netns", "del", p.ns, check=False)
    assert p.local not in sh("ip", "-o", "link", "show")
    assert p.ns not in sh("ip", "netns", "list")


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with Engine() as e:
        yield e


@pytest.fixture
def port(engine: Engine, peer: Peer) -> Iterator[Port]:
    p = engine.port(f"net_af_packet{secrets.randbelow(10**6)},iface={peer.local}", name="p0")
    try:
        yield p
    finally:
        p.close()


def one_port(peer: Peer, mac: str, ip: str, peer_ip: str, **kw: Any) -> Topology:
    spec = PortSpec("p0", None, peer.local, mac, ip=ip, peer_ip=peer_ip, **kw)
    return Topology("nd", (spec,), (Wire("p0", "p0"),))


def poke(peer: Peer, addr: str, count: int = 1, interval_s: float = 0.0) -> None:
    """UDP datagrams to `addr` from the peer's namespace: its kernel resolves `addr` first
    (this machine has no ping)."""
    family = "AF_INET6" if ":" in addr else "AF_INET"
    code = (f"import socket,time\ns=socket.socket(socket.{family},socket.SOCK_DGRAM)\n"
            f"for _ in range({count}):\n s.sendto(b'x',({addr!r},9))\n time.sleep({interval_s})\n"
            "time.sleep(0.3)")
    subprocess.run(["ip", "netns", "exec", peer.ns, "python3", "-c", code], capture_output=True,
                   check=False)


def far_mac(peer: Peer) -> str:
    return peer.ip("-br", "link", "show", peer.far).split()[2]


@pytest.mark.parametrize(("family", "ours", "theirs", "plen"), [
    ("ipv4", "198.18.0.2", "198.18.0.1", "24"),
    ("ipv6", "2001:2::2", "2001:2::1", "64"),
])
def test_a_port_resolves_its_peer_and_the_peer_learns_it(
        port: Port, peer: Peer, family: str, ours: str, theirs: str, plen: str) -> None:
    peer.ip("addr", "add", f"{theirs}/{plen}", "dev", peer.far)
    time.sleep(0.1)
    assert peer.neighbours() == ""  # nothing static, nothing known yet
    topo, records = bring_up(one_port(peer, port.mac, ours, theirs), {"p0": port})
    assert topo.port("p0").peer_mac == far_mac(peer)
    assert records == [{"name": "p0", "ip": ours, "vlan": None, "peer_ip": theirs,
                        "peer_mac": far_mac(peer), "resolved": True}]
    # the kernel learnt our MAC from the request (and the announcement)
    assert f"{ours} dev {peer.far} lladdr {port.mac}" in peer.neighbours()
    # between runs the engine host answers: the kernel re-resolves us from scratch
    peer.ip("neigh", "flush", "all")
    poke(peer, ours)
    assert f"{ours} dev {peer.far} lladdr {port.mac}" in peer.neighbours()
    stats = port.nd_stats()
    assert stats["arp_replies" if family == "ipv4" else "na_sent"] >= 1, stats


@pytest.mark.parametrize("sending", [False, True], ids=["rx only", "while sending"])
def test_answers_on_the_rx_path_during_a_run(engine: Engine, port: Port, peer: Peer,
                                             sending: bool) -> None:
    """The kernel asks while a run polls the port: a worker answers, not the host. On
    an RX-only port the RX worker sends the reply (queue 0); on a port that is sending,
    the worker of its TX stream does, between its bursts."""
    peer.ip("addr", "add", "198.18.0.1/24", "dev", peer.far)
    topo, _ = bring_up(one_port(peer, port.mac, "198.18.0.2", "198.18.0.1"), {"p0": port})
    tx: list[Any] = []
    if sending:  # frames to the kernel, which drops them (nothing listens on port 9)
        stream = engine.load(port, flow_stream(topo.flows()[0], size=64))
        tx = [Tx(stream, 0, tuple(CBR().phases(lambda _r: 2000.0, Rate(2000, "pps"),
                                                seed=1)))]
    before = port.nd_stats()["arp_replies"]
    peer.ip("neigh", "flush", "all")
    asked = threading.Timer(0.5, lambda: poke(peer, "198.18.0.2", 3, 0.2))
    asked.start()
    try:
        result = engine.run(tx, [port], duration_s=2.0, drain_s=0.0)
    finally:
        asked.join()
    if sending:
        assert result.streams[0].tx_packets >= 3000
    assert port.nd_stats()["arp_replies"] > before
    assert int(result.rx_queues["foreign"].sum()) >= 1  # the requests (and the datagrams)
    assert f"198.18.0.2 dev {peer.far} lladdr {port.mac}" in peer.neighbours()


def test_replies_are_rate_limited(port: Port, peer: Peer) -> None:
    """A flood of requests gets at most the bucket's burst plus 1,000 replies a second."""
    peer.ip("addr", "add", "198.18.0.1/24", "dev", peer.far)
    bring_up(one_port(peer, port.mac, "198.18.0.2", "198.18.0.1"), {"p0": port})
    before = port.nd_stats()
    request = (b"\xff" * 6 + bytes.fromhex(far_mac(peer).replace(":", "")) + b"\x08\x06"
               + bytes.fromhex("0001080006040001") + bytes.fromhex(far_mac(peer).replace(":", ""))
               + socket.inet_aton("198.18.0.1") + b"\0" * 6 + socket.inet_aton("198.18.0.2"))
    code = (f"import socket,time\ns=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\n"
            f"s.bind(({peer.far!r},0))\nt=time.monotonic()\n"
            f"for _ in range(3000): s.send({request + bytes(18)!r})\n"
            "print(time.monotonic()-t)")
    elapsed = float(sh("ip", "netns", "exec", peer.ns, "python3", "-c", code))
    time.sleep(0.3)  # the host answers what is queued
    after = port.nd_stats()
    answered = after["arp_replies"] - before["arp_replies"]
    limited = after["rate_limited"] - before["rate_limited"]
    assert limited > 0, after
    assert answered <= 32 + 1000 * (elapsed + 0.5), (answered, elapsed)


def test_a_peer_that_never_answers_is_a_clear_error_in_bounded_time(
        port: Port, peer: Peer) -> None:
    topo = one_port(peer, port.mac, "198.18.0.2", "198.18.0.1")
    started = time.monotonic()
    with pytest.raises(NetloadEnvironmentError) as err:
        bring_up(topo, {"p0": port}, resolve_timeout_s=0.5)
    assert time.monotonic() - started < 2.5
    assert "port 'p0': peer_ip 198.18.0.1 did not answer ARP requests (untagged) in 0.5 s" \
        in str(err.value)
    assert "set `peer_mac` in the topology file" in str(err.value)


def test_a_dut_on_another_subnet_is_named_in_the_error(port: Port, peer: Peer) -> None:
    """The DUT's interface has 10.9.0.1/24: it asks the wire for 10.9.0.2, never answers
    for 198.18.0.1; the error says who asked for what."""
    peer.ip("addr", "add", "10.9.0.1/24", "dev", peer.far)
    stop = threading.Event()

    def dut_traffic() -> None:
        while not stop.is_set():
            poke(peer, "10.9.0.2")

    thread = threading.Thread(target=dut_traffic)
    thread.start()
    try:
        with pytest.raises(NetloadEnvironmentError) as err:
            bring_up(one_port(peer, port.mac, "198.18.0.2", "198.18.0.1"), {"p0": port},
                     resolve_timeout_s=2.0)
    finally:
        stop.set()
        thread.join()
    assert "a request from 10.9.0.1 for 10.9.0.2 (untagged): is the DUT's interface on " \
           "this port's subnet and VLAN?" in str(err.value)


def test_vlan_tagged_resolution_and_a_vlan_mismatch(engine: Engine,
                                                    veth: tuple[str, str]) -> None:
    """This kernel has no 802.1Q module: the peer on VLAN 100 is a second engine's port,
    answering tagged requests only (as the engine host does between runs)."""
    a, b = veth
    with Engine() as other:
        far = other.port(f"net_af_packet{secrets.randbelow(10**6)},iface={b}", name="dut")
        near = engine.port(f"net_af_packet{secrets.randbelow(10**6)},iface={a}", name="p0")
        try:
            far.set_address("198.18.0.1", vlan=100)

            def topo(vlan: int | None) -> Topology:
                spec = PortSpec("p0", None, a, near.mac, ip="198.18.0.2",
                                peer_ip="198.18.0.1", vlan=vlan)
                return Topology("nd", (spec,), (Wire("p0", "p0"),))

            with pytest.raises(NetloadEnvironmentError,
                               match=r"did not answer ARP requests \(untagged\)"):
                bring_up(topo(None), {"p0": near}, resolve_timeout_s=0.5)
            seen = far.nd_stats()["other_request"]
            assert seen == {"sender": "198.18.0.2", "target": "198.18.0.1", "vlan": 0}
            resolved, _ = bring_up(topo(100), {"p0": near})
            assert resolved.port("p0").peer_mac == far.mac
            assert far.nd_stats()["arp_replies"] >= 1
            with pytest.raises(NetloadEnvironmentError,
                               match=r"did not answer ARP requests \(VLAN 200\)"):
                bring_up(topo(200), {"p0": near}, resolve_timeout_s=0.5)
        finally:
            near.close()
            far.close()


def test_a_peer_outside_the_ports_subnet_is_refused_before_any_frame() -> None:
    with pytest.raises(NetloadConfigError, match=r"port 'p0': peer_ip = '10.9.0.1' is not in "
                       r"the port's subnet 198.18.0.0/24"):
        PortSpec("p0", None, "veth0", "02:00:00:00:00:01", ip="198.18.0.2/24",
                 peer_ip="10.9.0.1")


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_netns_router_with_no_static_neighbours_forwards_both_ways(engine: Engine,
                                                                    family: str) -> None:
    """The built-in router's default: no neighbour entry on either side until the engine
    and the DUT resolve one another; then every frame arrives, both ways."""
    with build("netns-router", family=family) as built:
        ns = built.topology.namespace
        assert ns is not None
        assert sh("ip", "-n", ns, "neigh", "show").strip() == ""
        assert all(p.peer_mac is None for p in built.topology.ports)
        ports = {p.name: engine.port(str(p.device), name=p.name) for p in built.topology.ports}
        try:
            topo, records = bring_up(built.topology, ports)
            assert [r["resolved"] for r in records] == [True, True]
            size = 64 if family == "ipv4" else 128
            streams = [engine.load(ports[f.tx.name], flow_stream(f, size=size,
                                                                 name=f.tx.name))
                       for f in topo.flows()]
            result = engine.run(streams, list(ports.values()), count=20_000, drain_s=0.5)
            assert [(s.tx_packets, s.rx_packets) for s in result.streams] == \
                [(20_000, 20_000)] * 2
            table = sh("ip", "-n", ns, "neigh", "show")
            assert "PERMANENT" not in table
            for spec in topo.ports:
                assert f"{spec.ip} dev" in table and ports[spec.name].mac in table
        finally:
            for p in ports.values():
                p.close()
