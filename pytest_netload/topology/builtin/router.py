"""The ``netns-router`` topology: the Linux kernel routing IPv4 in its own namespace.

Addresses come from the RFC 2544 benchmarking range 198.18.0.0/15. The DUT has
permanent neighbour entries for the generator addresses and routes whole /16s
to them, so multi-flow streams can vary addresses and the DUT never ARPs;
rp_filter is off. :func:`_build_routed` is also the base of the routers with
something added before traffic starts (shaped.py, lossy.py).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

from pyroute2 import IPRoute  # type: ignore[import-untyped,import-not-found,unused-ignore]

from pytest_netload.topology.builtin.cleanup import _managed, _Resources
from pytest_netload.topology.builtin.dut import BuiltTopology, Dut
from pytest_netload.topology.builtin.names import (
    _ROUTER_CODE,
    PREFIX,
    _check_backend,
    _check_prefix,
)
from pytest_netload.topology.builtin.netns import (
    _dut_namespace,
    _generators_up,
    _Pair,
    _ports,
    _set_up,
)
from pytest_netload.topology.facts import LINE_RATE_BPS, WIRES
from pytest_netload.topology.model import Topology, Wire

__all__ = ["netns_router"]

# netns-router addressing (RFC 2544 benchmarking range 198.18.0.0/15)
ROUTER_PREFIXLEN = 24
ROUTER_DUT_IPS = ("198.18.0.1", "198.19.0.1")
ROUTER_GEN_IPS = ("198.18.0.2", "198.19.0.2")
# beyond the /24s, whole /16s are routed to the generator ports so that
# multi-flow streams can vary addresses without the DUT needing ARP
ROUTER_ROUTED = ("198.18.0.0/16", "198.19.0.0/16")


def _route(pair: _Pair) -> None:
    """The router's addresses, permanent neighbours and /16 routes; DUT ports up."""
    with IPRoute(netns=pair.ns, flags=0) as nsr:
        _set_up(nsr, ("lo",))
        for i in range(2):
            (index,) = nsr.link_lookup(ifname=pair.duts[i])
            nsr.addr("add", index=index, address=ROUTER_DUT_IPS[i], prefixlen=ROUTER_PREFIXLEN)
            nsr.link("set", index=index, state="up")
            nsr.neigh(
                "add",
                dst=ROUTER_GEN_IPS[i],
                lladdr=pair.gen_macs[i],
                ifindex=index,
                state="permanent",
            )
            net, plen = ROUTER_ROUTED[i].split("/")
            nsr.route("add", dst=net, dst_len=int(plen), gateway=ROUTER_GEN_IPS[i], oif=index)


def _build_routed(
    res: _Resources,
    backend: str,
    *,
    name: str = "netns-router",
    code: int = _ROUTER_CODE,
    configure: Callable[[Dut], None] | None = None,
) -> BuiltTopology:
    """netns-router, and the routers with something added (``configure``, before traffic)."""
    pair = _dut_namespace(res, code, forward=True)
    _route(pair)
    # netns-router names the instance; the others name the kind and add the namespace
    info = {"name": pair.ns} if name == "netns-router" else {"name": name, "namespace": pair.ns}
    info.update(
        model="Linux kernel IPv4 router (network namespace)",
        kernel=os.uname().release,
        interfaces=",".join(pair.duts),
    )
    dut = Dut(pair.ns, pair.duts, info)
    if configure is not None:
        configure(dut)
    _generators_up(pair)
    topology = Topology(
        name=name,
        ports=_ports(pair, backend, ROUTER_GEN_IPS, pair.dut_macs, ROUTER_DUT_IPS),
        wires=tuple(Wire(tx, rx) for tx, rx in WIRES),
        line_rate_bps=LINE_RATE_BPS,
        dut=dut.info,
        namespace=pair.ns,
    )
    return BuiltTopology(topology, dut)


def _build_netns_router(res: _Resources, backend: str) -> BuiltTopology:
    return _build_routed(res, backend)


def netns_router(
    backend: str = "af_packet", *, prefix: str = PREFIX
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """The Linux kernel forwarding IPv4 between two subnets in its own namespace.

    ``p0`` (198.18.0.2) -- ``d0`` 198.18.0.1/24 [DUT] ``d1`` 198.19.0.1/24 -- ``p1``
    (198.19.0.2). Permanent neighbour entries for the generator addresses and
    routes for 198.18.0.0/16 and 198.19.0.0/16 via them mean the DUT never
    ARPs; rp_filter is off, so any source address is forwarded.
    """
    _check_backend(backend)
    _check_prefix(prefix)
    return _managed(_build_netns_router, backend, prefix)
