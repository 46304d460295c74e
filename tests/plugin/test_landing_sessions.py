"""Where frames land, in whole sessions on the fake ECMP router (--netload-engine=
fake:ecmp=3): the port_counts fixture, assert_spread / assert_delivered_to /
assert_not_delivered with their verdicts in the summary, results.json and the report;
the fake's L4 hash spreads 64 flows, its L3 hash puts one address pair on one member."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_netload.reports.load import load

pytest_plugins = ["pytester"]

EXAMPLE = Path(__file__).parents[2] / "conftest_examples" / "ecmp"

SESSION = """
    import pytest
    from pytest_netload import (assert_delivered_to, assert_not_delivered, assert_spread,
                                udp)

    MEMBERS = ["p1", "p2", "p3"]

    def test_spread(port_counts, netload_topology):
        assert [p.name for p in netload_topology.ports] == ["p0", "p1", "p2", "p3"]
        counts = port_counts(udp(flows=64, name="many"))
        assert counts.ports == tuple(MEMBERS) and counts.tx_packets == 6400
        assert_spread(counts, over=MEMBERS)
        both = port_counts([udp(flows=32, name="a"), udp(flows=32, sport=5000, name="b")])
        assert [c.stream for c in both] == ["a", "b"] and both[0].tx_packets == 3200
        assert_spread(both, over=MEMBERS)  # summed: 64 flows

    def test_one_pair(port_counts):
        counts = port_counts(udp(flows=64, name="one pair"), over=MEMBERS, count=640)
        member = max(counts.counts, key=counts.counts.get)
        assert_delivered_to(counts, member)
        for other in set(MEMBERS) - {member}:
            assert_not_delivered(counts, other)

    def test_spread_of_one_pair_fails(port_counts):
        assert_spread(port_counts(udp(flows=64, name="one pair"), over=MEMBERS), over=MEMBERS)
"""


def _run(pytester: pytest.Pytester, hash_: str) -> pytest.RunResult:
    pytester.makepyfile(test_ecmp_sessions=SESSION)
    return pytester.runpytest(f"--netload-engine=fake:ecmp=3,ecmp_hash={hash_}",
                              "-p", "no:cacheprovider", "-rA")


def test_l4_hash_spreads_and_the_records_say_how(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "l4")
    # the fake's L4 hash spreads even "one pair" (64 source ports): only test_one_pair fails
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_one_pair*", "*reached p*, but also*"])
    doc = load(pytester.path / "netload-results" / "results.json")
    tests = {t["nodeid"].rpartition("::")[2]: t for t in doc["tests"]}
    spread, merged = [m for m in tests["test_spread"]["measurements"] if m["kind"] == "spread"]
    assert (merged["stream"], merged["units"]) == ("a + b", 64)
    assert (spread["members"], spread["unit"], spread["units"], spread["passed"]) == (
        ["p1", "p2", "p3"], "flow", 64, True)
    assert sum(spread["counts"]) == 6400 and 0 < spread["p"] <= 1
    counted = next(m for m in tests["test_spread"]["measurements"] if m["kind"] == "port_counts")
    assert (counted["tx"], counted["flows"], counted["offered_pps"]) == ("p0", 64, 2000.0)
    assert [v["check"] for v in tests["test_spread"]["verdicts"]] == ["spread", "spread"]
    page = (pytester.path / "netload-results" / "report.html").read_text()
    assert "Where frames land: spread over members" in page


def test_l3_hash_puts_one_pair_on_one_member(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "l3")
    # one address pair is one flow to an L3 hash: both spreads fail, the delivery passes
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert ("frames of stream 'one pair' are not spread evenly over ['p1', 'p2', 'p3']: "
            "every one landed on p") in out
    assert "statistic: chi-square 128, p = 1.6e-28 over 64 flows" in out
    doc = load(pytester.path / "netload-results" / "results.json")
    tests = {t["nodeid"].rpartition("::")[2]: t for t in doc["tests"]}
    delivery = [m for m in tests["test_one_pair"]["measurements"] if m["kind"] == "delivery"]
    assert [(m["expect"], m["passed"]) for m in delivery] == [
        ("delivered_to", True), ("not_delivered", True), ("not_delivered", True)]
    assert sorted(delivery[0]["counts"].values()) == [0, 0, 640]
    assert tests["test_spread_of_one_pair_fails"]["outcome"] == "failed"


def test_port_counts_refuses_bad_ports(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad="""
        import pytest
        from pytest_netload import NetloadConfigError, udp

        def test_bad(port_counts):
            with pytest.raises(NetloadConfigError, match="holds the sending port 'p0'"):
                port_counts(udp(), over=["p0", "p1"])
            with pytest.raises(NetloadConfigError, match="port 'p9' is not a port of"):
                port_counts(udp(), over=["p9"])
            with pytest.raises(NetloadConfigError, match="count = 0: give the frames"):
                port_counts(udp(), count=0)
    """)
    result = pytester.runpytest("--netload-engine=fake:ecmp=2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_bad_fake_ecmp_setting_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest("--netload-engine=fake:ecmp=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*fake DUT ecmp=1: give 0 (no ECMP) or 2 to 8 member ports*"])


@pytest.mark.parametrize(("hash_", "outcomes"), [("l4", {"passed": 2}),
                                                 ("l3", {"passed": 1, "failed": 1})])
def test_the_example_suite_on_the_fake_ecmp_router(pytester: pytest.Pytester, hash_: str,
                                                   outcomes: dict[str, int]) -> None:
    shutil.copytree(EXAMPLE, pytester.path / "ecmp")
    result = pytester.runpytest(f"--netload-engine=fake:ecmp=4,ecmp_hash={hash_}",
                                "-p", "no:cacheprovider", "ecmp")
    result.assert_outcomes(**outcomes)
    if hash_ == "l3":
        assert "every one landed on p" in result.stdout.str()
