"""The ``netns-bridge`` topology: a Linux bridge joining 2 to 8 generator ports at layer 2.

The bridge lives in the DUT's namespace; STP and multicast snooping are off,
br_netfilter is bypassed, and the DUT has no address, so it forwards and never
speaks. All generator ports share one subnet (198.18.0.2, .3, ...). By default
the forwarding table is static (one entry per generator MAC) with learning and
unknown-unicast flooding off; ``learning=True`` makes it a learning switch
(no static entries, learning and flooding on), with ``ageing_s`` and a learning
limit ``max_learned`` (``IFLA_BR_FDB_MAX_LEARNED``, Linux >= 6.7, set over raw
rtnetlink by bridge_rtnl.py) for RFC 2889's address caching capacity.

``port_rate_bps`` gives every switch port a known egress capacity: a root TBF of
that rate on each DUT-side port (``d<i>``, towards its generator port ``p<i>``),
its bucket and queue netns-shaped's defaults (4 ms of tokens, at least two
full-size frames; 20 ms at the rate on top of the bucket), beyond which the port
drops (a qdisc drop: the loss attribution reads it per port). The queue is short
enough that a trial of a second or two overshoots the capacity by ~1-2 % (the
bucket and the queue pass through on top of the rate), and long enough to absorb the
generator's catch-up bursts (a valid trial may bunch up to 32 frames per stream;
5 ms, 6 frames of 512 B at 5 Mbit/s, lost frames at 83 % of the capacity). The
TBF counts frames as netns-shaped's does, the Ethernet frame without FCS, so a
port forwards ``shaper_capacity_pps(port_rate_bps, frame_size)`` frames per
second (shaped.py), e.g. 5 Mbit/s at 512 B: 1,230.3 pps. The generator ports
themselves stay unshaped, which is what RFC 2889's congestion and mesh tests need:
a sender can offer more than a port forwards.

There is a wire for every ordered pair of ports, p0 -> p1 and p1 -> p0 first
(so wires 0 and 1 are those of the two-port bridge), then pi -> pj in order.
Frames on a wire go to the receiving port's own MAC: the topology's flows say
so for every wire (:class:`_SwitchTopology`). Each port's ``peer_mac`` is the
next port's MAC (p0's is p1's, ..., the last port's is p0's): with two ports,
the other port's.
"""

from __future__ import annotations

import contextlib
import os
from functools import partial

from pyroute2 import IPRoute  # type: ignore[import-untyped,import-not-found,unused-ignore]

from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology.builtin.bridge_rtnl import set_max_learned
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
from pytest_netload.topology.builtin.shaped import (
    SHAPER_ACCOUNTING,
    add_tbf,
    check_rate_bps,
    default_bucket,
)
from pytest_netload.topology.facts import LINE_RATE_BPS, WIRES
from pytest_netload.topology.model import Flow, Topology, Wire

__all__ = ["netns_bridge"]

MAX_PORTS = 8
# netns-bridge: every generator port in one subnet, the DUT has no address at all
BRIDGE_GEN_IPS = tuple(f"198.18.0.{i + 2}" for i in range(MAX_PORTS))
BRIDGE_AGEING_S = 300  # the kernel's default; with learning off the static entries never age
AGEING_RANGE_S = (10, 1_000_000)  # IEEE 802.1D's range for the ageing time
MAX_LEARNED_TOP = 0xFFFF_FFFF  # a u32; 0 would be the kernel's "no limit": say None
_NUD_NOARP = 0x40  # a static forwarding-table entry (`bridge fdb add ... static`)


class _SwitchFlow(Flow):
    """A wire across the bridge: its frames go to the receiving port's own MAC."""

    __slots__ = ()

    @property
    def dst_mac(self) -> str:
        return self.rx.mac


class _SwitchTopology(Topology):
    """The bridge's topology: every flow addresses its receiving port's MAC.

    ``Flow.dst_mac`` is the sending port's ``peer_mac``, one MAC per port; across a
    bridge of more than two ports each wire needs its own, the receiver's."""

    def flows(self) -> list[Flow]:
        return [_SwitchFlow(self.port(w.tx), self.port(w.rx)) for w in self.wires]


