"""What the session records of where it ran: the results' environment section (the
engine and its ports, as the fixtures kept them) and the header's line for ports that
take their MAC from their device. terminal.py (results.json) and xdist.py (each
worker's part) both read it.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["environment_of", "port_mac_lines"]


def environment_of(env: dict[str, Any]) -> dict[str, Any]:
    """The results' environment section from what the engine and port fixtures kept."""
    engine = env.get("engine") or {}
    ports = env.get("ports") or []
    hw = bool(ports) and all(p.get("hw_timestamps") for p in ports)
    tsc_hz = engine.get("tsc_hz")
    out: dict[str, Any] = {
        "dpdk_version": engine.get("dpdk_version") or "unknown",
        "engine": str(engine.get("gateway", "popen")),
        "engine_host": engine.get("host"),  # the machine it ran on (hostname)
        "tsc_hz": tsc_hz,
        "clock_source": "nic-hardware" if hw else "tsc-software",
        "clock_resolution_ns": 1e9 / tsc_hz if tsc_hz and not hw else None,
        "worker_cpus": engine.get("worker_cpus"),
        "ports": [{"name": p["name"], "device": p["device"], "driver": p["driver"],
                   "mac": p.get("mac"), "mtu": p.get("mtu") or None,
                   "link_speed_bps": (p.get("link_speed_mbps") or 0) * 1_000_000 or None,
                   # addressing: where frames went, and whether ARP/ND found the peer's MAC
                   **{k: p[k] for k in ("ip", "vlan", "peer_ip", "peer_mac", "resolved",
                                        "link_speed_note", "engine") if p.get(k) is not None}}
                  for p in ports],
    }
    if env.get("engines"):  # a topology on several engines (--netload-engines): each named
        out["engines"] = {name: {"gateway": e.get("gateway"), "host": e.get("host"),
                                 "dpdk_version": e.get("dpdk_version"),
                                 "worker_cpus": e.get("worker_cpus"), "tsc_hz": e.get("tsc_hz")}
                          for name, e in env["engines"].items()}
    return out


def port_mac_lines(config: pytest.Config) -> list[str]:
    """The session header's line for a topology file's ports without a `mac`: the MAC
    each takes from its device (docs/topology-files.md), read here from the kernel
    interface of a port this machine's engine opens; a PCI port's, or a remote engine's,
    is read when the port opens (the results' environment records it)."""
    from .keys import SETTINGS_KEY, TOPOLOGY_KEY

    topology = config.stash.get(TOPOLOGY_KEY, None)
    if topology is None or all(p.mac is not None for p in topology.ports):
        return []
    from ..topology.macs import kernel_interface, read_kernel_mac

    settings = config.stash[SETTINGS_KEY]
    engines = dict(settings.engines)
    shown = []
    for port in topology.ports:
        if port.mac is not None:
            continue
        iface = kernel_interface(port)
        local = (engines.get(port.engine, "") if port.engine else settings.gateway
                 ).startswith("popen")
        mac = read_kernel_mac(iface) if iface is not None and local else None
        shown.append(f"{port.name} {mac} ({iface})" if mac is not None else
                     f"{port.name} read when it opens ({port.device or iface})")
    return ["netload: port MACs from the devices: " + ", ".join(shown)]
