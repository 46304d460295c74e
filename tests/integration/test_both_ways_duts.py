"""Both directions and the user's own traffic through built-in DUTs on the real engine:
every RFC 2544 procedure loads both wires of netns-router at once and records each
direction; 802.1Q-tagged streams over many addresses, and IPv6 UDP and TCP, cross
netns-bridge both ways without a frame lost.

(QinQ is not sent through the kernel here: the generator's own veth counts a frame whose
inner tag its stack has no handler for as rx_dropped, after AF_PACKET received it, and the
trial reads as the generator's drop; docs/rfc2544.md, "The stream". The fake-engine sessions
and the unit tests cover QinQ.)"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    shutil.copy(Path(__file__).with_name("calm.py"), pytester.path)  # its busy-machine skip
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", "-rs",
                                         "--netload-report-dir=out", *args, timeout=600)


def test_every_procedure_loads_both_wires_of_the_router(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest
        from calm import excused_by_a_busy_ceiling
        from pytest_netload import assert_throughput

        LOAD = 10_000  # pps per direction: well below what netns-router forwards here

        @pytest.mark.rfc2544(frame_sizes=[128], trial_duration="1s", drain="200ms",
                             max_rate=f"{LOAD}pps", direction="both")
        def test_both_ways(rfc2544):
            tp = rfc2544.throughput()
            found = tp[128]
            with excused_by_a_busy_ceiling(found.trials, found.generator_ceiling_pps):
                t = found.passing_trial
                print("directions", [d.as_dict() for d in t.directions])
                assert [d.wire for d in t.directions] == ["p0->p1", "p1->p0"]
                for d in t.directions:  # each direction offered the whole load, and got it all
                    assert abs(d.tx_packets - LOAD) <= LOAD * 0.01 and d.lost == 0
                    assert d.latency is not None and d.latency.count > 0
                assert t.tx_packets == sum(d.tx_packets for d in t.directions)
                assert t.aggregate_offered_pps == 2 * LOAD
                assert_throughput(tp, at_least=f"{LOAD}pps")
            (lat,) = rfc2544.latency(throughput=tp, trials=2, duration="1s")
            assert all(len(x.directions) == 2 for x in lat.trials if x.valid)
            rfc2544.frame_loss(duration="1s")
            rfc2544.back_to_back(repetitions=2, burst="10ms")
            (rec,) = rfc2544.recovery(throughput=tp, overload="1s", relief="1s")
            assert all(len(x.directions) == 2 for x in rec.trials)
            (reset,) = rfc2544.reset(lambda: None, at="500ms", duration="2s", load=LOAD / 2)
            assert reset.recovered and len(reset.trials[0].directions) == 2
    """)
    result = _run(pytester, "--netload-topology=netns-router")
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)
    from pytest_netload.reports.load import load

    doc = load(pytester.path / "out" / "results.json")  # valid against the shipped schema
    records = {m["kind"]: m for t in doc["tests"] for m in t["measurements"]}
    for kind in ("throughput", "latency_rfc2544", "frame_loss", "back_to_back", "recovery",
                 "reset"):
        assert records[kind]["traffic"]["direction"] == "both", kind
        assert records[kind]["traffic"]["wires"] == ["p0->p1", "p1->p0"], kind
    trial = records["throughput"]["trials"][0]
    assert [d["wire"] for d in trial["directions"]] == ["p0->p1", "p1->p0"]
    assert all(d["rx_packets"] == d["tx_packets"] for d in trial["directions"])


def test_tagged_streams_over_many_addresses_cross_the_bridge_both_ways(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest
        from calm import excused_by_a_busy_ceiling
        from pytest_netload import Eth, IPv4, UDP, Vlan, field, Stream, tcp, udp

        LOAD = 8_000

        def tagged(netload_topology):
            p0, p1 = netload_topology.ports
            t = (Eth(dst=p0.peer_mac, src=p0.mac) / Vlan(300) /
                 IPv4(src=p0.ip, dst=p1.ip) / UDP(sport=7, dport=9)).build()
            return Stream(t, fields=[field(t, "ip.src", "inc", min=p0.ip, max="198.18.0.250")])

        @pytest.mark.rfc2544(frame_sizes=[128], trial_duration="1s", drain="200ms",
                             max_rate=f"{LOAD}pps", direction="both")
        def test_tagged_many_addresses(rfc2544, netload_topology):
            stream = [(udp(vlan=200, src_ips=64, dst_ips=64, flows=32), 2),
                      (tcp(vlan=100, dst_ips=16), 1), (tagged(netload_topology), 1)]
            found = rfc2544.throughput(stream=stream)[128]
            with excused_by_a_busy_ceiling(found.trials, found.generator_ceiling_pps):
                t = found.passing_trial
                print("directions", [(d.wire, d.streams, d.tx_packets, d.rx_packets)
                                     for d in t.directions])
                assert found.throughput_pps == LOAD and t.lost == 0
                assert [len(d.streams) for d in t.directions] == [3, 3]
                assert all(abs(d.tx_packets - LOAD) <= LOAD * 0.01 for d in t.directions)
    """)
    result = _run(pytester, "--netload-topology=netns-bridge")
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)


def test_ipv6_udp_and_tcp_cross_the_bridge_both_ways(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        from dataclasses import replace

        import pytest

        @pytest.fixture(scope="session")
        def netload_topology(netload_topology):
            # the bridge forwards by MAC: give its ports IPv6 addresses instead
            ports = tuple(replace(p, ip=f"2001:db8::{i + 2}")
                          for i, p in enumerate(netload_topology.ports))
            return replace(netload_topology, ports=ports)
    """)
    pytester.makepyfile("""
        import pytest
        from calm import excused_by_a_busy_ceiling
        from pytest_netload import tcp, udp
        from pytest_netload.traffic.mix import as_mix

        LOAD = 8_000

        @pytest.mark.rfc2544(frame_sizes=[128, 512], trial_duration="1s", drain="200ms",
                             max_rate=f"{LOAD}pps", direction="both",
                             stream=[udp(dst_ips=32), tcp(flows=8)])
        def test_ipv6(rfc2544, netload_topology):
            flow = netload_topology.flows()[0]
            made = as_mix([udp(), tcp()]).streams_for(flow, 128)
            assert [s.template.l3_proto for s, _ in made] == [6, 6]
            for found in rfc2544.throughput():
                with excused_by_a_busy_ceiling(found.trials, found.generator_ceiling_pps):
                    t = found.passing_trial
                    assert found.throughput_pps == LOAD and t.lost == 0
                    assert [d.wire for d in t.directions] == ["p0->p1", "p1->p0"]
    """)
    result = _run(pytester, "--netload-topology=netns-bridge")
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)
