"""Which DPDK driver the built-in topologies put on their veth ports.

``auto`` (the default) takes AF_XDP where it works here, else AF_PACKET: on veth,
AF_XDP's rings send and receive about 1.4 times what AF_PACKET's do (the README's main
job on a 2-vCPU VM: 377 against 271 kpps at 64 B), so the generator, the limit on a
machine whose kernel router forwards faster than one core sends, reaches further.
Nothing here creates an interface: the probe opens and closes an AF_XDP socket.
"""

from __future__ import annotations

import glob
import socket

__all__ = ["BACKENDS", "CHOICES", "af_xdp_works", "resolve_backend"]

BACKENDS = ("af_packet", "af_xdp")
CHOICES = ("auto", *BACKENDS)
AF_XDP = 44  # socket.AF_XDP where Python has it (Linux's address family number)
PMD_GLOBS = ("/usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so*",
             "/usr/lib/dpdk/pmds-*/librte_net_af_xdp.so*",
             "/usr/local/lib*/dpdk/pmds-*/librte_net_af_xdp.so*")


def af_xdp_works() -> bool:
    """Whether this kernel opens AF_XDP sockets for this process (root, or CAP_NET_RAW)
    and DPDK has its af_xdp driver."""
    try:
        socket.socket(getattr(socket, "AF_XDP", AF_XDP), socket.SOCK_RAW).close()
    except OSError:
        return False
    return any(glob.glob(pattern) for pattern in PMD_GLOBS)


def resolve_backend(name: str) -> str:
    """`name` as a driver: "auto" is af_xdp where it works here, else af_packet."""
    if name == "auto":
        return "af_xdp" if af_xdp_works() else "af_packet"
    return name
