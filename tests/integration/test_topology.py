"""The built-in topologies on the real kernel: built, forwarding, lossy, removed.

Needs root (CI runs these as root; never skipped there). Frames are crafted
with scapy and sent/received with AF_PACKET sockets in this namespace.
"""

from __future__ import annotations

import itertools
import os
import secrets
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        os.geteuid() != 0,
        reason="built-in topologies create namespaces and veths: needs root (or CAP_NET_ADMIN)",
    ),
]

pyroute2 = pytest.importorskip("pyroute2")
scapy_all = pytest.importorskip("scapy.all")
Ether, IP, UDP, Raw = scapy_all.Ether, scapy_all.IP, scapy_all.UDP, scapy_all.Raw

from pytest_netload.topology.builtin import BuiltTopology, build, sweep_stale
from pytest_netload.topology.model import Flow, PortSpec, Wire
from pytest_netload.topology.nft import drop_every_nth, drop_random

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
REPO = Path(__file__).resolve().parents[2]
MARK = b"netload-topology-test"


# ------------------------------------------------------------------ helpers


def _links() -> set[str]:
    with pyroute2.IPRoute() as ipr:
        return {link.get("IFLA_IFNAME") for link in ipr.get_links()}


def _namespaces() -> set[str]:
    return set(pyroute2.netns.listnetns())


def _names(built: BuiltTopology) -> tuple[set[str], set[str]]:
    links = {_iface(p) for p in built.topology.ports}
    spaces = {built.topology.namespace} if built.topology.namespace else set()
    return links, spaces


def _assert_gone(links: set[str], spaces: set[str]) -> None:
    # veth deletion is synchronous, netns removal is an unmount: no waiting needed
    assert not (links & _links()), f"left behind: {links & _links()}"
    assert not (spaces & _namespaces()), f"left behind: {spaces & _namespaces()}"


def _iface(port: PortSpec) -> str:
    assert port.iface is not None
    return port.iface


def _sysctl(*parts: str) -> str:
    return Path("/proc/sys", *parts).read_text().strip()


class RawLink:
    """An AF_PACKET sender on one interface and a receiver on another."""

    def __init__(self, flow: Flow) -> None:
        self.rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        self.rx.bind((_iface(flow.rx), ETH_P_ALL))  # bound with a protocol: only this interface
        self.rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        self.tx.bind((_iface(flow.tx), 0))  # protocol 0: send only

    def close(self) -> None:
        self.rx.close()
        self.tx.close()

    def send(self, frames: list[bytes]) -> None:
        for frame in frames:
            self.tx.send(frame)

    def receive(self, count: int, timeout_s: float = 2.0) -> list[bytes]:
        """Our test frames arriving at rx, until ``count`` came or the timeout passed."""
        got: list[bytes] = []
        deadline = time.monotonic() + timeout_s
        while len(got) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.rx.settimeout(left)
            try:
                data, addr = self.rx.recvfrom(65535)
            except TimeoutError:
                break
            if addr[2] != PACKET_OUTGOING and MARK in data:
                got.append(data)
        return got


@pytest.fixture
def router() -> Iterator[BuiltTopology]:
    with build("netns-router", neighbours="static") as built:
        yield built


def _frames(flow: Flow, count: int, dport: int = 9, ttl: int = 64) -> list[bytes]:
    tx, rx = flow
    return [
        bytes(
            Ether(src=tx.mac, dst=tx.peer_mac)
            / IP(src=tx.ip, dst=rx.ip, ttl=ttl)
            / UDP(sport=10000 + seq, dport=dport)
            / Raw(MARK + seq.to_bytes(4, "big") + bytes(18))
        )
        for seq in range(count)
    ]


def _seq(frame: bytes) -> int:
    payload = bytes(Ether(frame)[Raw].load)
    return int.from_bytes(payload[len(MARK) : len(MARK) + 4], "big")


# ------------------------------------------------------------------- loopback


