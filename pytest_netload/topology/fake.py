"""The topology of a fake-engine session: two fake ports wired through the modelled DUT.

`--netload-engine=fake:...` runs every trial on the fake engine host
(engine/fake.py), whose DUT is a model; no namespace, veth or NIC is made or
opened, so the session needs neither root nor DPDK. Its topology is this one
(unless a topology file is given): port p0 sends through the DUT to port p1, with
RFC 2544 benchmarking addresses, and declares the fake ports' line rate. A fake ECMP
router (``fake:ecmp=N``) has the ports and wires of ``netns-router:ecmp=N``
(topology/multipath.py): p0 sends, p1 .. pN are its members.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_netload.topology.model import PortSpec, Topology, Wire
from pytest_netload.topology.multipath import EcmpTopology, ecmp_wires, member_addresses

__all__ = ["FAKE_DUT_MACS", "FAKE_PORT_MACS", "FAKE_TOPOLOGY", "fake_topology"]

FAKE_TOPOLOGY = "fake"
FAKE_PORT_MACS = ("02:00:00:00:00:01", "02:00:00:00:00:02")  # p0, p1
FAKE_DUT_MACS = ("02:00:00:00:01:01", "02:00:00:00:01:02")   # the DUT's, facing p0, p1


def fake_topology(line_rate_bps: float | None, dut: Mapping[str, str] | None = None,
                  members: int = 0) -> Topology:
    """p0 -> DUT -> p1 on the fake engine's ports (devices net_fake0, net_fake1); with
    `members` (2 to 8), p0 -> the ECMP router -> p1 .. pN (net_fake1 ...)."""
    if members:
        ecmp = [PortSpec("p0", "net_fake0", None, "02:00:00:00:00:01", ip="198.18.0.2",
                         peer_mac="02:00:00:00:01:01", peer_ip="198.18.0.1")]
        for i in range(1, members + 1):
            dut_ip, gen_ip, _ = member_addresses(i)
            ecmp.append(PortSpec(f"p{i}", f"net_fake{i}", None, f"02:00:00:00:00:{i + 1:02x}",
                                 ip=gen_ip, peer_mac=f"02:00:00:00:01:{i + 1:02x}",
                                 peer_ip=dut_ip))
        return EcmpTopology(FAKE_TOPOLOGY, tuple(ecmp), ecmp_wires(members),
                            line_rate_bps=round(line_rate_bps) if line_rate_bps else None,
                            dut=dict(dut or {"name": "fake"}))
    ports = (
        PortSpec("p0", "net_fake0", None, FAKE_PORT_MACS[0], ip="198.18.0.2",
                 peer_mac=FAKE_DUT_MACS[0], peer_ip="198.18.0.1"),
        PortSpec("p1", "net_fake1", None, FAKE_PORT_MACS[1], ip="198.19.0.2",
                 peer_mac=FAKE_DUT_MACS[1], peer_ip="198.19.0.1"),
    )
    return Topology(FAKE_TOPOLOGY, ports, (Wire("p0", "p1"),),
                    line_rate_bps=round(line_rate_bps) if line_rate_bps else None,
                    dut=dict(dut or {"name": "fake"}))
