"""A topology's generator ports as hosts on their subnets.

The native core answers ARP and IPv6 neighbour solicitations for a port that has
an address (native/src/nd.c and nd_control.c), during runs on the RX path and between runs in the
engine host. :func:`bring_up` gives every port with an ``ip`` its address,
announces it (gratuitous ARP, unsolicited neighbour advertisement), and resolves
the ``peer_mac`` the topology does not give from ``peer_ip``; it returns the
topology with those MACs filled in, and a port's own ``mac`` where the topology
leaves it to the device, which streams then address frames to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..errors import NetloadConfigError, NetloadEnvironmentError
from ..topology.model import PortSpec, Topology

__all__ = ["DEFAULT_RESOLVE_TIMEOUT_S", "bring_up", "resolve_failure"]

DEFAULT_RESOLVE_TIMEOUT_S = 5.0
RESOLVE_RETRY_S = 0.25  # an ARP request / solicitation this often while resolving


def resolve_failure(port: str, peer_ip: str, timeout_s: float, stats: Mapping[str, Any],
                    vlan: int | None = None) -> str:
    """Why `port` got no answer from `peer_ip`, and what to check, from its ARP/ND counters."""
    how = "neighbour solicitations" if ":" in peer_ip else "ARP requests"
    where = f"VLAN {vlan}" if vlan else "untagged"
    text = (f"port {port!r}: peer_ip {peer_ip} did not answer {how} ({where}) in "
            f"{timeout_s:g} s.")
    other = stats.get("other_request")
    if other:
        seen_vlan = f"VLAN {other['vlan']}" if other["vlan"] else "untagged"
        text += (f" The wire did carry a request from {other['sender']} for "
                 f"{other['target']} ({seen_vlan}): is the DUT's interface on this port's "
                 "subnet and VLAN?")
    asked = int(stats.get("arp_requests", 0)) + int(stats.get("ns_received", 0))
    if asked:
        text += (f" The DUT did ask for this port's address {asked} time(s), so frames "
                 "arrive: check that peer_ip is the DUT interface's own address.")
    return text + (" Check: peer_ip is the address of the DUT interface this port is "
                   "cabled to; that interface is up (`ip link` / `show interfaces`); the "
                   "port's `vlan` matches the DUT's; the link is up. Or set `peer_mac` in "
                   "the topology file to skip resolution.")


def bring_up(topology: Topology, ports: Mapping[str, Any], *,
             resolve_timeout_s: float = DEFAULT_RESOLVE_TIMEOUT_S,
             ) -> tuple[Topology, list[dict[str, Any]]]:
    """Addresses on the opened `ports` (name -> engine Port) of `topology`, their
    announcements, and the peers' MACs resolved where the topology gives none.

    Returns the topology with every resolved ``peer_mac`` filled in, and each ``mac``
    the topology left out (docs/topology-files.md) the opened port's own, and per port
    with an address a record: name, ip, vlan, peer_ip, peer_mac, resolved (bool).
    Raises NetloadEnvironmentError naming the port when a peer does not answer
    within `resolve_timeout_s`."""
    if not 0 < resolve_timeout_s <= 600:
        raise NetloadConfigError(
            f"resolve timeout {resolve_timeout_s!r} s: give more than 0 and at most 600 s")
    specs: list[PortSpec] = []
    records: list[dict[str, Any]] = []
    for spec in topology.ports:
        port = ports.get(spec.name)
        if spec.mac is None and port is not None:  # the file left it to the device
            spec = replace(spec, mac=port.mac)
        if spec.ip is None or port is None:
            specs.append(spec)
            continue
        vlan = getattr(spec, "vlan", None)
        port.set_address(spec.ip, mac=spec.mac, vlan=vlan)
        port.announce()
        resolved = False
        if spec.peer_ip is not None and spec.peer_mac is None:
            try:
                mac = port.resolve(spec.peer_ip, resolve_timeout_s, RESOLVE_RETRY_S)
            except NetloadEnvironmentError as exc:
                raise NetloadEnvironmentError(
                    str(exc).replace(f"port {port.label!r}", f"port {spec.name!r}", 1)) from None
            spec = replace(spec, peer_mac=mac)
            resolved = True
        specs.append(spec)
        records.append({"name": spec.name, "ip": spec.ip, "vlan": vlan,
                        "peer_ip": spec.peer_ip, "peer_mac": spec.peer_mac,
                        "resolved": resolved})
    return replace(topology, ports=tuple(specs)), records
