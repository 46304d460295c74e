"""What the fixtures hand to tests: ports as wired, bound rate controllers,
latency meters and the DUT handle of a topology file.

Engine-facing but pytest-free, so scripts can use it too: the fixtures in
plugin/fixtures.py only build these objects from the session's settings.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from .. import format as fmt
from ..engine.client import Engine, Port
from ..errors import NetloadConfigError, NetloadEnvironmentError
from ..measure.latency import LatencyResult
from ..measure.recording import record_measurement
from ..measure.results import RunResult, StreamResult
from ..topology.model import Flow, Topology
from ..topology.ssh import check_command
from ..traffic.replay import Replay
from ..traffic.streams import L4Spec
from ..units import as_duration
from . import progress
from .expected import flow_names, record_frames
from .ratecontrol import RateController, RateResult
from .settings import NetloadMark


@dataclass
class WiredPorts:
    """The topology's ports, opened on the engine, with their wiring.

    Unpacks as the first wire's ``(tx, rx)``: ``tx, rx = netload_ports``.
    """

    topology: Topology
    ports: dict[str, Port]
    reopen: Callable[[dict[str, Port]], None] | None = field(default=None, repr=False,
                                                             compare=False)
    """Opens the topology's ports on the engine into the dict given (see `refresh`)."""
    pending_crash: Exception | None = field(default=None, repr=False, compare=False)
    """The engine crash that interrupted opening the ports (session set-up): raised once,
    in the test that was being set up, so that later tests open them on a fresh host
    instead of all inheriting the session fixture's cached error."""

    def __iter__(self) -> Iterator[Port]:
        return iter(self.wire(0))

    @property
    def stale(self) -> bool:
        """True when the engine host the ports were opened on has ended (a crash)."""
        return not self.ports or any(not p.alive for p in self.ports.values())

    def refresh(self) -> bool:
        """Open the ports again when the engine host they were opened on has ended: a
        crash ends the test it happened in, and the next test gets a fresh engine host
        and fresh ports. Returns whether it opened them again."""
        crash, self.pending_crash = self.pending_crash, None
        if crash is not None:
            raise crash
        if self.reopen is None or not self.stale:
            return False
        self.ports.clear()  # handles of the dead host: nothing to close
        self.reopen(self.ports)
        return True

    @property
    def tx(self) -> Port:
        return self.wire(0)[0]

    @property
    def rx(self) -> Port:
        return self.wire(0)[1]

    def wire(self, index: int) -> tuple[Port, Port]:
        """The (tx, rx) ports of the topology's wire `index`."""
        wires = self.topology.wires
        if not 0 <= index < len(wires):
            raise NetloadConfigError(
                f"wire {index}: topology {self.topology.name!r} has wires 0..{len(wires) - 1} "
                f"({', '.join(f'{w.tx}->{w.rx}' for w in wires)})")
        w = wires[index]
        return self.ports[w.tx], self.ports[w.rx]

    @property
    def pairs(self) -> list[tuple[Port, Port]]:
        return [self.wire(i) for i in range(len(self.topology.wires))]

    def name_of(self, port: Port) -> str:
        for name, p in self.ports.items():
            if p.port_id == port.port_id and \
                    getattr(p, "engine", None) is getattr(port, "engine", None):  # per engine
                return name
        raise NetloadConfigError(f"port {port.device!r} is not a port of topology "
                                 f"{self.topology.name!r}; use one from netload_ports")

    def flow(self, tx: Port, rx: Port | None = None) -> Flow:
        """The wire from `tx` (to `rx`, when given) as a Flow with its addresses."""
        tx_name = self.name_of(tx)
        rx_name = None if rx is None else self.name_of(rx)
        for f in self.topology.flows():
            if f.tx.name == tx_name and (rx_name is None or f.rx.name == rx_name):
                return f
        raise NetloadConfigError(
            f"no wire of topology {self.topology.name!r} goes from {tx_name}"
            + (f" to {rx_name}" if rx_name else "") + "; its wires are "
            + ", ".join(f"{w.tx}->{w.rx}" for w in self.topology.wires))

    def rx_of(self, tx: Port) -> list[Port]:
        name = self.name_of(tx)
        return [self.ports[w.rx] for w in self.topology.wires if w.tx == name]


