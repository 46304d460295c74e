"""A NIC by PCI address (engine/pci.py): its address checked, then what sysfs says of it
(absent, no driver, a kernel driver, a DPDK one), on a made-up sysfs tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_netload.engine.pci import check_pci_address, check_pci_device, pci_problem
from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError


def device(sysfs: Path, address: str, driver: str = "", iface: str = "",
           child: str = "") -> None:
    path = sysfs / "devices" / address
    path.mkdir(parents=True)
    (path / "vendor").write_text("0x8086\n")
    (path / "device").write_text("0x1572\n")
    if driver:
        (sysfs / "drivers" / driver).mkdir(parents=True, exist_ok=True)
        (path / "driver").symlink_to(sysfs / "drivers" / driver)
    if iface:
        (path / child / "net" / iface).mkdir(parents=True)


@pytest.mark.parametrize(("name", "full"), [
    ("0000:01:00.0", "0000:01:00.0"), ("01:00.1", "0000:01:00.1"),
    ("0000:AF:1F.7", "0000:af:1f.7"), ("0001:02:03.4", "0001:02:03.4")])
def test_addresses_are_read_in_their_full_form(name: str, full: str) -> None:
    assert check_pci_address(name) == full


@pytest.mark.parametrize("name", ["0000:01:00", "0000:1:00.0", "0000:01:00.8", "01:00.0.1",
                                  "0000:0g:00.0", ":01:00.0", "00000:01:00.0"])
def test_a_malformed_address_is_a_config_error_showing_the_form(name: str) -> None:
    with pytest.raises(NetloadConfigError, match="is not a PCI address: write domain:bus:"
                       r"device.function in hex, such as 0000:01:00.0 \(`lspci -D`"):
        check_pci_address(name)


def test_an_absent_device_is_named_with_lspci(tmp_path: Path) -> None:
    (tmp_path / "devices").mkdir()
    with pytest.raises(NetloadEnvironmentError,
                       match=r"no PCI device 0000:01:00.0 on this host: `lspci -D` lists"):
        check_pci_device("0000:01:00.0", str(tmp_path / "devices"))


def test_a_kernel_bound_nic_names_its_driver_interface_and_both_ways_out(tmp_path: Path) -> None:
    device(tmp_path, "0000:01:00.0", driver="i40e", iface="enp1s0f0")
    problem = pci_problem("01:00.0", str(tmp_path / "devices"))
    assert problem == (
        "PCI device 01:00.0 [8086:1572] is bound to the kernel driver i40e (interface "
        "enp1s0f0), which DPDK cannot use: bind it to vfio-pci first (modprobe vfio-pci; "
        "dpdk-devbind.py -b vfio-pci 01:00.0); its kernel interfaces go away, or open its "
        "kernel interface instead: net_af_xdp0,iface=enp1s0f0 or net_af_packet0,iface=enp1s0f0")


def test_a_virtio_nic_finds_its_interface_one_level_down(tmp_path: Path) -> None:
    device(tmp_path, "0000:00:03.0", driver="virtio-pci", iface="eth0", child="virtio0")
    problem = pci_problem("0000:00:03.0", str(tmp_path / "devices"))
    assert problem is not None and "kernel driver virtio-pci (interface eth0)" in problem


def test_a_device_with_no_driver_is_told_to_bind(tmp_path: Path) -> None:
    device(tmp_path, "0000:01:00.0")
    assert pci_problem("0000:01:00.0", str(tmp_path / "devices")) == (
        "PCI device 0000:01:00.0 [8086:1572] is bound to no driver: bind it to vfio-pci "
        "first (modprobe vfio-pci; dpdk-devbind.py -b vfio-pci 0000:01:00.0)")


@pytest.mark.parametrize("driver", ["vfio-pci", "uio_pci_generic", "igb_uio", "mlx5_core"])
def test_dpdk_and_bifurcated_drivers_are_left_to_the_eal(tmp_path: Path, driver: str) -> None:
    device(tmp_path, "0000:01:00.0", driver=driver, iface="ens1" if "mlx" in driver else "")
    assert pci_problem("0000:01:00.0", str(tmp_path / "devices")) is None
