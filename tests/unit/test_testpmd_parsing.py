"""The dpdk-testpmd DUT's pure parts: testpmd's counters parsed from its own text, its
parameters checked before anything starts, and the rule that a DUT's report of frames it
could not hand to the generator makes a trial the generator's failure."""

from __future__ import annotations

import pytest

from pytest_netload.bench.validity import dut_saw_generator_drops
from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure.dut import DutCounter, attribute_loss
from pytest_netload.topology.builtin.testpmd import dpdk_testpmd
from pytest_netload.topology.builtin.testpmd_proc import parse_fwd_stats, parse_port_stats

PORT_STATS = """
  ######################## NIC statistics for port 0  ########################
  RX-packets: 13529088   RX-missed: 7          RX-bytes:  811745280
  RX-errors: 2
  RX-nombuf:  3
  TX-packets: 0          TX-errors: 0          TX-bytes:  0

  Throughput (since last show)
  Rx-pps:      6764544          Rx-bps:   3246981120
  Tx-pps:            0          Tx-bps:            0
  ############################################################################

  ######################## NIC statistics for port 1  ########################
  RX-packets: 0          RX-missed: 0          RX-bytes:  0
  RX-errors: 0
  RX-nombuf:  0
  TX-packets: 13510240   TX-errors: 5          TX-bytes:  810614400
  ############################################################################
"""

FWD_STATS = """
  ---------------------- Forward statistics for port 0  ----------------------
  RX-packets: 13529088       RX-dropped: 0             RX-total: 13529088
  TX-packets: 0              TX-dropped: 0             TX-total: 0
  ----------------------------------------------------------------------------

  ---------------------- Forward statistics for port 1  ----------------------
  RX-packets: 0              RX-dropped: 0             RX-total: 0
  TX-packets: 13510240       TX-dropped: 18848         TX-total: 13529088
  ----------------------------------------------------------------------------

  +++++++++++++++ Accumulated forward statistics for all ports+++++++++++++++
  RX-packets: 13529088       RX-dropped: 0             RX-total: 13529088
  TX-packets: 13510240       TX-dropped: 18848         TX-total: 13529088
  ++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++
"""


def test_port_stats_per_port_without_the_rates() -> None:
    stats = parse_port_stats(PORT_STATS)
    assert stats[0] == {"RX-packets": 13529088, "RX-missed": 7, "RX-bytes": 811745280,
                        "RX-errors": 2, "RX-nombuf": 3, "TX-packets": 0, "TX-errors": 0,
                        "TX-bytes": 0}
    assert stats[1]["TX-packets"] == 13510240 and stats[1]["TX-errors"] == 5
    assert set(stats) == {0, 1}


def test_forwarding_stats_per_port_and_not_the_accumulated_block() -> None:
    stats = parse_fwd_stats(FWD_STATS)
    assert set(stats) == {0, 1}
    assert stats[1] == {"RX-packets": 0, "RX-dropped": 0, "RX-total": 0,
                        "TX-packets": 13510240, "TX-dropped": 18848, "TX-total": 13529088}


def test_text_without_a_port_block_parses_to_nothing() -> None:
    assert parse_port_stats("Invalid port 7\n") == {}
    assert parse_fwd_stats("") == {}


@pytest.mark.parametrize(("params", "named"), [
    ({"transport": "pci"}, "transport = 'pci'"),
    ({"mode": "5tswap"}, "mode = '5tswap'"),
    ({"queues": 0}, "queues = 0"),
    ({"queues": 9}, "queues = 9"),
    ({"queues": True}, "queues = True"),
    ({"memory_mb": 64}, "memory_mb = 64"),
    ({"cpu": -1}, "cpu = -1"),
    ({"backend": "tap"}, "backend = 'tap'"),
])
def test_bad_parameters_are_named_before_anything_starts(params: dict[str, object],
                                                         named: str) -> None:
    with pytest.raises(NetloadConfigError, match=named.replace("(", r"\(")):
        dpdk_testpmd(**params)  # type: ignore[arg-type]


def _attribution(lost: int, generator_drops: int, queue_drops: int = 0) -> object:
    counters = [DutCounter("TX-dropped", generator_drops, "generator_drop",
                           "testpmd port 1: its TX ring into generator port p1 was full"),
                DutCounter("RX-missed", queue_drops, "ingress_drop", "testpmd port 0")]
    return attribute_loss(lost, counters)


def test_frames_the_dut_could_not_hand_to_the_generator_make_the_trial_its_failure() -> None:
    reason = dut_saw_generator_drops(_attribution(lost=100, generator_drops=60, queue_drops=40))
    assert reason is not None
    assert "could not hand 60 frames to the generator's ports" in reason
    assert "the generator's receive path, not the DUT, was the limit" in reason


@pytest.mark.parametrize(("lost", "generator_drops", "queue_drops"), [
    (0, 0, 0),      # nothing lost
    (40, 0, 40),    # the DUT's own ingress drops: its loss, a valid trial
    (0, 5, 0),      # drops, but no frame of the trial lost
])
def test_otherwise_the_trial_stands(lost: int, generator_drops: int, queue_drops: int) -> None:
    assert dut_saw_generator_drops(_attribution(lost, generator_drops, queue_drops)) is None
    assert dut_saw_generator_drops(None) is None


def test_testpmd_in_hugepages_that_are_short_names_the_fix(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: object) -> None:
    """Checked before testpmd starts: DPDK alone would say "Cannot allocate memory"."""
    from pytest_netload import hugepages
    from pytest_netload.errors import NetloadEnvironmentError
    from pytest_netload.topology.builtin import testpmd

    monkeypatch.setattr(hugepages, "hugepage_memory",
                        lambda: {"mounted": 1, "free_mb": 100, "total_mb": 2048})
    with pytest.raises(NetloadEnvironmentError) as info:
        testpmd._build(None, "af_packet", transport="vhost", mode="io",  # type: ignore[arg-type]
                       queues=1, cpu=None, memory_mb=512, hugepages=True)
    text = str(info.value)
    assert text.startswith("the dpdk-testpmd DUT asks for 512 MiB of hugepages")
    assert "only 100 MiB of 2048 MiB are free" in text and "setup.sh --hugepages" in text