class ExternalDut:
    """The DUT of a topology file: its metadata, and commands run on it where the file
    says how: in its network namespace here (`[topology] namespace`) or over ssh
    (`[dut] ssh`)."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.info = dict(topology.dut)
        self.namespace = topology.namespace
        self.ssh = topology.dut_ssh

    def __repr__(self) -> str:
        return f"ExternalDut({self.info.get('name', self.topology.name)!r})"

    def run(self, cmd: Sequence[str], *, input: str | None = None, check: bool = True,
            timeout_s: float = 30.0) -> subprocess.CompletedProcess[str]:
        """Run `cmd` (a list of arguments, never a shell line) on the DUT, at most
        `timeout_s` seconds; text output captured. With `check` (the default) a non-zero
        exit raises NetloadEnvironmentError with the command's stderr."""
        if self.ssh is not None:
            return self.ssh.run(cmd, input=input, check=check, timeout_s=timeout_s)
        if self.namespace is None:
            raise NetloadConfigError(
                f"the DUT of topology {self.topology.name!r} is not on this machine, so "
                "commands cannot run on it; set [dut] ssh = 'user@host' in the file to run "
                "them over ssh, or [topology] namespace = '...' when the DUT is a network "
                "namespace here (docs/topology-files.md)")
        args = check_command(cmd, f"command for the DUT in namespace {self.namespace}")
        ip = shutil.which("ip")
        if ip is None:
            raise NetloadEnvironmentError("`ip` (iproute2) is not installed: apt-get install "
                                          "iproute2")
        try:
            proc = subprocess.run([ip, "netns", "exec", self.namespace, *args], input=input,
                                  capture_output=True, text=True, timeout=timeout_s,
                                  check=False)
        except subprocess.TimeoutExpired as exc:
            raise NetloadEnvironmentError(
                f"{args} in DUT namespace {self.namespace} did not finish within "
                f"{timeout_s:g} s; pass a larger timeout_s if it is expected to take longer"
            ) from exc
        if check and proc.returncode != 0:
            raise NetloadEnvironmentError(
                f"{args} in DUT namespace {self.namespace} failed with exit status "
                f"{proc.returncode}: {proc.stderr.strip() or proc.stdout.strip()}")
        return proc


def bind_stream(stream: Any, flow: Flow) -> Any:
    """A `udp(...)` or `tcp(...)` spec becomes the stream for `flow`; streams pass through."""
    return stream.for_flow(flow) if isinstance(stream, L4Spec) else stream


def stream_name(stream: Any, flow: Flow) -> str:
    if isinstance(stream, L4Spec):
        return stream.name or f"{flow.tx.name}->{flow.rx.name}"
    name = getattr(stream, "name", None)
    if not name:
        raise NetloadConfigError(
            "a latency meter finds its stream by name: give the stream a name "
            "(Stream(..., name='probe')) or use udp(...)")
    return str(name)


class BoundController:
    """A `RateController` on one wired port, with the test's marker defaults."""

    def __init__(self, engine: Engine, ports: WiredPorts, tx: Port, *, rate: Any = None,
                 pattern: Any = None, mark: NetloadMark | None = None,
                 duration_override_s: float | None = None, hardware: bool = False,
                 test: str = "") -> None:
        self.ports = ports
        self.tx = tx
        self.rx = ports.rx_of(tx)
        self.flow = ports.flow(tx)
        self.mark = mark or NetloadMark()
        self.rate = rate if rate is not None else self.mark.rate
        self.pattern = pattern if pattern is not None else self.mark.pattern
        self.duration_override_s = duration_override_s
        self.test = test
        self.controller = RateController(engine, tx, line_rate_bps=ports.topology.line_rate_bps,
                                         rx=self.rx, hardware=hardware)

    @property
    def names(self) -> dict[str, str]:
        """What expect() resolves on this wire: "tx_mac", "rx_mac", "dut_mac" (the
        DUT's MAC facing the receiving port, where the topology knows it)."""
        return flow_names(self.flow.tx.mac or self.tx.mac,
                          self.flow.rx.mac or (self.rx[0].mac if self.rx else None),
                          self.flow.rx.peer_mac)

    def expect_frames(self, stream: Any, expect: Any, *, rate: Any = "1000pps",
                      duration: Any = "1s") -> Any:
        """Send `stream` at a low `rate` for `duration` and compare every received frame
        with `expect` in the RX path; returns its `FrameCheck` (recorded as an
        ``expected_frames`` measurement). Judge it with `assert_frames_match`."""
        result = self.run(stream, rate, pattern="cbr", duration=duration, expect=expect,
                          record=False)
        checks = result.run.frames
        record_frames(checks, procedure="expect_frames", rate=str(rate),
                      duration_s=as_duration(duration).seconds)
        (check,) = checks.values()
        return check

    def run(self, streams: Any, rate: Any = None, *, pattern: Any = None,
            duration: Any = None, count: int = 0, record: bool = True,
            **options: Any) -> RateResult:
        """Send `streams` (a stream, a `udp(...)` spec, or a list, optionally weighted; or a
        replayed capture, `from_pcap`, its flows weighted by their packets); ``expect=``
        compares their received frames (`RateController.run`)."""
        if isinstance(streams, Replay):
            bound: list[Any] = list(streams.streams(self.flow))
        else:
            items = streams if isinstance(streams, (list, tuple)) else [streams]
            bound = [(bind_stream(s[0], self.flow), s[1]) if isinstance(s, tuple)
                     else bind_stream(s, self.flow) for s in items]
        if duration is None and count == 0:
            duration = self.mark.duration_s
        if self.duration_override_s is not None and count == 0:
            duration = self.duration_override_s
        rate = rate if rate is not None else self.rate
        pattern = pattern if pattern is not None else self.pattern
        if rate is None and pattern == "cbr":
            pattern = "max"
        progress.report(test=self.test, procedure="traffic", note=f"{pattern} for "
                        f"{fmt.time_s_exact(as_duration(duration).seconds)}"
                        if duration is not None else None)
        if options.get("expect") is not None:
            options.setdefault("names", self.names)
        result = self.controller.run(bound, rate, pattern=pattern, duration=duration,
                                     count=count, **options)
        self._record(result, duration, record)
        progress.report(test=self.test, procedure="traffic",
                        loss_ratio=result.run.lost / max(result.run.tx_packets, 1))
        return result

    def replay(self, replay: Replay, *, speed: float = 1.0, loops: int = 1,
               duration: Any = None, **options: Any) -> RateResult:
        """Send a capture (`from_pcap`) at its own timing on this port's wire, its MACs the
        wire's (`RateController.replay`)."""
        progress.report(test=self.test, procedure="traffic",
                        note=f"replay of {replay.path} x{speed:g}")
        result = self.controller.replay(replay, speed=speed, loops=loops, duration=duration,
                                        wire=self.flow, **options)
        self._record(result, duration)
        return result

    def _record(self, result: RateResult, duration: Any, record: bool = True) -> None:
        """The run's traffic record, and its expected-frame checks unless `record` is
        False (a caller that records them itself)."""
        if record and result.run.frames:
            record_frames(result.run.frames, procedure="traffic")
        record_measurement("traffic", {
            "pattern": result.pattern,
            "offered_pps": result.offered_pps,
            "streams": [{"name": s.result.name, "offered_pps": s.offered_pps,
                         "tx_packets": s.result.tx_packets, "rx_packets": s.result.rx_packets,
                         "lost": s.result.lost, "achieved_tx_pps": s.achieved_tx_pps,
                         "achieved_rx_pps": s.achieved_rx_pps,
                         "mean_frame_size": s.mean_frame_size} for s in result.streams],
            "duration_s": None if duration is None else as_duration(duration).seconds,
        })


