"""Example suites on a topology file they were not written for, as a lab runs them:
`pytest conftest_examples/<suite> --netload-topology=lab.toml`, unchanged.

The lab here is a netns-policed DUT (a Linux router policing p0 -> p1 at 10 Mbit/s,
CBS 12,500 B) built through the Python API and described by a TOML file the way a lab
describes its own DUT: ports by their kernel interfaces, no `mac` (each port takes its
device's), addresses with the DUT's as `peer_ip` (ARP finds its MACs), the DUT's
namespace for its commands, and -- in one file -- its policer in `[capabilities]`.

- y1564/, written for the built-in netns-policed marker, runs both its tests on the
  file that declares the policer; the header shows each port's MAC read from its
  interface, and the results record the same MACs;
- on a file that declares no policer, the service configuration test is skipped
  naming the policer it needs and what the file has; parallel/ (written for two shaped
  routers) runs once on the file; dut_hooks/ (written for netns-lossy) skips the tests
  that need a built-in DUT's counters, loss and reset, naming them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the DUT is built of namespaces (root)"),
]

EXAMPLES = Path(__file__).parents[2] / "conftest_examples"

POLICER = """
[capabilities]
policer = "10Mbit/s"
policer_cbs = 12500
"""


def lab_file(topology: Any, capabilities: str = "") -> str:
    """A lab's topology file for the built `topology`: its ports' devices and
    addresses, no MACs, the DUT's namespace, and `capabilities` as given."""
    lines = ["[topology]", 'name = "lab-policed"', f'namespace = "{topology.namespace}"', "",
             "[dut]", 'name = "edge-lab"', 'model = "Linux router with a policer"',
             capabilities]
    for port in topology.ports:
        lines += ["[[ports]]", f'name = "{port.name}"', f'device = "{port.device}"',
                  f'ip = "{port.ip}"', f'peer_ip = "{port.peer_ip}"', ""]
    for wire in topology.wires:
        lines += ["[[wires]]", f'tx = "{wire.tx}"', f'rx = "{wire.rx}"', ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def policed() -> Iterator[Any]:
    from pytest_netload.topology.builtin import netns_policed

    with netns_policed(cir_bps=10_000_000, cbs_bytes=12_500) as built:
        yield built.topology


def _suites(pytester: pytest.Pytester, *names: str) -> None:
    for name in names:
        shutil.copytree(EXAMPLES / name, pytester.path / name)


def _device_macs(topology: Any) -> dict[str, str]:
    from pytest_netload.topology.macs import kernel_interface, read_kernel_mac

    macs = {p.name: read_kernel_mac(kernel_interface(p)) for p in topology.ports}
    assert all(macs.values()), macs
    return macs  # type: ignore[return-value]


def test_y1564_runs_on_a_lab_file_that_declares_its_policer(pytester: pytest.Pytester,
                                                            policed: Any) -> None:
    path = pytester.path / "lab-policed.toml"
    path.write_text(lab_file(policed, POLICER))
    _suites(pytester, "y1564")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "-rA", "y1564", f"--netload-topology={path}",
                                           "--netload-report-dir=out", timeout=300)
    macs = _device_macs(policed)
    ifaces = {p.name: p.iface for p in policed.ports}
    result.stdout.fnmatch_lines([
        f"netload: *topology {path}*",
        f"netload: port MACs from the devices: p0 {macs['p0']} ({ifaces['p0']}), "
        f"p1 {macs['p1']} ({ifaces['p1']})"])
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=2)
    # not the built-in default's parametrisation: the file's topology, no [policed] id
    result.stdout.fnmatch_lines(["PASSED y1564/test_service_activation.py::"
                                 "test_service_configuration"])
    doc = json.loads((pytester.path / "out" / "results.json").read_text())
    assert {p["name"]: p["mac"] for p in doc["environment"]["ports"]} == macs
    assert doc["topology"]["dut"]["name"] == "edge-lab"


def test_suites_skip_what_a_lab_file_lacks_and_run_the_rest(pytester: pytest.Pytester,
                                                            policed: Any) -> None:
    path = pytester.path / "lab-router.toml"
    path.write_text(lab_file(policed).replace("lab-policed", "lab-router"))
    _suites(pytester, "y1564", "parallel", "dut_hooks")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "-rA", "y1564", "parallel", "dut_hooks",
                                           f"--netload-topology={path}",
                                           "--netload-trial-duration=1s",
                                           "--netload-report-dir=out", timeout=300)
    out = result.stdout.str()
    assert not re.search(r"\[(policed|20M|40M|lossy)", out), out  # no suite's own topology
    result.stdout.fnmatch_lines_random([
        "SKIPPED * netload_requires: needs a policer at 10.00 Mbit/s; topology lab-router "
        "has 2 ports wired both ways, no line rate, a DUT with commands, no declared "
        "policer, shaper or loss",
        "SKIPPED * netload_requires: needs the DUT's counters (a built-in DUT or a "
        "pytest_netload_dut_counters hook), a DUT that drops a known share of frames; "
        "topology lab-router has *",
        "SKIPPED * netload_requires: needs a DUT reset (a built-in DUT or a "
        "pytest_netload_dut_reset hook); topology lab-router has *",
        "PASSED y1564/test_service_activation.py::test_service_performance",
        "PASSED parallel/test_parallel.py::test_below_the_shaper[[]128[]]",
        "PASSED parallel/test_parallel.py::test_below_the_shaper[[]512[]]",
    ])
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=3, skipped=3)
