"""The ``netns-router`` topology: the Linux kernel routing IPv4 (or IPv6) in its own namespace.

IPv4 addresses come from the RFC 2544 benchmarking range 198.18.0.0/15, IPv6 ones
from RFC 5180's 2001:2::/48. By default (``neighbours="arp"``) nothing is static:
the DUT resolves the generator's addresses by ARP / neighbour discovery, which
the engine answers, and the generator resolves the DUT's (the topology gives
no ``peer_mac``). ``neighbours="static"`` is the old set-up for code that opens
ports without the plugin's fixtures: permanent neighbour entries on the DUT and
the DUT's MACs in the topology. Either way the DUT routes whole ranges to the
generator addresses, so multi-flow streams can vary addresses; rp_filter is off.
:func:`_build_routed` is also the base of the routers with something added
before traffic starts (shaped.py, lossy.py).
"""
from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable
from functools import partial

from pyroute2 import IPRoute  # type: ignore[import-untyped,import-not-found,unused-ignore]

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.topology.builtin.cleanup import _managed, _Resources
from pytest_netload.topology.builtin.dut import BuiltTopology, Dut
from pytest_netload.topology.builtin.ecmp import build_ecmp, check_ecmp
from pytest_netload.topology.builtin.names import (
    _ROUTER_CODE,
    PREFIX,
    _check_backend,
    _check_prefix,
)
from pytest_netload.topology.builtin.kernel import _call_in_netns, _ipv6_on, _write_sysctls
from pytest_netload.topology.builtin.netns import (
    _dut_namespace,
    _generators_up,
    _Pair,
    _ports,
    _set_up,
)
from pytest_netload.topology.facts import LINE_RATE_BPS, WIRES
from pytest_netload.topology.model import Topology, Wire
from pytest_netload.topology.nft import rewrite

__all__ = ["netns_router"]

# netns-router addressing (RFC 2544 benchmarking range 198.18.0.0/15; RFC 5180 2001:2::/48)
ROUTER_PREFIXLEN = 24
ROUTER_DUT_IPS = ("198.18.0.1", "198.19.0.1")
ROUTER_GEN_IPS = ("198.18.0.2", "198.19.0.2")
# beyond the /24s, whole /16s are routed to the generator ports so that
# multi-flow streams can vary addresses without the DUT needing ARP for each
ROUTER_ROUTED = ("198.18.0.0/16", "198.19.0.0/16")
ROUTER6_PREFIXLEN = 64
ROUTER6_DUT_IPS = ("2001:2::1", "2001:2:0:1::1")
ROUTER6_GEN_IPS = ("2001:2::2", "2001:2:0:1::2")
ROUTER6_ROUTED = ("2001:2:0:1000::/52", "2001:2:0:2000::/52")
FAMILIES = ("ipv4", "ipv6")
NEIGHBOURS = ("arp", "static")
# ARP mode on a router with a queue of its own (netns-shaped): a neighbour entry
# stays reachable this long, so that the shaper's full queue cannot drop the DUT's
# periodic ARP probe and turn a shaping test into a neighbour-loss one
LONG_REACHABLE_MS = 3_600_000


def _check_choice(key: str, value: object, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise NetloadConfigError(f"{key} = {value!r}: give one of {list(allowed)}")
    return str(value)


def _addressing(family: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], int]:
    """(DUT addresses, generator addresses, routed ranges, prefix length) of a family."""
    if family == "ipv6":
        return ROUTER6_DUT_IPS, ROUTER6_GEN_IPS, ROUTER6_ROUTED, ROUTER6_PREFIXLEN
    return ROUTER_DUT_IPS, ROUTER_GEN_IPS, ROUTER_ROUTED, ROUTER_PREFIXLEN


def _route(pair: _Pair, family: str, neighbours: str, long_reachable: bool) -> None:
    """The router's addresses, its routes to the generator ranges and, with static
    neighbours, permanent entries for the generator addresses; DUT ports up."""
    dut_ips, gen_ips, routed, prefixlen = _addressing(family)
    if family == "ipv6":
        settings = [(("net", "ipv6", "conf", "all", "forwarding"), "1"), *_ipv6_on(pair.duts)]
        _call_in_netns(pair.ns, partial(_write_sysctls, settings))
    with IPRoute(netns=pair.ns, flags=0) as nsr:
        _set_up(nsr, ("lo",))
        for i in range(2):
            (index,) = nsr.link_lookup(ifname=pair.duts[i])
            nsr.addr("add", index=index, address=dut_ips[i], prefixlen=prefixlen)
            nsr.link("set", index=index, state="up")
            if neighbours == "static":
                nsr.neigh("add", dst=gen_ips[i], lladdr=pair.gen_macs[i], ifindex=index,
                          state="permanent")
            net, plen = routed[i].split("/")
            nsr.route("add", dst=net, dst_len=int(plen), gateway=gen_ips[i], oif=index)
    if neighbours == "arp" and long_reachable:
        table = "ndisc_cache" if family == "ipv6" else "arp_cache"
        for dev in pair.duts:
            _ip_in(pair.ns, "ntable", "change", "name", table, "dev", dev,
                   "base_reachable", str(LONG_REACHABLE_MS))


