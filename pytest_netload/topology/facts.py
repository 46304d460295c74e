"""What every built-in topology is before it is built: its wires, line rate and MTU.

builtin/ builds its topologies from these facts, and the plugin checks markers against
them at collection (a wire the topology lacks, a share of a line rate it does not have,
a frame above its MTU), without importing pyroute2 or creating a namespace.
"""

from __future__ import annotations

__all__ = ["LINE_RATE_BPS", "MTU", "WIRES"]

MTU = 1500
"""Every veth of the built-in topologies (generator and DUT side)."""
WIRES = (("p0", "p1"), ("p1", "p0"))
"""(tx, rx) port names of each wire, in wire order: wire 0 is p0 -> p1."""
LINE_RATE_BPS: int | None = None
"""veth has no line rate: rates are given in pps or bit/s."""
