"""The built-in validation DUTs with known behaviour: netns-shaped, netns-lossy, netns-bridge.

Parameter checks come before anything is built (root included), so their tests run anywhere.
The DUTs themselves need root and the engine (CI runs them as root; never skipped there):
- netns-shaped: p0 -> p1 carries shaper_capacity_pps(rate, size) within 2 %, frames beyond
  it are dropped by the qdisc (its drop counter equals the engine's loss), p1 -> p0 is free;
- netns-lossy: the loss is binomial with the configured ratio, and the nftables rule's own
  counter equals the engine's loss exactly;
- netns-bridge: both directions cross the bridge without a loss, a flood or a stray frame.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
from scipy import stats  # type: ignore[import-untyped]

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.topology import builtin
from pytest_netload.topology.builtin import (
    BUILTIN,
    BuiltTopology,
    build,
    netns_lossy,
    netns_shaped,
    shaper_capacity_pps,
    sweep_stale,
)

from calm import calm_run
from netutil import open_ports, present

INTEGRATION = pytest.mark.integration
NEEDS_ROOT = pytest.mark.skipif(
    os.geteuid() != 0,
    reason="the DUTs create namespaces and veths and the engine runs DPDK: needs root",
)
REPO = Path(__file__).resolve().parents[2]
NEW_DUTS = ("netns-shaped", "netns-policed", "netns-lossy", "netns-bridge")
# The shaper rate the capacity is measured at. A netns shaper costs the generator's CPU
# per frame (its sendto runs the DUT's path, and TBF/HTB re-arm their timer, a VM exit
# each): into one, a 2-vCPU VM sends 64 B frames at 42-45 kpps at most. At 10 Mbit/s the
# 1.25x overload (26 kpps) stays well below that, and the generator keeps its schedule.
RATE_BPS = 10_000_000
OVERLOAD = 1.25  # offered load / capacity in the shaper tests


F = TypeVar("F", bound=Callable[..., Any])


def root_test(fn: F) -> F:
    """The marks every test that builds a DUT carries."""
    return cast(F, INTEGRATION(NEEDS_ROOT(fn)))


# ---------------------------------------------------------- parameters (no root)


BAD_PARAMS = {
    "rate below range": ("netns-shaped", {"rate_bps": 7_999},
                         r"rate_bps = 7999 must be an integer from 8000 to 10000000000"),
    "rate above range": ("netns-shaped", {"rate_bps": 10_000_000_001},
                         r"rate_bps = 10000000001 must be an integer from 8000 to 10000000000"),
    "rate as a float": ("netns-shaped", {"rate_bps": 2e7}, r"rate_bps = 20000000\.0 must be"),
    "rate as a string": ("netns-shaped", {"rate_bps": "20Mbit"}, r"rate_bps = '20Mbit' must be"),
    "rate as a bool": ("netns-shaped", {"rate_bps": True}, r"rate_bps = True must be"),
    "unknown qdisc": ("netns-shaped", {"qdisc": "fq_codel"},
                      r"qdisc = 'fq_codel'.*\['tbf', 'htb'\]"),
    "burst below a frame": ("netns-shaped", {"rate_bps": 20_000_000, "burst_bytes": 1_000},
                            r"burst_bytes = 1000 must be an integer from 1514 to 2500000"),
    "burst over a second": ("netns-shaped", {"rate_bps": 20_000_000, "burst_bytes": 2_500_001},
                            r"burst_bytes = 2500001 must be an integer from 1514 to 2500000"),
    "limit below a frame": ("netns-shaped", {"limit_bytes": 1_513},
                            r"limit_bytes = 1513 must be an integer from 1514 to 1073741824"),
    "negative loss": ("netns-lossy", {"loss_ratio": -0.1},
                      r"loss_ratio = -0\.1 must be a number from 0 to 1"),
    "loss over 1": ("netns-lossy", {"loss_ratio": 1.5}, r"loss_ratio = 1\.5 must be"),
    "loss NaN": ("netns-lossy", {"loss_ratio": math.nan}, r"loss_ratio = nan must be"),
    "loss as a string": ("netns-lossy", {"loss_ratio": "1%"}, r"loss_ratio = '1%' must be"),
    "loss as a bool": ("netns-lossy", {"loss_ratio": True}, r"loss_ratio = True must be"),
    "loss finer than the rule": ("netns-lossy", {"loss_ratio": 1.5e-7},
                                 r"loss_ratio = 1\.5e-07 is finer .* 1/1000000.* e\.g\. 0"),
    "unknown parameter": ("netns-router", {"rate_bps": RATE_BPS},
                          (r"'netns-router' takes `backend`='af_packet', `prefix`='nl', "
                           r"`family`='ipv4', `neighbours`='arp', `ecmp`=None, `hash`='l4', "
                           r"`remark_dscp`=None, `ttl_set`=None \(the defaults\), not "
                           r"\['rate_bps'\]$")),
    "misspelt parameter": ("netns-shaped", {"rate": "20Mbit/s"},
                           (r"takes `backend`='af_packet', `rate_bps`=50000000, `qdisc`='tbf', "
                            r"`burst_bytes`=None, `limit_bytes`=None, `prefix`='nl', "
                            r"`neighbours`='arp' \(the defaults\), not \['rate'\]")),
    "loss on the bridge": ("netns-bridge", {"loss_ratio": 0.1, "rate_bps": 1},
                           r"'netns-bridge' takes .*, not \['loss_ratio', 'rate_bps'\]"),
    "bad backend": ("netns-bridge", {"backend": "net_pcap"},
                    r"backend = 'net_pcap'.*\['af_packet', 'af_xdp'\]"),
    "bad prefix": ("netns-lossy", {"prefix": "Bad-Prefix"}, r"prefix = 'Bad-Prefix' must be"),
    "bad neighbours": ("netns-router", {"neighbours": "dynamic"},
                       r"neighbours = 'dynamic': give one of \['arp', 'static'\]"),
    "bad neighbours (shaped)": ("netns-shaped", {"neighbours": None},
                                r"neighbours = None: give one of"),
    "one next hop": ("netns-router", {"ecmp": 1},
                     r"ecmp = 1 must be a whole number of next hops from 2 to 8"),
    "nine next hops": ("netns-router", {"ecmp": 9}, r"ecmp = 9 must be .* from 2 to 8"),
    "next hops as a string": ("netns-router", {"ecmp": "3"}, r"ecmp = '3' must be"),
    "unknown hash": ("netns-router", {"ecmp": 2, "hash": "l5"},
                     r"hash = 'l5': give one of \['l3', 'l4'\]"),
    "hash without ecmp": ("netns-router", {"hash": "l3"}, r"give ecmp=N too"),
    "rewrites on an ECMP router": ("netns-router", {"ecmp": 2, "ttl_set": 64},
                                   r"remark_dscp and ttl_set rewrite the plain router's"),
    "bad family": ("netns-router", {"family": "ipv5"},
                   r"family = 'ipv5': give one of \['ipv4', 'ipv6'\]"),
}


@pytest.mark.parametrize(("name", "params", "message"), BAD_PARAMS.values(), ids=BAD_PARAMS)
def test_bad_parameters_are_refused_before_root(
    monkeypatch: pytest.MonkeyPatch, name: str, params: dict[str, Any], message: str
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # as an unprivileged user
    with pytest.raises(NetloadConfigError, match=message):
        build(name, **params)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("netns-shaped", {"rate_bps": 8_000, "qdisc": "htb", "burst_bytes": 3_028,
                          "limit_bytes": 1_514}),
        ("netns-lossy", {"loss_ratio": 0}),
        ("netns-lossy", {"loss_ratio": 1.0}),
        ("netns-bridge", {"backend": "af_xdp", "prefix": "t"}),
        ("netns-router", {"ecmp": 8, "hash": "l3", "family": "ipv6"}),
    ],
)
def test_good_parameters_reach_the_root_check(
    monkeypatch: pytest.MonkeyPatch, name: str, params: dict[str, Any]
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(NetloadEnvironmentError, match="needs root"):
        build(name, **params)


def test_factories_validate_without_building() -> None:
    with pytest.raises(NetloadConfigError, match="rate_bps = 0 must be"):
        netns_shaped(rate_bps=0)
    with pytest.raises(NetloadConfigError, match="loss_ratio = 2 must be"):
        netns_lossy(loss_ratio=2)


def test_builtin_names() -> None:
    assert set(NEW_DUTS) | {"loopback", "netns-router", "dpdk-testpmd", "ovs-dpdk"} == \
        set(BUILTIN)
    with pytest.raises(NetloadConfigError, match=r"'netns-shaper' is not a built-in.*netns-shaped"):
        build("netns-shaper")


def test_shaper_capacity_counts_frames_without_fcs() -> None:
    assert shaper_capacity_pps(RATE_BPS, 64) == pytest.approx(1_250_000 / 60, rel=1e-12)
    assert shaper_capacity_pps(RATE_BPS, 512) == pytest.approx(1_250_000 / 508, rel=1e-12)
    assert shaper_capacity_pps(8_000, 1_518) == pytest.approx(1_000 / 1_514, rel=1e-12)
    # tc takes whole bytes per second, rounded down
    assert shaper_capacity_pps(RATE_BPS + 7, 64) == shaper_capacity_pps(RATE_BPS, 64)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((RATE_BPS, 63), r"frame_size_with_fcs = 63 must be an integer from 64 to 1518"),
        ((RATE_BPS, 1_519), r"frame_size_with_fcs = 1519 must be .* 1500-byte MTU"),
        ((RATE_BPS, 64.0), r"frame_size_with_fcs = 64\.0 must be"),
        ((0, 64), r"rate_bps = 0 must be an integer from 8000"),
    ],
)
def test_shaper_capacity_refuses_bad_input(args: tuple[Any, Any], message: str) -> None:
    with pytest.raises(NetloadConfigError, match=message):
        shaper_capacity_pps(*args)


# ----------------------------------------------------------------------- helpers


def _names(built: BuiltTopology) -> set[str]:
    names = {p.iface for p in built.topology.ports if p.iface}
    assert built.topology.namespace is not None
    return names | {built.topology.namespace}


def _json(built: BuiltTopology, cmd: list[str]) -> Any:
    assert built.dut is not None
    return json.loads(built.dut.run(cmd).stdout)


def _root_qdisc(built: BuiltTopology, iface: str) -> dict[str, Any]:
    qdiscs = _json(built, ["tc", "-s", "-j", "qdisc", "show", "dev", iface])
    (root,) = [q for q in qdiscs if q.get("root")]
    return dict(root)




def _flow(built: BuiltTopology, tx: str) -> Any:
    return next(f for f in built.topology.flows() if f.tx.name == tx)


# ------------------------------------------------------------------ netns-shaped


@root_test
@pytest.mark.parametrize("qdisc", ["tbf", "htb"])
def test_shaped_built_and_removed(qdisc: str) -> None:
    with build("netns-shaped", neighbours="static", rate_bps=RATE_BPS, qdisc=qdisc) as built:
        dut = built.dut
        assert dut is not None
        d0, d1 = dut.interfaces
        assert dict(built.topology.dut) == dict(dut.info)
        assert {k: dut.info[k] for k in ("name", "namespace", "shaper", "rate_bps",
                                         "burst_bytes", "limit_bytes", "shaped_wire",
                                         "shaped_interface", "accounting")} == {
            "name": "netns-shaped", "namespace": dut.namespace, "shaper": qdisc,
            "rate_bps": "10000000", "burst_bytes": "5000", "limit_bytes": "30000",
            "shaped_wire": "p0->p1", "shaped_interface": d1, "accounting": "l2-nofcs",
        }
        p0, p1 = built.topology.port("p0"), built.topology.port("p1")
        assert (p0.ip, p0.peer_ip, p1.ip, p1.peer_ip) == (
            "198.18.0.2", "198.18.0.1", "198.19.0.2", "198.19.0.1")
        assert _root_qdisc(built, d1)["kind"] == qdisc
        assert _root_qdisc(built, d0)["kind"] == "noqueue"  # p1 -> p0: not shaped
        if qdisc == "tbf":
            assert _root_qdisc(built, d1)["options"]["rate"] == RATE_BPS // 8  # bytes/s
        else:
            # tc prints no JSON for HTB classes
            out = dut.run(["tc", "class", "show", "dev", d1]).stdout
            assert "rate 10Mbit ceil 10Mbit burst 5000b cburst 5000b" in out, out
            leaf = [q for q in _json(built, ["tc", "-j", "qdisc", "show", "dev", d1])
                    if q["kind"] == "bfifo"]
            assert [q["options"]["limit"] for q in leaf] == [30_000], leaf
        names = _names(built)
        assert present(names) == names
    assert present(names) == set()


@root_test
@pytest.mark.parametrize("qdisc", ["tbf", "htb"])
@pytest.mark.parametrize("size", [64, 512])
def test_shaper_capacity_is_measured_within_2_percent(
    engine: Any, qdisc: str, size: int
) -> None:
    """CBR at 1.25x the capacity for 2 s: what arrives is the shaper's capacity.

    The qdisc counts the frame without FCS; its own counters say so (bytes / packets =
    size - 4), and every frame that did not arrive is one the qdisc dropped.
    """
    from pytest_netload import RateController
    from pytest_netload.traffic.streams import flow_stream

    capacity = shaper_capacity_pps(RATE_BPS, size)
    with build("netns-shaped", neighbours="static", rate_bps=RATE_BPS, qdisc=qdisc) as built, \
            open_ports(engine, built) as ports:
        d1 = built.dut.interfaces[1]  # type: ignore[union-attr]
        rc = RateController(engine, ports["p0"], rx=[ports["p1"]])

        def once() -> tuple[Any, dict[str, int], dict[str, int]]:
            before = _root_qdisc(built, d1)
            # a 0.5 s drain: on a busy host a frame the qdisc sent may take a while to arrive
            r = rc.run(flow_stream(_flow(built, "p0"), size=size),
                       f"{OVERLOAD * capacity:.0f}pps", duration="2s", drain="0.5s")
            return r, before, _root_qdisc(built, d1)

        r, before, after = calm_run(once, result_of=lambda x: x[0])
    s = r.streams[0].result
    error = s.rx_pps / capacity - 1
    note = (f"{qdisc} {size} B: capacity {capacity:,.1f} pps, received {s.rx_pps:,.1f} pps "
            f"({error:+.3%}), sent {s.tx_pps:,.1f} pps, lost {s.lost}")
    print(note)
    assert s.tx_pps > 1.1 * capacity, note  # the offered load really was above the capacity
    assert abs(error) < 0.02, note
    sent = after["packets"] - before["packets"]
    # every frame the qdisc sent arrived, or the generator's own RX path counted its drop
    assert sent == s.rx_packets + r.run.generator_drops, (after, r.run.ports, note)
    assert after["bytes"] - before["bytes"] == sent * (size - 4), after  # no FCS counted
    assert after["drops"] - before["drops"] == s.lost > 0, (after, note)
    assert (s.duplicates, s.reordered, r.run.foreign) == (0, 0, 0), note


@root_test
def test_shaper_leaves_p1_to_p0_alone(engine: Any) -> None:
    from pytest_netload import RateController
    from pytest_netload.traffic.streams import flow_stream

    capacity = shaper_capacity_pps(RATE_BPS, 64)
    with build("netns-shaped", neighbours="static", rate_bps=RATE_BPS) as built, \
            open_ports(engine, built) as ports:
        rc = RateController(engine, ports["p1"], rx=[ports["p0"]])
        r = rc.run(flow_stream(_flow(built, "p1"), size=64), f"{OVERLOAD * capacity:.0f}pps",
                   duration="0.5s")
    s = r.streams[0].result
    assert (s.lost, s.duplicates, s.reordered) == (0, 0, 0), s
    assert s.rx_pps > 1.2 * capacity, s


# ------------------------------------------------------------------- netns-lossy


@root_test
def test_lossy_metadata_and_rule() -> None:
    with build("netns-lossy", neighbours="static", loss_ratio=0.25) as built:
        dut = built.dut
        assert dut is not None and dut.loss_rule is not None
        d0, d1 = dut.interfaces
        assert dut.loss_rule.rule == (
            f"iifname {d0} oifname {d1} numgen random mod 1000000 < 250000 counter drop")
        assert {k: dut.info[k] for k in ("name", "loss_ratio", "loss_wire", "loss_rule")} == {
            "name": "netns-lossy", "loss_ratio": "0.25", "loss_wire": "p0->p1",
            "loss_rule": dut.loss_rule.rule}
        assert dict(built.topology.dut) == dict(dut.info)
        assert dut.loss_rule.dropped() == 0
        names = _names(built)
    assert present(names) == set()


@root_test
def test_lossy_loss_is_binomial_and_counted_by_the_rule(engine: Any) -> None:
    """200k frames p0 -> p1 at 100 kpps (paced, so nothing but the rule can drop one)."""
    from pytest_netload import RateController
    from pytest_netload.traffic.streams import flow_stream

    count, ratio = 200_000, 0.01
    with build("netns-lossy", neighbours="static") as built, open_ports(engine, built) as ports:
        rule = built.dut.loss_rule  # type: ignore[union-attr]
        assert rule is not None and built.topology.dut["loss_ratio"] == str(ratio)
        forward = RateController(engine, ports["p0"], rx=[ports["p1"]])
        hit = forward.run(flow_stream(_flow(built, "p0"), size=64), "100kpps", count=count)
        dropped = rule.dropped()
        back = RateController(engine, ports["p1"], rx=[ports["p0"]])
        spared = back.run(flow_stream(_flow(built, "p1"), size=64), "100kpps", count=50_000)
        assert rule.dropped() == dropped  # p1 -> p0 does not even reach the rule
    s = hit.streams[0].result
    # the number lost is binomial(count, ratio): its central 99.9 % interval
    low, high = stats.binom.interval(0.999, count, ratio)
    assert low <= s.lost <= high, (s.lost, low, high)
    assert s.lost == dropped, (s.lost, dropped, hit.run.ports)
    assert (s.tx_packets, s.rx_packets + dropped, s.duplicates, s.reordered) == (
        count, count, 0, 0), s
    assert (hit.run.foreign, hit.run.generator_drops) == (0, 0), hit.run.ports
    b = spared.streams[0].result
    assert (b.tx_packets, b.rx_packets, b.lost) == (50_000, 50_000, 0), b


# ------------------------------------------------------------------ netns-bridge


def _bridge_fdb(built: BuiltTopology) -> dict[str, tuple[str, str]]:
    entries = _json(built, ["bridge", "-j", "fdb", "show", "br", built.topology.dut["bridge"]])
    return {e["mac"]: (e["ifname"], e.get("state", "")) for e in entries
            if e.get("master") and e["ifname"] != built.topology.dut["bridge"]}


def _bridge_rx_packets(built: BuiltTopology) -> int:
    (link,) = _json(built, ["ip", "-s", "-j", "link", "show", "dev",
                            built.topology.dut["bridge"]])
    return int(link["stats64"]["rx"]["packets"])


def _kernel_rx_packets(names: list[str | None]) -> dict[str | None, int]:
    """rx_packets of interfaces in this namespace, as the kernel counts them."""
    import pyroute2  # type: ignore[import-untyped,import-not-found,unused-ignore]

    with pyroute2.IPRoute() as ipr:
        return {name: int(ipr.get_links(ifname=name)[0].get("IFLA_STATS64")["rx_packets"])
                for name in names}


@root_test
def test_bridge_built_and_removed() -> None:
    with build("netns-bridge") as built:
        dut, topo = built.dut, built.topology
        assert dut is not None
        d0, d1 = dut.interfaces
        p0, p1 = topo.port("p0"), topo.port("p1")
        assert (p0.ip, p1.ip, p0.peer_ip, p1.peer_ip) == ("198.18.0.2", "198.18.0.3", None, None)
        assert (p0.peer_mac, p1.peer_mac) == (p1.mac, p0.mac)
        assert [(f.dst_mac, f.dst_ip) for f in topo.flows()] == [
            (p1.mac, p1.ip), (p0.mac, p0.ip)]
        assert topo.dut["name"] == "netns-bridge" and topo.dut["namespace"] == dut.namespace
        fdb = _bridge_fdb(built)
        assert fdb[p0.mac] == (d0, "static") and fdb[p1.mac] == (d1, "static")
        (details,) = _json(built, ["ip", "-d", "-j", "link", "show", "dev", topo.dut["bridge"]])
        info = details["linkinfo"]["info_data"]
        assert (info["stp_state"], info["ageing_time"], info["mcast_snooping"]) == (0, 30000, 0)
        ports = {p["ifname"]: p for p in _json(built, ["bridge", "-d", "-j", "link", "show"])}
        for name in (d0, d1):
            assert (ports[name]["learning"], ports[name]["flood"]) == (False, False)
            assert ports[name]["state"] == "forwarding"
        assert dut.run(["sysctl", "-n", "net.ipv4.ip_forward"]).stdout.strip() == "0"
        addrs = _json(built, ["ip", "-4", "-j", "addr", "show"])
        assert [a for a in addrs if a.get("addr_info") and a["ifname"] != "lo"] == []
        names = _names(built)
    assert present(names) == set()


@root_test
def test_bridge_forwards_both_directions_exact(engine: Any) -> None:
    from pytest_netload.traffic.streams import flow_stream

    count = 100_000
    with build("netns-bridge") as built, open_ports(engine, built) as ports:
        dut = built.dut
        assert dut is not None
        streams = [engine.load(ports[f.tx.name], flow_stream(f, size=64, name=f.tx.name))
                   for f in built.topology.flows()]
        gens = [p.iface for p in built.topology.ports]
        before, bridge_before = dut.counters(), _bridge_rx_packets(built)
        gens_before = _kernel_rx_packets(gens)
        r = engine.run(streams, list(ports.values()), count=count)
        after, bridge_after = dut.counters(), _bridge_rx_packets(built)
        gens_after = _kernel_rx_packets(gens)
    for s in r.streams:
        assert (s.tx_packets, s.rx_packets, s.lost, s.duplicates, s.reordered) == (
            count, count, 0, 0, 0), s
        assert s.rx_bytes == 60 * count, s  # frames cross the bridge unchanged
    assert r.foreign == 0
    # each generator interface got the other's frames and nothing else (no flooding)
    assert {n: gens_after[n] - gens_before[n] for n in gens} == dict.fromkeys(gens, count)
    for name in dut.interfaces:
        delta = {k: after[name][k] - before[name][k] for k in after[name]}
        assert (delta["rx_packets"], delta["tx_packets"]) == (count, count), (name, delta)
        assert (delta["rx_dropped"], delta["tx_dropped"]) == (0, 0), (name, delta)
    assert bridge_after == bridge_before  # forwarded, never delivered to the bridge itself


# ------------------------------------------------------- teardown and the sweep


@root_test
@pytest.mark.parametrize("name", NEW_DUTS)
def test_removed_after_an_exception(name: str) -> None:
    with pytest.raises(RuntimeError, match="boom"), build(name) as built:
        names = _names(built)
        assert present(names) == names
        raise RuntimeError("boom")
    assert present(names) == set()


def _child(name: str, body: str) -> subprocess.Popen[str]:
    code = textwrap.dedent(
        f"""
        import os, sys, time
        from pytest_netload.topology.builtin import build
        cm = build({name!r})  # kept: a collected generator context would clean up
        b = cm.__enter__()
        print(b.topology.namespace, *(p.iface for p in b.topology.ports), flush=True)
        """
    ) + body
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _child_names(proc: subprocess.Popen[str]) -> set[str]:
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline().split()
    assert len(line) == 3, proc.stderr.read()
    return set(line)


@root_test
@pytest.mark.parametrize("name", NEW_DUTS)
def test_sigterm_removes(name: str) -> None:
    proc = _child(name, "time.sleep(30)\n")
    names = _child_names(proc)
    assert present(names) == names
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == -signal.SIGTERM
    assert present(names) == set()


@root_test
@pytest.mark.parametrize("name", NEW_DUTS)
def test_sweep_removes_what_a_killed_process_left(name: str) -> None:
    proc = _child(name, "os.kill(os.getpid(), 9)\n")  # SIGKILL: no atexit, no handler
    names = _child_names(proc)
    assert proc.wait(timeout=20) == -signal.SIGKILL
    assert present(names) == names
    assert names <= set(sweep_stale())
    assert present(names) == set()


def test_module_exports() -> None:
    from pytest_netload import topology

    for attr in ("netns_shaped", "netns_lossy", "netns_bridge", "shaper_capacity_pps"):
        assert getattr(topology, attr) is getattr(builtin, attr)
        assert attr in topology.__all__
