"""What the built-in topologies ask of the kernel directly, below any one topology.

The root check, writing ``/proc/sys`` entries, running a function inside another
network namespace (a short-lived thread joins it, so the process never leaves
its own), and the two idempotent removals every undo list and the sweep use:
deleting a link and removing a namespace. Building (netns.py) and tearing down
(cleanup.py) both stand on these.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pyroute2 import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
    IPRoute,
    NetlinkError,
)
from pyroute2 import netns as _netns  # type: ignore[import-untyped,import-not-found,unused-ignore]

from pytest_netload.errors import NetloadEnvironmentError

T = TypeVar("T")


def _require_root() -> None:
    if os.geteuid() != 0:
        raise NetloadEnvironmentError(
            "the built-in topologies create network namespaces and veth interfaces, which "
            "needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN); run pytest as root, e.g. "
            "`sudo -E python -m pytest ...`"
        )


def _sysctl_path(*parts: str) -> str:
    return os.path.join("/proc/sys", *parts)


def _ipv6_on(interfaces: Sequence[str]) -> list[tuple[tuple[str, ...], str]]:
    """The sysctls that give a namespace's `interfaces` (and its defaults) IPv6 at once:
    enabled, no duplicate address detection, no router advertisements taken."""
    out: list[tuple[tuple[str, ...], str]] = []
    for scope in ("all", "default", *interfaces):
        out += [(("net", "ipv6", "conf", scope, "disable_ipv6"), "0"),
                (("net", "ipv6", "conf", scope, "accept_dad"), "0"),
                (("net", "ipv6", "conf", scope, "accept_ra"), "0")]
    return out


def _write_sysctls(settings: Sequence[tuple[tuple[str, ...], str]]) -> None:
    """Write ``/proc/sys`` entries of the calling thread's network namespace.

    IPv6 entries are skipped where the kernel has IPv6 disabled altogether.
    """
    ipv6 = os.path.isdir(_sysctl_path("net", "ipv6"))
    for parts, value in settings:
        if parts[:2] == ("net", "ipv6") and not ipv6:
            continue
        with open(_sysctl_path(*parts), "w", encoding="ascii") as f:
            f.write(value)


def _call_in_netns(namespace: str, fn: Callable[[], T]) -> T:
    """Run ``fn`` in a short-lived thread that has joined ``namespace``.

    setns(CLONE_NEWNET) changes only the calling thread, and the thread ends
    with the call, so the rest of the process never leaves its namespace.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            _netns.setns(namespace, flags=0)
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller below
            box["error"] = exc

    thread = threading.Thread(target=target, name=f"netload-netns-{namespace}", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def _delete_link(name: str) -> None:
    with IPRoute() as ipr:
        for index in ipr.link_lookup(ifname=name):
            try:
                ipr.link("del", index=index)
            except NetlinkError as exc:
                if exc.code != errno.ENODEV:
                    raise


def _remove_netns(name: str) -> None:
    if name in _netns.listnetns():
        with contextlib.suppress(FileNotFoundError):
            _netns.remove(name)
