"""The user's own streams in Y.1564 and RFC 2889 through the built-in netns-bridge on the
real engine: a Y.1564 service's VLAN-tagged stream (its DSCP marked on it) is what the
engine sends and counts, and the rfc2889 marker's VLAN-tagged template is what the fully
meshed procedure sends between both port pairs, addressed to each (whatever addresses the
template was built with). The bridge forwards every frame, so the SAC passes on zero loss
and the mesh's throughput is the search's maximum. Each test is one pytest session in a
subprocess (about 20 s with the bridge's set-up)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

CAPTURE = '''
import pytest


@pytest.fixture
def sent(request):
    """Every stream the test's engine loads, in order (what it sends and counts)."""
    runner = request.getfixturevalue(request.node.get_closest_marker("uses").args[0])
    streams, load = [], runner.engine.load

    def wrapped(port, stream, **kw):
        streams.append(stream)
        return load(port, stream, **kw)

    runner.engine.load = wrapped
    yield streams
    runner.engine.load = load


def pytest_configure(config):
    config.addinivalue_line("markers", "uses(fixture): the runner whose engine `sent` watches")
'''


def _run(pytester: pytest.Pytester, body: str) -> list[dict[str, Any]]:
    shutil.copy(Path(__file__).with_name("calm.py"), pytester.path)  # its busy-machine skip
    pytester.makeconftest(CAPTURE)
    pytester.makepyfile(body)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", "-rs",
                                           "--netload-report-dir=out",
                                           "--netload-topology=netns-bridge", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)
    from pytest_netload.reports.load import load

    doc = load(pytester.path / "out" / "results.json")  # valid against the shipped schema
    return [m for t in doc["tests"] for m in t["measurements"]]


def test_a_y1564_service_sends_its_tagged_stream_through_the_bridge(
        pytester: pytest.Pytester) -> None:
    records = _run(pytester, """
        import pytest
        from pytest_netload import assert_sac, udp
        from pytest_netload.traffic.rewrite import marks


        @pytest.mark.uses("y1564")
        @pytest.mark.y1564(services=[{"name": "video", "cir": "2Mbit/s", "frame_size": 256,
                                      "dscp": 34, "stream": udp(vlan=300, dport=4789),
                                      "sac": {"flr": "0%"}}],
                           steps=[0.5, 1.0], step_duration="1s", policing=False,
                           drain="0.2s")
        def test_service(y1564, sent):
            (service,) = y1564.services
            assert service.classifier.as_dict() == {"vlan": 300, "pcp": 0, "dscp": 34,
                                                    "dport": 4789}
            sct = y1564.sct("video")
            print("steps", [(s.name, s.sample.tx_frames, s.sample.rx_frames)
                            for s in sct.steps])
            assert [(marks(s.template).vlan, marks(s.template).dscp) for s in sent
                    if s.name.startswith("video")] == [(300, 34)]
            assert all(s.sample.rx_frames == s.sample.tx_frames > 400 for s in sct.steps)
            assert_sac(sct)
    """)
    (sct,) = [m for m in records if m["kind"] == "y1564_sct"]
    assert sct["passed"] and sct["service"]["vlan"] == 300
    assert [(s["name"], s["kind"], s["mean_frame_size"]) for s in sct["traffic"]["streams"]] \
        == [("video p0->p1", "udp", 256.0)]


def test_rfc2889_fully_meshed_sends_a_tagged_template_to_each_pair(
        pytester: pytest.Pytester) -> None:
    records = _run(pytester, """
        import pytest
        from pytest_netload import Eth, IPv4, UDP, Vlan
        from pytest_netload.traffic.rewrite import addresses, vlan_ids

        LOAD = 2_000
        TAGGED = Eth() / Vlan(300) / IPv4() / UDP(sport=7, dport=4789)  # any addresses


        @pytest.mark.uses("rfc2889")
        @pytest.mark.rfc2889(frame_size=256, trial_duration="1s", drain="0.2s",
                             max_rate=f"{LOAD}pps", resolution=0.25, max_trials=4,
                             retries=1, stream=TAGGED)
        def test_mesh(rfc2889, sent, netload_ports):
            r = rfc2889.fully_meshed()
            p0, p1 = (netload_ports.topology.port(n) for n in ("p0", "p1"))
            mesh = [s for s in sent if "->" in (s.name or "")]
            assert [vlan_ids(s.template) for s in mesh] == [(300,), (300,)]
            assert [(addresses(s.template).src_ip, addresses(s.template).dst_ip)
                    for s in mesh] == [(str(p0.ip), str(p1.ip)), (str(p1.ip), str(p0.ip))]
            print("throughput", r.throughput_pps_per_port, [t.lost for t in r.trials])
            assert r.throughput_pps_per_port == LOAD
            assert all(t.lost == 0 for t in r.trials if t.valid)
    """)
    (mesh,) = [m for m in records if m["kind"] == "rfc2889_fully_meshed"]
    assert [(s["wire"], s["kind"]) for s in mesh["traffic"]["streams"]] == [
        ("p0->p1", "template"), ("p1->p0", "template")]
