"""The topology of a fake-engine session: two fake ports wired through the modelled DUT.

`--netload-engine=fake:...` runs every trial on the fake engine host
(engine/fake.py), whose DUT is a model; no namespace, veth or NIC is made or
opened, so the session needs neither root nor DPDK. Its topology is this one
(unless a topology file is given): port p0 sends through the DUT to port p1, with
RFC 2544 benchmarking addresses, and declares the fake ports' line rate.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_netload.topology.model import PortSpec, Topology, Wire

__all__ = ["FAKE_DUT_MACS", "FAKE_PORT_MACS", "FAKE_TOPOLOGY", "fake_topology"]

FAKE_TOPOLOGY = "fake"
FAKE_PORT_MACS = ("02:00:00:00:00:01", "02:00:00:00:00:02")  # p0, p1
FAKE_DUT_MACS = ("02:00:00:00:01:01", "02:00:00:00:01:02")   # the DUT's, facing p0, p1


def fake_topology(line_rate_bps: float | None, dut: Mapping[str, str] | None = None) -> Topology:
    """p0 -> DUT -> p1 on the fake engine's ports (devices net_fake0, net_fake1)."""
    ports = (
        PortSpec("p0", "net_fake0", None, FAKE_PORT_MACS[0], ip="198.18.0.2",
                 peer_mac=FAKE_DUT_MACS[0], peer_ip="198.18.0.1"),
        PortSpec("p1", "net_fake1", None, FAKE_PORT_MACS[1], ip="198.19.0.2",
                 peer_mac=FAKE_DUT_MACS[1], peer_ip="198.19.0.1"),
    )
    return Topology(FAKE_TOPOLOGY, ports, (Wire("p0", "p1"),),
                    line_rate_bps=round(line_rate_bps) if line_rate_bps else None,
                    dut=dict(dut or {"name": "fake"}))