def _ip_in(ns: str, *args: str) -> None:
    proc = subprocess.run(["ip", "-n", ns, *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise NetloadEnvironmentError(
            f"`ip -n {ns} {' '.join(args)}` failed: {(proc.stderr or proc.stdout).strip()}")


def _build_routed(
    res: _Resources,
    backend: str,
    *,
    name: str = "netns-router",
    code: int = _ROUTER_CODE,
    configure: Callable[[Dut], None] | None = None,
    family: str = "ipv4",
    neighbours: str = "arp",
) -> BuiltTopology:
    """netns-router, and the routers with something added (``configure``, before traffic)."""
    pair = _dut_namespace(res, code, forward=True)
    _route(pair, family, neighbours, long_reachable=configure is not None)
    # netns-router names the instance; the others name the kind and add the namespace
    info = {"name": pair.ns} if name == "netns-router" else {"name": name, "namespace": pair.ns}
    info.update(
        model=f"Linux kernel IP{family[2:]} router (network namespace)",
        kernel=os.uname().release,
        interfaces=",".join(pair.duts),
        neighbours="ARP/ND, none static" if neighbours == "arp" else "static",
    )
    dut = Dut(pair.ns, pair.duts, info)
    if configure is not None:
        configure(dut)
    _generators_up(pair)
    dut_ips, gen_ips, _, _ = _addressing(family)
    peer_macs = pair.dut_macs if neighbours == "static" else (None, None)
    topology = Topology(
        name=name,
        ports=_ports(pair, backend, gen_ips, peer_macs, dut_ips),
        wires=tuple(Wire(tx, rx) for tx, rx in WIRES),
        line_rate_bps=LINE_RATE_BPS,
        dut=dut.info,
        namespace=pair.ns,
    )
    return BuiltTopology(topology, dut)


def _check_header_value(key: str, value: object, top: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise NetloadConfigError(f"{key} = {value!r}: give a whole number from 0 to {top}")
    return value


def _rewrites(dut: Dut, *, family: str, remark_dscp: int | None, ttl_set: int | None) -> None:
    """A misbehaving router (expected-frame tests): p0 -> p1 frames re-marked to DSCP
    `remark_dscp`, their TTL (hop limit) set to `ttl_set` after the kernel's decrement."""
    d0, d1 = dut.interfaces
    ip = "ip6" if family == "ipv6" else "ip"
    statements = []
    if remark_dscp is not None:
        statements.append(f"{ip} dscp set {remark_dscp}")
        dut.info["remark_dscp"] = str(remark_dscp)
    if ttl_set is not None:
        statements.append(f"ip6 hoplimit set {ttl_set}" if ip == "ip6" else
                          f"ip ttl set {ttl_set}")
        dut.info["ttl_set"] = str(ttl_set)
    dut.info["rewrite_rules"] = "; ".join(
        rewrite(dut, f"iifname {d0} oifname {d1} meta nfproto {family}", statements))


def netns_router(
    backend: str = "af_packet", *, prefix: str = PREFIX, family: str = "ipv4",
    neighbours: str = "arp", ecmp: int | None = None, hash: str = "l4",
    remark_dscp: int | None = None, ttl_set: int | None = None,
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """The Linux kernel forwarding between two subnets in its own namespace.

    ``p0`` (198.18.0.2) -- ``d0`` 198.18.0.1/24 [DUT] ``d1`` 198.19.0.1/24 -- ``p1``
    (198.19.0.2); with ``family="ipv6"``, 2001:2::2 -- 2001:2::1/64 [DUT]
    2001:2:0:1::1/64 -- 2001:2:0:1::2. Routes for 198.18.0.0/16 and 198.19.0.0/16
    (IPv6: 2001:2:0:1000::/52 and 2001:2:0:2000::/52) lead to the generator
    addresses; rp_filter is off, so any source address is forwarded.
    ``neighbours="arp"`` (default): no static neighbour entries on either side, the
    engine answers the DUT's ARP/ND and resolves the DUT's MACs; ``"static"``:
    permanent entries on the DUT and ``peer_mac`` in the topology.

    ``ecmp=N`` (2 to 8) makes it an ECMP router (ecmp.py): ``p0`` sends, ``p1`` .. ``pN``
    are the next hops of a multipath route to 198.19.128.0/17 (IPv6
    2001:2:0:2000::/52), and ``hash`` is the kernel's multipath hash: ``"l4"`` (the
    5-tuple, the default) or ``"l3"`` (source and destination address only).

    A router that misbehaves, for expected-frame tests (nftables in its forward
    chain, p0 -> p1 only; not with ``ecmp``): ``remark_dscp`` (0-63) re-marks every
    frame's DSCP, ``ttl_set`` (0-255) sets its TTL / hop limit after the kernel
    decremented it (``ttl_set=64`` on frames sent with 64: a router that does not
    decrement).
    """
    _check_backend(backend)
    _check_prefix(prefix)
    fam = _check_choice("family", family, FAMILIES)
    neigh = _check_choice("neighbours", neighbours, NEIGHBOURS)
    remark = _check_header_value("remark_dscp", remark_dscp, 63)
    ttl = _check_header_value("ttl_set", ttl_set, 255)
    if ecmp is not None or hash != "l4":
        if ecmp is None:
            raise NetloadConfigError(
                f"hash = {hash!r} chooses the multipath hash of an ECMP router: give "
                "ecmp=N too (e.g. netns-router:ecmp=4,hash=l3)")
        check_ecmp(ecmp, hash)
        if remark is not None or ttl is not None:
            raise NetloadConfigError(
                "remark_dscp and ttl_set rewrite the plain router's p0 -> p1 frames, not an "
                "ECMP router's: give either ecmp=N or the rewrites (e.g. "
                "netns-router:remark_dscp=0)")
        return _managed(partial(build_ecmp, members=ecmp, hash_=hash, family=fam,
                                neighbours=neigh), backend, prefix)
    configure = None if remark is None and ttl is None else partial(
        _rewrites, family=fam, remark_dscp=remark, ttl_set=ttl)
    builder = partial(_build_routed, family=fam, configure=configure, neighbours=neigh)
    return _managed(builder, backend, prefix)
