"""A NIC given by PCI address, checked on this host before the EAL is asked to probe it.

The EAL says only "No such device" for an address that is absent, bound to a kernel
driver DPDK cannot use, or bound to no driver at all. sysfs tells these apart, so the
error names the address, what was found, and what to do (`lspci -D`, binding to
vfio-pci). A device bound to the kernel is refused before the EAL touches it.
"""

from __future__ import annotations

import glob
import os
import re

from ..errors import NetloadConfigError, NetloadEnvironmentError

SYSFS_PCI = "/sys/bus/pci/devices"
PCI_ADDRESS = re.compile(r"(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])")
DPDK_DRIVERS = ("vfio-pci", "uio_pci_generic", "igb_uio")
# PMDs that drive the NIC beside its kernel driver (mlx5, mlx4: "bifurcated")
BIFURCATED_DRIVERS = ("mlx5_core", "mlx4_core")
BIND_FIX = "bind it to vfio-pci first (modprobe vfio-pci; dpdk-devbind.py -b vfio-pci {address})"


def looks_like_pci(name: str) -> bool:
    """Whether a device name is meant as a PCI address (vdev names carry no ':')."""
    return ":" in name


def check_pci_address(name: str) -> str:
    """The address in its full form (domain included, lower case), or NetloadConfigError
    naming what is wrong with it."""
    found = PCI_ADDRESS.fullmatch(name)
    if found is None:
        raise NetloadConfigError(
            f"{name!r} is not a PCI address: write domain:bus:device.function in hex, "
            "such as 0000:01:00.0 (`lspci -D` lists this host's devices)")
    domain, bus, dev, function = found.groups()
    return f"{domain or '0000'}:{bus}:{dev}.{function}".lower()


def pci_problem(address: str, sysfs: str = SYSFS_PCI) -> str | None:
    """Why the EAL cannot open the PCI device `address` on this host, or None when it is
    bound to a driver DPDK uses (then only the EAL can tell more)."""
    full = check_pci_address(address)
    path = os.path.join(sysfs, full)
    if not os.path.isdir(path):
        return (f"no PCI device {address} on this host: `lspci -D` lists its devices (is the "
                "NIC in this machine, or passed through to this VM?)")
    driver_link = os.path.join(path, "driver")
    driver = os.path.basename(os.readlink(driver_link)) if os.path.islink(driver_link) else ""
    if driver in DPDK_DRIVERS or driver in BIFURCATED_DRIVERS:
        return None
    what = _describe(path)
    if not driver:
        return f"PCI device {address}{what} is bound to no driver: {BIND_FIX.format(address=address)}"
    # a NIC's interfaces: net/ of the device, or of a child (virtio-pci: virtio0/net/)
    ifaces = sorted(os.path.basename(i) for i in glob.glob(os.path.join(path, "net", "*"))
                    + glob.glob(os.path.join(path, "*", "net", "*")))
    via_kernel = ""
    if ifaces:
        via_kernel = (f", or open its kernel interface instead: net_af_xdp0,iface={ifaces[0]} "
                      f"or net_af_packet0,iface={ifaces[0]}")
    named = f" (interface {', '.join(ifaces)})" if ifaces else ""
    return (f"PCI device {address}{what} is bound to the kernel driver {driver}{named}, "
            f"which DPDK cannot use: {BIND_FIX.format(address=address)}; its kernel "
            f"interfaces go away{via_kernel}")


def check_pci_device(address: str, sysfs: str = SYSFS_PCI) -> None:
    """NetloadEnvironmentError naming the fix when the EAL cannot open `address` here."""
    problem = pci_problem(address, sysfs)
    if problem is not None:
        raise NetloadEnvironmentError(problem)


def probe_hint(address: str) -> str:
    """What to check when the EAL failed to open a device bound to a DPDK driver."""
    return (f"{address} is bound to a driver DPDK uses; check `dmesg` for vfio or IOMMU "
            "errors (the IOMMU on: intel_iommu=on or amd_iommu=on; or vfio's "
            "enable_unsafe_noiommu_mode) and that no other process holds the device")


def _describe(path: str) -> str:
    ids = []
    for name in ("vendor", "device"):
        try:
            with open(os.path.join(path, name), encoding="ascii") as f:
                ids.append(f.read().strip().removeprefix("0x"))
        except OSError:
            return ""
    return f" [{':'.join(ids)}]"
