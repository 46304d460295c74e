"""A port's link as it really is, and the link events of a run.

DPDK 22.11's net_af_packet and net_af_xdp report their link UP (and 10 Gbit/s)
once started, whatever the wire does. For a port on a kernel interface
(`...,iface=NAME`) the truth is the kernel's: `/sys/class/net/NAME/carrier`
and `operstate`, and the speed in `speed` only where a device (a NIC) backs the
interface; a virtual interface (veth, tap, bridge) has no line rate, whatever
`speed` says (veth claims 10000). Other ports (PCI) report DPDK's link.

`LinkWatch` samples every port of a run whenever the client polls it (every
~100 ms, `client.POLL_SLICE_MS`): a drop is placed between the last sample
that saw the link up (`since_s`) and the first that saw it down (`t_s`), in
seconds from the trial's start (when its first frame was due). The kernel's
`carrier_down_count` is read at each sample too, so a flap shorter than one
poll slice is caught in the slice it happened in.

Host side: pure reads of sysfs, no DPDK; the facade's port info comes in as a
mapping.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..errors import NetloadError

__all__ = ["PCI_ADDRESS", "SYSFS_NET", "LinkWatch", "dpdk_link", "interface_of",
           "kernel_link", "read_iface_counter"]

PCI_ADDRESS = re.compile(r"([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")
SYSFS_NET = "/sys/class/net"


def interface_of(device: str) -> str | None:
    """The kernel interface a vdev sits on (`...,iface=NAME,...`), if any."""
    for arg in device.split(",")[1:]:
        key, _, value = arg.partition("=")
        if key.strip() == "iface" and value:
            return value.strip()
    return None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except (OSError, ValueError):  # EINVAL: carrier of an interface that is admin down
        return None


def read_iface_counter(iface: str, name: str, folder: str = "statistics/",
                       root: str = SYSFS_NET) -> int:
    text = _read(f"{root}/{iface}/{folder}{name}")
    try:
        return int(text) if text is not None else 0
    except ValueError:
        return 0


def kernel_link(iface: str, root: str = SYSFS_NET) -> dict[str, Any]:
    """The link of kernel interface `iface`: up when its carrier is 1 (an interface
    that is admin down has none: its `carrier` cannot be read), with its operstate;
    its speed in Mbit/s only where a device backs it and reports one, else None and
    `speed_note` says why."""
    base = f"{root}/{iface}"
    if not os.path.isdir(base):
        return {"up": False, "speed_mbps": None, "operstate": "absent", "carrier": None,
                "source": f"kernel interface {iface}", "carrier_down_count": 0,
                "speed_note": f"interface {iface} does not exist"}
    carrier = _read(f"{base}/carrier")
    operstate = _read(f"{base}/operstate") or "unknown"
    speed: int | None = None
    if not os.path.exists(f"{base}/device"):
        note: str | None = (f"{iface} is a virtual interface (no device behind it): it has "
                            "no line rate")
    else:
        text = _read(f"{base}/speed")
        try:
            speed = int(text) if text is not None else None
        except ValueError:
            speed = None
        if speed is not None and speed <= 0:
            speed = None
        note = None if speed is not None else f"the kernel reports no speed for {iface}"
    return {"up": carrier == "1", "speed_mbps": speed, "operstate": operstate,
            "carrier": None if carrier is None else carrier == "1",
            "source": f"kernel interface {iface}",
            "carrier_down_count": read_iface_counter(iface, "carrier_down_count", "", root),
            "speed_note": note}


def dpdk_link(device: str, info: Mapping[str, Any]) -> dict[str, Any]:
    """The link of a port with no kernel interface, from the facade's port info: DPDK's
    state; its speed only for a PCI device (a virtual device's is made up)."""
    driver = str(info.get("driver") or "?")
    speed = int(info.get("link_speed_mbps") or 0)
    physical = bool(PCI_ADDRESS.fullmatch(device.split(",", 1)[0]))
    if not physical:
        note: str | None = f"{driver} is a virtual device: it has no line rate"
    elif not speed:
        note = f"DPDK ({driver}) reports no speed"
    else:
        note = None
    up = bool(info.get("link_up", True))
    return {"up": up, "speed_mbps": speed if physical and speed else None,
            "operstate": "up" if up else "down", "carrier": None,
            "source": f"DPDK link of {driver}", "carrier_down_count": 0, "speed_note": note}


class LinkWatch:
    """The link events of one run's ports, from samples taken at each poll.

    `read(port_id)` answers the port's link (`kernel_link` / `dpdk_link`); `start`
    is the trial's start on `clock` (when its first frame was due). An event is
    `{"event": "link_down" | "link_up", "port_id", "t_s", "since_s"}`: it happened
    after `since_s` (the previous sample) and by `t_s` (this one). A port down at the
    first sample gives a `link_down` with `"at_start": True`.
    """

    def __init__(self, ports: Iterable[int], read: Callable[[int], Mapping[str, Any]],
                 start: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.read = read
        self.start = start
        self.clock = clock
        self.events: list[dict[str, Any]] = []
        self._last: dict[int, tuple[bool, int, float]] = {}
        self._ports = list(ports)
        now = self._now()
        for p in self._ports:
            state = read(p)
            up, count = bool(state["up"]), int(state.get("carrier_down_count") or 0)
            self._last[p] = (up, count, now)
            if not up:
                self.events.append({"event": "link_down", "port_id": p, "t_s": max(now, 0.0),
                                    "since_s": None, "at_start": True,
                                    "operstate": state.get("operstate")})

    def _read(self, port_id: int) -> Mapping[str, Any] | None:
        try:
            return self.read(port_id)
        except (KeyError, OSError, NetloadError):
            return None

    def _now(self) -> float:
        return round(self.clock() - self.start, 4)

    def sample(self) -> None:
        """Read every port once; note what changed since the last sample."""
        now = self._now()
        for p in self._ports:
            state = self._read(p)
            if state is None:  # the port was closed meanwhile: no link event
                continue
            up, count = bool(state["up"]), int(state.get("carrier_down_count") or 0)
            was_up, was_count, then = self._last[p]
            since = max(then, 0.0)
            if was_up and (not up or count > was_count):
                self.events.append({"event": "link_down", "port_id": p, "t_s": max(now, 0.0),
                                    "since_s": since, "operstate": state.get("operstate")})
                if up:  # down and up again between two samples
                    self.events.append({"event": "link_up", "port_id": p,
                                        "t_s": max(now, 0.0), "since_s": since})
            elif not was_up and up:
                self.events.append({"event": "link_up", "port_id": p, "t_s": max(now, 0.0),
                                    "since_s": since})
            self._last[p] = (up, count, now)
