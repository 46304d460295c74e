"""The ovs-dpdk DUT's pure parts: OVS's counters parsed from its own text (OpenFlow port
statistics with DPDK's custom ones, the PMD statistics, the version), the policer's
capacity as rte_meter counts it, and its parameters checked before anything starts."""

from __future__ import annotations

import pytest

from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology.builtin.ovs import ovs_dpdk
from pytest_netload.topology.builtin.ovs_policer import (
    default_cbs,
    meter_rate_bytes_per_s,
    ovs_policer_capacity_pps,
)
from pytest_netload.topology.builtin.ovs_proc import (
    machine_took_the_pmd,
    parse_pmd_stats,
    parse_port_stats,
    parse_version,
)

# ovs-ofctl -O OpenFlow14 dump-ports of OVS 3.1.0 on DPDK 22.11.11 (two vhost-user
# client ports; the custom statistics cut short)
DUMP_PORTS = """\
OFPST_PORT reply (OF1.4) (xid=0x2): 3 ports
  port LOCAL: rx pkts=0, bytes=0, drop=0, errs=0, frame=0, over=0, crc=0
           tx pkts=0, bytes=0, drop=0, errs=0, coll=0
           duration=51.398s
  port  1: rx pkts=356000, bytes=21360000, drop=12, errs=?, frame=?, over=?, crc=?
           tx pkts=0, bytes=0, drop=0, errs=?, coll=?
           duration=51.414s
           rx rfc2819 1_to_64_packets=356000, 65_to_127_packets=0, broadcast_packets=0,
           tx rfc2819 1_to_64_packets=0, 65_to_127_packets=0, multicast_packets=0,
           CUSTOM Statistics
                      ovs_tx_retries=0, ovs_tx_failure_drops=0, ovs_tx_mtu_exceeded_drops=0,
                      ovs_tx_qos_drops=0, ovs_rx_qos_drops=12, ovs_tx_invalid_hwol_drops=0,
                      rx_q0_good_packets=356000, rx_q0_good_bytes=21360000,
  port  2: rx pkts=0, bytes=0, drop=0, errs=?, frame=?, over=?, crc=?
           tx pkts=353952, bytes=21237120, drop=2048, errs=?, coll=?
           duration=51.406s
           CUSTOM Statistics
                      ovs_tx_retries=9, ovs_tx_failure_drops=2000, ovs_tx_mtu_exceeded_drops=0,
                      ovs_tx_qos_drops=48, ovs_rx_qos_drops=0, ovs_tx_invalid_hwol_drops=0,
                      tx_q0_good_packets=353952,
"""

PMD_STATS = """\
pmd thread numa_id 0 core_id 1:
  packets received: 1163232
  packet recirculations: 0
  avg. datapath passes per packet: 1.00
  simple match hits: 1163100
  megaflow hits: 129
  miss with success upcall: 3
  miss with failed upcall: 7
  avg. packets per output batch: 32.00
  idle cycles: 216529807075 (98.58%)
  processing cycles: 3119305191 (1.42%)
  avg cycles per packet: 188823.04 (219649112266/1163232)
main thread:
  packets received: 0
  miss with failed upcall: 0
"""


def test_port_stats_per_openflow_port_with_the_custom_counters() -> None:
    stats = parse_port_stats(DUMP_PORTS)
    assert set(stats) == {"LOCAL", "1", "2"}
    assert stats["1"]["rx_packets"] == 356000 and stats["1"]["rx_bytes"] == 21360000
    assert stats["1"]["rx_dropped"] == 12 and stats["1"]["ovs_rx_qos_drops"] == 12
    assert stats["2"] == {"rx_packets": 0, "rx_bytes": 0, "rx_dropped": 0,
                          "tx_packets": 353952, "tx_bytes": 21237120, "tx_dropped": 2048,
                          "ovs_tx_retries": 9, "ovs_tx_failure_drops": 2000,
                          "ovs_tx_mtu_exceeded_drops": 0, "ovs_tx_qos_drops": 48,
                          "ovs_rx_qos_drops": 0, "ovs_tx_invalid_hwol_drops": 0,
                          "tx_q0_good_packets": 353952}


