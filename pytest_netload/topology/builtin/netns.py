"""Building blocks of the built-in topologies: veth pairs, offloads, the DUT namespace, ports.

A veth pair is recorded in the instance's undo list before it is made and never
adopted if its name exists already. The generator-side interfaces live in the
caller's namespace with no addresses, IPv6 and ARP off and IPv4 forwarding off,
so the kernel neither sends anything on them nor routes what arrives on them
anywhere else; GRO/GSO/TSO are off on every end, so each frame crosses the veth
on its own. :func:`_dut_namespace` makes the DUT's namespace joined to the
caller's by a veth pair per generator port (``g<i>`` here, ``d<i>`` there;
two unless the kind asks for more), with the DUT's sysctls set; each DUT kind's
module configures the DUT side from there.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from pyroute2 import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
    Ethtool,
    IPRoute,
    NetlinkError,
)
from pyroute2 import netns as _netns  # type: ignore[import-untyped,import-not-found,unused-ignore]
from pyroute2.netlink.rtnl import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
    ifinfmsg,
)

from pytest_netload.errors import NetloadEnvironmentError
from pytest_netload.topology.builtin.cleanup import _Resources
from pytest_netload.topology.builtin.kernel import (
    _call_in_netns,
    _delete_link,
    _remove_netns,
    _write_sysctls,
)
from pytest_netload.topology.builtin.names import (
    _DUT_SIDE,
    _GEN_SIDE,
    _alias,
    _netns_name,
    mac_for,
    vdev_string,
)
from pytest_netload.topology.facts import MTU
from pytest_netload.topology.model import PortSpec

# GRO / GSO / TSO: off so that every frame crosses the veth on its own


def _is_coalescing_offload(feature: str) -> bool:
    return feature.endswith("-segmentation") or "-gro" in feature


def _disable_offloads(names: Sequence[str]) -> None:
    """Turn GRO/GSO/TSO off (pyroute2's ethtool; `ethtool -K` if that fails; else skip)."""
    try:
        with Ethtool() as ethtool:
            for name in names:
                features = ethtool.get_features(name)
                changed = False
                for key, feature in features.features.items():
                    if _is_coalescing_offload(key) and feature.available and feature.enable:
                        feature.enable = False
                        changed = True
                if changed:
                    ethtool.set_features(name, features)
        return
    except (OSError, NetlinkError):
        pass
    tool = shutil.which("ethtool")
    if tool is None:
        return  # only an optimisation: frames still pass, possibly coalesced
    for name in names:
        subprocess.run(
            [tool, "-K", name, "gro", "off", "gso", "off", "tso", "off"],
            capture_output=True,
            check=False,
        )


def _add_veth(
    ipr: Any, res: _Resources, a: str, mac_a: str, b: str, mac_b: str, alias: str
) -> None:
    clash = [name for name in (a, b) if ipr.link_lookup(ifname=name)]
    if clash:  # never adopt (and later delete) an interface we did not make
        raise NetloadEnvironmentError(
            f"interface {clash[0]} already exists; the random tag collided, build again"
        )
    res.add(f"veth {a}<->{b}", partial(_delete_link, a))
    ipr.link(
        "add",
        ifname=a,
        kind="veth",
        address=mac_a,
        mtu=MTU,
        peer={"ifname": b, "address": mac_b, "mtu": MTU},
    )
    for name in (a, b):
        (index,) = ipr.link_lookup(ifname=name)
        ipr.link("set", index=index, ifalias=alias, mtu=MTU)


def _quiet_generator_side(ipr: Any, names: Sequence[str]) -> None:
    """No IPv6, no ARP, no forwarding: the kernel stays silent on these ends."""
    settings: list[tuple[tuple[str, ...], str]] = []
    for name in names:
        settings.append((("net", "ipv6", "conf", name, "disable_ipv6"), "1"))
        settings.append((("net", "ipv4", "conf", name, "forwarding"), "0"))
    _write_sysctls(settings)
    for name in names:
        (index,) = ipr.link_lookup(ifname=name)
        ipr.link("set", index=index, flags=ifinfmsg.IFF_NOARP, change=ifinfmsg.IFF_NOARP)


def _set_up(ipr: Any, names: Sequence[str]) -> None:
    for name in names:
        (index,) = ipr.link_lookup(ifname=name)
        ipr.link("set", index=index, state="up")


# How long a veth end may take from "set up" to a running carrier. The kernel's linkwatch
# work turns carrier and operstate on (and swaps the drop-everything noop qdisc for the real
# one) after the fact, later on a busy machine: a frame sent before then is silently dropped.
OPERSTATE_TIMEOUT_S = 5.0


def _wait_running(ipr: Any, names: Sequence[str], timeout_s: float = OPERSTATE_TIMEOUT_S) -> None:
    """Return once every interface in ``names`` reports operstate UP (carrier on)."""
    deadline = time.monotonic() + timeout_s
    pending = list(names)
    while pending:
        states = {}
        for name in pending:
            (link,) = ipr.get_links(ifname=name)
            states[name] = link.get("IFLA_OPERSTATE")
        pending = [name for name in pending if states[name] != "UP"]
        if not pending:
            return
        if time.monotonic() >= deadline:
            name = pending[0]
            raise NetloadEnvironmentError(
                f"interface {name} is set up but its operstate is still {states[name]} after "
                f"{timeout_s:g} s (no carrier: is its veth peer down?); frames sent on it would "
                f"be dropped, so the topology was not handed out"
            )
        time.sleep(0.002)


@dataclass(frozen=True)
class _Pair:
    """A DUT namespace joined to the caller's by veth pairs: ``g<i>`` here, ``d<i>`` there."""

    tag: str
    ns: str
    gens: tuple[str, ...]
    duts: tuple[str, ...]
    gen_macs: tuple[str, ...]
    dut_macs: tuple[str, ...]


def _dut_namespace(res: _Resources, code: int, *, forward: bool, ports: int = 2) -> _Pair:
    """The namespace and ``ports`` veth pairs (two unless asked), DUT ends moved in (still
    down); IPv6 and rp_filter off."""
    tag = res.tag
    indices = range(ports)
    pair = _Pair(
        tag,
        _netns_name(tag),
        tuple(f"{tag}g{i}" for i in indices),
        tuple(f"{tag}d{i}" for i in indices),
        tuple(mac_for(code, _GEN_SIDE, i) for i in indices),
        tuple(mac_for(code, _DUT_SIDE, i) for i in indices),
    )
    ns = pair.ns
    if ns in _netns.listnetns():
        raise NetloadEnvironmentError(f"network namespace {ns} already exists; build again")
    res.add(f"network namespace {ns}", partial(_remove_netns, ns))
    _netns.create(ns)
    alias = _alias(tag)
    with IPRoute() as ipr:
        for i in indices:
            _add_veth(ipr, res, pair.gens[i], pair.gen_macs[i], pair.duts[i], pair.dut_macs[i],
                      alias)
        _quiet_generator_side(ipr, pair.gens)
        _disable_offloads(pair.gens + pair.duts)
        for name in pair.duts:
            (index,) = ipr.link_lookup(ifname=name)
            ipr.link("set", index=index, net_ns_fd=ns)

    # a new namespace inherits IPv4 settings (ip_forward too) from the initial one: set them all
    settings: list[tuple[tuple[str, ...], str]] = [
        (("net", "ipv4", "ip_forward"), "1" if forward else "0")
    ]
    for scope in ("all", "default", *pair.duts):
        settings.append((("net", "ipv4", "conf", scope, "rp_filter"), "0"))
        settings.append((("net", "ipv6", "conf", scope, "disable_ipv6"), "1"))
    _call_in_netns(ns, partial(_write_sysctls, settings))
    return pair


def _generators_up(pair: _Pair) -> None:
    """Generator ends up last (the DUT's are up by then); back once every end carries frames."""
    with IPRoute() as ipr:
        _set_up(ipr, pair.gens)
        _wait_running(ipr, pair.gens)
    with IPRoute(netns=pair.ns, flags=0) as nsr:
        _wait_running(nsr, pair.duts)


def _ports(
    pair: _Pair, backend: str, ips: Sequence[str], peer_macs: Sequence[str | None],
    peer_ips: Sequence[str | None],
) -> tuple[PortSpec, ...]:
    return tuple(
        PortSpec(
            f"p{i}",
            vdev_string(backend, f"{pair.tag}p{i}", pair.gens[i]),
            pair.gens[i],
            pair.gen_macs[i],
            ip=ips[i],
            peer_mac=peer_macs[i],
            peer_ip=peer_ips[i],
        )
        for i in range(len(pair.gens))
    )
