"""The `netload` command as README runs it: demo, methods, ports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_netload.engine.pci import PCI_ADDRESS

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine needs root (run as root or in CI)"),
]


def netload(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_netload", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def test_demo_counts_through_the_router_and_writes_json(tmp_path: Path) -> None:
    out = netload("demo", "--count", "20000", "--json", "results/demo.json", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "p0->p1" in out.stdout and "p1->p0" in out.stdout
    assert "result: tx 40,000 pkts" in out.stdout and "lost 0 (0)" in out.stdout
    data = json.loads((tmp_path / "results" / "demo.json").read_text())
    assert data["topology"] == "netns-router"
    assert [s["tx_packets"] for s in data["streams"]] == [20000, 20000]
    assert [s["lost"] for s in data["streams"]] == [0, 0]


def test_demo_names_an_unwritable_json_path(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = netload("demo", "--count", "100", "--json", str(blocker / "demo.json"), cwd=tmp_path)
    assert out.returncode == 2
    assert "result: tx 200 pkts" in out.stdout  # measured and shown before the error
    assert f"--json '{blocker / 'demo.json'}' cannot be written" in out.stderr


def test_methods_prints_a_row_per_backend(tmp_path: Path) -> None:
    out = netload("methods", "--duration", "0.3", "--backends", "af_packet", "tap",
                  cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert any(line.startswith("af_packet") and "lost 0" in line for line in lines), lines
    assert any(line.startswith("tap") and "n/a" in line for line in lines), lines
    assert "L2: frame incl. FCS" in out.stdout


def test_ports_prints_capabilities(tmp_path: Path) -> None:
    out = netload("ports", "net_null0", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    info = json.loads(out.stdout)
    assert info["driver"] == "net_null" and "tx_csum_offload" in info


def test_unknown_device_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    out = netload("ports", "net_bogus0", cwd=tmp_path)
    assert out.returncode == 2
    assert "netload ports: error:" in out.stderr and "net_bogus0" in out.stderr
    assert "Traceback" not in out.stderr


def test_ports_names_an_absent_pci_device_without_starting_the_eal(tmp_path: Path) -> None:
    address = "ffff:ff:1f.7"  # domain ffff: no such device on any host we run on
    assert not Path("/sys/bus/pci/devices", address).exists()
    started = time.monotonic()
    out = netload("ports", address, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.strip() == (f"netload ports: error: no PCI device {address} on this host: "
                                  "`lspci -D` lists its devices (is the NIC in this machine, or "
                                  "passed through to this VM?)")
    assert time.monotonic() - started < 30


def test_ports_names_a_malformed_pci_address(tmp_path: Path) -> None:
    out = netload("ports", "0000:01:00", cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "netload ports: error: '0000:01:00' is not a PCI address: write domain:bus:" \
           "device.function in hex, such as 0000:01:00.0" in out.stderr


def test_ports_refuses_a_kernel_bound_nic_before_the_eal_touches_it(tmp_path: Path) -> None:
    """This host's own NIC (the VM's virtio one here) by PCI address: refused, naming its
    driver and interface and vfio-pci, before any engine starts."""
    pci = {}
    for iface in os.listdir("/sys/class/net"):
        # the PCI device at or above the interface's device (virtio: .../0000:00:03.0/virtio0)
        path = Path(f"/sys/class/net/{iface}/device").resolve()
        while path.parent != path and not PCI_ADDRESS.fullmatch(path.name):
            path = path.parent
        if PCI_ADDRESS.fullmatch(path.name):
            pci[path.name] = iface
    if not pci:
        pytest.skip("this host has no kernel network interface on a PCI device")
    address, iface = min(pci.items())
    out = netload("ports", address, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"PCI device {address}" in out.stderr and "is bound to the kernel driver" in out.stderr
    assert f"(interface {iface}" in out.stderr and "dpdk-devbind.py -b vfio-pci" in out.stderr
