"""netns-bridge as an RFC 2889 switch: more ports, learning, and a known address capacity.

Parameter checks and the rtnetlink helper's refusals come before anything is built, so
their tests run anywhere. The bridges themselves need root and the engine (CI runs them
as root): a 4-port bridge is built and removed (also when its build fails), every one of
its 12 wires forwards without a flood, and a learning bridge with max_learned=K learns
exactly K of M > K source addresses: frames to a learned one reach its port only, frames
to one beyond the limit are flooded. The traffic stays tiny (hundreds of frames).
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from functools import partial
from typing import Any

import pytest

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.topology.builtin import BuiltTopology, Dut, build, bridge_rtnl
from pytest_netload.topology.builtin.kernel import _call_in_netns

from netutil import open_ports

INTEGRATION = pytest.mark.integration
NEEDS_ROOT = pytest.mark.skipif(
    os.geteuid() != 0,
    reason="the DUTs create namespaces and veths and the engine runs DPDK: needs root",
)
PREFIX = "nlrfc"  # this module's own instance prefix: its leftovers are told from others'
FIRST_SOURCE = "02:00:00:00:10:00"


def _mac(index: int) -> str:
    """The source MAC number ``index`` of the learning streams (FIRST_SOURCE + index)."""
    return ":".join(f"{b:02x}" for b in (0x020000001000 + index).to_bytes(6, "big"))


# ---------------------------------------------------------- parameters (no root)


BAD_PARAMS = {
    "one port": ({"ports": 1}, r"ports = 1 must be an integer from 2 to 8"),
    "nine ports": ({"ports": 9}, r"ports = 9 must be an integer from 2 to 8"),
    "ports as a string": ({"ports": "4"}, r"ports = '4' must be an integer"),
    "ports as a bool": ({"ports": True}, r"ports = True must be an integer"),
    "learning as a word": ({"learning": "yes"},
                           r"learning = 'yes' must be True .* or False .*learning=true"),
    "learning as an int": ({"learning": 1}, r"learning = 1 must be True"),
    "ageing too short": ({"ageing_s": 9}, r"ageing_s = 9 must be an integer from 10 to 1000000"),
    "ageing too long": ({"ageing_s": 1_000_001}, r"ageing_s = 1000001 must be"),
    "ageing as a float": ({"ageing_s": 30.0}, r"ageing_s = 30\.0 must be an integer"),
    "limit of 0": ({"learning": True, "max_learned": 0},
                   r"max_learned = 0 must be an integer from 1 to 4294967295 .* or None"),
    "limit above u32": ({"learning": True, "max_learned": 1 << 32},
                        r"max_learned = 4294967296 must be"),
    "limit as a bool": ({"learning": True, "max_learned": True}, r"max_learned = True must be"),
    "limit without learning": ({"max_learned": 100},
                               r"max_learned = 100 .* learning = False .* pass learning=True"),
    "port rate too low": ({"port_rate_bps": 7_999},
                          r"port_rate_bps = 7999 must be an integer from 8000 to 10000000000 "
                          r"\(bit/s, e\.g\. 20_000_000"),
    "port rate too high": ({"port_rate_bps": 10_000_000_001}, r"port_rate_bps = 10000000001 must"),
    "port rate as a float": ({"port_rate_bps": 5e6}, r"port_rate_bps = 5000000\.0 must be an int"),
    "port rate as a string": ({"port_rate_bps": "5Mbit/s"}, r"port_rate_bps = '5Mbit/s' must"),
    "port rate as a bool": ({"port_rate_bps": True}, r"port_rate_bps = True must be an integer"),
    "unknown parameter": ({"vlans": 2},
                          r"'netns-bridge' takes `backend`='af_packet', `ports`=2, "
                          r"`learning`=False, `ageing_s`=300, `max_learned`=None, "
                          r"`port_rate_bps`=None, `prefix`='nl' \(the defaults\), "
                          r"not \['vlans'\]$"),
}


@pytest.mark.parametrize(("params", "message"), BAD_PARAMS.values(), ids=BAD_PARAMS)
def test_bad_parameters_are_refused_before_root(
    monkeypatch: pytest.MonkeyPatch, params: dict[str, Any], message: str
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # as an unprivileged user
    with pytest.raises(NetloadConfigError, match=message):
        build("netns-bridge", **params)


@pytest.mark.parametrize("params", [
    {"ports": 8, "learning": True, "ageing_s": 10, "max_learned": (1 << 32) - 1},
    {"ports": 2, "learning": True, "ageing_s": 1_000_000},
    {"ports": 4},
    {"ports": 4, "port_rate_bps": 8_000},
    {"ports": 8, "learning": True, "max_learned": 64, "port_rate_bps": 10_000_000_000},
])
def test_good_parameters_reach_the_root_check(
    monkeypatch: pytest.MonkeyPatch, params: dict[str, Any]
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(NetloadEnvironmentError, match="needs root"):
        build("netns-bridge", **params)


def test_command_line_parameters_parse() -> None:
    from pytest_netload.plugin.options import _topology, split_builtin

    value = "netns-bridge:ports=4,learning=true,max_learned=100"
    assert split_builtin(value) == ("netns-bridge", {"ports": 4, "learning": True,
                                                     "max_learned": 100})
    assert _topology(value) == value  # checked against the factory, nothing built
    assert split_builtin("netns-bridge:learning=False,max_learned=none")[1] == {
        "learning": False, "max_learned": None}
    with pytest.raises(NetloadConfigError, match=r"max_learned = 100 limits .* learning = Fal"):
        _topology("netns-bridge:ports=4,max_learned=100")
    for value in ("netns-bridge:ports=4,port_rate_bps=5000000",
                  "netns-bridge:ports=4,port_rate_bps=5Mbit/s"):
        assert split_builtin(value)[1] == {"ports": 4, "port_rate_bps": 5_000_000}
        assert _topology(value) == value
    with pytest.raises(NetloadConfigError, match=r"port_rate_bps = 1000 must be an integer "
                                                 r"from 8000"):
        _topology("netns-bridge:port_rate_bps=1000")


def test_a_kernel_without_the_limit_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """Linux < 6.7 either refuses the attribute or ignores it (it reads nothing back)."""
    release = os.uname().release
    monkeypatch.setattr(bridge_rtnl, "_index", lambda bridge: 7)

    def refuse(*args: Any) -> bytes:
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    monkeypatch.setattr(bridge_rtnl, "_request", refuse)
    with pytest.raises(NetloadEnvironmentError,
                       match=rf"max_learned = 64 needs .* Linux >= 6\.7.*Linux {release}, "
                             r"which refused it \(Invalid argument\); run on a newer kernel"):
        bridge_rtnl.set_max_learned("br", 64)
    monkeypatch.setattr(bridge_rtnl, "_request", lambda *args: b"")
    monkeypatch.setattr(bridge_rtnl, "bridge_data", lambda bridge: {})
    with pytest.raises(NetloadEnvironmentError,
                       match=rf"Linux >= 6\.7.*Linux {release}, which ignored it"):
        bridge_rtnl.set_max_learned("br", 64)


def test_fdb_methods_need_a_bridge() -> None:
    dut = Dut("nlnone", ["a", "b"], {"name": "netns-router"})
    with pytest.raises(NetloadConfigError, match=r"Dut.fdb_learned\(\) .* netns-router has none"):
        dut.fdb_learned()
    with pytest.raises(NetloadConfigError, match=r"Dut.flush_fdb\(\) .* use it on netns-bridge"):
        dut.flush_fdb()


# ----------------------------------------------------------------------- helpers


def _sh(*cmd: str) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def _leftovers() -> set[str]:
    """Interfaces and namespaces of this module's prefix that exist now."""
    links = {line.split(":")[1].strip().split("@")[0]
             for line in _sh("ip", "-o", "link", "show").splitlines()}
    spaces = {line.split()[0] for line in _sh("ip", "netns", "list").splitlines() if line}
    return {name for name in links | spaces if name.startswith(PREFIX)}


