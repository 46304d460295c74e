"""A topology file's port without a `mac` takes its device's: the opened ports' topology,
the streams and the session header have it (fake engine: no root, no DPDK)."""

from __future__ import annotations

import pytest

import pytest_netload.reports.baseline  # noqa: F401  (scipy, matplotlib: imported inside an
import pytest_netload.reports.html  # noqa: F401  in-process run, a second run cannot)

pytest_plugins = ["pytester"]

FAKE = "--netload-engine=fake:capacity_pps=60000,delay_s=50e-6,buffer_frames=1000"

TOPOLOGY = """
[topology]
name = "lab"

[[ports]]
name = "p0"
device = "net_fake0"
ip = "198.18.0.2"
peer_mac = "02:00:00:00:01:01"
peer_ip = "198.18.0.1"

[[ports]]
name = "p1"
device = "net_fake1"
mac = "02:00:00:00:00:22"
ip = "198.19.0.2"
peer_mac = "02:00:00:00:01:02"
peer_ip = "198.19.0.1"

[[wires]]
tx = "p0"
rx = "p1"
"""


MACS = """
def test_the_port_has_its_device_s_mac(netload_topology, netload_ports):
    assert netload_topology.ports[0].mac is None  # as the file says
    opened = netload_ports.topology.ports[0]
    assert opened.mac == netload_ports.ports["p0"].mac == "02:00:00:00:00:01"
    assert netload_ports.topology.flows()[0].src_mac == opened.mac
    assert netload_ports.topology.ports[1].mac == "02:00:00:00:00:22"  # given: kept
"""


def test_a_port_without_a_mac_takes_its_device_s(pytester: pytest.Pytester) -> None:
    path = pytester.path / "lab.toml"
    path.write_text(TOPOLOGY)
    pytester.makepyfile(MACS)
    result = pytester.runpytest(FAKE, f"--netload-topology={path}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["netload: port MACs from the devices: p0 read when it "
                                 "opens (net_fake0)"])
