"""A port's own MAC where its topology leaves it out: its device's, read from the kernel
interface behind it (topology/macs.py) or from the opened port (engine/neighbours.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_netload.engine.neighbours import bring_up
from pytest_netload.topology import PortSpec, Topology, Wire
from pytest_netload.topology.macs import kernel_interface, read_kernel_mac


@pytest.mark.parametrize(("device", "iface", "expected"), [
    (None, "veth0", "veth0"),
    ("net_af_packet0,iface=veth1", None, "veth1"),
    ("net_af_xdp0,start_queue=0,iface=eth2", None, "eth2"),
    ("net_af_packet0,iface=veth1", "other", "other"),
    ("0000:3b:00.0", None, None),
    ("net_null0", None, None),
])
def test_the_kernel_interface_behind_a_port(device: str | None, iface: str | None,
                                            expected: str | None) -> None:
    assert kernel_interface(PortSpec("p0", device, iface)) == expected


def test_a_kernel_interface_s_mac_is_read_from_sysfs(tmp_path: Path) -> None:
    (tmp_path / "veth0").mkdir()
    (tmp_path / "veth0" / "address").write_text("02:AB:00:00:00:01\n")
    (tmp_path / "ipip0").mkdir()
    (tmp_path / "ipip0" / "address").write_text("0.0.0.0\n")  # not Ethernet
    assert read_kernel_mac("veth0", tmp_path) == "02:ab:00:00:00:01"
    assert read_kernel_mac("ipip0", tmp_path) is None
    assert read_kernel_mac("gone0", tmp_path) is None
    assert read_kernel_mac("lo") == "00:00:00:00:00:00"  # this machine's, as the kernel says


class _Port:
    """What bring_up uses of an opened engine port."""

    def __init__(self, mac: str) -> None:
        self.mac = mac
        self.label = "p"
        self.addresses: list[tuple[str, str | None]] = []

    def set_address(self, ip: str, mac: str | None = None, vlan: int | None = None) -> None:
        self.addresses.append((ip, mac))

    def announce(self) -> None:
        pass


def test_an_opened_port_gives_its_mac_to_a_port_without_one() -> None:
    topology = Topology("lab", (
        PortSpec("p0", "net_null0", None, ip="198.18.0.2", peer_mac="02:00:00:00:01:01"),
        PortSpec("p1", "net_null1", None, "02:00:00:00:00:02"),
        PortSpec("p2", "net_null2", None)), (Wire("p0", "p1"), Wire("p2", "p1")))
    ports = {"p0": _Port("02:5e:00:00:00:10"), "p1": _Port("02:5e:00:00:00:11"),
             "p2": _Port("02:5e:00:00:00:12")}
    opened, _ = bring_up(topology, ports)
    assert [p.mac for p in opened.ports] == ["02:5e:00:00:00:10", "02:00:00:00:00:02",
                                             "02:5e:00:00:00:12"]
    assert ports["p0"].addresses == [("198.18.0.2", "02:5e:00:00:00:10")]  # ARP answers it
    assert [(f.src_mac, f.dst_mac) for f in opened.flows()] == [
        ("02:5e:00:00:00:10", "02:00:00:00:01:01"), ("02:5e:00:00:00:12", "02:00:00:00:00:02")]
