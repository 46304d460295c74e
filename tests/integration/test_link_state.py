"""Link state on real links: the DUT's interface goes down mid-trial on netns-router, and
the trial is invalid with "link down on p1 at t=..." and its events in results.json, and
the search retries it; a link that stays down stops the search within the link timeout;
a port whose link never comes up is an error naming it, within the timeout, never a hang.

Each test builds what it needs (the router's namespace, veth pairs, an engine host) and
removes it, also on failure.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pytest_netload.bench.link import wait_link_up
from pytest_netload.bench.runner import EngineMeasurer
from pytest_netload.engine.client import Engine
from pytest_netload.errors import InvalidTrial, NetloadEnvironmentError
from pytest_netload.rfc2544 import binary_search
from pytest_netload.search import TrialSettings
from pytest_netload.topology.builtin import build
from pytest_netload.traffic.streams import UdpSpec

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0,
                       reason="netns-router and veth pairs need root, the engine DPDK"),
]

LOAD_PPS = 20_000.0
TRIAL_S = 2.0
REASON = re.compile(r"^link down on p1 at t=(?P<t>[0-9.]+)(?P<unit>m?s) ")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


def _seconds(match: re.Match[str]) -> float:
    return float(match["t"]) / (1000 if match["unit"] == "ms" else 1)


# ---- a link that goes down mid-trial, through the plugin ----------------------------------

FLAP_SUITE = """
import re, subprocess, threading, time

import pytest

DOWN_AT_S, DOWN_FOR_S = 0.8, 0.4


def ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@pytest.mark.rfc2544(frame_sizes=[64], trial_duration="2s", drain="200ms",
                     max_rate="20kpps", learning_frames=0)
def test_flap(rfc2544, netload_engine, netload_topology, dut, monkeypatch):
    ns, d1 = dut.namespace, dut.info["interfaces"].split(",")[1]
    p1 = netload_topology.ports[1]
    times = {}

    def flap():
        time.sleep(DOWN_AT_S)
        times["issued"] = time.monotonic() - times["run"]
        ip("-n", ns, "link", "set", d1, "down")
        times["down"] = time.monotonic() - times["run"]
        time.sleep(DOWN_FOR_S)
        ip("-n", ns, "link", "set", d1, "up")
        times["up"] = time.monotonic() - times["run"]
        # admin down flushed the router's static neighbour and /16 route: put them back
        ip("-n", ns, "neigh", "replace", p1.ip, "lladdr", p1.mac, "dev", d1, "nud",
           "permanent")
        ip("-n", ns, "route", "replace", "198.19.0.0/16", "via", p1.ip, "dev", d1)

    real_run = netload_engine.run
    flapper = []

    def run(*args, **kw):
        if not flapper and kw.get("duration_s", 0) >= 1:  # the first trial
            times["run"] = time.monotonic()
            flapper.append(threading.Thread(target=flap, daemon=True))
            flapper[0].start()
        return real_run(*args, **kw)

    monkeypatch.setattr(netload_engine, "run", run)
    found = rfc2544.throughput()[64]
    flapper[0].join(10)
    first, retry = found.trials[0], found.trials[1]
    print("REASON", first.invalid_reason)
    print("TIMES", times, "EVENTS", first.events)
    assert not first.valid
    down = next(e for e in first.events if e["event"] == "link_down")
    up = next(e for e in first.events if e["event"] == "link_up")
    assert down["port"] == up["port"] == "p1"
    # the drop is placed between two samples ~0.1 s apart, around when `ip` took it down
    # (t counts from the trial's first frame, due 10 ms after the run's start)
    assert down["since_s"] <= times["down"] + 0.05 and down["t_s"] >= times["issued"] - 0.05
    assert down["t_s"] - down["since_s"] <= 0.25
    assert up["t_s"] >= times["up"] - 0.05 - 0.01
    # the search retried the same load: valid, and nothing was lost
    assert retry.offered_pps == first.offered_pps and retry.valid, retry.invalid_reason
    assert found.throughput_pps == first.offered_pps
