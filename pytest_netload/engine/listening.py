"""Ports that listen for their peer, without the native extension: the socket a
vhost-user server or memif server port listens on (`listening_socket`), a stale one
removed (`remove_stale_socket`), and a blocking native call bounded by SIGALRM
(`interrupt_after`). The facade's `port_open` uses them; tests use them without DPDK."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import stat
import threading
from collections.abc import Iterator

__all__ = ["interrupt_after", "listening_socket", "remove_stale_socket"]


def _devargs(device: str) -> tuple[str, dict[str, str]]:
    name, _, rest = device.partition(",")
    args = {}
    for item in rest.split(","):
        key, _, value = item.partition("=")
        if key.strip():
            args[key.strip()] = value.strip()
    return name.strip(), args


def listening_socket(device: str) -> str | None:
    """The socket path a port listens on as the server of its peer: a vhost-user port
    in server mode (`net_virtio_user...,path=P,server=1`, the side an OVS
    dpdkvhostuserclient connects to) or a memif server (`net_memif...,role=server`,
    default socket /run/memif.sock); None for every other device."""
    name, args = _devargs(device)
    if name.startswith("net_virtio_user") and args.get("server") == "1":
        return args.get("path") or None
    if name.startswith("net_memif") and args.get("role", "client") == "server":
        return args.get("socket", "/run/memif.sock")
    return None


def remove_stale_socket(path: str) -> bool:
    """Remove `path` when it is a Unix socket that nothing listens on (left by a port
    whose process died, or by a failed open); True when it was removed. A socket in use,
    or a file of another kind, is left alone."""
    try:
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            return False
    except OSError:
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(0.5)
        probe.connect(path)
        return False  # someone listens: theirs
    except OSError as exc:
        if exc.errno != errno.ECONNREFUSED:
            return False
    finally:
        probe.close()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    return True


@contextlib.contextmanager
def interrupt_after(seconds: float) -> Iterator[list[int]]:
    """Bound a native call that blocks in a system call (a vhost-user server's accept
    inside DPDK's probe waits for its peer forever): after `seconds`, SIGALRM every
    0.1 s interrupts it (EINTR, so DPDK gives up) until the block ends. Yields a list
    that holds an entry once the alarm fired. Only in the main thread (where signal
    handlers run); elsewhere, or for 0 s, the call is not bounded."""
    fired: list[int] = []
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield fired
        return
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.1)
    try:
        yield fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
