"""The engine on the built-in veth topologies, with both kernel backends (af_packet, af_xdp).

loopback: two generator ports wired to each other; netns-router: the Linux kernel forwards
between them. Counts are exact: zero loss without a drop rule, and with an nftables drop rule
exactly the packets the rule's own counter dropped.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from pytest_netload.engine.client import Engine, LoadedStream, Port
from pytest_netload.measure.results import RunResult, StreamResult
from pytest_netload.topology.builtin import BuiltTopology, build
from pytest_netload.topology.nft import drop_every_nth, drop_random
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        os.geteuid() != 0,
        reason="the topologies create namespaces and veths and the engine runs DPDK: needs root",
    ),
]

BACKENDS = ("af_packet", "af_xdp")
SPORT = {"p0": 4000, "p1": 4001}  # one UDP source port per direction, for nft matches
DEFAULT_IPS = ("198.18.0.2", "198.19.0.2")  # loopback ports have no addresses of their own


def leftovers(tag: str) -> list[str]:
    """Interfaces and namespaces whose name starts with ``tag``."""
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                           check=True).stdout
    spaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                            check=True).stdout
    names = [line.split(":")[1].strip().split("@")[0] for line in links.splitlines()]
    names += [line.split()[0] for line in spaces.splitlines() if line.strip()]
    return [n for n in names if n.startswith(tag)]


@contextmanager
def topology(name: str, backend: str) -> Iterator[BuiltTopology]:
    """Builds a topology; afterwards not one interface or namespace of it may remain."""
    static = {} if name == "loopback" else {"neighbours": "static"}  # exact counts: no ARP
    with build(name, backend=backend, **static) as built:
        tag = built.topology.ports[0].iface[:8]  # type: ignore[index]
        assert leftovers(tag)
        yield built
    assert leftovers(tag) == []


class Generator:
    """The engine's ports on a topology and one 64-byte UDP stream per wire."""

    def __init__(self, engine: Engine, built: BuiltTopology) -> None:
        self.engine = engine
        self.ports: dict[str, Port] = {}
        for spec in built.topology.ports:
            assert spec.device is not None
            self.ports[spec.name] = engine.port(spec.device)
        self.streams: dict[str, LoadedStream] = {}
        for i, flow in enumerate(built.topology.flows()):
            name = f"{flow.tx.name}->{flow.rx.name}"
            template = (
                Eth(dst=flow.dst_mac, src=flow.src_mac)
                / IPv4(src=flow.src_ip or DEFAULT_IPS[i], dst=flow.dst_ip or DEFAULT_IPS[1 - i])
                / UDP(sport=SPORT[flow.tx.name], dport=9)
            ).build()
            self.streams[name] = engine.load(self.ports[flow.tx.name],
                                             Stream(template, size=64, name=name))

    def run(self, count: int) -> RunResult:
        return self.engine.run(list(self.streams.values()), list(self.ports.values()),
                               count=count)

    def close(self) -> None:
        for port in self.ports.values():
            port.close()


@contextmanager
def generator(engine: Engine, built: BuiltTopology) -> Iterator[Generator]:
    gen = Generator(engine, built)
    try:
        yield gen
    finally:
        gen.close()  # before the interfaces go away


def assert_no_loss(s: StreamResult, count: int) -> None:
    assert (s.tx_packets, s.rx_packets, s.tx_unsent) == (count, count, 0), s
    assert (s.lost, s.duplicates, s.reordered) == (0, 0, 0), s
    assert s.tx_bytes == s.rx_bytes == 60 * count, s


def assert_exact_directions(r: RunResult, gen: Generator, count: int) -> None:
    for s in r.streams:
        assert_no_loss(s, count)
    assert r.foreign == 0
    # Each RX port got exactly the other direction's frames, no more.
    assert [int(n) for n in r.rx_queues["packets"]] == [count] * len(gen.ports)
    for port in gen.ports.values():
        # Not oerrors: af_xdp counts every TX offer its full ring refused there (retried, not lost).
        assert r.ports[port.device]["opackets"] == count


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_loopback_both_directions_exact(engine: Engine, backend: str) -> None:
    with topology("loopback", backend) as built, generator(engine, built) as gen:
        r = gen.run(100_000)
        assert_exact_directions(r, gen, 100_000)


def test_loopback_loss_is_visible_in_generator_counters(engine: Engine, backend: str) -> None:
    """tx = rx + counted drops: with no DUT, a lost frame is the generator's own, and must show.

    Bursts of 128 (the engine's maximum) press one worker's TX against its own RX polling.
    """
    with topology("loopback", backend) as built, generator(engine, built) as gen:
        r = engine.run(list(gen.streams.values()), list(gen.ports.values()), count=50_000,
                       burst=128)
    counted = r.generator_drops
    assert counted == sum(r.ports[p.device][k] for p in gen.ports.values()
                          for k in ("imissed", "ierrors", "rx_nombuf", "iface_rx_dropped",
                                    "iface_ring_drops"))
    assert all(s.tx_packets == 50_000 for s in r.streams)
    assert (r.lost, r.duplicates, r.reordered, r.foreign) == (counted, 0, 0, 0), (
        f"{r.lost} frames lost on a loopback, {counted} counted by the generator's ports: "
        f"{r.ports}")


def test_router_forwards_both_directions_exact(engine: Engine, backend: str) -> None:
    with topology("netns-router", backend) as built, generator(engine, built) as gen:
        dut = built.dut
        assert dut is not None
        namespace = dut.namespace
        before = dut.counters()
        r = gen.run(100_000)
        after = dut.counters()
        assert_exact_directions(r, gen, 100_000)
        for ifname in dut.interfaces:  # each DUT port took in one direction, sent out the other
            delta = {k: after[ifname][k] - before[ifname][k] for k in after[ifname]}
            assert (delta["rx_packets"], delta["tx_packets"]) == (100_000, 100_000), delta
            assert (delta["rx_dropped"], delta["tx_dropped"]) == (0, 0), delta
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    assert namespace not in netns.stdout


def test_router_drop_every_nth_is_exact(engine: Engine, backend: str) -> None:
    with topology("netns-router", backend) as built, generator(engine, built) as gen:
        assert built.dut is not None
        with drop_every_nth(built.dut, 10, match=f"udp sport {SPORT['p0']}") as rule:
            r = gen.run(10_000)
            dropped = rule.dropped()
        assert dropped == 1_000
        hit, spared = r["p0->p1"], r["p1->p0"]
        assert (hit.tx_packets, hit.rx_packets, hit.lost) == (10_000, 9_000, 1_000)
        assert (hit.duplicates, hit.reordered) == (0, 0)
        assert_no_loss(spared, 10_000)
        assert r.foreign == 0


def test_router_drop_random_matches_the_rule_counter(engine: Engine, backend: str) -> None:
    with topology("netns-router", backend) as built, generator(engine, built) as gen:
        assert built.dut is not None
        with drop_random(built.dut, 0.2, match=f"udp sport {SPORT['p0']}") as rule:
            r = gen.run(50_000)
            dropped = rule.dropped()
        hit = r["p0->p1"]
        assert hit.tx_packets == 50_000
        assert hit.lost == dropped
        assert hit.rx_packets + dropped == 50_000
        assert 0.17 < hit.loss_ratio < 0.23  # binomial sd 0.0018: a margin of 16 sd
        assert (hit.duplicates, hit.reordered) == (0, 0)
        assert_no_loss(r["p1->p0"], 50_000)
        assert r.foreign == 0
