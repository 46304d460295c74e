"""End to end: the example suite through the plugin, on netns-router (IPv4 and IPv6,
no static neighbours, both directions) and on a TOML topology file describing the
same kind of DUT, with the same outcome."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="netns-router needs root (CI runs as root)"),
]

EXAMPLE = Path(__file__).parents[2] / "conftest_examples" / "router" / "test_router.py"

FAILING = """
import pytest
from pytest_netload import assert_throughput

@pytest.mark.rfc2544(frame_sizes=[128], trial_duration="300ms", drain="50ms", max_trials=3,
                     resolution=0.5)
def test_too_demanding(rfc2544):
    assert_throughput(rfc2544.throughput(), at_least="100Gpps")
"""


def _toml_of(topology) -> str:
    lines = ["[topology]", f'name = "{topology.name}-file"']
    if topology.namespace:
        lines.append(f'namespace = "{topology.namespace}"')
    lines += ["", "[dut]", 'name = "netns-router"', 'model = "Linux kernel"', ""]
    for p in topology.ports:
        lines += ["[[ports]]", f'name = "{p.name}"', f'device = "{p.device}"',
                  f'mac = "{p.mac}"']
        for key in ("iface", "ip", "peer_mac", "peer_ip"):
            if getattr(p, key):
                lines.append(f'{key} = "{getattr(p, key)}"')
        lines.append("")
    for w in topology.wires:
        lines += ["[[wires]]", f'tx = "{w.tx}"', f'rx = "{w.rx}"', ""]
    return "\n".join(lines)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    shutil.copy(EXAMPLE, pytester.path / "test_router.py")
    pytester.makepyfile(test_failing=FAILING)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA", *args, timeout=600)


def _check(result: pytest.RunResult, where: Path) -> None:
    with judged_unless_the_machine_was_busy(result):
        _check_session(result, where)


def _check_session(result: pytest.RunResult, where: Path) -> None:
    from pytest_netload.reports.load import load

    # on this machine the router outruns the generator: the search's maximum passes and the
    # verdict is the generator's (an ERROR, GeneratorLimit); a router that lost frames at
    # the maximum would make it the DUT's (a FAIL). Either way one test does not pass.
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 3, outcomes
    assert outcomes.get("failed", 0) + outcomes.get("errors", outcomes.get("error", 0)) == 1, \
        outcomes
    doc = load(where / "netload-results" / "results.json")  # the schema accepts it
    assert doc["environment"]["dpdk_version"].startswith("DPDK 22.11")
    assert {p["driver"] for p in doc["environment"]["ports"]} <= {"net_af_packet", "net_af_xdp"}
    # no static neighbours: the DUT's MACs were resolved by ARP when the ports opened
    assert [(p["name"], p["resolved"], bool(p["peer_mac"])) for p in doc["environment"]["ports"]] \
        == [("p0", True, True), ("p1", True, True)]
    assert (where / "netload-results" / "report.html").stat().st_size > 10_000
    lat = next(m for t in doc["tests"] for m in t["measurements"] if m["kind"] == "latency")
    assert sum(lat["latency"]["histogram"]["counts"]) == lat["latency"]["count"]
    out = result.stdout.str()
    # the failure reads as measured vs required with the trial conditions
    result.stdout.fnmatch_lines([
        "*: throughput at 128B * pps*100,000,000,000 pps*",
        "*measured:*",
        "*required: throughput >= 100Gpps",
        "*conditions: frame size 128B*duration 300ms per trial*",
    ])
    bound = "GeneratorLimit: throughput at 128B is at least" in out
    assert bound or "AssertionError: throughput at 128B" in out
    assert "Traceback" not in out
    # the summary table lists every frame size measured
    result.stdout.fnmatch_lines([
        "*= netload summary =*",
        f"test_too_demanding*128B*{'ERROR*generator ceiling' if bound else 'FAIL'}*",
        "test_router_throughput_both_ways*128B*pps*PASS*",
        "test_router_throughput_both_ways*512B*pps*PASS*",
        "test_latency_under_load*128B*pps*us*0/*PASS*",
    ])


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_example_suite_on_netns_router(pytester: pytest.Pytester, family: str) -> None:
    result = _run(pytester, f"--netload-topology=netns-router:family={family}")
    _check(result, pytester.path)
    from pytest_netload.reports.load import load

    doc = load(pytester.path / "netload-results" / "results.json")
    assert doc["topology"]["dut"]["neighbours"] == "ARP/ND, none static"
    v6 = family == "ipv6"
    assert [p["ip"] for p in doc["environment"]["ports"]] == \
        (["2001:2::2", "2001:2:0:1::2"] if v6 else ["198.18.0.2", "198.19.0.2"])
    # both directions were loaded in every trial, each with its own counts
    trials = [t for test in doc["tests"] if "both_ways" in test["nodeid"]
              for m in test["measurements"] for t in m.get("trials", ())]
    assert trials and all(len(t["directions"]) == 2 for t in trials)


def test_example_suite_on_a_topology_file(pytester: pytest.Pytester) -> None:
    from pytest_netload.topology.builtin import netns_router

    with netns_router() as built:
        path = pytester.path / "lab.toml"
        path.write_text(_toml_of(built.topology))
        result = _run(pytester, f"--netload-topology={path}")
    result.stdout.fnmatch_lines([f"netload: *topology {path}*"])
    _check(result, pytester.path)


def test_dut_fixture_runs_commands_in_the_router(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        def test_dut(dut, netload_topology):
            out = dut.run(["ip", "-o", "link"]).stdout
            assert all(name in out for name in dut.interfaces)
            counters = dut.counters()
            assert set(counters) == set(dut.interfaces)
            assert netload_topology.namespace == dut.namespace
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=1)