def _json(built: BuiltTopology, cmd: list[str]) -> Any:
    assert built.dut is not None
    return json.loads(built.dut.run(cmd).stdout)


def _learned_macs(built: BuiltTopology) -> dict[str, str]:
    """The bridge's learned entries: MAC -> DUT interface (`bridge fdb show`)."""
    bridge = built.topology.dut["bridge"]
    entries = _json(built, ["bridge", "-j", "fdb", "show", "br", bridge])
    return {e["mac"]: e["ifname"] for e in entries
            if e.get("master") == bridge and e.get("state", "") == ""
            and "permanent" not in e.get("flags", [])}


def _rx_packets(built: BuiltTopology) -> dict[str, int]:
    """rx_packets of each generator interface (port name -> count), as the kernel counts."""
    import pyroute2  # type: ignore[import-untyped,import-not-found,unused-ignore]

    with pyroute2.IPRoute() as ipr:
        return {p.name: int(ipr.get_links(ifname=p.iface)[0].get("IFLA_STATS64")["rx_packets"])
                for p in built.topology.ports}




def _send(engine: Any, ports: dict[str, Any], built: BuiltTopology, tx: str,
          stream: Any, count: int) -> dict[str, int]:
    """Send ``count`` frames of ``stream`` from port ``tx``; what each port's kernel counted."""
    before = _rx_packets(built)
    r = engine.run([engine.load(ports[tx], stream)], list(ports.values()), count=count)
    after = _rx_packets(built)
    assert r.streams[0].tx_packets == count, r.streams[0]
    return {name: after[name] - before[name] for name in after}