def test_counters_a_device_does_not_keep_are_left_out_and_the_size_histograms_too() -> None:
    stats = parse_port_stats(DUMP_PORTS)
    assert "rx_errors" not in stats["1"] and "tx_errors" not in stats["2"]  # errs=?
    assert stats["LOCAL"]["rx_errors"] == 0 and stats["LOCAL"]["collisions"] == 0
    assert not any("rfc2819" in key or key.startswith("1_to_64") for key in stats["1"])


def test_text_without_a_port_parses_to_nothing() -> None:
    assert parse_port_stats("") == {}
    assert parse_port_stats("ovs-ofctl: br0 is not a bridge or a socket\n") == {}
    assert parse_pmd_stats("") == {}


def test_pmd_stats_per_thread_first_integer_of_each_line_without_averages() -> None:
    stats = parse_pmd_stats(PMD_STATS)
    assert set(stats) == {"pmd thread numa_id 0 core_id 1", "main thread"}
    pmd = stats["pmd thread numa_id 0 core_id 1"]
    assert pmd["packets received"] == 1163232
    assert pmd["miss with failed upcall"] == 7
    assert pmd["idle cycles"] == 216529807075
    assert not any(key.startswith("avg") for key in pmd)
    assert stats["main thread"] == {"packets received": 0, "miss with failed upcall": 0}


def test_version_of_ovs_and_its_dpdk() -> None:
    text = "ovs-vswitchd-dpdk (Open vSwitch) 3.1.0\nDPDK 22.11.11\n"
    assert parse_version(text) == ("3.1.0", "DPDK 22.11.11")
    assert parse_version("ovs-vswitchd (Open vSwitch) 3.1.0\n") == ("3.1.0", "")


def test_the_policer_counts_the_frame_without_fcs_and_without_ethernet_header() -> None:
    # OVS's qos.rst: cir=46000000 bytes/s limits 64-byte frames to ~1,000,000 pps
    assert ovs_policer_capacity_pps(368_000_000, 64, policer="egress") == 1_000_000
    assert ovs_policer_capacity_pps(200_000_000, 64) == pytest.approx(25e6 / 46)
    assert ovs_policer_capacity_pps(200_000_000, 1518) == pytest.approx(25e6 / 1500)


def test_the_meter_rate_is_the_cir_when_the_tsc_divides_it_and_faster_when_not() -> None:
    assert meter_rate_bytes_per_s(25_000_000, 2_600_000_000) == 25_000_000  # period 104
    # period 2.6e9 / 25.5e6 = 101.96 cycles: truncated to 101, about 1 % fast
    rate = meter_rate_bytes_per_s(25_500_000, 2_600_000_000)
    assert rate == pytest.approx(2_600_000_000 / 101)
    assert 1.0 < rate / 25_500_000 < 1.01
    # below 100 cycles a byte: several bytes per period, the period truncated
    fast = meter_rate_bytes_per_s(100_000_000, 2_600_000_000)  # period 26 -> 4 bytes/104
    assert fast == pytest.approx(2_600_000_000 * 4 / 104)
    assert ovs_policer_capacity_pps(200_000_000, 64, tsc_hz=2_600_000_000) == \
        pytest.approx(25e6 / 46)


def test_the_default_bucket_is_five_ms_at_the_cir_in_whole_kbit() -> None:
    assert default_cbs(200_000_000) == 125_000
    assert default_cbs(1_000_000) == 3_000  # the floor: two full frames
    assert default_cbs(123_456_000) % 125 == 0


