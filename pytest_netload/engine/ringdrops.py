"""Frames the kernel dropped at the generator's own AF_PACKET rings.

DPDK 22.11's net_af_packet PMD counts no RX drop. A frame that finds the port's
RX ring full (its worker was away longer than the ring lasts, or a DUT released
a burst larger than the ring) is dropped by the kernel's packet socket and
counted only in that socket's PACKET_STATISTICS: not in DPDK's `imissed`, not in
the interface's `rx_dropped`. Without this count such a frame is "lost by the
DUT". The PMD opened those sockets in the engine host's process, so the host
finds them among its own file descriptors, tells them by the interface they are
bound to, and reads their counters. The kernel resets the counters on every
read, so `RingDrops` keeps a running total per interface.

Host side only; per run, never per packet.
"""

from __future__ import annotations

import os
import socket
import struct

__all__ = ["RingDrops", "packet_socket_fds", "read_ring_drops"]

SOL_PACKET = 263          # <linux/socket.h>
PACKET_STATISTICS = 6     # <linux/if_packet.h>
_TPACKET_STATS = struct.Struct("=II")  # struct tpacket_stats: tp_packets, tp_drops


def _bound_iface(fd: int) -> str | None:
    """The interface an AF_PACKET socket `fd` is bound to; None for any other fd."""
    try:
        sock = socket.fromfd(fd, socket.AF_PACKET, socket.SOCK_RAW)  # a dup of fd
    except OSError:
        return None
    try:
        if sock.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN) != socket.AF_PACKET:
            return None
        name = sock.getsockname()[0]
        return str(name) if name else None
    except OSError:
        return None
    finally:
        sock.close()


def packet_socket_fds(iface: str, fd_dir: str = "/proc/self/fd") -> list[int]:
    """This process's AF_PACKET sockets bound to `iface` (the PMD's, one per queue pair)."""
    fds = []
    try:
        names = os.listdir(fd_dir)
    except OSError:
        return []
    for name in names:
        try:
            fd = int(name)
            if not os.readlink(f"{fd_dir}/{name}").startswith("socket:"):
                continue
        except (ValueError, OSError):
            continue  # closed meanwhile, or not a number
        if _bound_iface(fd) == iface:
            fds.append(fd)
    return sorted(fds)


def read_ring_drops(iface: str) -> int | None:
    """Frames the kernel dropped at this process's packet sockets on `iface` since the
    last read (reading resets them); None when no such socket is open."""
    fds = packet_socket_fds(iface)
    if not fds:
        return None
    dropped = 0
    for fd in fds:
        sock = socket.fromfd(fd, socket.AF_PACKET, socket.SOCK_RAW)
        try:
            raw = sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, _TPACKET_STATS.size)
        except OSError:
            continue
        finally:
            sock.close()
        dropped += _TPACKET_STATS.unpack(raw[: _TPACKET_STATS.size])[1]
    return dropped


class RingDrops:
    """Running totals of `read_ring_drops` per interface (the kernel's reset on read)."""

    def __init__(self) -> None:
        self._totals: dict[str, int] = {}

    def total(self, iface: str) -> int:
        """Every drop counted on `iface`'s packet sockets since this host first read it."""
        self._totals[iface] = self._totals.get(iface, 0) + (read_ring_drops(iface) or 0)
        return self._totals[iface]
