"""conftest_examples/hil/ on virtual devices: its test file, run against its own
lab.toml with the PCI ports replaced by a netns-router's AF_PACKET ports (and the
lcores, which are the lab's CPUs, left out), so CI proves the file, the topology's
shape and the markers work before a lab runs them on NICs."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="netns-router needs root (CI runs as root)"),
]

HIL = Path(__file__).parents[2] / "conftest_examples" / "hil"
VIRTUAL_LINE_RATE = "10Mbit/s"  # a rate the kernel's veth path forwards without loss


def virtual_copy(text: str, topology) -> str:
    """lab.toml with each [[ports]] entry's device, MAC and addresses taken from
    `topology` (by port name), its lcores removed, and a line rate veth can carry."""
    ports = {p.name: p for p in topology.ports}
    out: list[str] = []
    table, port = "", None
    for line in text.splitlines():
        key = line.split("#", 1)[0].split("=", 1)[0].strip()
        if line.startswith("["):
            table, port = line.split("#", 1)[0].strip(), None
        elif table == "[[ports]]" and key == "name":
            port = ports[re.match(r'name = "(.*)"', line).group(1)]
        elif key == "line_rate":
            line = f'line_rate = "{VIRTUAL_LINE_RATE}"'
        elif port is not None and key == "lcores":
            continue
        elif port is not None and key in ("device", "mac", "ip", "peer_ip"):
            value = getattr(port, key)
            if value is None:
                continue
            line = f'{key} = "{value}"'
        out.append(line)
    return "\n".join(out) + "\n"


def test_the_hil_example_runs_on_virtual_ports(pytester: pytest.Pytester,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_netload.topology import load_topology
    from pytest_netload.topology.builtin import netns_router

    shipped = load_topology(HIL / "lab.toml")
    with netns_router() as built:
        path = pytester.path / "lab.toml"
        path.write_text(virtual_copy((HIL / "lab.toml").read_text(), built.topology))
        virtual = load_topology(path)
        # the same shape: names, wires, DUT facts; only devices and addresses differ
        assert [p.name for p in virtual.ports] == [p.name for p in shipped.ports]
        assert virtual.wires == shipped.wires and virtual.dut == shipped.dut
        assert all(p.device.startswith("net_af_packet") for p in virtual.ports)
        shutil.copy(HIL / "test_hil.py", pytester.path / "test_hil.py")
        monkeypatch.setenv("HIL_QUICK", "1")  # the merge-request smoke run of .gitlab-ci.yml
        started = time.monotonic()
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "-rA", f"--netload-topology={path}",
            "--netload-trial-duration=0.2s", "--strict-markers", timeout=300)
        took = time.monotonic() - started
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["PASSED test_hil.py::test_throughput_and_latency[[]64B[]]",
                                 "PASSED test_hil.py::test_throughput_and_latency[[]1518B[]]"])
    print(f"hil example on virtual ports: {took:.1f} s")