def test_loopback_built_and_removed() -> None:
    with build("loopback") as built:
        topo = built.topology
        assert built.dut is None and topo.namespace is None
        assert topo.wires == (Wire("p0", "p1"), Wire("p1", "p0"))
        p0, p1 = topo.port("p0"), topo.port("p1")
        assert p0.device == f"net_af_packet_{_iface(p0)[:-2]}p0,iface={_iface(p0)},qpairs=1"
        with pyroute2.IPRoute() as ipr:
            for port, peer in ((p0, p1), (p1, p0)):
                (link,) = ipr.get_links(ifname=_iface(port))
                assert link.get("IFLA_ADDRESS") == port.mac
                assert port.peer_mac == peer.mac
                assert link.get("IFLA_MTU") == 1500
                assert link["flags"] & 1  # IFF_UP (operstate follows the peer a moment later)
                assert ipr.get_addr(index=link["index"]) == ()
                assert _sysctl("net", "ipv6", "conf", _iface(port), "disable_ipv6") == "1"
                assert _sysctl("net", "ipv4", "conf", _iface(port), "forwarding") == "0"
        with pyroute2.Ethtool() as ethtool:
            for port in (p0, p1):
                features = ethtool.get_features(_iface(port)).features
                for key in ("rx-gro", "tx-generic-segmentation", "tx-tcp-segmentation"):
                    assert features[key].enable is False, (_iface(port), key)
        links, spaces = _names(built)
        assert links <= _links()
    _assert_gone(links, spaces)


def test_loopback_wire_passes_frames() -> None:
    with build("loopback") as built:
        flow = built.topology.flows()[0]
        wire = RawLink(flow)
        try:
            wire.send(_frames(flow, 5))
            got = wire.receive(5)
        finally:
            wire.close()
    assert sorted(_seq(f) for f in got) == list(range(5))
    assert Ether(got[0]).dst == flow.rx.mac  # straight wire: sent to the far end


@pytest.mark.parametrize("exc_type", [RuntimeError, KeyboardInterrupt])
@pytest.mark.parametrize("name", ["loopback", "netns-router"])
def test_removed_after_exception(name: str, exc_type: type[BaseException]) -> None:
    with pytest.raises(exc_type, match="boom"), build(name) as built:
        links, spaces = _names(built)
        assert links <= _links() and spaces <= _namespaces()
        raise exc_type("boom")
    _assert_gone(links, spaces)


def test_af_xdp_devargs() -> None:
    with build("loopback", backend="af_xdp") as built:
        p1 = built.topology.port("p1")
        assert p1.device == (
            f"net_af_xdp_{_iface(p1)[:-2]}p1,iface={_iface(p1)},start_queue=0,queue_count=1"
        )


def test_two_instances_coexist() -> None:
    with build("netns-router", neighbours="static") as a, build("netns-router", neighbours="static") as b:
        assert a.topology.namespace != b.topology.namespace
        assert {p.iface for p in a.topology.ports}.isdisjoint(p.iface for p in b.topology.ports)
        assert a.topology.port("p0").mac == b.topology.port("p0").mac  # fixed MACs


# --------------------------------------------------------------- netns-router