def _wires(ports: int) -> tuple[Wire, ...]:
    """Every ordered pair: the two-port wires first (facts.WIRES), then pi -> pj in order."""
    first = list(WIRES)
    rest = [(f"p{i}", f"p{j}") for i in range(ports) for j in range(ports)
            if i != j and (f"p{i}", f"p{j}") not in first]
    return tuple(Wire(tx, rx) for tx, rx in [*first, *rest])


def _check_params(ports: object, learning: object, ageing_s: object,
                  max_learned: object, port_rate_bps: object = None) -> None:
    if isinstance(ports, bool) or not isinstance(ports, int) or not 2 <= ports <= MAX_PORTS:
        raise NetloadConfigError(
            f"ports = {ports!r} must be an integer from 2 to {MAX_PORTS}: how many generator "
            "ports the bridge joins (default 2)")
    if not isinstance(learning, bool):
        raise NetloadConfigError(
            f"learning = {learning!r} must be True (the bridge learns source addresses and "
            "floods unknown unicast, like a switch) or False (a static forwarding table, the "
            "default); on the command line write learning=true")
    low, high = AGEING_RANGE_S
    if isinstance(ageing_s, bool) or not isinstance(ageing_s, int) or \
            not low <= ageing_s <= high:
        raise NetloadConfigError(
            f"ageing_s = {ageing_s!r} must be an integer from {low} to {high} seconds "
            f"(IEEE 802.1D's range; default {BRIDGE_AGEING_S})")
    if port_rate_bps is not None:  # netns-shaped's range and message, under this name
        check_rate_bps(port_rate_bps, "port_rate_bps")
    if max_learned is None:
        return
    if isinstance(max_learned, bool) or not isinstance(max_learned, int) or \
            not 1 <= max_learned <= MAX_LEARNED_TOP:
        raise NetloadConfigError(
            f"max_learned = {max_learned!r} must be an integer from 1 to {MAX_LEARNED_TOP} "
            "(the most addresses the bridge learns), or None for no limit (the default)")
    if not learning:
        raise NetloadConfigError(
            f"max_learned = {max_learned} limits what the bridge learns, but learning = False "
            "(a static table learns nothing); pass learning=True too, or leave max_learned out")


def _bridge_netfilter_off() -> None:
    # br_netfilter (if someone loaded it) would pass bridged frames through iptables
    for key in ("bridge-nf-call-iptables", "bridge-nf-call-ip6tables", "bridge-nf-call-arptables"):
        path = _sysctl_path("net", "bridge", key)
        if os.path.exists(path):
            with open(path, "w", encoding="ascii") as f:
                f.write("0")


def _shape_ports(dut: Dut, rate_bps: int) -> dict[str, str]:
    """A TBF of ``rate_bps`` on every bridge port's egress; what dut.info records of it."""
    burst, limit = default_bucket(rate_bps)  # netns-shaped's: 4 ms bucket, 20 ms queue
    for iface in dut.interfaces:
        add_tbf(dut, iface, rate_bps=rate_bps, burst_bytes=burst, limit_bytes=limit,
                needed_by="netns-bridge's port_rate_bps")
    return {"port_rate_bps": str(rate_bps), "shaper": "tbf", "burst_bytes": str(burst),
            "limit_bytes": str(limit), "shaped_interfaces": ",".join(dut.interfaces),
            "accounting": SHAPER_ACCOUNTING}


