"""Loss attribution in Y.1564 and RFC 2889 on the built-in DUTs, through the plugin's
hooks (BuiltinDutHooks) as RFC 2544's trials have it: every lost frame is found in a
counter, 0 unaccounted.

- netns-policed: a service that claims 12.5 Mbit/s on its 10 Mbit/s policer loses a
  fifth at CIR 100 %, and a short SPT at that rate too: the policer's exceed counter
  accounts for each step's and the SPT's loss;
- netns-bridge: an nftables rule of the bridge family drops every 4th UDP frame it
  forwards: each fully meshed trial's loss is that rule's counter.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

POLICED = "netns-policed:cir_bps=10000000,cbs_bytes=12500"

TESTS = f"""
import pytest

SAC = {{"flr": "0.1%"}}

@pytest.mark.netload_topology("{POLICED}", ids=["policed"])
@pytest.mark.y1564(services=[{{"name": "tight", "cir": "12.5Mbit/s", "cbs": "12500B",
                               "frame_size": 512, "sac": SAC}}], step_duration="1s",
                   steps=[0.5, 1.0], policing=False)
def test_y1564(y1564):
    y1564.sct("tight")
    y1564.spt("2s")

@pytest.mark.netload_topology("netns-bridge", ids=["bridge"])
@pytest.mark.rfc2889(trial_duration="1s", max_rate="4kpps", resolution=0.25, max_trials=4,
                     frame_size=128, drain="0.3s")
def test_rfc2889(rfc2889, dut):
    dut.run(["nft", "-f", "-"], input=(
        "table bridge nltest {{\\n chain nlfwd {{\\n  type filter hook forward priority 0; "
        "policy accept;\\n  meta l4proto udp numgen inc mod 4 == 0 counter drop\\n }}\\n}}\\n"))
    try:
        rfc2889.fully_meshed()
    finally:
        dut.run(["nft", "delete", "table", "bridge", "nltest"])
"""


def _doc(path: Path) -> dict[str, Any]:
    from pytest_netload.reports.load import load

    return load(path)  # valid against the shipped schema


def _exact(record: dict[str, Any], kinds: set[str]) -> None:
    table = record["loss_attribution"]
    assert table["unaccounted"] == 0, table["text"]
    assert table["lost"] == 0 or {r["kind"] for r in table["rows"]} & kinds, table["text"]


def test_y1564_and_rfc2889_loss_is_attributed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_attr=TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "-s", "--netload-report-dir=out", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=2)
    doc = _doc(pytester.path / "out" / "results.json")
    records = {m["kind"]: m for t in doc["tests"] for m in t["measurements"]}
    half, full = records["y1564_sct"]["steps"]
    if full["measured"]:  # every try may be the generator's on a busy machine (late TX)
        assert full["lost"] > 0.15 * full["tx_frames"], full  # 1 - 10/12.5 = 0.2
    for step in (half, full):
        if step["measured"]:
            _exact(step, {"filter_drop"})
    spt = records["y1564_spt"]
    assert spt["loss_attribution"]["lost"] > 0
    _exact(spt, {"filter_drop"})
    mesh = records["rfc2889_fully_meshed"]["trials"]
    assert mesh and any(t["loss_attribution"]["lost"] > 0 for t in mesh)
    for trial in mesh:
        _exact(trial, {"filter_drop"})


FLUSHED = """
import pytest

def pytest_netload_before_trial(trial, dut):
    if trial.procedure.startswith("rfc2889_address"):
        with open("learned.log", "a") as f:  # the built-in flush ran just before
            f.write(f"{trial.number} {dut.fdb_learned()}\\n")
"""

CAPACITY = """
import pytest

@pytest.mark.netload_topology("netns-bridge:ports=3,learning=true,max_learned=64", ids=["k64"])
@pytest.mark.rfc2889(low=1, high=200, learning_rate="5000pps", test_rate="5000pps",
                     drain="0.1s")
def test_capacity(rfc2889):
    assert rfc2889.address_caching_capacity().capacity == 64
"""


def test_the_builtin_bridge_flushes_its_table_through_the_hook(
        pytester: pytest.Pytester) -> None:
    """The built-in bridge's pytest_netload_dut_flush_addresses empties the table before
    each address trial: the trial starts with nothing learned, and the capacity is the
    table's."""
    pytester.makeconftest(FLUSHED)
    pytester.makepyfile(test_capacity=CAPACITY)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "--netload-report-dir=out", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)
    lines = (pytester.path / "learned.log").read_text().split()
    assert len(lines) >= 10 and lines[1::2] == ["0"] * (len(lines) // 2), lines
