"""What the client holds of an engine host's objects: an open `Port`, a `LoadedStream`
and a stream's part in a run (`Tx`), each bound to the host that made it (its
`generation`: a crashed or closed host's handles are refused), and the checks a run's
streams and ports pass before it starts (clocks, frame sizes). `client.Engine` makes
them and re-exports them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _native_facts as facts
from .. import errors
from .protocol import PortInfo, PortStats, StreamSpec
from .wire import TERMINATED_NOTE

if TYPE_CHECKING:
    from .client import Engine

__all__ = ["CLOCKS", "LoadedStream", "Port", "Tx", "check_clock", "check_frames_fit",
           "hardware_clock", "link_events"]


@contextlib.contextmanager
def _unless_terminated() -> Iterator[None]:
    """Closing something of a host that SIGTERM ended: it went with the host."""
    try:
        yield
    except errors.EngineCrashed as exc:
        if TERMINATED_NOTE not in exc.log_tail:
            raise


@dataclass(frozen=True)
class Port:
    """An open port of an engine: device string, capabilities, link."""

    engine: Engine
    port_id: int
    device: str
    info: dict[str, Any]
    generation: int
    name: str = ""
    """The port's name in its topology ("p1"), when it was opened under one: what link
    events and invalid-trial reasons call it."""

    @property
    def label(self) -> str:
        """The topology name when there is one, else the device string."""
        return self.name or self.device

    @property
    def alive(self) -> bool:
        """Whether the engine host this port was opened on still runs (False after a
        crash or close: open the device again on the engine)."""
        return self.engine._generation == self.generation and self.engine.alive

    @property
    def mac(self) -> str:
        return str(self.info["mac"])

    @property
    def driver(self) -> str:
        return str(self.info["driver"])

    @property
    def rx_queues(self) -> int:
        """The RX queues it was opened with: a run that receives on it polls each one."""
        return int(self.info.get("rx_queues", 1))

    @property
    def tx_queues(self) -> int:
        """The TX queues it was opened with: a stream loaded on it sends on each one."""
        return int(self.info.get("tx_queues", 1))

    def stats(self) -> dict[str, int]:
        """The port's counters (`protocol.PortStats`'s fields) since it opened."""
        stats: dict[str, int] = PortStats.decode(
            self.engine._call("port_stats", port_id=self._id())).as_dict()
        return stats

    def set_queue_rate(self, mbps: int, queue: int = 0) -> None:
        """Hardware rate limit of a TX queue in Mbit/s (0: none), where the PMD has one."""
        self.engine._call("port_set_queue_rate", port_id=self._id(), queue=queue, mbps=int(mbps))

    # ---- neighbours: the port as a host on its subnet (engine/neighbours.py) ----

    def set_address(self, ip: str, *, mac: str | None = None, vlan: int | None = None) -> None:
        """The port answers ARP (IPv4) or neighbour solicitations (IPv6) for `ip` as `mac`
        (default: its own), in `vlan` (None: untagged), during runs and between them."""
        self.engine._call("port_set_addr", port_id=self._id(), mac=mac or self.mac, ip=ip,
                          vlan=int(vlan or 0))
        self.info["address"] = {"ip": ip, "vlan": vlan}

    def announce(self) -> None:
        """A gratuitous ARP / unsolicited neighbour advertisement of the port's address."""
        self.engine._call("port_announce", port_id=self._id())

    def resolve(self, peer_ip: str, timeout_s: float = 5.0, retry_s: float = 0.25) -> str:
        """The MAC of `peer_ip`, asked by ARP or neighbour solicitation every `retry_s`
        for at most `timeout_s`; NetloadEnvironmentError naming what was seen if none."""
        from .neighbours import resolve_failure

        try:
            return str(self.engine._call(
                "port_resolve", port_id=self._id(), peer_ip=peer_ip,
                timeout_ms=max(1, round(timeout_s * 1000)),
                retry_ms=max(1, round(retry_s * 1000)), timeout_s=timeout_s + 30))
        except errors.NetloadEnvironmentError as exc:
            if "no answer" not in str(exc):
                raise
            raise errors.NetloadEnvironmentError(
                resolve_failure(self.label, peer_ip, timeout_s, self.nd_stats(),
                                self.info.get("address", {}).get("vlan"))) from None

    def nd_stats(self) -> dict[str, Any]:
        """ARP/ND counters of the port (requests answered, rate-limited, ...)."""
        return dict(self.engine._call("port_nd_stats", port_id=self._id()))

    def refresh(self) -> dict[str, Any]:
        return PortInfo.decode(self.engine._call("port_info", port_id=self._id())).as_dict()

    def link(self) -> dict[str, Any]:
        """The link now: `up`, `speed_mbps` (None where the port reports no real speed,
        `speed_note` says why), `operstate`, `source` (the kernel interface or DPDK)."""
        return dict(self.engine._call("port_link", port_id=self._id()))

    def close(self) -> None:
        if self.engine._generation == self.generation and self.engine.alive:
            with _unless_terminated():
                self.engine._call("port_close", port_id=self.port_id)

    def _id(self) -> int:
        self.engine._check_generation(self.generation, f"port {self.device!r}")
        return self.port_id