def test_router_built_and_removed(router: BuiltTopology) -> None:
    topo, dut = router.topology, router.dut
    assert dut is not None and topo.namespace == dut.namespace
    assert topo.namespace in _namespaces()
    p0, p1 = topo.port("p0"), topo.port("p1")
    assert (p0.ip, p0.peer_ip, p1.ip, p1.peer_ip) == (
        "198.18.0.2",
        "198.18.0.1",
        "198.19.0.2",
        "198.19.0.1",
    )
    with pyroute2.IPRoute() as ipr:
        for port in (p0, p1):
            (link,) = ipr.get_links(ifname=_iface(port))
            assert link.get("IFLA_ADDRESS") == port.mac
            assert ipr.get_addr(index=link["index"]) == ()
            assert _sysctl("net", "ipv6", "conf", _iface(port), "disable_ipv6") == "1"
    with pyroute2.IPRoute(netns=topo.namespace, flags=0) as ns:
        macs = {l.get("IFLA_IFNAME"): l.get("IFLA_ADDRESS") for l in ns.get_links()}
        assert [macs[i] for i in dut.interfaces] == [p0.peer_mac, p1.peer_mac]
        addrs = {a.get("IFA_ADDRESS") for a in ns.get_addr(family=socket.AF_INET)}
        assert {"198.18.0.1", "198.19.0.1"} <= addrs
        neigh = {(n.get("NDA_DST"), n.get("NDA_LLADDR")) for n in ns.get_neighbours()}
        assert {("198.18.0.2", p0.mac), ("198.19.0.2", p1.mac)} <= neigh
    out = dut.run(
        [
            "sysctl",
            "-n",
            "net.ipv4.ip_forward",
            "net.ipv4.conf.all.rp_filter",
            f"net.ipv4.conf.{dut.interfaces[0]}.rp_filter",
            f"net.ipv6.conf.{dut.interfaces[1]}.disable_ipv6",
        ]
    ).stdout.split()
    assert out == ["1", "0", "0", "1"]


def test_router_removed_on_exit() -> None:
    with build("netns-router", neighbours="static") as built:
        links, spaces = _names(built)
        dut_links = set(built.dut.interfaces)  # type: ignore[union-attr]
    _assert_gone(links | dut_links, spaces)


@pytest.mark.parametrize("direction", [0, 1])
def test_router_forwards(router: BuiltTopology, direction: int) -> None:
    flow = router.topology.flows()[direction]
    before = router.dut.counters()  # type: ignore[union-attr]
    wire = RawLink(flow)
    try:
        wire.send(_frames(flow, 3))
        got = wire.receive(3)
    finally:
        wire.close()
    assert sorted(_seq(f) for f in got) == [0, 1, 2]
    pkt = Ether(got[0])
    assert pkt.src == flow.rx.peer_mac  # rewritten by the router: its egress MAC
    assert pkt.dst == flow.rx.mac
    assert pkt[IP].ttl == 63
    assert (pkt[IP].src, pkt[IP].dst) == (flow.src_ip, flow.dst_ip)
    after = router.dut.counters()  # type: ignore[union-attr]
    dut_ifs = router.dut.interfaces  # type: ignore[union-attr]
    ingress, egress = dut_ifs[direction], dut_ifs[1 - direction]
    assert after[ingress]["rx_packets"] - before[ingress]["rx_packets"] >= 3
    assert after[egress]["tx_packets"] - before[egress]["tx_packets"] >= 3


def test_drop_every_nth_is_exact(router: BuiltTopology) -> None:
    dut = router.dut
    assert dut is not None
    flow = router.topology.flows()[0]
    rule = drop_every_nth(dut, 10)
    assert rule.dropped() == 0
    wire = RawLink(flow)
    try:
        wire.send(_frames(flow, 100))
        got = wire.receive(90, timeout_s=3.0)
        got += wire.receive(1, timeout_s=0.3)  # nothing beyond the 90 may come
    finally:
        wire.close()
    assert rule.dropped() == 10
    assert len(got) == 90
    missing = sorted(set(range(100)) - {_seq(f) for f in got})
    assert len(missing) == 10
    assert all(b - a == 10 for a, b in itertools.pairwise(missing))
    rule.remove()
    rule.remove()  # idempotent
    assert "netload" not in dut.run(["nft", "list", "tables"]).stdout


def test_nft_match_limits_the_rule(router: BuiltTopology) -> None:
    dut = router.dut
    assert dut is not None
    flow = router.topology.flows()[0]
    with drop_every_nth(dut, 1, match="udp dport 7") as everything_to_7:
        wire = RawLink(flow)
        try:
            wire.send(_frames(flow, 4, dport=9) + _frames(flow, 4, dport=7))
            got = wire.receive(4, timeout_s=2.0)
            got += wire.receive(1, timeout_s=0.3)
        finally:
            wire.close()
        assert everything_to_7.dropped() == 4
    assert [Ether(f)[UDP].dport for f in got] == [9] * 4


