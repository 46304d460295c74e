"""How many ports each RFC 2889 procedure needs, and the usage error when a topology
has too few.

Fully meshed forwarding, the maximum forwarding rate (over the fully meshed pattern),
errored-frame filtering and broadcast forwarding run over any N >= 2 ports; partially
meshed one-to-many/many-to-one over N >= 3 (one port and at least two others); congestion
control uses exactly 4 (two senders, a congested and an uncongested receiver); address
caching and learning use 3 (the learning port, the test port and the monitor port that
sees flooded frames).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import NetloadConfigError

__all__ = ["EXAMPLE_TOPOLOGY", "MIN_PORTS", "check_port_count"]

MIN_PORTS: dict[str, int] = {
    "fully_meshed": 2,
    "congestion_control": 4,
    "address_caching_capacity": 3,
    "address_learning_rate": 3,
    "broadcast_forwarding": 2,
    "partially_meshed": 3,
    "maximum_forwarding_rate": 2,
    "errored_frame_filtering": 2,
}
"""The fewest ports each procedure runs over (congestion control: exactly 4)."""
EXACT_PORTS = frozenset({"congestion_control"})
EXAMPLE_TOPOLOGY = "--netload-topology=netns-bridge:ports={n}"


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def check_port_count(requested: int, available: int | Sequence[str], procedure: str) -> int:
    """`requested` ports for `procedure` (a key of MIN_PORTS) out of `available` (the
    topology's port names, or their number); returns `requested`. NetloadConfigError
    naming the procedure, the counts and the fix when the procedure cannot run on that
    many ports, or the topology has fewer."""
    if procedure not in MIN_PORTS:
        raise NetloadConfigError(f"procedure={procedure!r}: not an RFC 2889 procedure; use "
                                 f"one of {sorted(MIN_PORTS)}")
    name, least = procedure.replace("_", " "), MIN_PORTS[procedure]
    if not _is_int(requested) or requested < least or (
            procedure in EXACT_PORTS and requested != least):
        need = f"exactly {least}" if procedure in EXACT_PORTS else f"a whole number >= {least}"
        raise NetloadConfigError(f"ports={requested!r}: rfc2889 {name} runs over {need} "
                                 f"ports; give ports={least}")
    if isinstance(available, int) and not isinstance(available, bool):
        count, names = available, ""
    elif isinstance(available, Sequence) and not isinstance(available, str):
        count, names = len(available), f" ({', '.join(map(str, available))})"
    else:
        raise NetloadConfigError(f"available={available!r}: give the topology's port names "
                                 "or their number")
    if count < requested:
        raise NetloadConfigError(
            f"rfc2889 {name} needs {requested} ports; the topology has {count}{names}: use a "
            f"topology with at least {requested} ports, e.g. "
            f"{EXAMPLE_TOPOLOGY.format(n=requested)}")
    return requested