@dataclass(frozen=True)
class Tx:
    """One stream's part in a run: how many packets, and how they are paced.

    `phases` are `patterns.Phase` objects (or their `as_spec()` dicts); none
    means as fast as the port takes them.
    """

    stream: LoadedStream
    count: int = 0
    phases: tuple[Any, ...] = ()
    queue: int = 0
    start_ns: int = 0
    """Paced streams: the first packet leaves this long after the run's common start
    (a replayed capture's flows); the phases' ends stay counted from the start."""

    def __post_init__(self) -> None:
        if isinstance(self.start_ns, bool) or not isinstance(self.start_ns, int) or \
                not 0 <= self.start_ns <= facts.MAX_RUN_S * 10**9:
            raise errors.NetloadConfigError(
                f"Tx(start_ns={self.start_ns!r}): give ns from 0 to {facts.MAX_RUN_S} s")
        if self.start_ns and not self.phases:
            raise errors.NetloadConfigError(
                f"Tx(start_ns={self.start_ns}): stream {self.stream.name!r} is not paced; a "
                "late start needs pacing phases")

    def spec(self) -> dict[str, Any]:
        phases = [p if isinstance(p, dict) else p.as_spec() for p in self.phases]
        return {"handle": self.stream.handle, "queue": self.queue, "count": int(self.count),
                "expect_only": False, "phases": phases, "start_ns": self.start_ns}

    def per_queue(self) -> list[Tx]:
        """The native entries of this one: a stream loaded over N TX queues
        (`LoadedStream.queues`) sends on each, queue q its own copy of the stream, its
        share of the count (the first `count % N` one more) and the pacing with every gap
        N times longer, so the N queues together offer exactly the load asked for."""
        parts = self.stream.queue_streams
        if len(parts) == 1:
            return [self]
        if self.queue != 0:
            raise errors.NetloadConfigError(
                f"Tx(queue={self.queue}): stream {self.stream.name!r} is loaded over "
                f"{len(parts)} TX queues and sends on all of them; load it with queues=1 "
                "to send it on one queue of your choice")
        n = len(parts)
        phases = [p if isinstance(p, dict) else p.as_spec() for p in self.phases]
        slower = [{**p, "gaps_ps": (np.frombuffer(p["gaps_ps"], dtype="<u8") * n)
                   .astype("<u8").tobytes()} for p in phases]
        counts = [self.count // n + (1 if q < self.count % n else 0) for q in range(n)]
        # a count below N leaves some queues nothing to send: they sit the run out
        return [Tx(part, c, tuple(slower), q, self.start_ns)
                for q, (part, c) in enumerate(zip(parts, counts))
                if c or not self.count]


@dataclass(frozen=True)
class LoadedStream:
    """A stream compiled into pre-filled pools on one port of an engine."""

    engine: Engine
    port: Port
    handle: int
    stream_id: int
    name: str
    csum_offloaded: bool
    generation: int
    mean_frame_size: float = 64.0  # bytes with FCS, over the packet sequence
    clock: str = "auto"  # "tsc", "hardware" or "auto" (see Engine.load)
    more_queues: tuple[LoadedStream, ...] = ()
    """The copies of this stream that send on TX queues 1, 2, ... of its port (this one
    sends on queue 0); empty for a stream on one queue."""
    source: Any = field(default=None, compare=False, repr=False)
    """The `traffic.Stream` it was compiled from (None: loaded from a spec or a dict):
    what expected frames are built from (traffic/expect.py)."""

    @property
    def queues(self) -> int:
        """The TX queues it is sent on."""
        return 1 + len(self.more_queues)

    @property
    def queue_streams(self) -> tuple[LoadedStream, ...]:
        """The native stream of each of its TX queues, queue 0 first."""
        return (self, *self.more_queues)

    def free(self) -> None:
        if self.engine._generation == self.generation and self.engine.alive:
            with _unless_terminated():
                for part in self.queue_streams:
                    self.engine._call("stream_free", handle=part.handle)


def link_events(events: Iterable[dict[str, Any]],
                ports: dict[int, Port]) -> tuple[dict[str, Any], ...]:
    """The host's link events of a run, each naming its port as the topology does
    (`port`: "p1", or the device string of a port opened without a name) and by device."""
    out = []
    for e in events:
        port = ports.get(int(e["port_id"]))
        out.append({"event": e["event"],
                    "port": port.label if port is not None else str(e["port_id"]),
                    "device": port.device if port is not None else None,
                    **{k: v for k, v in e.items() if k not in ("event", "port_id")}})
    return tuple(out)


CLOCKS = ("auto", "tsc", "hardware")


def check_clock(clock: str, port: Port) -> None:
    """Refuse a timestamp source the port cannot give, naming what it can."""
    if clock not in CLOCKS:
        raise errors.NetloadConfigError(f"clock {clock!r}: use one of {list(CLOCKS)}")
    if clock == "hardware" and not port.info.get("hw_timestamps"):
        has = [name for name, key in (("IEEE 1588 timesync", "has_timesync"),
                                      ("RX timestamp offload", "has_rx_timestamp"),
                                      ("a readable NIC clock", "has_read_clock"))
               if port.info.get(key)]
        raise errors.NetloadEnvironmentError(
            f"clock 'hardware' on port {port.device!r} (driver {port.driver}): hardware "
            "latency needs RX timestamp offload and a readable NIC clock (mlx5 has both); "
            + (f"this port has only {' and '.join(has)}" if has else
               "this port has no hardware timestamping")
            + (", and it was opened without hw_timestamps" if port.info.get("has_rx_timestamp")
               else "")
            + "; use clock='tsc' (software TSC timestamps) or 'auto'"
        )


def hardware_clock(stream: LoadedStream, rx_ports: list[Port]) -> bool:
    """Whether a stream is timed on NIC clocks in a run with these RX ports."""
    ports = [stream.port, *rx_ports]
    if stream.clock == "hardware":
        lacking = [p.device for p in ports if not p.info.get("hw_timestamps")]
        if lacking:
            raise errors.NetloadEnvironmentError(
                f"stream {stream.name!r} is timed on hardware clocks, but port(s) "
                f"{lacking} have no hardware timestamps; RX on ports opened with "
                "hw_timestamps, or load the stream with clock='tsc' or 'auto'")
        return True
    return stream.clock == "auto" and bool(rx_ports) and all(
        p.info.get("hw_timestamps") for p in ports)


def check_frames_fit(spec: StreamSpec, port: Port) -> None:
    """Refuse frames the port cannot carry before any traffic starts."""
    mtu = int(port.info.get("mtu") or 0)
    if not mtu:
        return
    l3 = spec.l3_offset if spec.l3_offset >= 0 else 14
    for frame in spec.frames:
        if len(frame) - l3 > mtu:
            raise errors.NetloadConfigError(
                f"stream {spec.name!r}: a {len(frame) + 4}-byte frame carries "
                f"{len(frame) - l3} bytes above L2, more than port {port.device!r}'s MTU "
                f"{mtu}; use smaller frames or open the port with mtu={len(frame) - l3}"
            )
