"""The user's own streams in Y.1564 and RFC 2889 on the fake engine, loaded through RFC
2544's path (traffic.mix.Mix, bench/lanes.py): a Y.1564 service's VLAN-tagged IPv6
template or udp(vlan=...) is what the engine sends and counts, marked with the
service's DSCP or its colours' DSCP/PCP, reversed as RFC 2544 reverses it with
direction="both"; the rfc2889 marker's stream= is sent between every port pair,
addressed to the pair. RFC 2889 runs on its ports' engine, and a mesh whose ports
span engines is refused before any trial, naming the ports, their engines and the fix."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pytest_netload.reports.html  # noqa: F401  (matplotlib before any in-process run)
from pytest_netload.reports.load import load

pytest_plugins = ["pytester"]

FAKE = "--netload-engine=fake:capacity_pps=50000,delay_s=50e-6,buffer_frames=1000"

PORT = """
[[ports]]
name = "{name}"
device = "net_fake{n}"
mac = "02:00:00:00:00:0{m}"
ip = "{ip}"
peer_mac = "02:00:00:00:01:0{m}"
peer_ip = "{gw}"
{engine}
"""
WIRE = """
[[wires]]
tx = "{tx}"
rx = "{rx}"
"""
V6 = (("2001:db8::2", "2001:db8::1"), ("2001:db8:1::2", "2001:db8:1::1"),
      ("2001:db8:2::2", "2001:db8:2::1"), ("2001:db8:3::2", "2001:db8:3::1"))

# the template a test gives: p0 -> p1 of the topology above, VLAN 100, IPv6, UDP 4000 -> 5000
TEMPLATE = ('Eth(dst="02:00:00:00:01:01", src="02:00:00:00:00:01") / Vlan(100) / '
            'IPv6(src="2001:db8::2", dst="2001:db8:1::2") / UDP(sport=4000, dport=5000)')

HEADER = """
import pytest
from pytest_netload import assert_sac, bidirectional, tcp, udp
from pytest_netload.traffic.packets import UDP, Eth, IPv6, Vlan
from pytest_netload.traffic.rewrite import addresses, marks, vlan_ids


def _capture(engine, into):
    '''Every stream the engine loads, by name (what it sends and counts).'''
    load = engine.load

    def wrapped(port, stream, **kw):
        handle = load(port, stream, **kw)
        into[handle.name] = stream
        return handle

    engine.load = wrapped
    return load
"""


def _topology(pytester: pytest.Pytester, names: tuple[str, ...] = ("p0", "p1"),
              engines: tuple[str | None, ...] = (None, None),
              wires: tuple[tuple[str, str], ...] = (("p0", "p1"), ("p1", "p0"))) -> str:
    text = '[topology]\nname = "lab-v6"\n'
    for n, (name, engine) in enumerate(zip(names, engines)):
        text += PORT.format(name=name, n=n, m=n + 1, ip=V6[n][0], gw=V6[n][1],
                            engine=f'engine = "{engine}"' if engine else "")
    text += "".join(WIRE.format(tx=tx, rx=rx) for tx, rx in wires)
    path = pytester.path / "lab.toml"
    path.write_text(text)
    return f"--netload-topology={path}"


def _run(pytester: pytest.Pytester, body: str, *args: str,
         module: str = "test_streams") -> pytest.RunResult:
    pytester.makepyfile(**{module: HEADER + body})
    return pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", FAKE,
                              f"{module}.py", *args)


def _refused(pytester: pytest.Pytester, body: str, topology: str, message: str) -> None:
    """A marker `body` whose bad input fails its module's collection, naming `message`."""
    result = _run(pytester, body, topology, module="test_refused")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([message])


def _measurements(pytester: pytest.Pytester) -> dict[str, list[dict[str, Any]]]:
    path = pytester.path / "netload-results" / "results.json"
    load(path)  # valid against the schema
    doc = json.loads(path.read_text())
    return {t["nodeid"].split("::")[-1]: t["measurements"] for t in doc["tests"]}


