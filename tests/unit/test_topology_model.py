"""The topology model (validation, flows) and the built-in topologies' naming rules."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from types import MappingProxyType

import pytest

from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology.model import Flow, PortSpec, Topology, Wire, normalize_mac


def _port(name: str = "p0", **kw: object) -> PortSpec:
    fields: dict[str, object] = {
        "device": f"net_null_{name}",
        "iface": None,
        "mac": "02:00:00:00:00:01",
    }
    fields.update(kw)
    return PortSpec(name, **fields)  # type: ignore[arg-type]


def _router() -> Topology:
    return Topology(
        name="r",
        ports=(
            _port(
                "p0",
                mac="02:00:00:00:00:01",
                ip="198.18.0.2",
                peer_mac="02:00:00:00:01:00",
                peer_ip="198.18.0.1",
            ),
            _port(
                "p1",
                mac="02:00:00:00:00:02",
                ip="198.19.0.2",
                peer_mac="02:00:00:00:01:01",
                peer_ip="198.19.0.1",
            ),
        ),
        wires=(Wire("p0", "p1"), Wire("p1", "p0")),
        line_rate_bps=10_000_000_000,
        dut={"name": "edge-1", "firmware": "1.2"},
    )


# ------------------------------------------------------------------ PortSpec


def test_portspec_normalizes_addresses() -> None:
    port = _port(
        mac="02-AB-cd-00-00-01",
        ip="2001:DB8:0::2",
        peer_mac="02:AA:00:00:00:01",
        peer_ip="2001:db8::1",
    )
    assert port.mac == "02:ab:cd:00:00:01"
    assert port.peer_mac == "02:aa:00:00:00:01"
    assert port.ip == "2001:db8::2"


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"mac": "02:00:00:00:00"}, "mac"),
        ({"mac": "zz:00:00:00:00:01"}, "mac"),
        ({"mac": "02:00-00:00:00:01"}, "mac"),
        ({"mac": "01:00:5e:00:00:01"}, "multicast"),
        ({"peer_mac": "nope"}, "peer_mac"),
        ({"ip": "198.18.0.300"}, "ip"),
        ({"peer_ip": "198.18.0.1/24"}, "prefix length"),
        ({"ip": "198.18.0.2/33"}, "not an address with a prefix length"),
        ({"ip": "198.18.0.2/24", "peer_ip": "10.9.0.1"},
         "peer_ip = '10.9.0.1' is not in the port's subnet 198.18.0.0/24"),
        ({"peer_ip": 5}, "peer_ip"),
        ({"ip": "198.18.0.2", "peer_ip": "2001:db8::1"}, "mix IPv4 and IPv6"),
        ({"ip": "198.18.0.2", "peer_ip": "198.18.0.2"}, "must differ"),
        ({"device": None, "iface": None}, "neither `device` nor `iface`"),
        ({"iface": "a-name-longer-than-15"}, "iface"),
        ({"device": ""}, "device"),
    ],
)
def test_portspec_rejects_bad_values(kw: dict[str, object], needle: str) -> None:
    with pytest.raises(NetloadConfigError, match=re.escape(needle)) as info:
        _port(**kw)  # type: ignore[arg-type]
    assert "'p0'" in str(info.value)  # the message names the port


def test_portspec_rejects_bad_name() -> None:
    with pytest.raises(NetloadConfigError, match="port name"):
        _port("has space")


def test_portspec_is_frozen() -> None:
    port = _port()
    with pytest.raises(AttributeError):
        port.mac = "02:00:00:00:00:09"  # type: ignore[misc]


def test_normalize_mac_names_key() -> None:
    with pytest.raises(NetloadConfigError, match="my_key"):
        normalize_mac("x", "my_key")


# ------------------------------------------------------------------ Topology


def test_flows_follow_wires_and_give_addresses() -> None:
    topo = _router()
    flows = topo.flows()
    assert [(f.tx.name, f.rx.name) for f in flows] == [("p0", "p1"), ("p1", "p0")]
    tx, rx = flows[0]  # unpacks as a pair
    assert isinstance(flows[0], Flow)
    assert (tx, rx) == (topo.port("p0"), topo.port("p1"))
    f = flows[0]
    assert f.src_mac == "02:00:00:00:00:01"
    assert f.src_ip == "198.18.0.2"
    assert f.dst_ip == "198.19.0.2"
    assert f.dst_mac == "02:00:00:00:01:00"  # the DUT's MAC, not the rx port's
    assert flows[1].dst_mac == "02:00:00:00:01:01"


def test_flow_without_peer_mac_sends_to_rx_port() -> None:
    topo = Topology(
        "wire",
        (_port("a", mac="02:00:00:00:00:0a"), _port("b", mac="02:00:00:00:00:0b")),
        (Wire("a", "b"),),
    )
    (flow,) = topo.flows()
    assert flow.dst_mac == "02:00:00:00:00:0b"
    assert flow.src_ip is None and flow.dst_ip is None


def test_single_port_hairpin_is_allowed() -> None:
    topo = Topology("hairpin", (_port("p0"),), (Wire("p0", "p0"),))
    assert topo.flows()[0].tx is topo.flows()[0].rx


def test_topology_accepts_lists_and_freezes_dut() -> None:
    dut = {"name": "x"}
    topo = Topology("t", [_port("p0")], [Wire("p0", "p0")], None, dut)  # type: ignore[arg-type]
    assert isinstance(topo.ports, tuple) and isinstance(topo.wires, tuple)
    assert isinstance(topo.dut, MappingProxyType)
    dut["name"] = "changed"
    assert topo.dut["name"] == "x"
    with pytest.raises(TypeError):
        topo.dut["name"] = "y"  # type: ignore[index]
    assert topo == Topology("t", (_port("p0"),), (Wire("p0", "p0"),), None, {"name": "x"})
    hash(topo)


def test_port_lookup_unknown_lists_known() -> None:
    with pytest.raises(NetloadConfigError, match=r"no port 'p9'.*\['p0', 'p1'\]"):
        _router().port("p9")


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"ports": ()}, "`ports` is empty"),
        ({"wires": ()}, "`wires` is empty"),
        ({"wires": (Wire("p0", "p7"),)}, "rx = 'p7' is not a declared port"),
        ({"wires": (Wire("p7", "p0"),)}, "tx = 'p7' is not a declared port"),
        ({"wires": (Wire("p0", "p1"), Wire("p0", "p1"))}, "listed twice"),
        ({"line_rate_bps": 0}, "line_rate_bps"),
        ({"line_rate_bps": 1.5e9}, "line_rate_bps"),
        ({"line_rate_bps": True}, "line_rate_bps"),
        ({"dut": {"firmware": 1}}, "dut['firmware']"),
        ({"dut": ["x"]}, "dut ="),
        ({"namespace": ""}, "namespace"),
        ({"ports": "p0"}, "ports"),
        ({"ports": ("p0",)}, "PortSpec"),
        ({"wires": (("p0", "p1"),)}, "Wire"),
    ],
)
def test_topology_rejects_bad_values(kw: dict[str, object], needle: str) -> None:
    fields: dict[str, object] = {
        "name": "r",
        "ports": (_port("p0"), _port("p1", mac="02:00:00:00:00:02")),
        "wires": (Wire("p0", "p1"),),
        "line_rate_bps": None,
        "dut": {},
        "namespace": None,
    }
    fields.update(kw)
    with pytest.raises(NetloadConfigError, match=re.escape(needle)):
        Topology(**fields)  # type: ignore[arg-type]


def test_topology_rejects_duplicate_port_names() -> None:
    with pytest.raises(NetloadConfigError, match="'p0' is used twice"):
        Topology("t", (_port("p0"), _port("p0")), (Wire("p0", "p0"),))


def test_topology_rejects_mixed_family_wire() -> None:
    ports = (_port("p0", ip="198.18.0.2"), _port("p1", ip="2001:db8::2"))
    with pytest.raises(NetloadConfigError, match="IPv4 port to an IPv6 port"):
        Topology("t", ports, (Wire("p0", "p1"),))


def test_config_error_is_value_error() -> None:
    with pytest.raises(ValueError):
        _port(mac="bad")


# ------------------------------------------------- built-in naming (pure parts)


builtin = pytest.importorskip("pytest_netload.topology.builtin", reason="pyroute2 missing")
# the naming helpers are private to topology/builtin/names.py, where they are looked up
names = pytest.importorskip("pytest_netload.topology.builtin.names", reason="pyroute2 missing")


def test_tags_are_unique_and_fit_interface_names() -> None:
    tags = {builtin.new_tag() for _ in range(200)}
    assert len(tags) == 200
    for tag in tags:
        assert re.fullmatch(r"nl[0-9a-f]{6}", tag)
        assert len(tag + "g0") <= 15
    assert builtin.new_tag("abcdefg").startswith("abcdefg")
    assert len(builtin.new_tag("abcdefg") + "d1") == 15


@pytest.mark.parametrize("prefix", ["", "Nl", "toolongxx", "n-l", "1nl"])
def test_tag_prefix_validated(prefix: str) -> None:
    with pytest.raises(NetloadConfigError, match="prefix"):
        builtin.new_tag(prefix)


def test_macs_are_fixed_local_unicast() -> None:
    mac = builtin.mac_for(2, 1, 0)
    assert mac == "02:6e:6c:02:01:00"
    assert builtin.mac_for(2, 1, 0) == mac  # reproducible
    first = int(mac[:2], 16)
    assert first & 0x02 and not first & 0x01  # locally administered, unicast
    with pytest.raises(NetloadConfigError, match="index"):
        builtin.mac_for(1, 0, 256)


def test_vdev_strings() -> None:
    assert (
        builtin.vdev_string("af_packet", "nlab12cdp0", "nlab12cdg0")
        == "net_af_packet_nlab12cdp0,iface=nlab12cdg0,qpairs=1"
    )
    assert (
        builtin.vdev_string("af_xdp", "nlab12cdp1", "nlab12cdg1")
        == "net_af_xdp_nlab12cdp1,iface=nlab12cdg1,start_queue=0,queue_count=1"
    )
    with pytest.raises(NetloadConfigError, match=r"'af_packet', 'af_xdp'"):
        builtin.vdev_string("pcap", "x", "y")


def test_build_unknown_name_lists_known() -> None:
    known = (r"\['dpdk-testpmd', 'loopback', 'netns-bridge', 'netns-lossy', 'netns-policed', "
             r"'netns-router', 'netns-shaped', 'ovs-dpdk'\]")
    with pytest.raises(NetloadConfigError, match=known):
        builtin.build("netns-rooter")


def test_build_rejects_unknown_keywords() -> None:
    with pytest.raises(NetloadConfigError, match=r"takes `backend`.*\['speed'\]"):
        builtin.build("loopback", speed=10)


def test_unknown_backend_rejected_before_anything_is_built() -> None:
    with pytest.raises(NetloadConfigError, match="backend"):
        builtin.loopback(backend="tap")
    with pytest.raises(NetloadConfigError, match="backend"):
        builtin.netns_router(backend="tap")


def test_build_needs_root(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_netload.errors import NetloadEnvironmentError

    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # looked up as os.geteuid
    with pytest.raises(NetloadEnvironmentError, match="root"):
        builtin.build("loopback")
    with pytest.raises(NetloadEnvironmentError, match="CAP_NET_ADMIN"), builtin.netns_router():
        pass  # pragma: no cover


def test_netns_names_record_the_creator() -> None:
    name = names._netns_name("nl00aa11")
    pid, start = names._owner()
    assert name == f"nl00aa11-dut-{pid}.{start}"
    match = names._netns_re("nl").match(name)
    assert match is not None and names._alive(int(match.group(1)), int(match.group(2)))
    assert not names._alive(pid, start + 1)  # same pid, other process: a reused pid
    assert names._netns_re("nl").match("nlzz0000-dut-1.2") is None
    assert names._ALIAS_RE.match(names._alias("nl00aa11"))


# ---------------------------------------------- nftables helpers (fake DUT)


class _FakeDut:
    """Answers nft commands the way nft 1.0 does, without a kernel."""

    namespace = "fake-ns"

    def __init__(self, fail_add: str = "") -> None:
        self.calls: list[list[str]] = []
        self.rules: dict[int, int] = {}  # handle -> dropped packets
        self.fail_add = fail_add

    def run(
        self,
        cmd: list[str],
        *,
        input: str | None = None,
        check: bool = True,
        timeout_s: float = 30.0,
    ) -> object:
        import json
        import subprocess

        self.calls.append(cmd)
        rc, out, err = 0, "", ""
        if "add" in cmd and "rule" in cmd:
            if self.fail_add:
                rc, err = 1, self.fail_add
            else:
                handle = len(self.calls) + 1
                self.rules[handle] = 0
                out = "add rule inet netload forward " + " ".join(cmd[8:]) + f" # handle {handle}\n"
        elif cmd[1:3] == ["-j", "list"]:
            items: list[dict[str, object]] = [{"metainfo": {"json_schema_version": 1}}]
            for handle, packets in self.rules.items():
                items.append(
                    {
                        "rule": {
                            "handle": handle,
                            "expr": [
                                {"match": {}},
                                {"counter": {"packets": packets, "bytes": 64 * packets}},
                                {"drop": None},
                            ],
                        }
                    }
                )
            out = json.dumps({"nftables": items})
        elif cmd[1:3] == ["delete", "rule"]:
            del self.rules[int(cmd[-1])]
        return subprocess.CompletedProcess(cmd, rc, out, err)


@pytest.fixture
def nft(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    from pytest_netload.topology import nft as module

    monkeypatch.setattr(f"{module.__name__}.shutil.which", lambda name: f"/usr/sbin/{name}")
    return module


def test_drop_every_nth_rule_and_counter(nft) -> None:  # type: ignore[no-untyped-def]
    dut = _FakeDut()
    rule = nft.drop_every_nth(dut, 10)
    assert rule.rule == "udp dport 9 numgen inc mod 10 0 counter drop"
    add = next(c for c in dut.calls if "rule" in c and "add" in c)
    assert add[:8] == ["nft", "--echo", "--handle", "add", "rule", "inet", "netload", "forward"]
    dut.rules[rule.handle] = 7
    assert rule.dropped() == 7
    rule.remove()
    assert dut.calls[-1] == ["nft", "delete", "table", "inet", "netload"]
    rule.remove()  # idempotent: no further nft calls
    assert dut.calls[-1] == ["nft", "delete", "table", "inet", "netload"]
    with pytest.raises(NetloadConfigError, match="removed"):
        rule.dropped()


def test_drop_random_threshold(nft) -> None:  # type: ignore[no-untyped-def]
    dut = _FakeDut()
    assert nft.drop_random(dut, 0.0125, match="ip daddr 198.19.0.2").rule == (
        "ip daddr 198.19.0.2 numgen random mod 1000000 < 12500 counter drop"
    )
    assert nft.drop_random(dut, 1).rule == "udp dport 9 counter drop"
    assert nft.drop_random(dut, 0).rule.endswith("< 0 counter drop")


@pytest.mark.parametrize("n", [0, -1, 2.5, True, "3"])
def test_drop_every_nth_rejects_bad_n(nft, n: object) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NetloadConfigError, match="n = "):
        nft.drop_every_nth(_FakeDut(), n)


@pytest.mark.parametrize("ratio", [-0.1, 1.5, "0.1", False])
def test_drop_random_rejects_bad_ratio(nft, ratio: object) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NetloadConfigError, match="ratio"):
        nft.drop_random(_FakeDut(), ratio)


@pytest.mark.parametrize("match", ["", "udp dport 9; flush ruleset", "a\nb", 'x "y"'])
def test_match_must_be_one_expression(nft, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NetloadConfigError, match="match"):
        nft.drop_every_nth(_FakeDut(), 2, match=match)


def test_nft_rejection_names_match_and_carries_stderr(nft) -> None:  # type: ignore[no-untyped-def]
    dut = _FakeDut(fail_add="Error: syntax error, unexpected string")
    with pytest.raises(NetloadConfigError, match=r"`match` = 'udp dprot 9'.*unexpected string"):
        nft.drop_every_nth(dut, 2, match="udp dprot 9")
    assert dut.calls[-1] == ["nft", "delete", "table", "inet", "netload"]


def test_nft_missing_is_environment_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_netload.errors import NetloadEnvironmentError
    from pytest_netload.topology import nft as module

    monkeypatch.setattr(f"{module.__name__}.shutil.which", lambda name: None)
    with pytest.raises(NetloadEnvironmentError, match="apt-get install nftables"):
        module.drop_every_nth(_FakeDut(), 2)


def test_an_ip_with_its_prefix_length_gives_the_ports_subnet() -> None:
    spec = PortSpec("p0", "net_null0", None, "02:00:00:00:00:01", ip="2001:2::2/64",
                    peer_ip="2001:2::1")
    assert (spec.ip, spec.network) == ("2001:2::2", "2001:2::/64")
    # dataclasses.replace keeps it: the subnet travels with the spec
    assert replace(spec, peer_mac="02:00:00:00:00:09").network == "2001:2::/64"
    assert PortSpec("p0", "net_null0", None, "02:00:00:00:00:01", ip="198.18.0.2").network \
        is None
