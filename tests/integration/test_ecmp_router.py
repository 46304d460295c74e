"""Where frames land, on the built-in ECMP router (netns-router:ecmp=3) with known answers.

- L4 hashing (the default), 64 UDP source ports from one address pair: the flows spread
  over the three members; assert_spread passes, and its chi-square statistic, p and the
  per-member counts are in results.json and the HTML report. Each member's frames are a
  whole number of flows (100 frames each), and the frames the members captured show
  every one of the 64 flows on one member only: no flow was split.
- L3 hashing, the same 64 source ports: one address pair is one flow to the hash, so every
  frame lands on one member; assert_spread fails (caught), assert_delivered_to(that
  member) passes and assert_not_delivered passes for the other two.
- A stream to member p2's own address is routed to p2 alone (a forwarding decision), IPv6
  spreads as IPv4 does, and the router's teardown, and the sweep after a killed process,
  leave nothing behind.

The tests run as one plugin session (pytester, a subprocess) with both topologies through
the netload_topology marker, so the fixture, the topology option, the records and the
report are those a user gets.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_netload.topology.builtin import build, sweep_stale

from netutil import present

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="netns-router needs root (CI runs as root)"),
]

SUITE = """
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pytest_netload import assert_delivered_to, assert_not_delivered, assert_spread, udp

MEMBERS = ["p1", "p2", "p3"]
OUT = os.environ["ECMP_OUT"]


def _keep(name, counts):
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(counts.as_dict(), f)


@pytest.mark.netload_topology("netns-router:ecmp=3")
def test_l4_hash_spreads_many_flows(port_counts, dut):
    assert dut.info["hash"] == "l4" and dut.info["ecmp_members"] == "p1,p2,p3"
    counts = port_counts(udp(flows=64, name="64 flows"), over=MEMBERS)
    _keep("l4", counts)
    assert counts.flows == 64 and counts.tx_packets == 6400
    assert_spread(counts, over=MEMBERS)
    # no flow split over two members: each member got whole flows (100 frames each), and
    # the frames the members captured last show every flow on one member only
    assert all(n % 100 == 0 for n in counts.counts.values()), counts
    assert (counts.sampled_flows, counts.split_flows) == (64, 0), counts


@pytest.mark.netload_topology("netns-router:ecmp=3")
def test_a_members_own_address_is_routed_to_it_alone(port_counts):
    counts = port_counts(udp(dst="198.19.1.2", flows=16, name="to p2"), over=MEMBERS)
    assert_delivered_to(counts, "p2")
    assert_not_delivered(counts, "p1")
    assert_not_delivered(counts, "p3")


@pytest.mark.netload_topology("netns-router:ecmp=3,family=ipv6")
def test_ipv6_l4_hash_spreads_many_flows(port_counts, dut):
    assert dut.info["ecmp_destination"] == "2001:2:0:2000::1"
    counts = port_counts(udp(flows=64, name="64 IPv6 flows"), over=MEMBERS)
    assert_spread(counts, over=MEMBERS)


@pytest.mark.netload_topology("netns-router:ecmp=3,hash=l3")
def test_l3_hash_puts_one_pair_on_one_member(port_counts, dut):
    assert dut.info["fib_multipath_hash_policy"] == "0"
    counts = port_counts(udp(flows=64, name="one pair"), over=MEMBERS)
    _keep("l3", counts)
    (member,) = [p for p, n in counts.counts.items() if n]
    with pytest.raises(AssertionError, match="every one landed on " + member):
        assert_spread(counts, over=MEMBERS)
    assert_delivered_to(counts, member)
    for other in MEMBERS:
        if other != member:
            assert_not_delivered(counts, other)
"""


def test_ecmp_known_answers(pytester: pytest.Pytester) -> None:
    from pytest_netload.reports.load import load

    out = pytester.path / "out"
    out.mkdir()
    pytester.makepyfile(test_ecmp_suite=SUITE)
    os.environ["ECMP_OUT"] = str(out)
    try:
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA", timeout=600)
    finally:
        os.environ.pop("ECMP_OUT", None)
    assert result.parseoutcomes().get("passed") == 4, result.stdout.str()[-3000:]
    l4 = json.loads((out / "l4.json").read_text())
    l3 = json.loads((out / "l3.json").read_text())
    assert sum(l4["counts"].values()) == 6400 and min(l4["counts"].values()) > 0
    assert sorted(l3["counts"].values()) == [0, 0, 6400]
    doc = load(pytester.path / "netload-results" / "results.json")
    by_test = {t["nodeid"].rpartition("::")[2]: t for t in doc["tests"]}
    spread = [m for m in by_test["test_l4_hash_spreads_many_flows[netns-router:ecmp=3]"]
              ["measurements"] if m["kind"] == "spread"]
    (s,) = spread
    assert (s["unit"], s["units"], s["passed"]) == ("flow", 64, True)
    assert s["counts"] == [l4["counts"][p] for p in ("p1", "p2", "p3")] and s["p"] >= 0.001
    print(f"L4 hash: per-member frames {s['counts']}, chi-square {s['chi2']:.4g}, "
          f"p = {s['p']:.4g}")
    (caught,) = [m for m in by_test["test_l3_hash_puts_one_pair_on_one_member"
                                    "[netns-router:ecmp=3,hash=l3]"]["measurements"]
                 if m["kind"] == "spread"]
    assert caught["passed"] is False and caught["p"] < 1e-20
    print(f"L3 hash: per-member frames {caught['counts']}, chi-square {caught['chi2']:.4g}, "
          f"p = {caught['p']:.3g}")
    page = (pytester.path / "netload-results" / "report.html").read_text()
    assert "Where frames land: spread over members" in page
    assert "Where frames land: forwarding decisions" in page


def test_ecmp_router_is_removed_with_everything_it_made() -> None:
    with build("netns-router", ecmp=4, hash="l3") as built:
        ns = built.topology.namespace
        assert ns is not None
        assert [p.name for p in built.topology.ports] == ["p0", "p1", "p2", "p3", "p4"]
        routes = subprocess.run(["ip", "-n", ns, "-j", "route", "show", "198.19.128.0/17"],
                                capture_output=True, text=True, check=True).stdout
        (route,) = json.loads(routes)
        assert [h["gateway"] for h in route["nexthops"]] == [
            "198.19.0.2", "198.19.1.2", "198.19.2.2", "198.19.3.2"]
        policy = subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-n",
                                 "net.ipv4.fib_multipath_hash_policy"], capture_output=True,
                                text=True, check=True).stdout
        assert policy.strip() == "0"
        names = {p.iface for p in built.topology.ports if p.iface} | {ns}
        assert present(names) == names
    assert present(names) == set()


def test_the_sweep_removes_what_a_killed_process_left() -> None:
    code = textwrap.dedent("""
        import os
        from pytest_netload.topology.builtin import build, sweep_stale
        cm = build("netns-router", ecmp=3, prefix="ecmpsw")  # kept: a collected context
        # would clean up; its own prefix: no other session's sweep (of "nl") takes it first
        b = cm.__enter__()
        print(b.topology.namespace, *(p.iface for p in b.topology.ports), flush=True)
        os.kill(os.getpid(), 9)  # SIGKILL: no atexit, no handler
    """)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    names = set(proc.stdout.split())
    assert len(names) == 5 and present(names) == names  # the namespace and 4 interfaces
    assert names <= set(sweep_stale(prefix="ecmpsw"))
    assert present(names) == set()
