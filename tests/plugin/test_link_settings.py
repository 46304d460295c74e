"""The link speed check in whole sessions, on the fake engine (its ports report the
modelled line rate, `port_rate_bps`, as a NIC reports its negotiated speed): a topology
whose line_rate differs gets a LinkSpeedWarning, or an ERROR naming the port with
--netload-link-strict; a topology that agrees gets neither. No root, no DPDK."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

LAB = """
[topology]
name = "lab"
line_rate = "{line_rate}"

[[ports]]
name = "p0"
device = "net_fake0"
mac = "02:00:00:00:00:01"

[[ports]]
name = "p1"
device = "net_fake1"
mac = "02:00:00:00:00:02"

[[wires]]
tx = "p0"
rx = "p1"
"""
FAKE = "--netload-engine=fake:port_rate_bps=1Gbit/s"  # its ports: 1 Gbit/s links
MISMATCH = ("port p0 (net_fake0) negotiated 1.000 Gbit/s, but the topology's line_rate is "
            "10.00 Gbit/s: rates given as a share of the line rate, and line-rate ratios, are "
            "worked out from the topology's figure; check the cable and both ends' "
            "autonegotiation (`ethtool <if>`), or give the topology the real line_rate")


def _session(pytester: pytest.Pytester, line_rate: str, *args: str) -> pytest.RunResult:
    pytester.makefile(".toml", lab=LAB.format(line_rate=line_rate))
    pytester.makepyfile("def test_ports(netload_ports): pass")
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", FAKE,
                                         "--netload-topology=lab.toml", *args)


def test_a_speed_that_differs_from_the_line_rate_warns(pytester: pytest.Pytester) -> None:
    result = _session(pytester, "10Gbit/s")
    result.assert_outcomes(passed=1, warnings=2)  # p0 and p1
    out = " ".join(result.stdout.str().split())
    assert f"LinkSpeedWarning: {MISMATCH}; --netload-link-strict makes this an error" in out


def test_strict_makes_it_an_error_naming_the_port(pytester: pytest.Pytester) -> None:
    result = _session(pytester, "10Gbit/s", "--netload-link-strict")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        f"*netload: opening port 'p0' of topology 'lab': {MISMATCH} "
        "(--netload-link-strict is set)*"])
    assert "Traceback" not in result.stdout.str()


def test_a_speed_that_agrees_is_quiet(pytester: pytest.Pytester) -> None:
    result = _session(pytester, "1Gbit/s", "--netload-link-strict")
    result.assert_outcomes(passed=1)
    assert "LinkSpeedWarning" not in result.stdout.str()
