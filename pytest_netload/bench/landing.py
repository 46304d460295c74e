"""Where frames land: send streams from one port, count each one's frames on a set of ports.

:class:`FrameCounter` is what the ``port_counts`` fixture hands to tests:
``port_counts(udp(flows=64), over=[p1, p2, p3])`` sends the stream from the first
wire's sending port (or ``tx=``) at a low paced rate, receives on every port of ``over``
(default: every other port of the topology) and returns a
:class:`~pytest_netload.measure.landing.PortCounts`: the stream's frames on each port.

The engine counts received frames per RX queue, with the frames that carry no
signature of the run's streams apart (``foreign``). A port's frames of a run are its
queues' packets less their foreign ones; with one stream per run they are that stream's.
So each stream of a list is sent in a run of its own, one after the other, and a list
comes back as a list of counts (``merge_counts`` sums them, as ``assert_spread`` does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..engine.client import Port
from ..errors import NetloadConfigError
from ..measure.landing import PortCounts, split_flows
from ..measure.recording import record_measurement
from ..traffic.streams import L4Spec
from ..units import as_rate
from .harness import WiredPorts, bind_stream, line_rate_of
from .ratecontrol import RateController

__all__ = ["DEFAULT_FRAMES_PER_FLOW", "DEFAULT_RATE", "FrameCounter", "flows_of"]

DEFAULT_RATE = "2kpps"
"""Low enough for any DUT and generator to lose nothing; a check of where frames land,
not of how fast."""
DEFAULT_FRAMES_PER_FLOW = 100
MAX_DEFAULT_COUNT = 100_000


def flows_of(stream: Any) -> int | None:
    """The distinct flows a ``udp(...)``/``tcp(...)`` spec cycles through: its source
    ports, source and destination addresses step together packet by packet, so the
    5-tuples repeat after the least common multiple of their counts; None for another
    stream (its fields are its own: give ``flows=``)."""
    if isinstance(stream, L4Spec):
        return math.lcm(stream.flows, stream.src_ips, stream.dst_ips)
    return None


def _name_of(port: Any, ports: WiredPorts) -> str:
    if isinstance(port, str):
        if port not in ports.ports:
            raise NetloadConfigError(f"port {port!r} is not a port of topology "
                                     f"{ports.topology.name!r}; its ports are "
                                     f"{sorted(ports.ports)}")
        return port
    if isinstance(port, Port):
        return ports.name_of(port)
    raise NetloadConfigError(f"port {port!r}: give a port of netload_ports or its name "
                             "('p1')")


def _split(arrays: Any, names: list[str], rx: list[Port]) -> tuple[int | None, int | None]:
    """(flows sampled, flows split over ports) from the frames each RX queue captured
    (the plugin keeps the last 256 of every run); (None, None) without captures."""
    if "capture_data" not in arrays:
        return None, None
    data, lens, count = arrays["capture_data"], arrays["capture_len"], arrays["capture_count"]
    frames: dict[str, list[bytes]] = {}
    i = 0
    for name, port in zip(names, rx):
        kept = frames.setdefault(name, [])
        for q in range(i, i + max(port.rx_queues, 1)):
            kept += [bytes(data[q][k][:min(int(lens[q][k]), data.shape[2])])
                     for k in range(int(count[q]))]
        i += max(port.rx_queues, 1)
    return split_flows(frames)


class FrameCounter:
    """Sends streams and counts where their frames land (the ``port_counts`` fixture)."""

    def __init__(self, ports: WiredPorts, *, wire: int = 0) -> None:
        self.ports = ports
        self.wire = wire

    def __call__(self, streams: Any, *, over: Sequence[Any] | None = None, tx: Any = None,
                 rate: Any = DEFAULT_RATE, count: int | None = None,
                 flows: int | None = None, drain: Any = "200ms") -> Any:
        """Send ``streams`` (one stream, a ``udp(...)``/``tcp(...)`` spec, or a list) from
        ``tx`` (a port or its name; default: the marker's wire's sender) at ``rate``, and
        count each one's frames on every port of ``over`` (default: every other port).

        ``count`` frames per stream (default: 100 per flow, at least 1,000, at most
        100,000); ``flows`` is the stream's flow count where it is not a spec that knows
        its own. One stream gives a :class:`PortCounts`, a list a list of them (one run
        each).
        """
        tx_name = _name_of(tx, self.ports) if tx is not None else \
            self.ports.name_of(self.ports.wire(self.wire)[0])
        names = [_name_of(p, self.ports) for p in over] if over is not None else \
            [n for n in self.ports.ports if n != tx_name]
        if not names or len(set(names)) != len(names):
            raise NetloadConfigError(f"over = {names!r}: give one or more different ports "
                                     "to count the frames on")
        tx_engine = self.ports.ports[tx_name].engine
        elsewhere = [n for n in names if self.ports.ports[n].engine is not tx_engine]
        if elsewhere:
            raise NetloadConfigError(
                f"over = {names!r}: {elsewhere} are ports of another engine than {tx_name!r}; "
                "a run counts frames on the sending engine's ports only: watch ports of "
                "one engine")
        if tx_name in names:
            raise NetloadConfigError(
                f"over = {names!r} holds the sending port {tx_name!r}: its own frames are "
                "not received there; leave it out")
        as_rate(rate, what="rate")
        if flows is not None and (isinstance(flows, bool) or not isinstance(flows, int)
                                  or flows < 1):
            raise NetloadConfigError(f"flows = {flows!r}: give the stream's flow count, >= 1")
        single = not isinstance(streams, (list, tuple))
        items = [streams] if single else list(streams)
        if not items:
            raise NetloadConfigError("streams: the list is empty; give at least one stream")
        out = [self._one(s, tx_name, names, rate, count, flows, drain) for s in items]
        return out[0] if single else out

    def _one(self, stream: Any, tx_name: str, names: list[str], rate: Any,
             count: int | None, flows: int | None, drain: Any) -> PortCounts:
        tx = self.ports.ports[tx_name]
        rx = [self.ports.ports[n] for n in names]
        n_flows = flows if flows is not None else flows_of(stream)
        if count is None:
            count = min(max((n_flows or 1) * DEFAULT_FRAMES_PER_FLOW, 1_000), MAX_DEFAULT_COUNT)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise NetloadConfigError(f"count = {count!r}: give the frames to send, >= 1")
        bound = bind_stream(stream, self.ports.flow(tx))
        controller = RateController(tx.engine, tx, line_rate_bps=line_rate_of(self.ports.topology),
                                    rx=rx)
        result = controller.run(bound, rate, count=count, drain=drain)
        run = result.run
        q = run.rx_queues
        counts: dict[str, int] = {}
        i = 0
        for name, port in zip(names, rx):
            n = max(port.rx_queues, 1)
            counts[name] = int(q["packets"][i:i + n].sum() - q["foreign"][i:i + n].sum())
            i += n
        (sent,) = run.streams
        sampled, split = _split(run.arrays, names, rx)
        pc = PortCounts(sent.name, tx_name, counts, sent.tx_packets, n_flows,
                        sampled_flows=sampled, split_flows=split)
        record_measurement("port_counts", {**pc.as_dict(), "rx_packets": pc.rx_packets,
                                           "offered_pps": result.offered_pps})
        return pc
