"""The OVS-DPDK example (conftest_examples/ovs_dpdk) on the built-in ovs-dpdk with its
policer at 200 Mbit/s: it passes, OVS's facts reach results.json, every lost frame of a
valid trial is in OVS's counters (0 unaccounted), and the throughput is the policer's
rate (rte_meter's bytes: size - 18) within 1 % at 64 B and 1518 B (less the measured
share of a trial OVS's PMD waited for its CPU), found by the DUT,
not bounded by the generator."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from calm import judged_unless_the_machine_was_busy

from pytest_netload.topology.builtin.ovs_policer import ovs_policer_capacity_pps, pmd_wait_share
from pytest_netload.topology.builtin.ovs_proc import installed

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
    pytest.mark.skipif(installed() is not None,
                       reason=f"OVS-DPDK is not installed ({installed()}): scripts/setup.sh"),
]

EXAMPLES = Path(__file__).parents[2] / "conftest_examples"


def test_rfc2544_through_policed_ovs_finds_the_cir(pytester: pytest.Pytester) -> None:
    shutil.copytree(EXAMPLES / "ovs_dpdk", pytester.path / "ovs_dpdk")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "-rs", "ovs_dpdk", "--netload-report-dir=out",
                                           timeout=600)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=3)
    from pytest_netload.reports.load import load

    doc = load(pytester.path / "out" / "results.json")  # valid against the shipped schema
    dut = doc["topology"]["dut"]
    assert dut["name"] == "ovs-dpdk" and dut["transport"] == "vhost-user", dut
    assert dut["ovs_version"].startswith("3.") and dut["dpdk_version"].startswith("DPDK 22.11")
    assert (dut["policer"], dut["policer_cir_bps"]) == ("ingress", "200000000"), dut
    trials = [t for test in doc["tests"] for m in test["measurements"]
              for t in m.get("trials", ()) if t.get("valid", True)]
    assert trials
    for trial in trials:
        table = trial.get("loss_attribution") or {}
        if table.get("lost"):
            assert table["unaccounted"] == 0, table
            assert "netload-builtin-dut" in table["sources"], table
    searches = [m for test in doc["tests"] for m in test["measurements"]
                if m["kind"] == "throughput"]
    assert sorted(s["frame_size"] for s in searches) == [64, 1518]
    for search in searches:  # the policer, not the generator, set it
        expected = ovs_policer_capacity_pps(200_000_000, search["frame_size"])
        assert search["lower_bound_by_generator"] is False, search
        # within 1 % either way, less the share OVS's PMD waited for its CPU (measured)
        waited = max((pmd_wait_share(t) for t in search["trials"]), default=0.0)
        assert 0.99 * expected * (1 - waited) <= search["throughput_pps"] <= 1.01 * expected, \
            (search["throughput_pps"], expected, waited)