"""


def test_a_link_down_mid_trial_makes_it_invalid_and_the_search_retries(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_flap=FLAP_SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s",
                                           "--netload-topology=netns-router",
                                           "--netload-report-dir=out", timeout=300)
    out = result.stdout.str()
    printed = re.search(r"REASON (.*)", out)
    print(printed[0] if printed else out[-3000:])
    print(next((m[0] for m in [re.search(r"TIMES .*", out)] if m), ""))
    result.assert_outcomes(passed=1)
    assert printed is not None
    reason = printed[1]
    match = REASON.match(reason)
    assert match is not None, reason
    assert 0.7 <= _seconds(match) <= 1.2, reason
    assert re.search(r"\(up again by t=[0-9.]+m?s\)$", reason), reason
    # results.json: the invalid trial, its reason and its events, then the retry
    doc = json.loads((pytester.path / "out" / "results.json").read_text())
    trials = next(m for t in doc["tests"] for m in t["measurements"]
                  if m["kind"] == "throughput")["trials"]
    assert trials[0]["valid"] is False and trials[0]["invalid_reason"] == reason
    assert [e["event"] for e in trials[0]["events"]] == ["link_down", "link_up"]
    assert {e["port"] for e in trials[0]["events"]} == {"p1"}
    assert trials[1]["valid"] is True and "events" not in trials[1]
    assert trials[1]["offered_pps"] == trials[0]["offered_pps"]
    # veth reports no line rate: no speed warning, and the environment records none
    assert "LinkSpeedWarning" not in out
    assert all(p["link_speed_bps"] is None for p in doc["environment"]["ports"])


# ---- a link that stays down: the search stops --------------------------------------------


@contextmanager
def _router_engine(tmp_path: Path) -> Iterator[tuple[Any, Engine, Any, Any]]:
    with build("netns-router", backend="af_packet", neighbours="static") as built, \
            Engine(log_dir=str(tmp_path)) as engine:
        topo = built.topology
        p0, p1 = topo.ports
        assert p0.device is not None and p1.device is not None
        tx = engine.port(p0.device, name=p0.name)
        rx = engine.port(p1.device, name=p1.name)
        yield built, engine, tx, rx


def test_a_link_that_stays_down_stops_the_search_within_the_timeout(tmp_path: Path) -> None:
    with _router_engine(tmp_path) as (built, engine, tx, rx):
        ns, d1 = built.dut.namespace, built.dut.info["interfaces"].split(",")[1]
        flow = built.topology.flows()[0]
        stream = engine.load(tx, UdpSpec(size=64, name="probe").for_flow(flow))
        measurer = EngineMeasurer(engine, stream, [rx], 64, drain_s=0.2)
        engine.link_timeout_s = 1.0
        timer = threading.Timer(0.8, _ip, ("-n", ns, "link", "set", d1, "down"))
        started = time.monotonic()
        timer.start()
        try:
            with pytest.raises(InvalidTrial) as info:
                binary_search(measurer, LOAD_PPS,
                              settings=TrialSettings(duration_s=TRIAL_S, frame_size=64,
                                                     mean_frame_size=stream.mean_frame_size))
            took = time.monotonic() - started
        finally:
            timer.join()
            _ip("-n", ns, "link", "set", d1, "up")
        text = str(info.value)
        print(text, f"({took:.2f} s)")
        assert REASON.match(text.removeprefix("the trial was invalid ("))
        assert "(still down when the trial ended)" in text
        assert re.search(r"and the link did not come back: port p1 \(net_af_packet\S+\): link "
                         r"still down after waiting 1s \(kernel interface \S+g1: operstate "
                         r"\w+, no carrier\); check the cable", text), text
        assert "the procedure stops" in text
        # one trial, its drain, the 1 s wait and the start: not the search's many retries
        assert took < TRIAL_S + 0.2 + 1.0 + 2.0, took


# ---- a link that never comes up ------------------------------------------------------------


@contextmanager
def _veth_without_carrier(a: str, b: str) -> Iterator[None]:
    """veth a<->b with a up and b down: a has no carrier."""
    _ip("link", "add", a, "type", "veth", "peer", "name", b)
    try:
        _ip("link", "set", a, "up")
        yield
    finally:
        subprocess.run(["ip", "link", "del", a], check=False, capture_output=True, timeout=10)


def _names() -> tuple[str, str, str, str]:
    tag = f"lk{os.getpid() % 100000}"
    return f"{tag}a", f"{tag}b", f"{tag}c", f"{tag}d"


def test_waiting_for_a_link_is_bounded_and_ends_when_it_comes_up(tmp_path: Path) -> None:
    a, b, _, _ = _names()
    with _veth_without_carrier(a, b), Engine(log_dir=str(tmp_path)) as engine:
        port = engine.port(f"net_af_packet90,iface={a}", name="p0")
        # DPDK's af_packet says up at 10 Gbit/s; the host reads the kernel's truth
        assert port.info["link_up"] is False and port.info["link_speed_mbps"] == 0
        assert "virtual interface" in port.info["link_speed_note"]
        link = port.link()
        assert (link["up"], link["carrier"], link["operstate"]) == \
            (False, False, "lowerlayerdown")
        started = time.monotonic()
        with pytest.raises(NetloadEnvironmentError) as info:
            wait_link_up(port, 1.0)
        took = time.monotonic() - started
        assert 1.0 <= took < 1.5, took
        assert str(info.value).startswith(
            f"port p0 (net_af_packet90,iface={a}): link still down after waiting 1s (kernel "
            f"interface {a}: operstate lowerlayerdown, no carrier); check the cable")
        assert f"`ip link show {a}` here" in str(info.value)
        # the peer comes up 0.3 s into a wait: the wait ends then
        timer = threading.Timer(0.3, _ip, ("link", "set", b, "up"))
        started = time.monotonic()
        timer.start()
        state = wait_link_up(port, 5.0)
        took = time.monotonic() - started
        timer.join()
        assert state["up"] and state["operstate"] == "up" and 0.3 <= took < 0.8, took
        port.close()


TOPOLOGY = """
[topology]
name = "lab"
line_rate = "10Gbit/s"