@pytest.mark.parametrize(("params", "named"), [
    ({"policer_cir_bps": 7_999}, "policer_cir_bps = 7999"),
    ({"policer_cir_bps": 200_000_500}, "whole kbit/s"),
    ({"policer_cir_bps": 200_000_004, "policer": "egress"}, "whole bytes/s"),
    ({"policer_cir_bps": True}, "policer_cir_bps = True"),
    ({"policer_cbs_bytes": 3000}, "needs policer_cir_bps"),
    ({"policer_cir_bps": 200_000_000, "policer_cbs_bytes": 1000}, "policer_cbs_bytes = 1000"),
    ({"policer_cir_bps": 200_000_000, "policer_cbs_bytes": 3001}, "multiple of 125"),
    ({"policer_cir_bps": 200_000_000, "policer": "both"}, "policer = 'both'"),
    ({"memory_mb": 128}, "memory_mb = 128"),
    ({"cpu": -1}, "cpu = -1"),
    ({"backend": "tap"}, "backend = 'tap'"),
])
def test_bad_parameters_are_named_before_anything_starts(params: dict[str, object],
                                                         named: str) -> None:
    with pytest.raises(NetloadConfigError, match=named):
        ovs_dpdk(**params)  # type: ignore[arg-type]


def test_an_egress_policer_takes_any_whole_byte_rate_and_bucket() -> None:
    ovs_dpdk(policer_cir_bps=200_000_008, policer_cbs_bytes=3001, policer="egress")
    with pytest.raises(NetloadConfigError, match="frame_size = 18"):
        ovs_policer_capacity_pps(200_000_000, 18)


def test_a_pmd_preempted_in_long_slices_or_for_long_makes_the_trial_the_machines() -> None:
    # quiet: 146 ms of a 2-s trial in 9,500 waits of 15 us (kernel threads, short commands)
    assert machine_took_the_pmd(146_000_000, 9_500, 2.0) is None
    # another process's slices: 718 ms in waits of 3 ms
    why = machine_took_the_pmd(718_000_000, 240, 2.0, cpu=1)
    assert why is not None and "718.0 ms for its CPU 1" in why and "2.99 ms at a time" in why
    # a busy machine in many short slices: 552 ms of a 2-s trial (27.6 %), 70 us each
    assert machine_took_the_pmd(552_000_000, 7_906, 2.0) is not None
    # one long stall counts from 1 % of the trial
    assert machine_took_the_pmd(5_000_000, 1, 2.0) is None  # 0.25 %: under the share
    assert machine_took_the_pmd(30_000_000, 2, 2.0) is not None  # 1.5 % in 15 ms stalls
    assert machine_took_the_pmd(0, 0, 1.0) is None


def test_the_pmds_wait_share_is_read_from_a_trial_or_its_record() -> None:
    """2.3 % of a 1 s trial waiting for its CPU: the CI run that found the CIR 2.1 % low."""
    from types import SimpleNamespace

    from pytest_netload.measure.dut import DutCounter
    from pytest_netload.topology.builtin.ovs_policer import pmd_wait_share

    record = {"duration_s": 1.0, "loss_attribution": {"counters": {
        "cpu_wait_ns (OVS thread pmd-c01/id:8 on CPU 1: runnable, waiting for its CPU)":
            23_095_610, "cpu_preemptions (OVS thread pmd-c01/id:8 on CPU 1)": 61}}}
    assert pmd_wait_share(record) == 0.02309561
    trial = SimpleNamespace(duration_s=2.0, attribution=SimpleNamespace(counters=[
        DutCounter("cpu_wait_ns", 20_000_000, "info", "OVS thread pmd"),
        DutCounter("cpu_preemptions", 61, "info", "OVS thread pmd")]))
    assert pmd_wait_share(trial) == 0.01
    assert pmd_wait_share({"duration_s": 1.0}) == 0.0
    assert pmd_wait_share(SimpleNamespace(duration_s=0.0, attribution=None)) == 0.0
