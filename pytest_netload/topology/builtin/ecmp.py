"""``netns-router:ecmp=N``: the Linux kernel router spreading one prefix over N next hops.

The router's namespace has 1 + N generator ports: ``p0`` sends, ``p1`` .. ``pN`` are the
members. A multipath route sends the ECMP prefix (IPv4 198.19.128.0/17, IPv6
2001:2:0:2000::/52) over N next hops, member ``pi``'s address on its own link
(198.19.<i-1>.2/24; IPv6 2001:2:0:<i>::2/64), each through its own veth. The next hops
have permanent neighbour entries (the generator's MACs), so that no flow waits on, or is
dropped by, address resolution; ``p0``'s side resolves as netns-router's does. The kernel
picks a member per packet by its multipath hash: ``hash="l3"``
(``fib_multipath_hash_policy`` 0: source and destination address) or ``"l4"`` (1: the
5-tuple), the same for IPv6 (``net.ipv6.fib_multipath_hash_policy``). Where the kernel
has ``fib_multipath_hash_seed`` (Linux 6.11 and later) it is set to :data:`HASH_SEED`, so
the same flows land on the same members run after run.

Known answers: one source/destination pair lands on one member with L3 hashing, whatever
its ports; many UDP source ports spread over every member with L4 hashing.

Every wire from ``p0`` leads to the ECMP destination: the topology's flows say so
(topology/multipath.py, the model the fake engine's ``fake:ecmp=N`` shares), so ``udp(flows=64)`` bound to wire 0 is hashed
over the members. The members' wires back to ``p0`` are plain routed ones. Everything
lives in the DUT's namespace and the tagged veth pairs: teardown and the sweep remove it
as they remove netns-router.
"""

from __future__ import annotations

import os
from functools import partial

from pyroute2 import IPRoute  # type: ignore[import-untyped,import-not-found,unused-ignore]

from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology.builtin.cleanup import _Resources
from pytest_netload.topology.builtin.dut import BuiltTopology, Dut
from pytest_netload.topology.builtin.kernel import (
    _call_in_netns,
    _ipv6_on,
    _sysctl_path,
    _write_sysctls,
)
from pytest_netload.topology.builtin.names import _ECMP_CODE
from pytest_netload.topology.builtin.netns import (
    _dut_namespace,
    _generators_up,
    _Pair,
    _ports,
    _set_up,
)
from pytest_netload.topology.facts import LINE_RATE_BPS
from pytest_netload.topology.multipath import (
    ECMP_DST,
    ECMP_DST6,
    ECMP_ROUTED,
    ECMP_ROUTED6,
    MAX_MEMBERS,
    EcmpTopology,
    ecmp_wires,
    member_addresses,
)

__all__ = ["ECMP_DST", "ECMP_DST6", "ECMP_ROUTED", "ECMP_ROUTED6", "HASHES", "HASH_SEED",
           "MAX_MEMBERS", "check_ecmp"]

HASHES = {"l3": "0", "l4": "1"}  # hash= -> fib_multipath_hash_policy
HASH_SEED = 0x6E6C  # "nl": fib_multipath_hash_seed where the kernel has it (0 is random)
# p0's link and the range routed back to it (netns-router's)
SENDER = ("198.18.0.1", "198.18.0.2", 24, "198.18.0.0/16")
SENDER6 = ("2001:2::1", "2001:2::2", 64, "2001:2:0:1000::/52")


def check_ecmp(ecmp: object, hash_: object) -> None:
    """NetloadConfigError for a member count or hash the ECMP router does not take."""
    if isinstance(ecmp, bool) or not isinstance(ecmp, int) or not 2 <= ecmp <= MAX_MEMBERS:
        raise NetloadConfigError(
            f"ecmp = {ecmp!r} must be a whole number of next hops from 2 to {MAX_MEMBERS} "
            "(e.g. netns-router:ecmp=4), or left out for the plain two-port router")
    if hash_ not in HASHES:
        raise NetloadConfigError(
            f"hash = {hash_!r}: give one of {list(HASHES)} (l3: source and destination "
            "address; l4: the 5-tuple, the default)")


def _hash_settings(family: str, policy: str) -> list[tuple[tuple[str, ...], str]]:
    """The DUT namespace's sysctls: forwarding and the multipath hash (policy, seed)."""
    out: list[tuple[tuple[str, ...], str]] = [
        (("net", "ipv4", "fib_multipath_hash_policy"), policy)]
    if os.path.exists(_sysctl_path("net", "ipv4", "fib_multipath_hash_seed")):
        out.append((("net", "ipv4", "fib_multipath_hash_seed"), str(HASH_SEED)))
    if family == "ipv6":
        if not os.path.exists(_sysctl_path("net", "ipv6", "fib_multipath_hash_policy")):
            raise NetloadConfigError(
                "family = 'ipv6' with ecmp: this kernel has no "
                "net.ipv6.fib_multipath_hash_policy (Linux 4.18 and later); use ipv4")
        out.append((("net", "ipv6", "fib_multipath_hash_policy"), policy))
        out.append((("net", "ipv6", "conf", "all", "forwarding"), "1"))
    return out


