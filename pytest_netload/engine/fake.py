"""A fake engine host: the engine host's wire protocol over a modelled DUT, without DPDK.

`serve(channel, dut)` answers the same requests as `host.py`'s host (`FakeHost`
implements `protocol.HostOps`, op for op, signature for signature: hello, port
open/info/stats/close, stream load/free, run start/poll/stop/results, close, crash),
through the same serve loop, with the same reply and error format, and returns
results as the same arrays (`wire.py`) that `measure/results.py::build_run_result`
reads. The unchanged `client.Engine` drives it: `Engine(fake=FakeDut(...))` boots this
module in its popen gateway instead of the host, and nothing else differs.

What it models instead of sending frames is a DUT (`FakeDut`, fake_dut.py; its model
of a run is fake_model.py's; in the spirit of
hyperfine's mock executor): a forwarding capacity (pps, or bit/s at a layer), random
loss, a fixed delay with optional jitter, and a FIFO buffer of `buffer_frames` in
front of the capacity. Per run it works out, in closed form and never per packet,
what the pacing phases offered (exactly as many frames as the native TX loop's
schedule sends), what the buffer took, dropped and still held when TX ended (and
drained after, like a real shaper's backlog), and what arrived when. A 60 s trial
takes milliseconds: the fake never waits; its polls walk the run's states
(sending, draining, done) at once.

The generator side is ideal: no lag, no time off the CPU, no frame refused, no
drop on its own RX ports, links always up. Deterministic: the same DUT (its seed)
and the same sequence of runs give the same results.

It never imports the cffi extension or the facade. The C facts it needs (constants,
result struct fields, the TX end reasons) come from `_native_facts`, generated from
native/include/netload_api.h; the histogram layout models native/src/hist.c, and
tests/unit/test_fake_engine.py checks it against the built extension where there is one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _native_facts as facts
from .. import errors
from .fake_dut import FAKE_KEYS, FakeDut, as_fake_dut, hashed_flows, parse_fake_engine
from .fake_expect import expect_arrays
from .fake_intervals import count_of, snapshots
from .fake_model import (
    HIST_MAX_SUB_BITS,
    HIST_MIN_SUB_BITS,
    HIST_SUB_BITS,
    LATENCY_SUB_BITS,
    PORT_STATS,
    RX_QUEUE_STATS,
    RX_STREAM_STATS,
    TX_END,
    TX_STATS,
    FakeStream,
    _Model,
    _Outcome,
    hist_buckets,
    hist_lower_bounds_ns,
)
from .protocol import Hello, PortInfo, PortSpec, PortStats, RunResults, RunStart, RunStatus, StreamSpec
from .wire import pack_array

__all__ = ["CONSTANTS", "FAKE_ABI_VERSION", "FAKE_KEYS", "HIST_MAX_SUB_BITS",
           "HIST_MIN_SUB_BITS", "HIST_SUB_BITS", "LATENCY_SUB_BITS", "MAX_BURST", "MAX_STREAMS",
           "PORT_STATS", "RX_QUEUE_STATS", "RX_STREAM_STATS", "TX_END", "TX_STATS", "FakeDut",
           "FakeHost", "as_fake_dut", "hist_buckets", "hist_lower_bounds_ns",
           "parse_fake_engine", "serve"]

#: NETLOAD_ABI_VERSION of the netload_api.h this fake answers as (its hello).
FAKE_ABI_VERSION = facts.ABI_VERSION
#: The C constants the client reads from hello, as the facade gives them.
CONSTANTS = {"abi_version": facts.ABI_VERSION, "signature_bytes": facts.SIGNATURE_BYTES,
             "min_frame_bytes": facts.MIN_FRAME_BYTES, "max_frame_bytes": facts.MAX_FRAME_BYTES,
             "max_fields": facts.MAX_FIELDS, "max_frames": facts.MAX_FRAMES,
             "max_run_s": facts.MAX_RUN_S}
MAX_BURST = facts.MAX_BURST
MAX_STREAMS = facts.MAX_STREAMS
FAKE_TSC_HZ = 1_000_000_000  # the fake's clock: whole ns, one tick per ns
FAKE_DRIVER = "net_fake"
FAKE_MTU = 1500


# ---- the host --------------------------------------------------------------------------


@dataclass
class _FakeRun:
    spec: RunStart
    streams: list[FakeStream]
    outcome: _Outcome
    run_no: int
    polls: int = 0
    elapsed_ns: int = 0
    stopped: bool = False
    intervals_sent: int = 0


class FakeHost:
    """The fake's answers to the engine host's requests (host.py's `Host`, op for op)."""

    def __init__(self, dut: FakeDut) -> None:
        self.dut = dut
        self.ports: dict[int, dict[str, Any]] = {}  # PortInfo's fields
        self.addresses: dict[int, dict[str, Any]] = {}  # port_set_addr's, by port
        self.counters: dict[int, dict[str, int]] = {}
        self.streams: dict[int, FakeStream] = {}
        self.runs: dict[int, _FakeRun] = {}
        self._ids = 0
        self._port_ids = 0
        self._stream_ids = 0
        self._run_no = 0
        self.eal_args: list[str] = []  # none: serve's cleanup has no runtime dir to remove
        self._log: Any = None

    def _next(self) -> int:
        self._ids += 1
        return self._ids

    def log(self, line: str) -> None:
        if self._log is not None:
            self._log.write(f"fake engine host: {line}\n")
            self._log.flush()

    def idle(self) -> bool:
        """Nothing to answer between requests: the modelled DUT resolves at once."""
        return False

    # ---- lifecycle --------------------------------------------------------------------

    def op_hello(self, eal_args: list[str] | None = None, log_path: str | None = None,
                 cpu_wait_s: float = 0.0, client: dict[str, Any] | None = None,
                 remote: bool = False, **eal_options: Any) -> dict[str, Any]:
        """No EAL: the DUT's description in the log, the core's constants in the answer."""
        if log_path:
            # lives as long as the process, as the host's fault log does
            self._log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115
        self.log(f"pid {os.getpid()}, no DPDK; DUT {self.dut.describe()}")
        return Hello(constants=dict(CONSTANTS), workers=1, tsc_hz=FAKE_TSC_HZ,
                     hist_lower_ns=tuple(hist_lower_bounds_ns(HIST_SUB_BITS).tolist()),
                     pid=os.getpid(), dpdk_version=f"none: fake engine ({self.dut.spec()})",
                     fake_dut=asdict(self.dut)).encode()

    def op_close(self, drop_log: bool = False) -> None:
        """Forget everything (a fake host makes no log dir of its own: `drop_log` has
        nothing to remove)."""
        self.log("closed")
        self.runs.clear()
        self.streams.clear()
        self.ports.clear()
        self.addresses.clear()

    def op_mem_stats(self) -> dict[str, int]:
        """The real engine's memory report, modelled: no heap, and no pools (the fake
        builds no frames), but the same keys."""
        return {"heap_bytes": 0, "heap_used_bytes": 0, "heap_largest_free_bytes": 0,
                "shared_pools": 0, "private_pools": 0, "shared_pool_mbufs": 0,
                "shared_pool_bytes": 0, "template_serials": 0}

    def op_hist_bench(self, n: int) -> int:
        raise errors.NetloadEnvironmentError(
            "the fake engine has no native histogram to benchmark; run the benchmark on "
            "the real engine")

    def op_crash(self) -> None:
        """Test hook: end the host as a native crash would (SIGABRT)."""
        self.log("crash requested: aborting")
        os.abort()

    # ---- ports ------------------------------------------------------------------------

    def _port(self, port_id: int) -> dict[str, Any]:
        if port_id not in self.ports:
            raise errors.NetloadEnvironmentError(f"port {port_id} info: no such port open in "
                                                 "the fake engine")
        return self.ports[port_id]

    def op_port_open(self, device: str, lock_wait_s: float = 0.0,
                     **options: Any) -> dict[str, Any]:
        """A fake port (no lock: the fake's ports are nobody else's)."""
        spec = PortSpec.decode(options)
        if spec.hw_timestamps is True:
            raise errors.NetloadEnvironmentError(
                f"port '{device}': the fake engine's ports have no hardware timestamps; "
                "open it with hw_timestamps=False or 'auto'")
        if any(p["name"] == device for p in self.ports.values()):
            raise errors.NetloadEnvironmentError(f"port '{device}': it is open already")
        port_id = self._port_ids
        self._port_ids += 1
        speed = round(self.dut.port_rate_bps / 1e6)
        self.ports[port_id] = PortInfo(
            port_id=port_id, name=device, driver=FAKE_DRIVER, socket_id=0,
            mac=f"02:00:00:00:00:{port_id + 1:02x}", mtu=spec.mtu or FAKE_MTU,
            min_mtu=68, max_mtu=facts.MAX_FRAME_BYTES - 14,
            max_rx_pktlen=facts.MAX_FRAME_BYTES, max_rx_queues=64, max_tx_queues=64,
            rx_offload_capa=0, tx_offload_capa=0, tx_offloads_enabled=0,
            has_timesync=False, has_rx_timestamp=False, has_queue_rate_limit=False,
            link_up=True, link_speed_mbps=speed, link_full_duplex=True,
            tx_csum_offload={"ipv4": False, "udp": False, "tcp": False},
            has_read_clock=False, hw_timestamps=False, nic_clock_hz=0,
            rx_queues=spec.rx_queues, tx_queues=spec.tx_queues,
            link_source="fake engine port").as_dict()
        self.counters[port_id] = dict.fromkeys(PORT_STATS, 0)
        self.log(f"port {port_id} open: {device}")
        return self.op_port_info(port_id)

    def op_port_info(self, port_id: int) -> dict[str, Any]:
        return PortInfo.decode(self._port(port_id)).encode()

    def op_port_link(self, port_id: int) -> dict[str, Any]:
        """Always up, at the modelled ports' rate (as engine/link.py answers a real port)."""
        port = self._port(port_id)
        return {"up": True, "speed_mbps": int(port["link_speed_mbps"]) or None,
                "operstate": "up", "carrier": None, "source": "fake engine port",
                "carrier_down_count": 0, "speed_note": None}

    def op_port_stats(self, port_id: int) -> dict[str, int]:
        self._port(port_id)
        return PortStats(**self.counters[port_id]).encode()

    def op_port_set_queue_rate(self, port_id: int, queue: int, mbps: int) -> None:
        raise errors.NetloadEnvironmentError(
            f"port {port_id} queue {queue} rate limit {mbps} Mbit/s: the fake engine's "
            "ports have no hardware rate limiting; use software pacing")

    # the modelled DUT answers ARP/ND at once: its MAC is made from the address asked for
    def op_port_set_addr(self, port_id: int, mac: str, ip: str, vlan: int = 0,
                         reply_pps: int = 0) -> None:
        self._port(port_id)
        self.addresses[port_id] = {"mac": mac, "ip": ip, "vlan": vlan}

    def op_port_announce(self, port_id: int) -> None:
        self._port(port_id)
        if port_id not in self.addresses:
            raise errors.NetloadEnvironmentError(
                f"announce: port {port_id} has no address; set one first")

    def op_port_resolve(self, port_id: int, peer_ip: str, timeout_ms: int,
                        retry_ms: int) -> str:
        import ipaddress

        self.op_port_announce(port_id)
        return "02:00:00:00:01:" + f"{ipaddress.ip_address(peer_ip).packed[-1]:02x}"

    def op_port_nd_stats(self, port_id: int) -> dict[str, Any]:
        self._port(port_id)
        return {"arp_requests": 0, "arp_replies": 0, "ns_received": 0, "na_sent": 0,
                "rate_limited": 0, "tx_refused": 0, "other": 0, "peer_seen": 0}

    def op_port_close(self, port_id: int) -> None:
        self._port(port_id)
        for handle in [h for h, s in self.streams.items() if s.port_id == port_id]:
            self.streams.pop(handle)
        self.ports.pop(port_id)
        self.addresses.pop(port_id, None)

    # ---- streams ----------------------------------------------------------------------

    def op_stream_load(self, port_id: int, spec: dict[str, Any],
                       pool_mbufs: int = 0) -> dict[str, Any]:
        if port_id not in self.ports:
            raise errors.NetloadEnvironmentError(f"stream: port {port_id} is not open")
        stream = StreamSpec.decode(spec)
        name = stream.name
        frames = list(stream.frames)
        sequence = list(stream.sequence or (0,))
        where = f"stream {name!r}"
        if not 1 <= len(frames) <= CONSTANTS["max_frames"]:
            raise errors.NetloadConfigError(f"{where}: stream: {len(frames)} frame templates; "
                                            f"give 1 to {CONSTANTS['max_frames']}")
        bad = [i for i in sequence if not 0 <= i < len(frames)]
        if bad:
            raise errors.NetloadConfigError(f"{where}: stream: sequence entry names frame "
                                            f"{bad[0]} of {len(frames)}")
        if not stream.signature and len(stream.flow_key) != 39:  # facade.FLOW_KEY_BYTES
            raise errors.NetloadConfigError(
                f"stream {name!r} is sent without a signature but names no flow "
                f"({len(stream.flow_key)}-byte flow_key): RX could not count it")
        if len(stream.fields) > CONSTANTS["max_fields"]:
            raise errors.NetloadConfigError(f"{where}: stream: {len(stream.fields)} fields; "
                                            f"at most {CONSTANTS['max_fields']}")
        for i, f in enumerate(frames):
            if not CONSTANTS["min_frame_bytes"] <= len(f) <= CONSTANTS["max_frame_bytes"]:
                raise errors.NetloadConfigError(
                    f"{where}: stream: frame {i} is {len(f)} bytes without FCS; give "
                    f"{CONSTANTS['min_frame_bytes']} to {CONSTANTS['max_frame_bytes']}")
        if len(self.streams) >= MAX_STREAMS:
            raise errors.NetloadConfigError(
                f"{where}: stream: {MAX_STREAMS} streams are loaded, the most one engine "
                "holds; free the streams no run sends any more, or spread them over "
                "several engines")
        self._stream_ids += 1
        handle = self._next()
        self.streams[handle] = FakeStream(self._stream_ids, port_id, str(name or ""), frames,
                                          sequence, stream.stamp_every or 1,
                                          hashed_flows(stream.fields, stream.l3_offset,
                                                       stream.l4_offset), stream.signature)
        return {"handle": handle, "stream_id": self._stream_ids, "csum_offloaded": False}

    def op_stream_free(self, handle: int) -> None:
        self.streams.pop(handle, None)

    # ---- runs -------------------------------------------------------------------------

    def _check_run(self, spec: RunStart) -> list[FakeStream]:
        """The real core's refusals of a run (run.c, conf.c), with its texts."""
        if spec.forwarders:
            raise errors.NetloadEnvironmentError(
                "run start: the fake engine models its DUT itself and runs no delay lines "
                "(forward=...); use the real engine for the reference DUT")
        if not spec.tx and not spec.rx:
            raise errors.NetloadConfigError("run start: run: no TX stream, RX queue or "
                                            "forwarder")
        limit = facts.MAX_RUN_S * 10**9
        for key in ("duration_ns", "drain_ns", "start_delay_ns"):
            if not 0 <= getattr(spec, key) <= limit:
                raise errors.NetloadConfigError(
                    f"run start: run: {key} {getattr(spec, key)}; at most "
                    f"{facts.MAX_RUN_S} s (24 h)")
        if spec.burst > MAX_BURST:
            raise errors.NetloadConfigError(f"run start: run: burst {spec.burst}; at "
                                            f"most {MAX_BURST}")
        bits = spec.latency_sub_bits or LATENCY_SUB_BITS
        if not HIST_MIN_SUB_BITS <= bits <= HIST_MAX_SUB_BITS:
            raise errors.NetloadConfigError(f"run start: latency histogram: {bits} sub-bucket "
                                            f"bits; give {HIST_MIN_SUB_BITS} to "
                                            f"{HIST_MAX_SUB_BITS}")
        if len(spec.tx) > MAX_STREAMS:
            raise errors.NetloadConfigError(f"run start: run: {len(spec.tx)} TX entries; at "
                                            f"most {MAX_STREAMS}")
        try:
            streams = [self.streams[e.handle] for e in spec.tx]
        except KeyError as exc:
            raise errors.NetloadConfigError(
                f"stream handle {exc} is not loaded in this engine; load it again") from None
        for p in {s.port_id for s in streams} | {p for p, _ in spec.rx}:
            if p not in self.ports:
                raise errors.NetloadConfigError(
                    f"port {p} was closed; open it again before using it in a run")
        handles = [e.handle for e in spec.tx]
        if len(set(handles)) != len(handles):
            raise errors.NetloadConfigError("run start: run: a stream is listed twice")
        for i, e in enumerate(spec.tx):
            if len(e.phases) > facts.MAX_PHASES:
                raise errors.NetloadConfigError(f"run start: run: TX entry {i} has "
                                                f"{len(e.phases)} phases; give 1 to "
                                                f"{facts.MAX_PHASES}")
            for k, ph in enumerate(e.phases):
                if ph.duration_ns == 0 and k + 1 < len(e.phases):
                    raise errors.NetloadConfigError(
                        f"run start: run: TX entry {i} phase {k} has no duration, but "
                        "phases follow it")
                gaps = ph.gaps()
                if len(gaps) and int(gaps.min()) == 0:
                    raise errors.NetloadConfigError(
                        f"run start: run: TX entry {i} phase {k} has a gap of 0 ps; give "
                        "1 ps or more")
            if e.start_ns and not e.phases:
                raise errors.NetloadConfigError(
                    f"run start: run: TX entry {i} starts {e.start_ns} ns late but is not "
                    "paced; give it a pacing phase")
            bounded = bool(e.phases) and e.phases[-1].duration_ns > 0
            if not e.expect_only and not e.count and not spec.duration_ns and not bounded:
                raise errors.NetloadConfigError(
                    f"run start: run: TX entry {i} has no count and the run no duration; "
                    "give one of them")
        return streams

    def _work_out(self, spec: RunStart, streams: list[FakeStream], run_no: int,
                  stop_ns: int | None) -> _Outcome:
        rng = np.random.default_rng([self.dut.seed, run_no])
        return _Model(self.dut, rng).outcome(
            spec.tx, streams, spec.rx, spec.duration_ns, spec.drain_ns, stop_ns,
            spec.latency_sub_bits or LATENCY_SUB_BITS, spec.timing_samples,
            spec.capture_frames, spec.capture_snaplen)

    def op_run_start(self, tx: list[dict[str, Any]], rx: list[tuple[int, int]],
                     **settings: Any) -> int:
        spec = RunStart.decode({"tx": tx, "rx": rx, **settings})
        streams = self._check_run(spec)
        self._run_no += 1
        run_id = self._next()
        self.runs[run_id] = _FakeRun(spec, streams,
                                     self._work_out(spec, streams, self._run_no, None),
                                     self._run_no)
        return run_id

    def _run(self, run_id: int) -> _FakeRun:
        if run_id not in self.runs:
            raise errors.NetloadConfigError(f"run {run_id} is not running in this engine")
        return self.runs[run_id]

    def op_run_poll(self, run_id: int, wait_ms: int = 100) -> dict[str, Any]:
        """Sending, then draining, then done: a run's states, one per poll, at once."""
        run = self._run(run_id)
        o = run.outcome
        run.polls += 1
        if run.stopped or run.polls >= 3 or o.tx_end_ns == 0:
            state, elapsed, tx, rx = "done", o.end_ns, o.tx_packets, o.rx_packets
        elif run.polls == 1:
            state, elapsed = "sending", o.tx_end_ns // 2
            tx, rx = o.tx_packets // 2, o.rx_packets // 2
        else:
            state, elapsed, tx, rx = "draining", o.tx_end_ns, o.tx_packets, o.rx_packets
        run.elapsed_ns = elapsed
        return RunStatus(state, int(elapsed), int(tx), int(rx), run.spec.duration_ns,
                         self._intervals(run, state, elapsed)).encode()

    def _intervals(self, run: _FakeRun, state: str, elapsed: int) -> tuple[dict[str, Any], ...]:
        """The snapshots of the intervals that ended by `elapsed` (all once done) and
        were not sent yet: the real host's order, one poll's worth at a time."""
        spec = run.spec
        if not spec.interval_ns:
            return ()
        count = count_of(spec.duration_ns, spec.interval_ns)
        upto = count if state == "done" else min(count - 1, elapsed // spec.interval_ns)
        out = snapshots(run.outcome.arrays, spec.duration_ns, spec.interval_ns,
                        run.intervals_sent, upto)
        run.intervals_sent = max(run.intervals_sent, upto)
        return tuple(out)

    def op_run_stop(self, run_id: int) -> None:
        """TX stops where the last poll found it: the run is worked out again, to then."""
        run = self._run(run_id)
        if not run.stopped and run.polls and run.elapsed_ns < run.outcome.tx_end_ns:
            run.outcome = self._work_out(run.spec, run.streams, run.run_no, run.elapsed_ns)
        run.stopped = True

    def op_run_results(self, run_id: int) -> dict[str, Any]:
        self._run(run_id)
        run = self.runs.pop(run_id)
        o = run.outcome
        ports = sorted({s.port_id for s in run.streams} | {p for p, _ in run.spec.rx})
        deltas = {}
        for p in ports:
            got = o.port_counts.get(p, dict.fromkeys(PORT_STATS, 0))
            if p in self.counters:
                for k, v in got.items():
                    self.counters[p][k] += v
            deltas[p] = {**got, "iface_rx_dropped": 0, "iface_tx_dropped": 0,
                         "iface_ring_drops": 0, "iface_carrier_down": 0, "link_up_before": 1,
                         "link_up_after": 1}
        arrays = {**o.arrays, **expect_arrays(self.dut, run.spec, run.streams,
                                              o.arrays["rx"]["packets"])}
        return RunResults({k: pack_array(v) for k, v in arrays.items()}, deltas).encode()


if TYPE_CHECKING:  # mypy checks that FakeHost has HostOps' operations, as Host has
    from .protocol import HostOps

    _FAKE_HOST_OPS: type[HostOps] = FakeHost


def serve(channel: Any, dut: Mapping[str, Any] | None = None) -> None:
    """Answer an engine client's requests with the fake host, through the engine host's
    own serve loop (same replies, same errors, same ending)."""
    from .host import serve as host_serve

    model = FakeDut(**(dut or {}))
    host_serve(channel, make_host=lambda: FakeHost(model))


if __name__ == "__channelexec__":
    serve(channel)  # type: ignore[name-defined]  # noqa: F821
