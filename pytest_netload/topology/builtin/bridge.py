"""The ``netns-bridge`` topology: a Linux bridge joining the two ports at layer 2.

The bridge lives in the DUT's namespace with a static forwarding table (one
entry per generator MAC); learning, unknown-unicast flooding, STP and multicast
snooping are off, br_netfilter is bypassed, and the DUT has no address, so it
forwards and never speaks. Both generator ports share one subnet and each one's
``peer_mac`` is the other port's MAC.
"""

from __future__ import annotations

import contextlib
import os

from pyroute2 import IPRoute  # type: ignore[import-untyped,import-not-found,unused-ignore]

from pytest_netload.topology.builtin.cleanup import _managed, _Resources
from pytest_netload.topology.builtin.dut import BuiltTopology, Dut
from pytest_netload.topology.builtin.kernel import _call_in_netns, _sysctl_path
from pytest_netload.topology.builtin.names import (
    _BRIDGE_CODE,
    _DUT_SIDE,
    PREFIX,
    _check_backend,
    _check_prefix,
    mac_for,
)
from pytest_netload.topology.builtin.netns import (
    _dut_namespace,
    _generators_up,
    _ports,
    _set_up,
)
from pytest_netload.topology.facts import LINE_RATE_BPS, WIRES
from pytest_netload.topology.model import Topology, Wire

__all__ = ["netns_bridge"]

# netns-bridge: both generator ports in one subnet, the DUT has no address at all
BRIDGE_GEN_IPS = ("198.18.0.2", "198.18.0.3")
BRIDGE_AGEING_S = 300  # the kernel's default; learning is off, the static entries never age
_NUD_NOARP = 0x40  # a static forwarding-table entry (`bridge fdb add ... static`)


def _bridge_netfilter_off() -> None:
    # br_netfilter (if someone loaded it) would pass bridged frames through iptables
    for key in ("bridge-nf-call-iptables", "bridge-nf-call-ip6tables", "bridge-nf-call-arptables"):
        path = _sysctl_path("net", "bridge", key)
        if os.path.exists(path):
            with open(path, "w", encoding="ascii") as f:
                f.write("0")


def _build_netns_bridge(res: _Resources, backend: str) -> BuiltTopology:
    pair = _dut_namespace(res, _BRIDGE_CODE, forward=False)
    bridge = f"{pair.tag}br"
    with IPRoute(netns=pair.ns, flags=0) as nsr:
        _set_up(nsr, ("lo",))
        nsr.link(
            "add",
            ifname=bridge,
            kind="bridge",
            address=mac_for(_BRIDGE_CODE, _DUT_SIDE, 2),
            br_stp_state=0,
            br_forward_delay=0,
            br_ageing_time=BRIDGE_AGEING_S * 100,  # clock_t: 1/100 s
            br_mcast_snooping=0,
        )
        (br_index,) = nsr.link_lookup(ifname=bridge)
        for i in range(2):
            (index,) = nsr.link_lookup(ifname=pair.duts[i])
            nsr.link("set", index=index, master=br_index)
            # the forwarding table is static: nothing learned, unknown unicast not flooded
            nsr.brport("set", index=index, learning=0, unicast_flood=0)
            nsr.fdb("add", ifindex=index, lladdr=pair.gen_macs[i], master=br_index,
                    state=_NUD_NOARP)
            nsr.link("set", index=index, state="up")
        nsr.link("set", index=br_index, state="up")
    _call_in_netns(pair.ns, _bridge_netfilter_off)
    _generators_up(pair)
    info = {
        "name": "netns-bridge",
        "namespace": pair.ns,
        "model": "Linux bridge (network namespace), static FDB, no learning, no STP",
        "kernel": os.uname().release,
        "interfaces": ",".join(pair.duts),
        "bridge": bridge,
    }
    topology = Topology(
        name="netns-bridge",
        ports=_ports(pair, backend, BRIDGE_GEN_IPS, pair.gen_macs[::-1], (None, None)),
        wires=tuple(Wire(tx, rx) for tx, rx in WIRES),
        line_rate_bps=LINE_RATE_BPS,
        dut=info,
        namespace=pair.ns,
    )
    return BuiltTopology(topology, Dut(pair.ns, pair.duts, info))


def netns_bridge(
    backend: str = "af_packet", *, prefix: str = PREFIX
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """A Linux bridge joining the two generator ports at layer 2 in its own namespace.

    ``p0`` (198.18.0.2) -- ``d0`` [bridge] ``d1`` -- ``p1`` (198.18.0.3); each
    port's ``peer_mac`` is the other port's MAC. The forwarding table holds a
    static entry per generator MAC; learning, unknown-unicast flooding and STP
    are off, and the DUT has no address, so it forwards and never speaks.
    """
    _check_backend(backend)
    _check_prefix(prefix)
    return _managed(_build_netns_bridge, backend, prefix)