def _route_ecmp(pair: _Pair, family: str, neighbours: str, members: int) -> None:
    """Addresses, the route back to p0, the multipath route with its next hops' permanent
    neighbour entries, and the DUT ports up."""
    d_ip, g_ip, plen, back = SENDER6 if family == "ipv6" else SENDER
    routed = ECMP_ROUTED6 if family == "ipv6" else ECMP_ROUTED
    if family == "ipv6":
        _call_in_netns(pair.ns, partial(_write_sysctls, _ipv6_on(pair.duts)))
    with IPRoute(netns=pair.ns, flags=0) as nsr:
        _set_up(nsr, ("lo",))
        (index,) = nsr.link_lookup(ifname=pair.duts[0])
        nsr.addr("add", index=index, address=d_ip, prefixlen=plen)
        nsr.link("set", index=index, state="up")
        if neighbours == "static":
            nsr.neigh("add", dst=g_ip, lladdr=pair.gen_macs[0], ifindex=index,
                      state="permanent")
        net, blen = back.split("/")
        nsr.route("add", dst=net, dst_len=int(blen), gateway=g_ip, oif=index)
        hops = []
        for i in range(1, members + 1):
            m_dut, m_gen, m_len = member_addresses(i, family)
            (index,) = nsr.link_lookup(ifname=pair.duts[i])
            nsr.addr("add", index=index, address=m_dut, prefixlen=m_len)
            nsr.link("set", index=index, state="up")
            nsr.neigh("add", dst=m_gen, lladdr=pair.gen_macs[i], ifindex=index,
                      state="permanent")
            hops.append({"gateway": m_gen, "oif": index})
        net, rlen = routed.split("/")
        nsr.route("add", dst=net, dst_len=int(rlen), multipath=hops)


def build_ecmp(res: _Resources, backend: str, *, members: int, hash_: str, family: str,
               neighbours: str) -> BuiltTopology:
    """netns-router with ``members`` next hops for the ECMP prefix (module docstring)."""
    pair = _dut_namespace(res, _ECMP_CODE, forward=True, ports=members + 1)
    _call_in_netns(pair.ns, partial(_write_sysctls, _hash_settings(family, HASHES[hash_])))
    _route_ecmp(pair, family, neighbours, members)
    seeded = os.path.exists(_sysctl_path("net", "ipv4", "fib_multipath_hash_seed"))
    info = {
        "name": pair.ns,
        "model": f"Linux kernel IP{family[2:]} router (network namespace), ECMP over "
                 f"{members} next hops, {hash_.upper()} hash",
        "kernel": os.uname().release,
        "interfaces": ",".join(pair.duts),
        "neighbours": ("ARP/ND on p0, static next hops" if neighbours == "arp"
                       else "static"),
        "ecmp": str(members),
        "ecmp_members": ",".join(f"p{i}" for i in range(1, members + 1)),
        "ecmp_prefix": ECMP_ROUTED6 if family == "ipv6" else ECMP_ROUTED,
        "ecmp_destination": ECMP_DST6 if family == "ipv6" else ECMP_DST,
        "hash": hash_,
        "fib_multipath_hash_policy": HASHES[hash_],
        "fib_multipath_hash_seed": str(HASH_SEED) if seeded else "kernel's own (random)",
    }
    dut = Dut(pair.ns, pair.duts, info)
    _generators_up(pair)
    sender = SENDER6 if family == "ipv6" else SENDER
    gen_ips = [sender[1]] + [member_addresses(i, family)[1] for i in range(1, members + 1)]
    dut_ips = [sender[0]] + [member_addresses(i, family)[0] for i in range(1, members + 1)]
    peer_macs = [pair.dut_macs[0] if neighbours == "static" else None] + \
        [pair.dut_macs[i] for i in range(1, members + 1)]
    topology = EcmpTopology(
        name="netns-router",
        ports=_ports(pair, backend, gen_ips, peer_macs, dut_ips),
        wires=ecmp_wires(members),
        line_rate_bps=LINE_RATE_BPS,
        dut=dut.info,
        namespace=pair.ns,
    )
    return BuiltTopology(topology, dut)