def _build_netns_bridge(res: _Resources, backend: str, *, ports: int, learning: bool,
                        ageing_s: int, max_learned: int | None,
                        port_rate_bps: int | None = None) -> BuiltTopology:
    pair = _dut_namespace(res, _BRIDGE_CODE, forward=False, ports=ports)
    bridge = f"{pair.tag}br"
    with IPRoute(netns=pair.ns, flags=0) as nsr:
        _set_up(nsr, ("lo",))
        nsr.link(
            "add",
            ifname=bridge,
            kind="bridge",
            address=mac_for(_BRIDGE_CODE, _DUT_SIDE, ports),  # the index after the ports'
            br_stp_state=0,
            br_forward_delay=0,
            br_ageing_time=ageing_s * 100,  # clock_t: 1/100 s
            br_mcast_snooping=0,
        )
        (br_index,) = nsr.link_lookup(ifname=bridge)
        for i in range(ports):
            (index,) = nsr.link_lookup(ifname=pair.duts[i])
            nsr.link("set", index=index, master=br_index)
            if learning:  # a switch: learn the sources, flood what is not known yet
                nsr.brport("set", index=index, learning=1, unicast_flood=1)
            else:  # the forwarding table is static: nothing learned, unknown unicast dropped
                nsr.brport("set", index=index, learning=0, unicast_flood=0)
                nsr.fdb("add", ifindex=index, lladdr=pair.gen_macs[i], master=br_index,
                        state=_NUD_NOARP)
            nsr.link("set", index=index, state="up")
        nsr.link("set", index=br_index, state="up")
    if max_learned is not None:  # before any frame: raises on a kernel without the limit
        _call_in_netns(pair.ns, partial(set_max_learned, bridge, max_learned))
    _call_in_netns(pair.ns, _bridge_netfilter_off)
    _generators_up(pair)
    table = (f"learning FDB (ageing {ageing_s} s, "
             + (f"at most {max_learned} learned)" if max_learned else "no learning limit)")
             if learning else "static FDB, no learning")
    shaped = (f", each port's egress shaped to {port_rate_bps:,} bit/s (TBF)"
              if port_rate_bps is not None else "")
    info = {
        "name": "netns-bridge",
        "namespace": pair.ns,
        "model": f"Linux bridge (network namespace), {ports} ports, {table}, no STP{shaped}",
        "kernel": os.uname().release,
        "interfaces": ",".join(pair.duts),
        "bridge": bridge,
        "ports": str(ports),
        "learning": "true" if learning else "false",
        "ageing_s": str(ageing_s),
        "max_learned": "none" if max_learned is None else str(max_learned),
        "port_rate_bps": "none",
    }
    dut = Dut(pair.ns, pair.duts, info)
    if port_rate_bps is not None:
        dut.info.update(_shape_ports(dut, port_rate_bps))
    peer_macs = [pair.gen_macs[(i + 1) % ports] for i in range(ports)]
    topology = _SwitchTopology(
        name="netns-bridge",
        ports=_ports(pair, backend, BRIDGE_GEN_IPS, peer_macs, (None,) * ports),
        wires=_wires(ports),
        line_rate_bps=LINE_RATE_BPS,
        dut=dut.info,
        namespace=pair.ns,
    )
    return BuiltTopology(topology, dut)


def netns_bridge(
    backend: str = "af_packet", *, ports: int = 2, learning: bool = False,
    ageing_s: int = BRIDGE_AGEING_S, max_learned: int | None = None,
    port_rate_bps: int | None = None, prefix: str = PREFIX,
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """A Linux bridge joining ``ports`` generator ports (2 to 8) at layer 2 in its own namespace.

    ``p0`` (198.18.0.2) -- ``d0`` [bridge] ``d1`` -- ``p1`` (198.18.0.3), and so on for
    ``p2`` (198.18.0.4) ...; a wire for every ordered pair of ports (p0 -> p1, p1 -> p0
    first), whose frames go to the receiving port's MAC; each port's ``peer_mac`` is the
    next port's MAC (with two ports, the other port's). STP is off, and the DUT has no
    address, so it forwards and never speaks.

    ``learning=False`` (the default): the forwarding table holds a static entry per
    generator MAC, and learning and unknown-unicast flooding are off. ``learning=True``:
    no static entries; the bridge learns source addresses (ageing after ``ageing_s``) and
    floods frames to addresses it does not know, like a switch. ``max_learned`` caps how
    many it learns (Linux >= 6.7; None: no limit): a source beyond the cap is not learned,
    and frames to it are flooded. ``Dut.fdb_learned()`` counts what it learned and
    ``Dut.flush_fdb()`` forgets it.

    ``port_rate_bps`` (bit/s, 8,000 to 10**10 like netns-shaped's ``rate_bps``; None: no
    shaping): every bridge port's egress is a TBF of that rate with netns-shaped's default
    bucket and queue (4 ms of tokens, at least 3028 B; 20 ms more queued), so each
    port forwards at most ``shaper_capacity_pps(port_rate_bps, frame_size)`` frames per
    second (the frame counted without FCS) and drops the rest at its qdisc.
    """
    _check_backend(backend)
    _check_params(ports, learning, ageing_s, max_learned, port_rate_bps)
    _check_prefix(prefix)
    builder = partial(_build_netns_bridge, ports=ports, learning=learning, ageing_s=ageing_s,
                      max_learned=max_learned, port_rate_bps=port_rate_bps)
    return _managed(builder, backend, prefix)
