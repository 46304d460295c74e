"""RFC 2544 through Open vSwitch on its DPDK datapath, wired as CSIT wires it.

`.venv/bin/python -m pytest conftest_examples/ovs_dpdk` runs it on the built-in
`ovs-dpdk` DUT (root; a private OVS with its PMD on a CPU of its own, its two
dpdkvhostuserclient ports connected to the generator's vhost-user ports), with OVS's
ingress policer at 200 Mbit/s on p0 -> p1. The policer, DPDK's rte_meter, charges each
frame its size without FCS and without Ethernet header (size - 18 bytes), so the
throughput is known: 25,000,000 / 46 = 543,478 pps at 64 B and 25,000,000 / 1500 =
16,667 pps at 1518 B (`ovs_policer_capacity_pps`), each within 1 %, less the share
of a trial OVS's PMD waited for its CPU (`pmd_wait_share`, measured: its full bucket's
tokens are lost meanwhile). Every lost frame is in OVS's own counters; a trial in which
another process took the PMD's CPU is retried (`dut_health=True`). About 90 s.

OVS-DPDK with its policer is the suite's own topology: a topology given to the session
replaces it. `--netload-topology=ovs-dpdk` runs it without the policer: the throughput is then OVS's,
or on a 2-CPU machine the generator's (a lower bound, "≥ ... generator ceiling"). For
an OVS-DPDK, VPP or switch of your own give a topology file (docs/real-dut.md).
"""

import pytest

from pytest_netload import assert_latency, assert_loss, assert_throughput
from pytest_netload.topology import ovs_policer_capacity_pps
from pytest_netload.topology.builtin.ovs_policer import pmd_wait_share

POLICED_OVS = "ovs-dpdk:policer_cir_bps=200000000"
pytestmark = pytest.mark.netload_topology(POLICED_OVS, ids=["ovs-policed"], default=True)

# 1-s trials; a search from 400 Mbit/s of frames without FCS (1.5x the CIR at 64 B, 2x at
# 1518 B) to within 0.5 %: the policer's 5-ms bucket adds at most 0.5 % to a 1-s trial
SHORT = dict(trial_duration="1s", drain="200ms", max_trials=12, resolution=0.005,
             max_rate="400Mbit/s@l2-nofcs", dut_health=True)


def _policed_pps(dut, frame_size):
    """The policer's rate for this frame size; None without a policer."""
    if "policer_cir_bps" not in dut.info:
        return None
    return ovs_policer_capacity_pps(int(dut.info["policer_cir_bps"]), frame_size,
                                    policer=dut.info["policer"],
                                    tsc_hz=int(dut.info.get("tsc_hz", 0)) or None)


@pytest.mark.rfc2544(frame_sizes=[64, 1518], **SHORT)
def test_throughput_and_latency(rfc2544, dut, frame_size):
    throughput = rfc2544.throughput()
    expected = _policed_pps(dut, frame_size)
    if expected is None:
        assert_throughput(throughput, at_least="10kpps")
    else:  # the policer's rate, within 1 % either way, less the share of the trials
        # OVS's PMD waited for its CPU (measured): tokens its full bucket lost meanwhile
        waited = max((pmd_wait_share(t) for t in throughput[frame_size].trials), default=0.0)
        assert_throughput(throughput, at_least=f">= {0.99 * expected * (1 - waited):.1f}pps")
        measured = throughput[frame_size].throughput_pps
        assert measured <= 1.01 * expected, (measured, expected)
    latency = rfc2544.latency(throughput=throughput, trials=2)[0]
    assert_latency(latency, p50="< 1ms")
    assert_loss(latency, at_most=0.01)


@pytest.mark.rfc2544(frame_sizes=[64], **SHORT)
def test_frame_loss(rfc2544, dut):
    result = rfc2544.frame_loss()[0]
    top = result.loss_at(1.0)
    expected = _policed_pps(dut, 64)
    if expected is not None:  # above the CIR the policer drops all the rest
        assert top.loss_ratio == pytest.approx(1 - expected / top.offered_pps, abs=0.01)
    assert result.points[-1].lost == 0