[[ports]]
name = "p0"
device = "net_af_packet91,iface={a}"
mac = "02:00:00:00:00:01"
peer_mac = "02:00:00:00:01:01"

[[ports]]
name = "p1"
device = "net_af_packet92,iface={c}"
mac = "02:00:00:00:00:02"
peer_mac = "02:00:00:00:01:02"

[[wires]]
tx = "p0"
rx = "p1"
"""


def test_a_port_whose_link_never_comes_up_errors_naming_it(pytester: pytest.Pytester) -> None:
    a, b, c, d = _names()
    pytester.makefile(".toml", lab=TOPOLOGY.format(a=a, c=c))
    pytester.makepyfile("def test_ports(netload_ports): pass")
    with _veth_without_carrier(a, b), _veth_without_carrier(c, d):
        _ip("link", "set", d, "up")  # p1's link is up: p0's is the one to name
        started = time.monotonic()
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                               "--netload-topology=lab.toml",
                                               "--netload-link-timeout=2s", timeout=120)
        took = time.monotonic() - started
    print(result.stdout.str()[-3000:], f"({took:.1f} s)")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        f"*netload: opening port 'p0' of topology 'lab': port p0 (net_af_packet91,iface={a}): "
        f"link still down after waiting 2s (kernel interface {a}: operstate lowerlayerdown, "
        "no carrier); check the cable, that the DUT's interface on this wire is up (admin "
        f"state: `ip link set <if> up` on the DUT), and `ip link show {a}` here; a slow link "
        "may need a longer --netload-link-timeout*"])
    assert "Traceback" not in result.stdout.str()
    assert took < 60, took  # the engine's start, then 2 s: never a hang
