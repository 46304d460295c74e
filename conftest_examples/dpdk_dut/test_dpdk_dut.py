"""RFC 2544 through a DUT that forwards at DPDK speed: testpmd over vhost-user.

`.venv/bin/python -m pytest conftest_examples/dpdk_dut` runs it on the built-in
`dpdk-testpmd` DUT (root; testpmd on a CPU of its own, wired to the generator's ports
by vhost-user; `--netload-topology=dpdk-testpmd:transport=memif` for memif). Every
trial's lost frames are attributed to testpmd's own counters. For OVS-DPDK, VPP or a
physical switch give a topology file instead (docs/real-dut.md).

On a machine where the generator, not testpmd, is the limit (two CPUs: testpmd takes
one), the throughput is a lower bound and says so ("≥ ... generator ceiling").

dpdk-testpmd is the suite's own topology: a topology given to the session
(--netload-topology, its ini key) replaces it; the reset test needs a DUT that can be
reset (a built-in one, or a pytest_netload_dut_reset hook) and is skipped without.
"""

import pytest

from pytest_netload import assert_latency, assert_loss, assert_throughput

pytestmark = pytest.mark.netload_topology("dpdk-testpmd", ids=["testpmd"], default=True)

# 8 loads reach a bracket within 2 % of its lower bound
SHORT = dict(trial_duration="1s", drain="200ms", max_trials=8, resolution=0.02)


@pytest.mark.rfc2544(frame_sizes=[64, 1518], **SHORT)
def test_throughput_latency_and_loss(rfc2544, frame_size):
    throughput = rfc2544.throughput()
    assert_throughput(throughput, at_least="50kpps")
    latency = rfc2544.latency(throughput=throughput, trials=2)[0]
    assert_latency(latency, p50="< 1ms")
    assert_loss(latency, at_most=0.01)


@pytest.mark.netload_requires(dut_reset=True)
@pytest.mark.rfc2544(frame_sizes=[64], **SHORT)
def test_reset(rfc2544):
    # the DUT's reset hook: testpmd stops forwarding for half a second
    result = rfc2544.reset(load="50kpps", at="1s", duration="3s")[0]
    assert result.recovered
    assert 0.4 <= result.reset_s.mean <= 1.5