def test_a_y1564_service_sends_and_counts_its_vlan_ipv6_stream(pytester: pytest.Pytester) -> None:
    result = _run(pytester, f"""
@pytest.mark.y1564(services=[
    {{"name": "video", "cir": "4Mbit/s", "frame_size": 512, "dscp": 34,
      "stream": {TEMPLATE}, "sac": {{"flr": "0.1%"}}}},
    {{"name": "data", "cir": "2Mbit/s", "frame_size": 256, "stream": udp(vlan=200),
      "sac": {{"flr": "0.1%"}}}}], step_duration="1s", steps=[1.0], policing=False,
    spt_duration="2s", checkpoint=False)
def test_services(y1564):
    sent = {{}}
    load = _capture(y1564.engine, sent)
    try:
        video, data = y1564.sct()
        spt = y1564.spt()
    finally:
        y1564.engine.load = load
    assert video.service.classifier.as_dict() == {{"vlan": 100, "pcp": 0, "dscp": 34,
                                                   "dport": 5000}}
    assert data.service.classifier.as_dict() == {{"vlan": 200, "pcp": 0, "dscp": 0,
                                                  "dport": 9}}
    v, d = sent["video p0->p1"], sent["data p0->p1"]
    assert (vlan_ids(v.template), v.template.l3_proto, v.size) == ((100,), 6, 512)
    assert marks(v.template).dscp == 34 and marks(v.template).dport == 5000
    assert addresses(v.template).dst_ip == "2001:db8:1::2"
    assert (vlan_ids(d.template), d.template.l3_proto, d.size) == ((200,), 6, 256)
    # the engine counted the user's frames: CIR 100 % of each service, and the SPT's
    (step,) = video.steps
    assert step.sample.tx_frames == step.sample.rx_frames > 900, step.reason
    assert data.steps[0].sample.tx_frames > 900 and spt.passed
    assert_sac(spt)
""", _topology(pytester))
    result.assert_outcomes(passed=1)
    records = _measurements(pytester)["test_services"]
    sct = [m for m in records if m["kind"] == "y1564_sct"]
    assert [m["traffic"]["streams"] for m in sct] == [
        [{"service": "video", "colour": "green", "wire": "p0->p1", "name": "video p0->p1",
          "kind": "template", "share": 1.0, "mean_frame_size": 512.0}],
        [{"service": "data", "colour": "green", "wire": "p0->p1", "name": "data p0->p1",
          "kind": "udp", "share": 1.0, "mean_frame_size": 256.0}]]
    (spt,) = [m for m in records if m["kind"] == "y1564_spt"]
    assert [s["name"] for s in spt["traffic"]["streams"]] == ["video p0->p1", "data p0->p1"]


def test_a_colour_aware_service_marks_its_stream_by_colour(pytester: pytest.Pytester) -> None:
    """DSCP in the IPv6 traffic class of a template, PCP in the tag of a udp(vlan=...);
    the EIR step sends both colours, each counted apart."""
    result = _run(pytester, f"""
@pytest.mark.y1564(services=[
    {{"name": "dscp", "cir": "2Mbit/s", "eir": "1Mbit/s", "frame_size": 512,
      "colour": "dscp", "green": 10, "yellow": 12, "stream": {TEMPLATE}}},
    {{"name": "pcp", "cir": "2Mbit/s", "eir": "1Mbit/s", "frame_size": 512,
      "colour": "pcp", "green": 5, "yellow": 1, "stream": udp(vlan=300)}}],
    step_duration="1s", steps=[1.0], policing=False)
def test_colours(y1564):
    sent = {{}}
    load = _capture(y1564.engine, sent)
    try:
        dscp, pcp = y1564.sct()
    finally:
        y1564.engine.load = load
    assert marks(sent["dscp p0->p1"].template).dscp == 10
    assert marks(sent["dscp/yellow p0->p1"].template).dscp == 12
    assert marks(sent["pcp p0->p1"].template).pcp == 5
    assert marks(sent["pcp/yellow p0->p1"].template).pcp == 1
    for result in (dscp, pcp):
        eir = result.steps[1]
        assert eir.sample.yellow_rx_frames == eir.sample.yellow_tx_frames > 200, eir.reason
        assert eir.passed, eir.reason
""", _topology(pytester))
    result.assert_outcomes(passed=1)
    _refused(pytester, """
@pytest.mark.y1564(services=[{"name": "p", "cir": "2Mbit/s", "colour": "pcp", "green": 5,
                              "yellow": 1, "stream": udp()}])
def test_pcp_without_a_tag(y1564):
    pass
""", _topology(pytester), "*@pytest.mark.y1564: service 'p': colour='pcp' needs a VLAN tag "
             "to carry the PCP, but its stream's frames have none: build a tag into the "
             "stream*")


