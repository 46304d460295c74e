"""RFC 2889 on the engine: `Rfc2889Runner`, what the `rfc2889` fixture gives a test.

One class binds each of rfc2889/'s measurers (the search core's one `Measurer`) to
engine runs over the topology's ports, in their order (p0, p1, ...):

- fully meshed (§5.1): a stream from every port to every other, each port's load split
  evenly over its destinations; a port's rx counts the frames of the streams to it;
- partially meshed (§5.2): p0 to each other port (one-to-many) or each other port to
  p0 (many-to-one), p0's load split evenly over the N - 1 streams;
- maximum forwarding rate (§5.6): the fully meshed pattern at `load_steps` loads up to
  the maximum; forward pressure (an 88-bit gap) is skipped with the reason: no port
  of this engine sends below the 96-bit gap (a software port has no gap at all);
- congestion control (§5.5): A = p0 sends half its load to C = p2 and half to D = p3,
  B = p1 all of it to C;
- address caching capacity and learning rate (§5.7, §5.8): the learning port p0 sends
  `count` broadcast frames whose source MACs step over `count` addresses (so the switch
  learns them and no port's own address is learned), then the test port p1 sends one
  frame to each address; frames that reach p0 were forwarded, frames that reach any
  other port were flooded (not learned). Before each trial the table is emptied: the
  `flush` callable (the plugin's pytest_netload_dut_flush_addresses hooks, which the
  built-in bridge implements) flushes it, else the trial waits out the age time;
- broadcast (§5.10): p0 sends broadcast frames, each other port counts them; once the
  search found the throughput, each port's latency is measured there in a run of its own
  (one stream's latency cannot be told apart by port in one run), not after every
  passing trial of the search (N - 1 runs each, most of them at loads never reported).

- errored frames (§5.9): p0 sends each kind it can to p1 at `test_rate`, and any other
  port that receives one counts it forwarded; undersized frames (the engine pads to
  64 bytes) and bad FCS (the MAC computes it) are skipped with the reason, oversized
  ones (max_frame + 1 bytes) whenever both ports' MTU carries them.

The meshes (fully and partially meshed, maximum forwarding rate, congestion control)
send the marker's `stream=` (default UDP) between each port pair, addressed to the pair
(bench/rfc2889_streams.py), compared with `expect=` (the call's, else the marker's),
whose checks are recorded and kept in `frames`; the other procedures send frames of
their own (and refuse `expect=`). Every
procedure runs on the engine of its ports, and refuses ports that span engines.

Counts per port come from the RX queue counters (frames with a signature of this
run's streams), so a flooded frame is counted wherever it arrived.

Every trial runs between the DUT hooks (bench/dut_trial.py `DutTrials`, as RFC 2544's
and Y.1564's do): the DUT's counters before and after it, its loss attributed (frames
sent and not received where they were meant to go), its health; the procedure each
trial tells the hooks is "rfc2889_" and the method's name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from .. import format as fmt
from ..engine.client import Engine, LoadedStream, Port, Tx
from ..errors import NetloadConfigError
from ..measure.recording import record_measurement
from ..rfc2889 import (
    MIN_PORTS,
    AddressLoad,
    AddressTrial,
    BroadcastTrial,
    CongestionTrial,
    ErroredCase,
    ErroredTrial,
    MeshTrial,
    PartialMeshTrial,
    StreamCounts,
    address_caching_capacity,
    address_learning_rate,
    broadcast_forwarding,
    check_port_count,
    congestion_control,
    errored_frame_filtering,
    fully_meshed,
    load_steps,
    maximum_forwarding_rate,
    partially_meshed,
)
from ..rfc2889.partial import check_direction
from ..search.lower_bound import SearchMax
from ..search.resolution import Resolution
from ..search.settings import TrialSettings
from ..search.trial import FunctionMeasurer
from ..traffic.packets import UDP, Eth, IPv4
from ..traffic.patterns import CBR, MaxRate
from ..traffic.streams import Stream, udp
from ..units import Rate, frame_bits
from . import progress
from . import rfc2889_frames as frames
from .dut_trial import DutTrials, TrialContext, TrialHooks
from .expected import FrameTally, chosen_expect
from .harness import WiredPorts
from .rfc2889_frames import ADDRESS_BASE_MAC, BROADCAST_MAC
from .rfc2889_streams import PairLane, mix_of, no_expect, one_engine, pair_lanes
from .settings import Rfc2889Mark
from .validity import generator_failure

__all__ = ["ADDRESS_BASE_MAC", "BROADCAST_MAC", "Rfc2889Mark", "Rfc2889Runner"]

ADDRESS_FRAMES = "frames from stepped source MACs, then frames to them"
LATENCY_RUN_S = 5.0   # at most this long per port, for a broadcast trial's latency
CALIBRATION_S = 1.0
CALIBRATION_SHARE = 0.95   # search from 95 % of what the generator sends, as rfc2544 does


T = TypeVar("T")


def _cbr(pps: float) -> tuple[Any, ...]:
    return tuple(CBR().phases(lambda _r: pps, Rate(pps, "pps"), seed=1))


class Rfc2889Runner:
    """RFC 2889 procedures over the topology's ports with the marker's settings."""

    def __init__(self, engine: Engine, ports: WiredPorts, mark: Rfc2889Mark, *,
                 flush: Callable[[TrialContext], bool] | None = None, test: str = "",
                 hooks: TrialHooks | None = None) -> None:
        self.engine = engine
        """The engine of the running procedure's ports (each procedure checks that they
        share one: `_ports`)."""
        self.hooks = hooks
        """The DUT's side of every trial; None: the generator's counters only."""
        self._duts: dict[str, DutTrials] = {}
        self.wired = ports
        self.mark = mark
        self.flush = flush
        """Empties the switch's address table before an address trial (told the trial's
        context): True when it did, False when it could not (then the age time is
        waited out)."""
        self.test = test
        self.names = tuple(p.name for p in ports.topology.ports)
        self.frames: list[Any] = []
        """Expected frames (``expect=``): each mesh procedure's `FrameCheck`s."""
        self._tally = FrameTally()  # the running procedure's rules and checks

    # ---- helpers ---------------------------------------------------------------------

    def _ports(self, procedure: str) -> tuple[Port, ...]:
        n = self.mark.ports if self.mark.ports is not None else (
            4 if procedure == "congestion_control"
            else max(len(self.names), MIN_PORTS[procedure]))  # too few: "needs n ports"
        check_port_count(n, list(self.names), procedure)
        self._tally = FrameTally()
        self.engine = one_engine(self.wired, self.names[:n], procedure, self.mark.ports)
        return tuple(self.wired.ports[name] for name in self.names[:n])

    def _pair_lanes(self, ports: Sequence[Port], pairs: Sequence[tuple[int, int]],
                    expect: Any = None) -> Any:
        """The marker's stream (default UDP) loaded for each (sender, receiver) pair of
        `ports`, addressed to the pair (bench/rfc2889_streams.py); a context manager
        giving the lanes and their records, which `_record` puts in the result's."""
        return pair_lanes(self.engine, self.wired, mix_of(self.mark.stream),
                          self.mark.frame_size, ports, pairs, tally=self._tally,
                          expect=chosen_expect(expect, self.mark.expect))

    def _load(self, tx: Port, stream: Stream) -> LoadedStream:
        return self.engine.load(tx, stream)

    def _search_max(self, entries: Sequence[tuple[int, LoadedStream]], senders: int,
                    rx: list[Port]) -> SearchMax:
        """Per-port maximum and where it came from: the marker's, the line rate's, else
        what the slowest sending port sends at full speed with all of them sending (the
        generator's ceiling, kept; the search starts at CALIBRATION_SHARE of it)."""
        if self.mark.max_rate is not None:
            return SearchMax(self.mark.max_rate.pps(
                self.mark.frame_size, line_rate_bps=self.wired.topology.line_rate_bps),
                "max_rate")
        line = self.wired.topology.line_rate_bps
        if line:
            return SearchMax(line / frame_bits(self.mark.frame_size, "l1"), "line_rate")
        full = tuple(MaxRate().phases(lambda _r: 0.0, None, seed=1))
        run = self.engine.run([Tx(s, 0, full) for _i, s in entries], rx,
                              duration_s=CALIBRATION_S, drain_s=0.1)
        sent = [0.0] * senders
        for (i, _s), r in zip(entries, run.streams):
            sent[i] += r.tx_pps
        if min(sent) <= 0:
            raise NetloadConfigError(
                f"calibration: a sending port sent nothing in {fmt.time_s_exact(CALIBRATION_S)}"
                "; check the ports' links")
        return SearchMax(min(sent) * CALIBRATION_SHARE, "generator", min(sent))

    def _run(self, entries: Sequence[tuple[LoadedStream, float]], rx: list[Port],
             duration_s: float) -> tuple[Any, str | None]:
        """Every stream at its own CBR rate; the first generator failure, or None."""
        run = self.engine.run([Tx(s, 0, _cbr(pps)) for s, pps in entries], rx,
                              duration_s=duration_s, drain_s=self.mark.drain_s,
                              expect_frames=self._tally.rules_for(s for s, _pps in entries))
        self._tally.keep(run.frames)
        for (stream, pps), s in zip(entries, run.streams):
            why = generator_failure(run, s, pps * duration_s, pps, duration_s)
            if why is not None:
                return run, f"stream {stream.name!r}: {why}"
        return run, None

    @staticmethod
    def _per_port(run: Any, rx: Sequence[Port]) -> list[int]:
        """Frames with a signature of the run's streams received on each port of `rx`."""
        q = run.rx_queues
        out, i = [], 0
        for port in rx:
            n = max(port.rx_queues, 1)
            out.append(int(q["packets"][i:i + n].sum() - q["foreign"][i:i + n].sum()))
            i += n
        return out

    def _settings(self, timed: bool = False,
                  on_trial: Callable[[Any], None] | None = None) -> TrialSettings:
        """The trials' common settings: the marker's retries, and its trial duration for
        the timed procedures (an address trial's count and rates set its own); `on_trial`
        reports each trial to the progress line (`_progress`)."""
        return TrialSettings(duration_s=self.mark.trial_duration_s if timed else None,
                             retries=self.mark.retries, on_trial=on_trial)

    def _progress(self, procedure: str, **plan: Any) -> Callable[[Any], None]:
        """Progress of an RFC 2889 procedure: its plan now (progress.start), and the
        ``on_trial`` that reports each trial as it ends."""
        progress.start(f"RFC 2889 {procedure}", test=self.test,
                       frame_size=self.mark.frame_size, **plan)
        count = 0

        def on_trial(t: Any) -> None:
            nonlocal count
            count += 1
            progress.report(event="trial", trial=count, **progress.trial_fields(t, 0.0))

        return on_trial

    def _trial(self, procedure: str, offered_pps: float, duration_s: float,
               run_trial: Callable[[], tuple[Any, T]], lost: Callable[[T], int],
               frame_size: int | None = None,
               prepare: Callable[[TrialContext], Any] | None = None) -> T:
        """One trial of `procedure` between the DUT hooks (DutTrials.around): `run_trial`
        gives (the engine run, the trial), `lost` the trial's frames not received where
        they were meant to go; the trial comes back with the hooks' findings.
        `prepare` is told the trial's context before the hooks' `before`."""
        dut = self._duts.get(procedure)
        if dut is None:
            dut = self._duts[procedure] = DutTrials(self.hooks, test=self.test,
                                                    procedure=f"rfc2889_{procedure}")
        ctx = dut.context(self.mark.frame_size if frame_size is None else frame_size,
                          offered_pps, duration_s)
        if prepare is not None:
            prepare(ctx)
        _run, trial = dut.around(ctx, run_trial, lost)
        return trial

    def _record(self, result: Any, streams: list[dict[str, Any]] | None = None) -> Any:
        """Record `result`; `streams`: the records of the meshes' streams (its traffic)."""
        data = result.as_dict()  # its own port_names (broadcast: the receivers) come first
        traffic = {} if streams is None else {"traffic": {"streams": streams}}
        record_measurement(data["procedure"], {"port_names": list(self.names), **data,
                                               "frame_size": self.mark.frame_size, **traffic})
        self._tally.done(self.frames, procedure=data["procedure"],
                         frame_size=f"{self.mark.frame_size}B")
        return result

    # ---- §5.1 fully meshed, §5.6 maximum forwarding rate ------------------------------

    def _mesh_streams(self, ports: Sequence[Port], expect: Any) -> Any:
        """The stream from every port to every other (`_pair_lanes`)."""
        n = len(ports)
        return self._pair_lanes(ports, [(i, j) for i in range(n) for j in range(n) if i != j],
                                expect)

    def _mesh_measurer(self, loaded: Sequence[PairLane],
                       ports: Sequence[Port], streams_per_sender: int,
                       procedure: str) -> FunctionMeasurer[float, MeshTrial]:
        """Each sender's `load` split evenly over its streams; per port tx and rx."""
        n = len(ports)

        def measure(load: float, duration_s: float) -> MeshTrial:
            progress.trial_start(load)

            def once() -> tuple[Any, MeshTrial]:
                run, why = self._run([(x.stream, load / streams_per_sender * x.share)
                                      for x in loaded], list(ports), duration_s)
                tx, rx = [0] * n, [0] * n
                for x, r in zip(loaded, run.streams):
                    tx[x.sender] += r.tx_packets
                    rx[x.receiver] += r.rx_unique
                return run, MeshTrial(load, tuple(tx), tuple(rx), duration_s, why is None,
                                      why, self.names[:n])

            return self._trial(procedure, load, duration_s, once, lambda t: t.lost)

        return FunctionMeasurer(measure)

    def fully_meshed(self, *, expect: Any = None) -> Any:
        ports = self._ports("fully_meshed")
        n = len(ports)
        with self._mesh_streams(ports, expect) as (loaded, streams):
            top = self._search_max([(x.sender, x.stream) for x in loaded], n, list(ports))
            result = fully_meshed(self._mesh_measurer(loaded, ports, n - 1, "fully_meshed"),
                                  ports=n,
                                  max_pps_per_port=top.pps,
                                  settings=self._settings(timed=True, on_trial=self._progress(
                                      "fully meshed", total=self.mark.max_trials,
                                      trial_s=self.mark.trial_duration_s, max_pps=top.pps,
                                      resolution=Resolution(ratio=self.mark.resolution))),
                                  resolution=self.mark.resolution,
                                  max_trials=self.mark.max_trials, max_source=top.source,
                                  generator_max_pps_per_port=top.generator_max_pps)
        return self._record(result, streams)

    def pressure_unsupported(self) -> str:
        """Why this generator cannot offer forward pressure (frames.pressure_unsupported)."""
        return frames.pressure_unsupported(self.wired)

    def maximum_forwarding_rate(self, *, expect: Any = None) -> Any:
        """§5.6 over the fully meshed pattern: the forwarding rate at `load_steps` loads
        up to the maximum, its highest the MFR; forward pressure skipped with the
        reason this generator cannot send a shortened gap."""
        ports = self._ports("maximum_forwarding_rate")
        n = len(ports)
        with self._mesh_streams(ports, expect) as (loaded, streams):
            top = self._search_max([(x.sender, x.stream) for x in loaded], n, list(ports))
            result = maximum_forwarding_rate(
                self._mesh_measurer(loaded, ports, n - 1, "maximum_forwarding_rate"), ports=n,
                loads=load_steps(top.pps, self.mark.load_steps),
                settings=self._settings(timed=True, on_trial=self._progress(
                    "maximum forwarding rate", total=self.mark.load_steps,
                    trial_s=self.mark.trial_duration_s)),
                pressure=self.pressure_unsupported(),
                frame_size=self.mark.frame_size)
        return self._record(result, streams)

    # ---- §5.2 partially meshed ------------------------------------------------------

    def partially_meshed(self, direction: str = "one_to_many", *, expect: Any = None) -> Any:
        """§5.2: p0 sends to every other port (one_to_many) or every other port sends
        to p0 (many_to_one); the load is p0's, split evenly over the N - 1 streams."""
        way = check_direction(direction)
        ports = self._ports("partially_meshed")
        n = len(ports)
        pairs = [(0, j) for j in range(1, n)] if way == "one_to_many" else \
            [(j, 0) for j in range(1, n)]
        with self._pair_lanes(ports, pairs, expect) as (loaded, streams):
            if way == "one_to_many":
                top = self._search_max([(0, x.stream) for x in loaded], 1, list(ports[1:]))
            else:  # p0's load is the N - 1 senders' together
                each = self._search_max([(x.sender - 1, x.stream) for x in loaded],
                                        n - 1, [ports[0]])
                top = SearchMax(each.pps * (n - 1), each.source,
                                None if each.generator_max_pps is None
                                else each.generator_max_pps * (n - 1))

            def once(load: float, duration_s: float) -> tuple[Any, PartialMeshTrial]:
                run, why = self._run([(x.stream, load / (n - 1) * x.share) for x in loaded],
                                     list(ports), duration_s)
                tx, rx = [0] * n, [0] * n
                for x, r in zip(loaded, run.streams):
                    tx[x.sender] += r.tx_packets
                    rx[x.receiver] += r.rx_unique
                return run, PartialMeshTrial(load, tuple(tx), tuple(rx), duration_s,
                                             why is None, why, self.names[:n])

            def measure(load: float, duration_s: float) -> PartialMeshTrial:
                progress.trial_start(load)
                return self._trial("partially_meshed", load, duration_s,
                                   lambda: once(load, duration_s), lambda t: t.lost)

            result = partially_meshed(FunctionMeasurer(measure), direction=way, ports=n,
                                      max_pps=top.pps, settings=self._settings(
                                          timed=True, on_trial=self._progress(
                                              f"partially meshed {way.replace('_', '-')}",
                                              total=self.mark.max_trials,
                                              trial_s=self.mark.trial_duration_s,
                                              max_pps=top.pps, resolution=Resolution(
                                                  ratio=self.mark.resolution))),
                                      resolution=self.mark.resolution,
                                      max_trials=self.mark.max_trials, **top.source_args)
        return self._record(result, streams)

    # ---- §5.5 congestion control -----------------------------------------------------

    def congestion_control(self, *, expect: Any = None) -> Any:
        ports = self._ports("congestion_control")
        names = self.names[:4]
        pairs = [(0, 2, 0.5), (0, 3, 0.5), (1, 2, 1.0)]  # A->C, A->D half A's load; B->C
        with self._pair_lanes(ports, [(i, j) for i, j, _share in pairs],
                              expect) as (loaded, streams):
            share = {(i, j): part for i, j, part in pairs}
            max_pps = self._search_max([(x.sender, x.stream) for x in loaded], 2,
                                       [ports[2], ports[3]]).pps

            def once(load: float, duration_s: float) -> tuple[Any, CongestionTrial]:
                run, why = self._run([(x.stream, load * share[x.sender, x.receiver] * x.share)
                                      for x in loaded], [ports[2], ports[3]], duration_s)
                by_pair = {(i, j): [0, 0] for i, j, _s in pairs}
                for x, r in zip(loaded, run.streams):
                    by_pair[x.sender, x.receiver][0] += int(r.tx_packets)
                    by_pair[x.sender, x.receiver][1] += int(r.rx_unique)
                ac, ad, bc = (StreamCounts(f"{names[i]}->{names[j]}", *by_pair[i, j])
                              for i, j, _s in pairs)
                return run, CongestionTrial(load, duration_s, ac, ad, bc, valid=why is None,
                                            invalid_reason=why, port_names=names)

            def measure(load: float, duration_s: float) -> CongestionTrial:
                progress.trial_start(load)
                return self._trial("congestion_control", load, duration_s,
                                   lambda: once(load, duration_s),
                                   lambda t: sum(x.lost for x in t.streams))

            result = congestion_control(FunctionMeasurer(measure), load_pps_per_port=max_pps,
                                        settings=self._settings(
                                            timed=True, on_trial=self._progress(
                                                "congestion control",
                                                trial_s=self.mark.trial_duration_s)))
        return self._record(result, streams)

    # ---- §5.7 / §5.8 address caching and learning -------------------------------------

    def _empty_table(self, ctx: TrialContext) -> None:
        if self.flush is not None and self.flush(ctx):
            return
        if self.mark.age_time_s is not None:
            time.sleep(self.mark.age_time_s + 1.0)
        else:
            raise NetloadConfigError(
                "rfc2889 address tests start each trial from an empty address table: the "
                "built-in netns-bridge flushes it; for another DUT implement "
                "pytest_netload_dut_flush_addresses (docs/hooks.md), or give "
                "@pytest.mark.rfc2889(age_time='300s') (its age time, waited out before "
                "each trial)")

    def _address_measurer(self, procedure: str) -> FunctionMeasurer[AddressLoad, AddressTrial]:
        """Address trials of `procedure` between the DUT hooks, each from an empty
        table (the table is emptied before the hooks' `before`)."""
        def measure(load: AddressLoad, duration_s: float) -> AddressTrial:
            progress.trial_start(load.learning_rate_fps)
            return self._trial(procedure, load.learning_rate_fps, duration_s,
                               lambda: self._measure_addresses(load), lambda t: t.lost,
                               prepare=self._empty_table)

        return FunctionMeasurer(measure)

    def _measure_addresses(self, load: AddressLoad) -> tuple[Any, AddressTrial]:
        """One address trial (rfc2889.AddressMeasurer) and its test frames' run; its
        duration is the load's own, which the counts at their rates already fix."""
        count, learning_rate_fps, test_rate_fps = (load.count, load.learning_rate_fps,
                                                   load.test_rate_fps)
        ports = self._ports("address_caching_capacity")
        learn, test, monitors = ports[0], ports[1], list(ports[2:])
        learning, probe = frames.address_streams(self.wired, count, learn, test,
                                                  self.mark.frame_size)
        ls, ps = self._load(learn, learning), self._load(test, probe)
        try:
            run = self.engine.run([Tx(ls, count, _cbr(learning_rate_fps))],
                                  [test, *monitors], drain_s=0.2)
            (sent,) = run.streams
            why = None if sent.tx_packets == count else (
                f"the generator sent {fmt.count(sent.tx_packets)} of {fmt.count(count)} "
                "learning frames")
            run = self.engine.run([Tx(ps, count, _cbr(test_rate_fps))], [learn, *monitors],
                                  drain_s=self.mark.drain_s)
            counts = self._per_port(run, [learn, *monitors])
            tx = int(run.streams[0].tx_packets)
            if why is None and tx != count:
                why = f"the generator sent {fmt.count(tx)} of {fmt.count(count)} test frames"
        finally:
            ls.free()
            ps.free()
        return run, AddressTrial(count, tx, min(counts[0], tx), sum(counts[1:]), why is None,
                                 why, learning_rate_fps, test_rate_fps)

    def address_caching_capacity(self, *, expect: Any = None) -> Any:
        no_expect("address_caching_capacity", expect, self.mark.expect, ADDRESS_FRAMES)
        self._ports("address_caching_capacity")
        m = self.mark
        result = address_caching_capacity(
            self._address_measurer("address_caching_capacity"), low=m.low, high=m.high,
            learning_rate_fps=m.learning_rate_fps, test_rate_fps=m.test_rate_fps,
            settings=self._settings(on_trial=self._progress("address caching capacity")),
            age_time_s=self._age_time())
        return self._record(result)

    def address_learning_rate(self, max_rate_fps: float | None = None, *,
                              expect: Any = None) -> Any:
        """§5.8: the highest learning rate at which `learning_count` addresses (at most
        the capacity: measure it first) are all learned, up to `max_rate_fps` (default:
        the marker's max_rate, else 100,000 fps)."""
        no_expect("address_learning_rate", expect, self.mark.expect, ADDRESS_FRAMES)
        self._ports("address_learning_rate")
        m = self.mark
        line = self.wired.topology.line_rate_bps  # a max_rate in % needs it (_search_max)
        top = max_rate_fps or (m.max_rate.pps(m.frame_size, line_rate_bps=line)
                               if m.max_rate else 100_000.0)
        result = address_learning_rate(
            self._address_measurer("address_learning_rate"), count=m.learning_count,
            max_rate_fps=top, test_rate_fps=m.test_rate_fps,
            settings=self._settings(on_trial=self._progress("address learning rate")))
        return self._record(result)

    def _age_time(self) -> float | None:
        if self.mark.age_time_s is not None:
            return self.mark.age_time_s
        dut = self.wired.topology.dut or {}
        return float(dut["ageing_s"]) if str(dut.get("ageing_s", "")).isdigit() else None

    # ---- §5.10 broadcast ----------------------------------------------------------------

    def broadcast_forwarding(self, *, expect: Any = None) -> Any:
        no_expect("broadcast_forwarding", expect, self.mark.expect, "broadcast frames")
        ports = self._ports("broadcast_forwarding")
        sender, receivers = ports[0], list(ports[1:])
        flow = self.wired.flow(sender, receivers[0])
        frame = (Eth(dst=BROADCAST_MAC, src=flow.src_mac)
                 / IPv4(src=flow.src_ip or "198.18.0.2", dst="255.255.255.255") / UDP()).build()
        stream = self._load(sender, Stream(frame, size=self.mark.frame_size,
                                           name=f"{self.names[0]}->broadcast"))
        try:
            top = self._search_max([(0, stream)], 1, receivers)

            def once(load: float, duration_s: float) -> tuple[Any, BroadcastTrial]:
                run, why = self._run([(stream, load)], receivers, duration_s)
                tx = int(run.streams[0].tx_packets)
                rx = self._per_port(run, receivers)
                return run, BroadcastTrial(load, duration_s, tx, tuple(rx), (), why is None,
                                           why, self.names[1:len(ports)])

            def measure(load: float, duration_s: float) -> BroadcastTrial:
                progress.trial_start(load)
                return self._trial("broadcast_forwarding", load, duration_s,
                                   lambda: once(load, duration_s), lambda t: sum(t.lost))

            result = broadcast_forwarding(FunctionMeasurer(measure), ports=len(ports),
                                          max_pps=top.pps,
                                          settings=self._settings(
                                              timed=True, on_trial=self._progress(
                                                  "broadcast forwarding",
                                                  total=self.mark.max_trials,
                                                  trial_s=self.mark.trial_duration_s,
                                                  max_pps=top.pps,
                                                  resolution=Resolution(
                                                      ratio=self.mark.resolution))),
                                          resolution=self.mark.resolution,
                                          max_trials=self.mark.max_trials, **top.source_args)
            at = result.throughput_trial
            if at is not None:  # §5.10's latency: at the throughput, port by port
                latency = tuple(self._latency(stream, at.offered_pps, port, at.duration_s)
                                for port in receivers)
                result = replace(result, throughput_trial=replace(at, latency=latency))
        finally:
            stream.free()
        return self._record(result)

    def _latency(self, stream: LoadedStream, load: float, port: Port,
                 duration_s: float) -> Any:
        run, _why = self._run([(stream, load)], [port], min(duration_s, LATENCY_RUN_S))
        s = run.streams[0]
        return s.latency_result() if s.latency_samples else None

    # ---- §5.9 errored frames filtering ----------------------------------------------

    def errored_cases(self, ports: Sequence[Port]) -> tuple[ErroredCase, ...]:
        """What this generator can send of each kind of errored frame between the first
        two of `ports` (frames.errored_cases)."""
        return frames.errored_cases(self.wired, ports, self.mark.max_frame)

    def errored_frame_filtering(self, *, expect: Any = None) -> Any:
        """§5.9: p0 sends each kind of errored frame it can to p1 at `test_rate` for a
        trial; a frame that arrives on any other port was forwarded (a flooded one too).
        The kinds this generator cannot send are skipped with the reason."""
        no_expect("errored_frame_filtering", expect, self.mark.expect, "errored frames")
        ports = self._ports("errored_frame_filtering")
        sender, others = ports[0], list(ports[1:])

        def once(case: ErroredCase, size: int, duration_s: float) -> tuple[Any, ErroredTrial]:
            spec = udp(size=size, name=f"rfc2889-{case.kind}")
            stream = self._load(sender, spec.for_flow(self.wired.flow(sender, others[0])))
            try:
                run, why = self._run([(stream, self.mark.test_rate_fps)], others, duration_s)
                tx = int(run.streams[0].tx_packets)
                forwarded = sum(self._per_port(run, others))
            finally:
                stream.free()
            return run, ErroredTrial(case, tx, min(forwarded, tx), duration_s, why is None,
                                     why)

        def measure(case: ErroredCase, duration_s: float) -> ErroredTrial:
            size = case.frame_size
            assert size is not None  # the procedure runs only sendable cases
            progress.trial_start(self.mark.test_rate_fps)
            return self._trial("errored_frame_filtering", self.mark.test_rate_fps, duration_s,
                               lambda: once(case, size, duration_s), lambda t: t.filtered,
                               frame_size=size)

        cases = self.errored_cases(ports)
        on_trial = self._progress("errored frame filtering", exact=True,
                                  total=sum(c.frame_size is not None for c in cases),
                                  trial_s=self.mark.trial_duration_s)
        result = errored_frame_filtering(FunctionMeasurer(measure), cases=cases,
                                         settings=self._settings(timed=True, on_trial=on_trial))
        return self._record(result)