def test_drop_random_extremes(router: BuiltTopology) -> None:
    dut = router.dut
    assert dut is not None
    flow = router.topology.flows()[1]
    none_rule = drop_random(dut, 0.0)
    all_rule = drop_random(dut, 1.0, match="udp dport 7")
    wire = RawLink(flow)
    try:
        wire.send(_frames(flow, 20, dport=9) + _frames(flow, 20, dport=7))
        got = wire.receive(20, timeout_s=2.0)
        got += wire.receive(1, timeout_s=0.3)
    finally:
        wire.close()
    assert (none_rule.dropped(), all_rule.dropped(), len(got)) == (0, 20, 20)
    none_rule.remove()
    assert "netload" in dut.run(["nft", "list", "tables"]).stdout  # all_rule still there
    all_rule.remove()
    assert "netload" not in dut.run(["nft", "list", "tables"]).stdout


def test_nft_errors_carry_nft_stderr(router: BuiltTopology) -> None:
    from pytest_netload.errors import NetloadConfigError

    with pytest.raises(
        NetloadConfigError, match=r"(?s)`match` = 'udp dprot 9'.*Error: syntax error"
    ):
        drop_every_nth(router.dut, 3, match="udp dprot 9")  # type: ignore[arg-type]
    # the failed attempt leaves no empty table behind
    tables = router.dut.run(["nft", "list", "tables"]).stdout  # type: ignore[union-attr]
    assert "netload" not in tables


def test_dut_run_reports_failures(router: BuiltTopology) -> None:
    from pytest_netload.errors import NetloadEnvironmentError

    dut = router.dut
    assert dut is not None
    assert dut.run(["ip", "-br", "link"], check=False).returncode == 0
    with pytest.raises(NetloadEnvironmentError, match="exit status"):
        dut.run(["ip", "link", "show", "dev", "no-such-interface"])
    assert dut.run(["false"], check=False).returncode == 1


# -------------------------------------------------- hard exits and the sweep


def _child(body: str) -> subprocess.Popen[str]:
    code = textwrap.dedent(
        """
        import os, sys, time
        from pytest_netload.topology.builtin import build
        cm = build("netns-router", neighbours="static")
        b = cm.__enter__()
        print(b.topology.namespace, *(p.iface for p in b.topology.ports), flush=True)
        """
    ) + textwrap.dedent(body)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _child_names(proc: subprocess.Popen[str]) -> tuple[set[str], set[str]]:
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    assert len(line) == 3, proc.stderr.read() if proc.stderr else line
    return set(line[1:]), {line[0]}


def test_atexit_removes_on_plain_exit() -> None:
    proc = _child("sys.exit(0)\n")
    links, spaces = _child_names(proc)
    assert proc.wait(timeout=20) == 0
    _assert_gone(links, spaces)


def test_sigterm_removes_and_still_terminates() -> None:
    proc = _child("time.sleep(30)\n")
    links, spaces = _child_names(proc)
    assert links <= _links()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == -signal.SIGTERM
    _assert_gone(links, spaces)


def test_sweep_removes_leftovers_of_dead_process_only() -> None:
    proc = _child("os._exit(0)\n")  # no atexit, no finally: leftovers
    links, spaces = _child_names(proc)
    assert proc.wait(timeout=20) == 0
    assert links <= _links() and spaces <= _namespaces()
    with build("loopback") as mine:  # alive: must survive the sweep
        removed = set(sweep_stale())
        assert links | spaces <= removed
        assert not (_names(mine)[0] & removed)
        assert _names(mine)[0] <= _links()
    _assert_gone(links, spaces)


def test_sweep_ignores_foreign_interfaces() -> None:
    name = "nl" + secrets.token_hex(3) + "zz"
    with pyroute2.IPRoute() as ipr:
        ipr.link("add", ifname=name, kind="veth", peer={"ifname": name[:-2] + "zy"})
        try:
            assert name not in sweep_stale()  # no pytest-netload alias: not ours
            assert name in _links()
        finally:
            ipr.link("del", ifname=name)