# ------------------------------------------------------------- a 4-port bridge


@INTEGRATION
@NEEDS_ROOT
def test_four_ports_built_and_removed() -> None:
    with build("netns-bridge", ports=4, prefix=PREFIX) as built:
        dut, topo = built.dut, built.topology
        assert dut is not None and len(dut.interfaces) == 4
        ports = [topo.port(f"p{i}") for i in range(4)]
        assert [p.ip for p in ports] == ["198.18.0.2", "198.18.0.3", "198.18.0.4", "198.18.0.5"]
        assert [p.peer_mac for p in ports] == [ports[(i + 1) % 4].mac for i in range(4)]
        assert len({p.mac for p in ports}) == 4
        wires = [(w.tx, w.rx) for w in topo.wires]
        assert wires[:2] == [("p0", "p1"), ("p1", "p0")]  # the two-port wires keep 0 and 1
        assert sorted(wires) == sorted((f"p{i}", f"p{j}") for i in range(4) for j in range(4)
                                       if i != j)
        for f in topo.flows():  # every wire addresses its receiver
            assert (f.src_mac, f.dst_mac, f.src_ip, f.dst_ip) == (
                f.tx.mac, f.rx.mac, f.tx.ip, f.rx.ip), f
        assert {k: dut.info[k] for k in ("ports", "learning", "ageing_s", "max_learned")} == {
            "ports": "4", "learning": "false", "ageing_s": "300", "max_learned": "none"}
        assert dict(topo.dut) == dut.info
        fdb = _json(built, ["bridge", "-j", "fdb", "show", "br", dut.info["bridge"]])
        static = {e["mac"]: e["ifname"] for e in fdb if e.get("state") == "static"}
        assert static == {p.mac: d for p, d in zip(ports, dut.interfaces)}
        links = {p["ifname"]: p for p in _json(built, ["bridge", "-d", "-j", "link", "show"])}
        for name in dut.interfaces:
            assert (links[name]["learning"], links[name]["flood"]) == (False, False)
        assert dut.fdb_learned() == 0
        # here: the generator ends and the namespace (the DUT ends live inside it)
        assert _leftovers() == {p.iface for p in ports} | {dut.namespace}
    assert _leftovers() == set()