def test_both_ways_a_service_sends_the_reply_to_its_stream(pytester: pytest.Pytester) -> None:
    result = _run(pytester, f"""
@pytest.mark.y1564(services=[{{"name": "video", "cir": "2Mbit/s", "frame_size": 512,
                               "stream": {TEMPLATE}, "sac": {{"flr": "0.1%"}}}}],
                   step_duration="1s", steps=[1.0], policing=False, spt_duration="2s",
                   direction="both", checkpoint=False)
def test_both(y1564):
    sent = {{}}
    load = _capture(y1564.engine, sent)
    try:
        forward, back = y1564.sct("video")
        spt = y1564.spt()
    finally:
        y1564.engine.load = load
    there, reply = sent["video p0->p1"], sent["video p1->p0"]
    a, b = addresses(there.template), addresses(reply.template)
    assert (b.src_ip, b.dst_ip) == (a.dst_ip, a.src_ip)
    assert b.dst_mac == "02:00:00:00:01:02" and vlan_ids(reply.template) == (100,)
    assert (forward.service.dport, back.service.dport) == (5000, 4000)
    assert back.steps[0].sample.rx_frames > 400 and spt.passed

@pytest.mark.y1564(services=[{{"name": "pair", "cir": "2Mbit/s", "frame_size": 256,
                               "stream": bidirectional(udp(dport=5000), udp(dport=6000))}}],
                   step_duration="1s", steps=[1.0], policing=False, direction="both")
def test_own_reverse(y1564):
    sent = {{}}
    load = _capture(y1564.engine, sent)
    try:
        forward, back = y1564.sct("pair")
    finally:
        y1564.engine.load = load
    assert (forward.service.dport, back.service.dport) == (5000, 6000)
    assert marks(sent["pair p1->p0"].template).dport == 6000
    assert back.steps[0].passed, back.steps[0].reason
""", _topology(pytester))
    result.assert_outcomes(passed=2)
    (spt,) = [m for m in _measurements(pytester)["test_both"] if m["kind"] == "y1564_spt"]
    assert [(s["service"], s["wire"]) for s in spt["traffic"]["streams"]] == [
        ("video p0->p1", "p0->p1"), ("video p1->p0", "p1->p0")]


def test_rfc2889_meshes_send_the_users_stream_to_each_pair(pytester: pytest.Pytester) -> None:
    result = _run(pytester, f"""
@pytest.mark.rfc2889(trial_duration="1s", max_rate="2kpps", resolution=0.25, max_trials=4,
                     frame_size=256, stream={TEMPLATE})
def test_mesh(rfc2889):
    sent = {{}}
    load = _capture(rfc2889.engine, sent)
    try:
        r = rfc2889.fully_meshed()
    finally:
        rfc2889.engine.load = load
    assert r.throughput_pps_per_port > 0
    there, back = sent["vlan-ipv6-udp p0->p1"], sent["vlan-ipv6-udp p1->p0"]
    assert addresses(there.template).dst_mac == "02:00:00:00:01:01"
    b = addresses(back.template)
    assert (b.dst_mac, b.src_ip, b.dst_ip) == ("02:00:00:00:01:02", "2001:db8:1::2",
                                               "2001:db8::2")
    assert vlan_ids(back.template) == (100,) and back.size == 256

@pytest.mark.rfc2889(frame_size=64, stream={TEMPLATE})
def test_too_small(rfc2889):
    rfc2889.fully_meshed()
""", _topology(pytester))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*frame size 64 is too small for its 66 header bytes (VLAN 100 included)*"])
    (m,) = [m for m in _measurements(pytester)["test_mesh"]
            if m["kind"] == "rfc2889_fully_meshed"]
    assert [(s["wire"], s["kind"]) for s in m["traffic"]["streams"]] == [
        ("p0->p1", "template"), ("p1->p0", "template")]
    _refused(pytester, """
@pytest.mark.rfc2889(stream=bidirectional(udp(), udp(dport=7)))
def test_no_reverse(rfc2889):
    pass
""", _topology(pytester), "*@pytest.mark.rfc2889: stream=bidirectional(...) names a reverse "
             "wire's streams*give the forward streams alone*")


