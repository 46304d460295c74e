"""A port's own MAC where its topology file leaves it out: the device's.

The engine reads it when it opens the port (the port's MAC, what DPDK reports), and
engine/neighbours.py puts it into the topology the tests use. Before that -- for the
session header -- a port on a kernel interface of this machine (``iface``, or a vdev's
``iface=`` argument) has it in ``/sys/class/net/<iface>/address``; a PCI port has it
only once opened.
"""

from __future__ import annotations

from pathlib import Path

from pytest_netload.topology.model import PortSpec, normalize_mac

__all__ = ["SYSFS_NET", "kernel_interface", "read_kernel_mac"]

SYSFS_NET = Path("/sys/class/net")


def kernel_interface(port: PortSpec) -> str | None:
    """The kernel interface behind ``port``: its ``iface``, else its device string's
    ``iface=`` argument (net_af_packet, net_af_xdp); None for a PCI or other device."""
    if port.iface is not None:
        return port.iface
    for arg in (port.device or "").split(",")[1:]:
        key, _, value = arg.partition("=")
        if key == "iface" and value:
            return value
    return None


def read_kernel_mac(iface: str, sysfs: Path = SYSFS_NET) -> str | None:
    """The MAC of kernel interface ``iface`` on this machine; None when there is no such
    interface, or it has no Ethernet address."""
    try:
        text = (sysfs / iface / "address").read_text(encoding="ascii").strip()
        return normalize_mac(text, f"{iface} address")
    except (OSError, ValueError):  # NetloadConfigError is a ValueError: not an Ethernet MAC
        return None
