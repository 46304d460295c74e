"""Sessions on the fake engine with the RFC 2544 marker's `direction` and `stream`: every
procedure loads both wires and records each direction, the user's streams (udp, tcp, a
template, weighted) cross a VLAN-tagged or IPv6 topology, and what does not fit the
topology fails before any traffic, naming the port or the wires."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pytest_netload.reports.html  # noqa: F401  (matplotlib before any in-process run)
from pytest_netload.reports.load import load

pytest_plugins = ["pytester"]

# report.html imports matplotlib; imported first inside an in-process run it leaves
# sys.modules with that run, and the next run's import fails (test_ndr_pdr_sessions.py).

FAKE = "--netload-engine=fake:capacity_pps=60000,delay_s=50e-6,buffer_frames=1000"

TOPOLOGY = """
[topology]
name = "lab-both"

[[ports]]
name = "p0"
device = "net_fake0"
mac = "02:00:00:00:00:01"
ip = "{ip0}"
peer_mac = "02:00:00:00:01:01"
peer_ip = "{gw0}"
{vlan0}

[[ports]]
name = "p1"
device = "net_fake1"
mac = "02:00:00:00:00:02"
ip = "{ip1}"
peer_mac = "02:00:00:00:01:02"
peer_ip = "{gw1}"

[[wires]]
tx = "p0"
rx = "p1"

