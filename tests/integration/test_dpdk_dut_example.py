"""The DPDK-speed DUT example (conftest_examples/dpdk_dut) on dpdk-testpmd over
vhost-user: it passes, testpmd's facts reach results.json, every lost frame of a valid
trial is in testpmd's counters (0 unaccounted), and a throughput the generator bounds is
reported as a lower bound."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

EXAMPLES = Path(__file__).parents[2] / "conftest_examples"


def test_rfc2544_through_testpmd_with_every_loss_in_its_counters(
        pytester: pytest.Pytester) -> None:
    shutil.copytree(EXAMPLES / "dpdk_dut", pytester.path / "dpdk_dut")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "-rs", "dpdk_dut", "--netload-report-dir=out",
                                           timeout=600)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=3)
    from pytest_netload.reports.load import load

    doc = load(pytester.path / "out" / "results.json")  # valid against the shipped schema
    dut = doc["topology"]["dut"]
    assert dut["name"] == "dpdk-testpmd" and dut["transport"] == "vhost-user", dut
    assert dut["dpdk_version"].startswith("DPDK 22.11"), dut
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
    assert len(searches) == 2
    for search in searches:  # on a 2-CPU machine testpmd outruns the generator
        if search["throughput_pps"] >= 0.99 * search["max_pps"]:
            assert search["lower_bound_by_generator"] is True, search
