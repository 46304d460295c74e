"""RFC 2889's traffic between port pairs, and the engine its ports run on.

The meshes (fully and partially meshed, maximum forwarding rate, congestion control)
send the `rfc2889` marker's `stream=` -- any form RFC 2544's `stream=` takes, default
UDP -- from each sending port to each of its receivers. It is loaded as RFC 2544's is
(bench/lanes.py over a traffic.mix.Mix), once per port pair, each copy addressed to
its pair's MACs and IPs (`Mix.streams_for(readdress=True)`), so one template serves
every pair. The address, broadcast and errored-frame procedures build frames of their
own (bench/rfc2889_frames.py) and do not use it; nor do they take ``expect=``, which the
meshes' streams are compared with (`pair_lanes`, `refuse_expect`).

A procedure's ports must all be on one engine: a port counts only the streams of its
own engine (stream ids and TSC are per engine), so `one_engine` refuses a mesh whose
ports span engines before any trial.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from ..engine.client import Engine, LoadedStream, Port
from ..errors import NetloadConfigError
from ..traffic.mix import Mix, as_mix
from ..traffic.streams import UdpSpec
from .expected import FrameTally, refuse_expect
from .harness import WiredPorts
from .lanes import load_lanes

__all__ = ["PairLane", "mix_of", "no_expect", "one_engine", "pair_lanes"]

#: The procedures that send the marker's stream=, and so take expect=.
MESHES = ("rfc2889.fully_meshed(expect=...), partially_meshed, maximum_forwarding_rate "
          "or congestion_control")


@dataclass(frozen=True)
class PairLane:
    """One loaded stream between ports `sender` and `receiver` (indexes in the
    procedure's ports) and its share of that pair's frames."""

    sender: int
    receiver: int
    stream: LoadedStream
    share: float


def mix_of(stream: Mix | None) -> Mix:
    """The meshes' traffic: the marker's stream, else UDP."""
    return as_mix(UdpSpec()) if stream is None else stream


@contextmanager
def pair_lanes(engine: Engine, wired: WiredPorts, mix: Mix, size: int,
               ports: Sequence[Port], pairs: Sequence[tuple[int, int]], *,
               expect: Any = None, tally: FrameTally | None = None
               ) -> Iterator[tuple[list[PairLane], list[dict[str, Any]]]]:
    """`mix` at frame size `size` loaded for each (sender, receiver) of `pairs`, each
    stream addressed to its pair; the lanes and their records ("wire", "name", "kind",
    "share", "mean_frame_size"). Every stream is freed after. `expect`: each stream's
    expected frames (its pair's MACs resolve "dut_mac" and the like), whose rules go
    into `tally`."""
    lanes: list[PairLane] = []
    described: list[dict[str, Any]] = []
    with ExitStack() as loaded:
        for i, j in pairs:
            plan = loaded.enter_context(load_lanes(engine, wired, [(ports[i], ports[j])],
                                                   mix, size, readdress=True,
                                                   expect=expect))
            if tally is not None:
                tally.rules.update(plan.rules)
            lanes += [PairLane(i, j, lane.stream, lane.share) for lane in plan.lanes]
            described += plan.record["streams"]
        yield lanes, described


def _engine_label(wired: WiredPorts, name: str) -> str:
    engine = wired.topology.port(name).engine
    return "the session's engine (--netload-engine)" if engine is None \
        else f"engine {engine!r}"


def one_engine(wired: WiredPorts, names: Sequence[str], procedure: str,
               chosen: int | None) -> Engine:
    """The engine every port of `names` runs on; NetloadConfigError naming the ports,
    their engines and the fix when they span several (`chosen`: the marker's ports=)."""
    ports = [wired.ports[n] for n in names]
    if all(p.engine is ports[0].engine for p in ports):
        return ports[0].engine
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(_engine_label(wired, name), []).append(name)
    spans = "; ".join(f"{', '.join(ns)} on {label}" for label, ns in groups.items())
    took = f"ports={chosen} takes" if chosen is not None else "without ports=, it takes"
    raise NetloadConfigError(
        f"rfc2889 {procedure.replace('_', ' ')}: its ports span engines ({spans}); a port "
        "counts only the frames of its own engine's streams (stream ids and the TSC are "
        f"per engine), so no trial could be counted. @pytest.mark.rfc2889's {took} the "
        "topology's first ports in file order: list ports of one engine first and give "
        "ports=N, or put the procedure's ports on one engine in the topology file")


def no_expect(procedure: str, given: Any, marker: Any, frames: str) -> None:
    """Refuse `expect=` (the call's or the marker's) for `procedure`, which sends
    `frames` of its own, not the marker's stream."""
    refuse_expect(f"rfc2889 {procedure.replace('_', ' ')}", given, marker, frames, MESHES)
