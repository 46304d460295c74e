"""The ``loopback`` topology: two generator ports wired to each other by one veth pair.

No DUT and no namespace: ``g0`` and ``g1`` both live in the caller's namespace,
quiet (no addresses, no ARP, no IPv6) and with offloads off, so what one port
sends the other receives unchanged. It measures the generator itself, the
baseline every DUT's results are read against.
"""

from __future__ import annotations

import contextlib
import os

from pyroute2 import IPRoute  # type: ignore[import-untyped,import-not-found,unused-ignore]

from pytest_netload.topology.builtin.cleanup import _managed, _Resources
from pytest_netload.topology.builtin.dut import BuiltTopology
from pytest_netload.topology.builtin.names import (
    _GEN_SIDE,
    _LOOPBACK_CODE,
    PREFIX,
    _alias,
    _check_backend,
    _check_prefix,
    mac_for,
    vdev_string,
)
from pytest_netload.topology.builtin.netns import (
    _add_veth,
    _disable_offloads,
    _quiet_generator_side,
    _set_up,
    _wait_running,
)
from pytest_netload.topology.facts import LINE_RATE_BPS, WIRES
from pytest_netload.topology.model import PortSpec, Topology, Wire

__all__ = ["loopback"]


def _build_loopback(res: _Resources, backend: str) -> BuiltTopology:
    tag = res.tag
    g0, g1 = f"{tag}g0", f"{tag}g1"
    mac0 = mac_for(_LOOPBACK_CODE, _GEN_SIDE, 0)
    mac1 = mac_for(_LOOPBACK_CODE, _GEN_SIDE, 1)
    with IPRoute() as ipr:
        _add_veth(ipr, res, g0, mac0, g1, mac1, _alias(tag))
        _quiet_generator_side(ipr, (g0, g1))
        _disable_offloads((g0, g1))
        _set_up(ipr, (g0, g1))
        _wait_running(ipr, (g0, g1))
    ports = (
        PortSpec("p0", vdev_string(backend, f"{tag}p0", g0), g0, mac0, peer_mac=mac1),
        PortSpec("p1", vdev_string(backend, f"{tag}p1", g1), g1, mac1, peer_mac=mac0),
    )
    topology = Topology(
        name="loopback",
        ports=ports,
        wires=tuple(Wire(tx, rx) for tx, rx in WIRES),
        line_rate_bps=LINE_RATE_BPS,
        dut={"name": "none", "model": "veth pair (no DUT)", "kernel": os.uname().release},
        namespace=None,
    )
    return BuiltTopology(topology, None)


def loopback(
    backend: str = "af_packet", *, prefix: str = PREFIX
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """Two generator ports wired straight to each other by a veth pair; no DUT.

    Ports ``p0``/``p1`` on ``<tag>g0``/``<tag>g1`` (fixed MACs, no addresses,
    MTU 1500); wires p0->p1 and p1->p0; ``dut`` is None.
    """
    _check_backend(backend)
    _check_prefix(prefix)
    return _managed(_build_loopback, backend, prefix)