[[wires]]
tx = "p1"
rx = "p0"
"""


def _topology(pytester: pytest.Pytester, *, v6: bool = False, vlan: int | None = None) -> str:
    ips = (("2001:db8::2", "2001:db8::1", "2001:db8:1::2", "2001:db8:1::1") if v6 else
           ("198.18.0.2", "198.18.0.1", "198.19.0.2", "198.19.0.1"))
    text = TOPOLOGY.format(ip0=ips[0], gw0=ips[1], ip1=ips[2], gw1=ips[3],
                           vlan0=f"vlan = {vlan}" if vlan else "")
    path = pytester.path / "lab.toml"
    path.write_text(text)
    return f"--netload-topology={path}"


def _measurements(pytester: pytest.Pytester) -> dict[str, list[dict[str, Any]]]:
    path = pytester.path / "netload-results" / "results.json"
    doc = load(path)  # valid against the shipped schema
    assert json.loads(Path(path).read_text()) == doc
    return {t["nodeid"].split("::")[-1]: t["measurements"] for t in doc["tests"]}


def test_every_procedure_loads_both_wires_and_records_each(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_both="""
        import pytest
        from pytest_netload import assert_throughput, tcp, udp

        @pytest.mark.rfc2544(frame_sizes=[128], trial_duration="2s", direction="both",
                             stream=[(udp(flows=8), 3), (tcp(), 1)])
        def test_all(rfc2544):
            tp = rfc2544.throughput()
            t = tp[128].passing_trial
            assert [d.wire for d in t.directions] == ["p0->p1", "p1->p0"]
            assert all(d.tx_packets == t.tx_packets // 2 for d in t.directions)
            # the fake DUT forwards 60 kpps for both directions together: 30 kpps each
            assert abs(tp[128].throughput_pps - 30_000) / 30_000 < 0.01
            assert_throughput(tp, at_least="29kpps")
            rfc2544.latency(throughput=tp, trials=2)
            rfc2544.frame_loss()
            rfc2544.back_to_back(repetitions=2, burst="50ms")
            rfc2544.recovery(throughput=tp, overload="2s", relief="2s")
            rfc2544.reset(lambda: None, at="0s", duration="2s")

        @pytest.mark.rfc2544(frame_sizes=[128], trial_duration="2s", direction="both",
                             search="mlrsearch", goals="ci-fast")
        def test_ndr(rfc2544):
            (result,) = rfc2544.ndr_pdr()
            assert abs(result.goals[0].lower_bound_pps - 30_000) / 30_000 < 0.03
            assert all(len(t.directions) == 2 for t in result.trials if t.valid)
    """)
    result = pytester.runpytest(FAKE, _topology(pytester, vlan=100), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    found = _measurements(pytester)
    kinds = {m["kind"]: m for m in found["test_all"]}
    assert {"throughput", "latency_rfc2544", "frame_loss", "back_to_back", "recovery",
            "reset"} <= set(kinds)
    for kind in ("throughput", "latency_rfc2544", "frame_loss", "back_to_back", "recovery",
                 "reset"):
        traffic = kinds[kind]["traffic"]
        assert traffic["direction"] == "both" and traffic["load"] == "per direction"
        assert traffic["wires"] == ["p0->p1", "p1->p0"]
        assert [(s["wire"], s["kind"], s["share"]) for s in traffic["streams"]] == [
            ("p0->p1", "udp", 0.75), ("p0->p1", "tcp", 0.25),
            ("p1->p0", "udp", 0.75), ("p1->p0", "tcp", 0.25)]
    trial = kinds["throughput"]["trials"][0]
    assert trial["aggregate_offered_pps"] == 2 * trial["offered_pps"]
    assert [d["wire"] for d in trial["directions"]] == ["p0->p1", "p1->p0"]
    assert sum(d["tx_packets"] for d in trial["directions"]) == trial["tx_packets"]
    assert all("directions" in t for t in kinds["recovery"]["trials"])
    assert all("directions" in t for t in kinds["reset"]["trials"])
    mlr = {m["kind"]: m for m in found["test_ndr"]}["mlrsearch"]
    assert mlr["traffic"]["direction"] == "both"
    html = (pytester.path / "netload-results" / "report.html").read_text()
    assert "both directions (p0-&gt;p1, p1-&gt;p0), pps per direction; streams udp 75" in html


def test_user_streams_cross_an_ipv6_topology(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_v6="""
        import pytest
        from pytest_netload import Eth, IPv6, TCP, Vlan, tcp, udp, bidirectional

        V6 = Eth(dst="02:00:00:00:01:01", src="02:00:00:00:00:01") / Vlan(20) / Vlan(30) / \\
            IPv6(src="2001:db8::2", dst="2001:db8:1::2") / TCP(sport=4000, dport=80)

        @pytest.mark.rfc2544(frame_sizes=[256], trial_duration="1s",
                             stream=udp(dst_ips=100, src_ips=10, flows=16))
        def test_marker_stream(rfc2544):
            tp = rfc2544.throughput()
            assert tp[256].throughput_pps > 50_000

        @pytest.mark.rfc2544(frame_sizes=[256], trial_duration="1s", direction="both")
        def test_qinq_template_both_ways(rfc2544):
            tp = rfc2544.throughput(stream=V6)
            names = [d.streams for d in tp[256].trials[0].directions]
            assert names == [("qinq-ipv6-tcp p0->p1",), ("qinq-ipv6-tcp p1->p0",)]

        @pytest.mark.rfc2544(frame_sizes=[256], trial_duration="1s", direction="both")
        def test_a_pair(rfc2544):
            rfc2544.frame_loss(stream=bidirectional(tcp(), [udp(), udp(dport=53)]))
    """)
    result = pytester.runpytest(FAKE, _topology(pytester, v6=True), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    found = _measurements(pytester)
    (loss,) = [m for m in found["test_a_pair"] if m["kind"] == "frame_loss"]
    assert [(s["wire"], s["kind"]) for s in loss["traffic"]["streams"]] == [
        ("p0->p1", "tcp"), ("p1->p0", "udp"), ("p1->p0", "udp")]


def test_what_does_not_fit_the_topology_fails_naming_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad="""
        import pytest
        from pytest_netload import Eth, IPv4, IPv6, UDP, tcp, udp

        @pytest.mark.rfc2544(frame_sizes=[128], trial_duration="1s")
        def test_wrong_mac(rfc2544):
            rfc2544.throughput(stream=Eth(dst="02:00:00:00:00:09") / IPv4(
                src="198.18.0.2", dst="198.19.0.2") / UDP())

        @pytest.mark.rfc2544(frame_sizes=[128], trial_duration="1s")
        def test_v6_on_v4(rfc2544):
            rfc2544.throughput(stream=udp("2001:db8::2", "2001:db8:1::2"))

        @pytest.mark.rfc2544(frame_sizes=[64], trial_duration="1s")
        def test_tagged_64(rfc2544):
            rfc2544.throughput()

        @pytest.mark.rfc2544(frame_sizes=["imix"], trial_duration="1s")
        def test_tcp_imix(rfc2544):
            rfc2544.throughput(stream=tcp())
    """)
    result = pytester.runpytest(FAKE, _topology(pytester, vlan=4000), "-p", "no:cacheprovider")
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines([
        ("*stream 'ipv4-udp p0->p1' on wire p0->p1: its destination MAC 02:00:00:00:00:09 is "
         "not the wire's peer 02:00:00:00:01:01 (port p0's peer_mac)*"),
        ("*stream 'udp p0->p1' on wire p0->p1: the stream is IPv6, but port p0's ip "
         "198.18.0.2 is IPv4*"),
        "*frame size 64 is too small for its 46 header bytes (VLAN 4000 included)*",
        ("*stream 'tcp p0->p1' on wire p0->p1: frame size 'imix' is too small for its 58 "
         "header bytes (VLAN 4000 included)*at least 78 B*"),
    ])


@pytest.mark.parametrize(("marker", "message"), [
    ('frame_sizes=[64], direction="both"',
     ("*test_x: @pytest.mark.rfc2544: direction='both' sends on wire 0 (p0->p1) and its "
      "reverse p1->p0 at once, but topology 'fake' has no p1->p0 (its one wire is p0->p1); "
      "add a *wires* table with tx = \"p1\" and rx = \"p0\" to the topology file, or use "
      "direction='one'")),
    ('direction="up"', "*test_x: @pytest.mark.rfc2544: direction='up': use 'one'*"),
    ("stream=udp(), flows=4", ("*test_x: @pytest.mark.rfc2544: flows=4 varies the "
                               "procedures' own UDP stream, but stream= gives the traffic*")),
    ('stream="imix"', "*stream='imix' is a frame size, not a stream*give frame_sizes=*"),
])
def test_a_usage_error_at_collection(pytester: pytest.Pytester, marker: str,
                                     message: str) -> None:
    pytester.makepyfile(test_use=f"""
        import pytest
        from pytest_netload import udp

        @pytest.mark.rfc2544({marker})
        def test_x(rfc2544):
            rfc2544.throughput()
    """)
    result = pytester.runpytest(FAKE, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([message])