# A second fake engine, "gen-b", for the topology's ports that name it (a fake session
# takes no other engines from --netload-engines: this conftest stands in for one).
ENGINES = """
import pytest

from pytest_netload.engine.client import Engine
from pytest_netload.engine.fake import parse_fake_engine


@pytest.fixture(scope="session")
def netload_engines(netload_engine):
    other = Engine("popen", fake=parse_fake_engine("fake:capacity_pps=50000"))
    other.start()
    try:
        yield {None: netload_engine, "gen-b": other}
    finally:
        other.close()
"""


def test_rfc2889_refuses_ports_on_several_engines(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(ENGINES)
    names = ("p0", "p1", "p2", "p3")
    result = _run(pytester, """
@pytest.mark.rfc2889(trial_duration="1s", max_rate="2kpps")
def test_span(rfc2889):
    rfc2889.fully_meshed()

@pytest.mark.rfc2889(trial_duration="1s", max_rate="2kpps", ports=4)
def test_congestion(rfc2889):
    rfc2889.congestion_control()
""", _topology(pytester, names, (None, None, "gen-b", "gen-b"),
               (("p0", "p1"), ("p1", "p0"), ("p2", "p3"), ("p3", "p2"))),
        "--netload-engines=gen-b=popen")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([(
        "*rfc2889 fully meshed: its ports span engines (p0, p1 on the session's engine "
        "(--netload-engine); p2, p3 on engine 'gen-b')*so no trial could be counted*list "
        "ports of one engine first and give ports=N, or put the procedure's ports on one "
        "engine in the topology file*")])
    result.stdout.fnmatch_lines(["*rfc2889 congestion control: its ports span engines*"])
    assert "trial 1" not in result.stdout.str()


def test_rfc2889_runs_on_the_engine_of_its_ports(pytester: pytest.Pytester) -> None:
    """The topology lists gen-b's ports first; ports=2 takes them, and every run is on
    gen-b (the session's engine sends nothing)."""
    pytester.makeconftest(ENGINES)
    result = _run(pytester, """
@pytest.mark.rfc2889(trial_duration="1s", max_rate="2kpps", resolution=0.25, max_trials=4,
                     ports=2, frame_size=256, stream=udp(vlan=10))
def test_gen_b(rfc2889, netload_engines):
    sent = {}
    load = _capture(netload_engines["gen-b"], sent)
    try:
        r = rfc2889.fully_meshed()
    finally:
        netload_engines["gen-b"].load = load
    assert rfc2889.engine is netload_engines["gen-b"]
    assert sorted(sent) == ["udp b0->b1", "udp b1->b0"]
    assert r.throughput_pps_per_port > 0 and r.trials
""", _topology(
        pytester, ("b0", "b1", "p0", "p1"), ("gen-b", "gen-b", None, None),
        (("b0", "b1"), ("b1", "b0"), ("p0", "p1"))), "--netload-engines=gen-b=popen")
    result.assert_outcomes(passed=1)


def test_a_weighted_mix_splits_a_services_load_and_counts_it_whole(
        pytester: pytest.Pytester) -> None:
    """udp 3 : tcp 1 at the service's rate: the configuration step sends both streams in
    that ratio and counts their frames together; a burst splits its frames the same way."""
    result = _run(pytester, """
@pytest.mark.y1564(services=[{"name": "mixed", "cir": "4Mbit/s", "cbs": "10240B",
                              "frame_size": 512, "stream": [(udp(), 3), (tcp(), 1)],
                              "sac": {"flr": "0.1%"}}],
                   step_duration="1s", steps=[1.0], policing=False, burst_sizes=[0.5])
def test_mix(y1564):
    (step,) = y1564.sct("mixed").steps
    assert step.sample.tx_frames == step.sample.rx_frames, step.reason
    assert abs(step.sample.tx_frames - 4e6 / (512 * 8)) <= 2  # the whole service's rate
    (burst,) = y1564.bursts("mixed").steps
    assert burst.sample.tx_frames == burst.frames == 10 and burst.sample.rx_frames == 10
""", _topology(pytester))
    result.assert_outcomes(passed=1)
    (sct,) = [m for m in _measurements(pytester)["test_mix"] if m["kind"] == "y1564_sct"]
    assert [(s["name"], s["kind"], s["share"]) for s in sct["traffic"]["streams"]] == [
        ("mixed#1 p0->p1", "udp", 0.75), ("mixed#2 p0->p1", "tcp", 0.25)]