@INTEGRATION
@NEEDS_ROOT
def test_port_rate_shapes_every_port_egress() -> None:
    """port_rate_bps: a root TBF on each DUT-side port, recorded in dut.info, and each
    one's drops in the counters the loss attribution reads."""
    from pytest_netload.topology.builtin import shaper_capacity_pps

    rate = 5_000_000
    with build("netns-bridge", ports=4, port_rate_bps=rate, prefix=PREFIX) as built:
        dut = built.dut
        assert dut is not None
        assert {k: dut.info[k] for k in ("port_rate_bps", "shaper", "burst_bytes",
                                        "limit_bytes", "shaped_interfaces", "accounting")} == {
            "port_rate_bps": "5000000", "shaper": "tbf", "burst_bytes": "3028",
            # 20 ms at 625,000 B/s on top of the bucket
            "limit_bytes": str(12_500 + 3028), "shaped_interfaces": ",".join(dut.interfaces),
            "accounting": "l2-nofcs"}
        assert "shaped to 5,000,000 bit/s" in dut.info["model"]
        assert dict(built.topology.dut) == dut.info
        qdiscs = {q["dev"]: q for q in _json(built, ["tc", "-j", "qdisc", "show"])
                  if q.get("root")}
        for name in dut.interfaces:
            assert qdiscs[name]["kind"] == "tbf", qdiscs[name]
            assert qdiscs[name]["options"]["rate"] == rate // 8, qdiscs[name]
        drops = {c.where for c in dut.trial_counters() if c.kind == "queue_drop"}
        assert drops == {f"tbf on {name}" for name in dut.interfaces}
    assert round(shaper_capacity_pps(rate, 512), 1) == 1230.3
    with build("netns-bridge", ports=2, prefix=PREFIX) as built:
        assert built.dut is not None and built.dut.info["port_rate_bps"] == "none"
        assert not [q for q in _json(built, ["tc", "-j", "qdisc", "show"])
                    if q.get("kind") == "tbf"]
    assert _leftovers() == set()


@INTEGRATION
@NEEDS_ROOT
def test_four_ports_removed_after_an_exception() -> None:
    with pytest.raises(RuntimeError, match="boom"), \
            build("netns-bridge", ports=4, learning=True, prefix=PREFIX) as built:
        assert len(_leftovers()) == 5  # 4 generator ends and the namespace
        raise RuntimeError("boom")
    assert built.topology.namespace is not None
    assert _leftovers() == set()