@dataclass
class LatencyMeter:
    """Latency and loss of one stream over the runs inside its ``with`` block."""

    engine: Engine
    rx: Port
    name: str
    results: list[StreamResult] = field(default_factory=list)
    open: bool = False

    def __enter__(self) -> Self:
        self.open = True
        self.engine.observers.append(self._observe)
        return self

    def __exit__(self, *exc: object) -> None:
        self.open = False
        self.engine.observers.remove(self._observe)
        if self.results:
            record_measurement("latency", {"stream": self.name, **self.summary()})

    def _observe(self, run: RunResult) -> None:
        for s in run.streams:
            if s.name == self.name:
                self.results.append(s)

    def _closed(self) -> None:
        if self.open:
            raise NetloadConfigError(
                f"latency meter of {self.name!r}: read it after its `with` block ends")
        if not self.results:
            raise NetloadConfigError(
                f"latency meter of {self.name!r} saw no run of that stream: send it inside "
                "the `with latency_meter(rx, stream)` block")

    @property
    def tx_packets(self) -> int:
        self._closed()
        return sum(s.tx_packets for s in self.results)

    @property
    def rx_packets(self) -> int:
        self._closed()
        return sum(s.rx_packets for s in self.results)

    @property
    def lost(self) -> int:
        self._closed()
        return sum(s.lost for s in self.results)

    @property
    def clock(self) -> str:
        self._closed()
        return self.results[-1].clock

    @property
    def latency(self) -> LatencyResult:
        """Every run's latency of the stream, merged into one result."""
        self._closed()
        parts = [s.latency_result() for s in self.results if s.latency is not None]
        if not parts:
            raise NetloadConfigError(f"stream {self.name!r} kept no latency histogram")
        return LatencyResult.merge(parts)

    def latency_result(self) -> LatencyResult:
        return self.latency

    def summary(self) -> dict[str, Any]:
        lat = self.latency
        return {"tx_packets": self.tx_packets, "rx_packets": self.rx_packets,
                "lost": self.lost,
                "latency": {**lat.as_dict(), "histogram": lat.histogram_dict()}}


def line_rate_of(topology: Topology) -> float | None:
    return float(topology.line_rate_bps) if topology.line_rate_bps else None


def dut_info(topology: Topology, dut: Any) -> Mapping[str, str]:
    return dict(getattr(dut, "info", None) or topology.dut)
