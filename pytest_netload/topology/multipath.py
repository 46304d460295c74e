"""The ECMP router's topology as a model: its addresses, wires and flows, without building
anything. builtin/ecmp.py builds the real router on it (``netns-router:ecmp=N``) and the
fake engine models one (``fake:ecmp=N``) on the same ports and wires.

``p0`` sends; ``p1`` .. ``pN`` are the members, the next hops of a multipath route to the
ECMP prefix (IPv4 198.19.128.0/17, IPv6 2001:2:0:2000::/52). Every wire from ``p0``
addresses the ECMP destination (:data:`ECMP_DST`), so a stream bound to one of them is
hashed over the members; the members' wires back to ``p0`` are plain routed ones.
"""

from __future__ import annotations

from pytest_netload.topology.facts import WIRES
from pytest_netload.topology.model import Flow, Topology, Wire

__all__ = ["ECMP_DST", "ECMP_DST6", "ECMP_ROUTED", "ECMP_ROUTED6", "MAX_MEMBERS",
           "EcmpTopology", "ecmp_wires", "member_addresses"]

MAX_MEMBERS = 8
ECMP_ROUTED = "198.19.128.0/17"
ECMP_DST = "198.19.128.1"
ECMP_ROUTED6 = "2001:2:0:2000::/52"
ECMP_DST6 = "2001:2:0:2000::1"


def member_addresses(i: int, family: str = "ipv4") -> tuple[str, str, int]:
    """(DUT address, generator address, prefix length) of member ``pi`` (1-based) on its
    own link: 198.19.<i-1>.1 / .2 /24, IPv6 2001:2:0:<i>::1 / ::2 /64."""
    if family == "ipv6":
        return f"2001:2:0:{i:x}::1", f"2001:2:0:{i:x}::2", 64
    return f"198.19.{i - 1}.1", f"198.19.{i - 1}.2", 24


class _EcmpFlow(Flow):
    """A wire of the ECMP router: from ``p0`` its frames go to the ECMP destination."""

    __slots__ = ()

    @property
    def dst_ip(self) -> str | None:
        if self.tx.name != "p0":
            return self.rx.ip
        return ECMP_DST6 if ":" in (self.tx.ip or "") else ECMP_DST


class EcmpTopology(Topology):
    """The ECMP router's topology: every wire from p0 addresses the ECMP destination."""

    def flows(self) -> list[Flow]:
        return [_EcmpFlow(self.port(w.tx), self.port(w.rx)) for w in self.wires]


def ecmp_wires(members: int) -> tuple[Wire, ...]:
    """p0 -> p1 and back first (facts.WIRES), then p0 -> pi and back for each member."""
    rest = [w for i in range(2, members + 1) for w in (("p0", f"p{i}"), (f"p{i}", "p0"))]
    return tuple(Wire(tx, rx) for tx, rx in [*WIRES, *rest])