@INTEGRATION
@NEEDS_ROOT
def test_a_failed_build_leaves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit is set after the veths and the bridge exist: a refusal removes them all."""
    from pytest_netload.topology.builtin import bridge

    def refuse(name: str, limit: int) -> None:
        raise NetloadEnvironmentError(f"max_learned = {limit} refused (simulated)")

    monkeypatch.setattr(bridge, "set_max_learned", refuse)
    with pytest.raises(NetloadEnvironmentError, match="refused"), \
            build("netns-bridge", ports=4, learning=True, max_learned=8, prefix=PREFIX):
        pass
    assert _leftovers() == set()


@INTEGRATION
@NEEDS_ROOT
def test_every_wire_of_a_4_port_static_bridge_forwards(engine: Any) -> None:
    from pytest_netload.traffic.streams import flow_stream

    count = 20
    with build("netns-bridge", ports=4, prefix=PREFIX) as built, open_ports(engine, built) as ports:
        flows = built.topology.flows()
        streams = [engine.load(ports[f.tx.name], flow_stream(f, size=64)) for f in flows]
        before = _rx_packets(built)
        r = engine.run(streams, list(ports.values()), count=count)
        after = _rx_packets(built)
    assert len(r.streams) == 12
    for s in r.streams:
        assert (s.tx_packets, s.rx_packets, s.lost, s.duplicates) == (count, count, 0, 0), s
    # each port got its three wires' frames and nothing else: no flooding
    assert {n: after[n] - before[n] for n in after} == dict.fromkeys(after, 3 * count)


# -------------------------------------------------------- learning and its limit


def _sources_stream(built: BuiltTopology, count: int) -> Any:
    """p0 -> p1 frames whose source MAC steps over ``count`` addresses from FIRST_SOURCE."""
    from pytest_netload.traffic.packets import field
    from pytest_netload.traffic.streams import Stream, flow_stream

    template = flow_stream(built.topology.flows()[0], size=64).template
    return Stream(template, size=64, name="sources", fields=[
        field(template, "eth.src", "inc", min=FIRST_SOURCE, max=_mac(count - 1))])


def _to_stream(built: BuiltTopology, mac: str) -> Any:
    """p1 frames addressed to ``mac``."""
    from pytest_netload.traffic.packets import field
    from pytest_netload.traffic.streams import Stream, flow_stream

    template = flow_stream(built.topology.flows()[1], size=64).template
    return Stream(template, size=64, name=f"to-{mac}",
                  fields=[field(template, "eth.dst", "set", value=mac)])


@INTEGRATION
@NEEDS_ROOT
def test_learning_stops_at_max_learned_and_floods_beyond(engine: Any) -> None:
    limit, sources, count = 64, 200, 50
    with build("netns-bridge", ports=4, learning=True, max_learned=limit,
               prefix=PREFIX) as built, open_ports(engine, built) as ports:
        dut = built.dut
        assert dut is not None
        bridge = dut.info["bridge"]
        assert {k: dut.info[k] for k in ("ports", "learning", "max_learned")} == {
            "ports": "4", "learning": "true", "max_learned": str(limit)}
        data = _call_in_netns(dut.namespace, partial(bridge_rtnl.bridge_data, bridge))
        assert data[bridge_rtnl.IFLA_BR_FDB_MAX_LEARNED] == limit.to_bytes(4, "little")
        links = {p["ifname"]: p for p in _json(built, ["bridge", "-d", "-j", "link", "show"])}
        for name in dut.interfaces:
            assert (links[name]["learning"], links[name]["flood"]) == (True, True)
        assert dut.fdb_learned() == 0 and _learned_macs(built) == {}  # no static entries

        got = _send(engine, ports, built, "p0", _sources_stream(built, sources), sources)
        # p1's MAC was not learned yet: every frame was flooded to the three other ports
        assert got == {"p0": 0, "p1": sources, "p2": sources, "p3": sources}
        learned = _learned_macs(built)
        print(f"{sources} sources sent, {dut.fdb_learned()} learned (limit {limit})")
        assert dut.fdb_learned() == limit == len(learned)
        assert _call_in_netns(dut.namespace, partial(bridge_rtnl._dump_learned, bridge)) == limit
        assert set(learned.values()) == {dut.interfaces[0]}
        assert set(learned) < {_mac(i) for i in range(sources)}

        known = min(learned)
        unknown = next(_mac(i) for i in range(sources) if _mac(i) not in learned)
        got = _send(engine, ports, built, "p1", _to_stream(built, known), count)
        assert got == {"p0": count, "p1": 0, "p2": 0, "p3": 0}  # to its port only
        got = _send(engine, ports, built, "p1", _to_stream(built, unknown), count)
        assert got == {"p0": count, "p1": 0, "p2": count, "p3": count}  # flooded
        assert dut.fdb_learned() == limit  # p1's own source found the table full too
        assert dut.interfaces[1] not in set(_learned_macs(built).values())

        dut.flush_fdb()
        assert dut.fdb_learned() == 0 and _learned_macs(built) == {}
        got = _send(engine, ports, built, "p1", _to_stream(built, known), count)
        assert got == {"p0": count, "p1": 0, "p2": count, "p3": count}  # forgotten: flooded
        assert dut.fdb_learned() == 1  # p1 learned this time, the table had room


@INTEGRATION
@NEEDS_ROOT
def test_without_a_limit_every_source_is_learned(engine: Any) -> None:
    sources = 200
    with build("netns-bridge", ports=4, learning=True, prefix=PREFIX) as built, \
            open_ports(engine, built) as ports:
        dut = built.dut
        assert dut is not None and dut.info["max_learned"] == "none"
        data = _call_in_netns(dut.namespace, partial(bridge_rtnl.bridge_data, dut.info["bridge"]))
        assert data.get(bridge_rtnl.IFLA_BR_FDB_MAX_LEARNED) in (None, bytes(4))  # no limit
        _send(engine, ports, built, "p0", _sources_stream(built, sources), sources)
        assert dut.fdb_learned() == sources == len(_learned_macs(built))
        dut.flush_fdb()
        assert dut.fdb_learned() == 0
