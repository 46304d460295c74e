"""Expected frames on the built-in netns-router (the Linux kernel routing, frames through
the real engine's RX path): a routed frame comes back with the DUT's MAC as source,
the receiver's as destination, its TTL one less and its DSCP kept, so the expectation
passes (standalone, in RFC 2544's and in Y.1564's procedures); a router set to re-mark
DSCP, or to not decrement the TTL (nftables in its forward chain), fails it with a diff
that names the field."""

from __future__ import annotations

import os

import pytest

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="netns-router needs root (CI runs as root)"),
]

SESSION = """
import pytest
from pytest_netload import assert_frames_match, expect, udp

ROUTED = expect(ttl="sent-1", src="dut_mac", dst="rx_mac", dscp=10)

def test_standalone(expect_frames):
    check = expect_frames(udp(size=128, dscp=10, name="probe"), ROUTED, rate="1000pps",
                          duration="1s")
    assert check.received >= 990
    assert_frames_match(check)

# the frames are the check here, not the rate: a loose loss tolerance keeps a busy
# machine's late generator from making every trial invalid
@pytest.mark.rfc2544(frame_sizes=[128], trial_duration="1s", drain="50ms", max_trials=3,
                     resolution=0.5, max_rate="5kpps", loss_tolerance=0.5, expect=ROUTED,
                     stream=udp(dscp=10))
def test_throughput(rfc2544):
    rfc2544.throughput()
    assert_frames_match(rfc2544.frames)

# Y.1564 compares every step's frames the same way (its SAC is not the check here)
@pytest.mark.y1564(services=[{"name": "data", "cir": "2Mbit/s", "frame_size": 512,
                              "dscp": 10, "sac": {"flr": "50%"}}],
                   steps=[1.0], step_duration="1s", eir_step=False, policing=False,
                   checkpoint=False, expect=ROUTED)
def test_y1564(y1564):
    y1564.sct("data")
    assert_frames_match(y1564.frames)
"""


def _run(pytester: pytest.Pytester, topology: str) -> pytest.RunResult:
    pytester.makepyfile(test_expect=SESSION)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA",
                                         f"--netload-topology={topology}", timeout=300)


def test_a_router_passes_a_ttl_mac_dscp_expectation(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "netns-router")
    result.assert_outcomes(passed=3)


@pytest.mark.parametrize(("topology", "diff"), [
    ("netns-router:ttl_set=64", "ip.ttl: expected 63, got 64"),
    ("netns-router:remark_dscp=0", "ip.dscp: expected 10, got 0"),
])
def test_a_router_that_keeps_the_ttl_or_remarks_fails_with_a_diff(
        pytester: pytest.Pytester, topology: str, diff: str) -> None:
    result = _run(pytester, topology)
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines([
        "*received frames differ from the expected frame*",
        "*stream 'probe': * of * frames did not match the expected frame*",
        f"*frame seq 0 (124 bytes): {diff}",
    ])
