"""What crosses between the engine client and an engine host, declared once.

A request is ``{"op": name, **arguments}`` and `host.serve` answers it by calling
the host's ``op_<name>`` (`HostOps`: the real `host.Host` and the fake
`fake.FakeHost` implement it op for op; tests/unit/test_engine_protocol.py compares
them). A run's settings, its native TX entries, a port's options and counters, a
stream's spec, a poll's status, a port's info, a run's results and the host's hello are frozen
dataclasses here,
carried by one codec (`_Message.encode` / `decode`) as
plain dicts, lists, ints, bools, floats, strings and bytes (what execnet carries),
stamped with `PROTOCOL_VERSION`, the native core's ABI version: both sides were built
from one netload_api.h, or `decode` refuses the message.

`RunSpec` is a run as `Engine.run` takes it (the client's streams and ports, seconds,
significant digits); `RunSpec.start` turns it into the `RunStart` the host receives (ns,
histogram sub-bucket bits, handles, queues): the one place where those units change.
The facade (`facade_run.Run`) and the fake (`fake.FakeHost.op_run_start`) read the
`RunStart`'s fields, which are `struct netload_run_conf`'s. Likewise a stream: the
client builds its `StreamSpec` once (`StreamSpec.of`, in `Engine.load`) and each host
decodes it once (``op_stream_load``); the facade and the fake read its typed fields.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self

from .. import errors
from .._native_facts import ABI_VERSION
from ..units import FCS_BYTES, run_seconds

if TYPE_CHECKING:
    from .handles import LoadedStream, Port, Tx

__all__ = ["PROTOCOL_VERSION", "ExpectRule", "FieldSpec", "ForwarderSpec", "Hello", "HostOps", "PhaseSpec",
           "PortInfo", "PortSpec", "PortStats", "RunResults", "RunSpec", "RunStart", "RunStatus", "StreamSpec",
           "TxEntry", "latency_sub_bits"]

#: The codec's version: the ABI version of the netload_api.h both sides were built from.
PROTOCOL_VERSION = ABI_VERSION

_INTS = frozenset({"int"})


# ---- the codec ---------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """`value` as plain types: a dataclass as a dict of its fields, a tuple as a list."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def _build(cls: type[Any], data: Mapping[str, Any]) -> Any:
    """An instance of the dataclass `cls` from its plain dict: nested messages (a field's
    metadata ``of``) rebuilt, sequences made tuples (their items converted by the
    metadata ``items``), ints made Python ints, bools bools.
    An unknown key or a non-integer int is a TypeError, as a wrong keyword is."""
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise TypeError(f"{cls.__name__}: no field {unknown[0]!r}")
    kwargs: dict[str, Any] = {}
    for name, value in data.items():
        f = known[name]
        of, items = f.metadata.get("of"), f.metadata.get("items")
        if of is not None:
            value = tuple(v if isinstance(v, of) else _build(of, v) for v in value)
        elif items is not None:
            value = tuple(items(v) for v in value)
        elif f.metadata.get("pairs"):
            value = tuple((operator.index(a), operator.index(b)) for a, b in value)
        elif f.type in _INTS:
            value = operator.index(value)  # an int (numpy's too); a float or text: TypeError
        elif f.type == "bool":
            value = bool(value)
        elif f.type == "bytes":
            value = bytes(value)
        kwargs[name] = value
    return cls(**kwargs)


class _Message:
    """A frozen dataclass that crosses the execnet channel (the codec)."""

    def encode(self) -> dict[str, Any]:
        """Plain types, stamped with the protocol version."""
        return {"v": PROTOCOL_VERSION, **_plain(self)}

    @classmethod
    def decode(cls, data: Mapping[str, Any]) -> Self:
        """The message `encode` made (an in-process caller may leave out ``v``)."""
        body = dict(data)
        version = body.pop("v", PROTOCOL_VERSION)
        if version != PROTOCOL_VERSION:
            raise errors.NetloadEnvironmentError(
                f"engine protocol version {version} from the other side, this side speaks "
                f"{PROTOCOL_VERSION} (the native core's ABI version): install the same "
                "version of pytest-netload and its engine on both")
        out: Self = _build(cls, body)
        return out

    def as_dict(self) -> dict[str, Any]:
        """Its fields as plain types, without the version stamp."""
        out: dict[str, Any] = _plain(self)
        return out


# ---- the host ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hello(_Message):
    """A host's answer to ``hello``: its core's constants (`abi_version`, the limits), its
    EAL arguments and workers, the CPUs they run on (and those other engines' workers
    busy-poll), its TSC rate, its histogram layout and its process. `hostname` and
    `log_path` are the real host's (a remote one names the log it made); `fake_dut` the
    fake host's DUT. `Engine.hello` is its fields as a dict."""

    constants: dict[str, int]
    workers: int
    eal_args: tuple[str, ...] = field(default=(), metadata={"items": str})
    main_cpu: int | None = None
    worker_cpus: tuple[int, ...] = field(default=(), metadata={"items": operator.index})
    tsc_hz: int = 0
    hist_lower_ns: tuple[int, ...] = field(default=(), metadata={"items": operator.index})
    pid: int = 0
    dpdk_version: str = ""
    cpu_note: str | None = None
    busy_cpus: tuple[int, ...] = field(default=(), metadata={"items": operator.index})
    hostname: str | None = None
    log_path: str | None = None
    fake_dut: dict[str, Any] | None = None


# ---- ports ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PortSpec(_Message):
    """A port's options (`struct netload_port_conf`; `Engine.port(device, **options)`)."""

    rx_queues: int = 1
    tx_queues: int = 1
    rx_desc: int = 0
    tx_desc: int = 0
    mtu: int = 0
    rx_mbufs: int = 0
    promiscuous: bool = True
    hw_timestamps: bool | str = "auto"  # False, True (required) or "auto"
    peer_wait_s: float = 10.0  # a listening port (vhost-user server) waits this for its peer


@dataclass(frozen=True)
class PortInfo(_Message):
    """What ``port_open`` and ``port_info`` answer: `struct netload_port_info` field for
    field (the MAC as text, `tx_csum_offload` as the checksums the streams may offload),
    then what the host adds: the queues opened, and the link as the host reads it (a
    kernel interface's carrier and speed where the port sits on one: `link_source` says
    which, `link_speed_note` why a speed is not real). `Port.info` is its fields as a
    dict."""

    port_id: int
    name: str
    driver: str
    socket_id: int
    mac: str
    mtu: int
    min_mtu: int
    max_mtu: int
    max_rx_pktlen: int
    max_rx_queues: int
    max_tx_queues: int
    rx_offload_capa: int
    tx_offload_capa: int
    tx_offloads_enabled: int
    has_timesync: bool
    has_rx_timestamp: bool
    has_queue_rate_limit: bool
    link_up: bool
    link_speed_mbps: int
    link_full_duplex: bool
    tx_csum_offload: dict[str, bool]
    has_read_clock: bool
    hw_timestamps: bool
    nic_clock_hz: int
    rx_queues: int = 1
    tx_queues: int = 1
    link_source: str | None = None
    link_speed_note: str | None = None


@dataclass(frozen=True)
class PortStats(_Message):
    """A port's counters as ``port_stats`` answers them (`struct netload_port_stats`,
    field for field: DPDK's `rte_eth_stats` totals since the port opened)."""

    ipackets: int = 0
    opackets: int = 0
    ibytes: int = 0
    obytes: int = 0
    imissed: int = 0
    ierrors: int = 0
    oerrors: int = 0
    rx_nombuf: int = 0


# ---- streams -------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldSpec(_Message):
    """One field op of a stream (`struct netload_field_conf`, `packets.FieldOp.as_spec()`):
    the `width` bytes at `offset` go from `min` to `max` by `step` (`op`: the facade's
    FIELD_OPS names, "inc", "dec", "random" or "set")."""

    offset: int
    width: int
    op: str
    min: int
    max: int
    step: int = 1


@dataclass(frozen=True)
class StreamSpec(_Message):
    """A stream as a host loads it (`struct netload_stream_conf`): `traffic.Stream.compile()`'s
    dict, typed. `frames` are without FCS, with room for the signature at their end;
    `sizes` their sizes with FCS (empty: each frame's length + 4); `sequence` the frame
    index of each packet, cycled. Offsets -1 and protocols 0: none. `StreamSpec.of` is
    where the client builds one; each host decodes the one it receives once, in its
    ``op_stream_load``."""

    name: str | None = None
    frames: tuple[bytes, ...] = field(default=(), metadata={"items": bytes})
    sizes: tuple[int, ...] = field(default=(), metadata={"items": operator.index})
    sequence: tuple[int, ...] = field(default=(), metadata={"items": operator.index})
    l3_offset: int = -1
    l4_offset: int = -1
    l3_proto: int = 0  # 4 or 6
    l4_proto: int = 0  # 17 (UDP) or 6 (TCP)
    fields: tuple[FieldSpec, ...] = field(default=(), metadata={"of": FieldSpec})
    seed: int = 0  # the random field ops' seed (0: the core seeds them from its TSC)
    stamp_every: int = 1  # a TX timestamp in every Nth packet (0 is read as 1)
    signature: bool = True  # False: frames sent as given, counted on RX by `flow_key`
    flow_key: bytes = b""  # unsigned: family, proto, has_ports, src[16], dst[16], sport,
    # dport (big-endian), 39 bytes (`struct netload_flow_conf`; traffic.replay.flow_key)

    @classmethod
    def of(cls, stream: Any, trailer_bytes: int) -> StreamSpec:
        """The spec of a `traffic.Stream` (compiled with `trailer_bytes` of room for the
        signature), of its compiled dict, or `stream` itself when it is one already."""
        if isinstance(stream, StreamSpec):
            return stream
        return cls.decode(stream if isinstance(stream, Mapping) else
                          stream.compile(trailer_bytes))

    @property
    def mean_frame_size(self) -> float:
        """Bytes with FCS, over the packet sequence."""
        sizes = self.sizes or tuple(len(f) + FCS_BYTES for f in self.frames)
        sequence = self.sequence or (0,)
        return sum(sizes[i] for i in sequence) / len(sequence)


# ---- runs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PhaseSpec(_Message):
    """One pacing phase (`struct netload_phase_conf`, `patterns.Phase.as_spec()`)."""

    gaps_ps: bytes = b""  # little-endian uint64 gaps, cycled
    n_gaps: int = 0  # 0: the port's line rate
    duration_ns: int = 0  # 0: until the run ends (the last phase only)

    def gaps(self) -> Any:
        """The gap table as a numpy array of uint64 (ps)."""
        import numpy as np

        return np.frombuffer(self.gaps_ps, dtype="<u8")[:self.n_gaps]


@dataclass(frozen=True)
class ExpectRule(_Message):
    """One rule of a stream's RX expectation (`struct netload_expect_rule`): the frame's
    first bytes under a mask (each at most NETLOAD_EXPECT_BYTES; the host pads them)."""

    value: bytes = b""
    mask: bytes = b""


@dataclass(frozen=True)
class TxEntry(_Message):
    """One native TX entry of a run (`struct netload_tx_conf`): a loaded stream (its
    handle in the host) on one TX queue."""

    handle: int
    queue: int = 0
    count: int = 0  # 0: until the run ends
    expect_only: bool = False  # not sent: RX expects it (another generator sends it)
    phases: tuple[PhaseSpec, ...] = field(default=(), metadata={"of": PhaseSpec})
    hw_clock: bool = False  # latency on NIC clocks
    start_ns: int = 0  # paced: the first packet's deadline after the common start
    expect: tuple[ExpectRule, ...] = field(default=(), metadata={"of": ExpectRule})
    """Expected frames: RX compares each of its frames to these rules (none: no compare)."""


@dataclass(frozen=True)
class ForwarderSpec(_Message):
    """A delay line run in the worker loop (`struct netload_fwd_conf`; the reference DUT)."""

    rx_port: int
    tx_port: int
    delay_ns: int
    rx_queue: int = 0
    tx_queue: int = 0
    jitter_ps: bytes = b""
    n_jitter: int = 0
    loss_ppm: int = 0
    seed: int = 0


@dataclass(frozen=True)
class RunStart(_Message):
    """A run as the host starts it (`struct netload_run_conf`, field for field)."""

    tx: tuple[TxEntry, ...] = field(default=(), metadata={"of": TxEntry})
    rx: tuple[tuple[int, int], ...] = field(default=(), metadata={"pairs": True})
    duration_ns: int = 0  # 0: bounded by the counts or phases alone
    drain_ns: int = 0  # RX polls this long after TX ended
    start_delay_ns: int = 0  # the common TX start deadline after the start
    burst: int = 0  # 0: the core's default
    timing_samples: int = 0
    forwarders: tuple[ForwarderSpec, ...] = field(default=(), metadata={"of": ForwarderSpec})
    latency_sub_bits: int = 0  # 0: NETLOAD_LATENCY_SUB_BITS
    capture_frames: int = 0
    capture_snaplen: int = 0  # 0: 128
    hist_pages: int = 0  # 0: as many as fit
    interval_ns: int = 0  # 0: none; else snapshots at each interval's end (intervals.py)

    @property
    def ports(self) -> set[int]:
        """The ports its RX queues and forwarders use (its streams' ports: the host's)."""
        return {p for p, _ in self.rx} | {p for fw in self.forwarders
                                          for p in (fw.rx_port, fw.tx_port)}


@dataclass(frozen=True)
class RunStatus(_Message):
    """What a poll of a run reports (`struct netload_run_status`)."""

    state: str  # "waiting", "sending", "draining" or "done"
    elapsed_ns: int = 0  # since the start deadline
    tx_packets: int = 0  # so far, all streams
    rx_packets: int = 0  # so far, all queues
    end_ns: int = 0  # TX end on the schedule; 0: bounded by counts or phases
    intervals: tuple[dict[str, Any], ...] = field(default=(), metadata={"items": dict})
    """A run with intervals: the snapshots taken since the last poll (`intervals.pack`)."""


@dataclass(frozen=True)
class RunResults(_Message):
    """What a finished run answers (``op_run_results``): its result arrays as
    `wire.pack_array` packs them (the array format stays wire.py's), each of its ports'
    counter deltas over the run (`port_stats`'s counters, with ``link_up_before`` and
    ``link_up_after``) and the link events the host saw during it (the real host's)."""

    arrays: dict[str, dict[str, Any]]
    ports: dict[int, dict[str, int]]
    link_events: tuple[dict[str, Any], ...] = field(default=(), metadata={"items": dict})


def latency_sub_bits(digits: int) -> int:
    """Sub-bucket bits for `digits` significant digits: 2^ceil(log2(2 * 10^digits))
    sub-buckets (HdrHistogram's rule), so a bucket is at most 10^-digits of its value."""
    if not isinstance(digits, int) or isinstance(digits, bool) or not 1 <= digits <= 3:
        raise errors.NetloadConfigError(
            f"latency_digits={digits!r}: give 1, 2 or 3 significant digits")
    return math.ceil(math.log2(2 * 10**digits))


def _hist_pages(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise errors.NetloadConfigError(
            f"hist_pages={value!r}: give a number of histogram pages >= 0 (0: as many as fit)")
    return value


def _phase(p: Any) -> PhaseSpec:
    return p if isinstance(p, PhaseSpec) else _build(PhaseSpec, p if isinstance(p, Mapping)
                                                     else p.as_spec())


def _forwarder(f: Any) -> ForwarderSpec:
    return f if isinstance(f, ForwarderSpec) else _build(ForwarderSpec, f if isinstance(
        f, Mapping) else f.spec())


@dataclass(frozen=True)
class RunSpec:
    """One run, as `Engine.run` takes it: `Engine.run(spec)`, or its keywords as sugar.

    `tx`: loaded streams (sending `count` each), ``(stream, count)`` pairs or `Tx`
    entries (with pacing phases); `rx`: the ports to receive on; `expect`: streams
    counted on RX but not sent (another generator sends them). Times in seconds
    (`duration_s` 0: bounded by the counts; RX polls until `drain_s` after TX ended;
    TX starts `start_delay_s` after the start). `latency_digits` (1 to 3): the latency
    histograms' significant digits. `forward`: delay lines run in the worker loop
    (`reference.ReferenceDut`). `timing_samples`: TX and RX times of each stream's first
    N frames. `capture`: frames each RX port keeps (None: the engine's
    `capture_default`). `hist_pages`: histogram pages of 64 buckets (0: as many as fit).
    `expect_frames`: stream name -> the `measure.frames.FrameRule`s its received frames
    are compared to in the RX path (traffic/expect.py builds them); the result's
    ``frames`` has each one's `FrameCheck`.
    """

    tx: tuple[Any, ...] = ()
    rx: tuple[Any, ...] = ()
    expect: tuple[Any, ...] = ()
    count: int = 0
    duration_s: float = 0.0
    drain_s: float = 0.1
    start_delay_s: float = 0.01
    burst: int = 0
    timing_samples: int = 0
    forward: tuple[Any, ...] = ()
    latency_digits: int = 2
    capture: int | None = None
    capture_snaplen: int = 128
    hist_pages: int = 0
    interval_s: float = 0.0
    expect_frames: Mapping[str, Sequence[Any]] | None = None

    def __post_init__(self) -> None:
        for name in ("tx", "rx", "expect", "forward"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        frames = {}
        for name, rules in dict(self.expect_frames or {}).items():
            rules = tuple(rules)
            if not 1 <= len(rules) <= 4:
                raise errors.NetloadConfigError(
                    f"expect_frames[{name!r}]: {len(rules)} expected frames; give 1 to 4 "
                    "(e.g. one expect(...), or a green and a yellow one)")
            frames[str(name)] = rules
        object.__setattr__(self, "expect_frames", frames)
        count = self.count
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise errors.NetloadConfigError(f"count={count!r}: give a number of packets >= 0")
        for name in ("duration_s", "drain_s", "start_delay_s", "interval_s"):
            object.__setattr__(self, name, run_seconds(getattr(self, name), what=name,
                                                       zero_ok=True))
        if self.interval_s:
            whole = self.duration_s / self.interval_s
            if not self.duration_s or self.interval_s < 0.01 or \
                    abs(whole - round(whole)) > 1e-9 * max(whole, 1):
                raise errors.NetloadConfigError(
                    f"interval_s={self.interval_s!r}: intervals need a duration_s "
                    f"({self.duration_s!r}) that is a whole number of them, each at least "
                    "10 ms; e.g. duration_s=60, interval_s=1")

    def start(self, native: Sequence[Tx], expected: Sequence[LoadedStream],
              rx_ports: Sequence[Port], hw: Sequence[bool], capture_default: int,
              owners: Sequence[str] | None = None) -> RunStart:
        """The `RunStart` of this run, for its native entries (`Tx.per_queue`) and expected
        streams (each TX queue's own), `hw` each one's clock: ns, sub-bucket bits,
        handles and RX queues. The one place where a run's units change. `owners`: the
        name of the stream each native entry (then each expected one) is a queue of,
        whose expected frames it takes (default: its own)."""
        n = len(native)
        rules = {name: tuple(ExpectRule(r.value, r.mask) for r in rs)
                 for name, rs in (self.expect_frames or {}).items()}
        names = list(owners) if owners is not None else \
            [e.stream.name for e in native] + [s.name for s in expected]
        unknown = sorted(set(rules) - set(names))
        if unknown:
            raise errors.NetloadConfigError(
                f"expect_frames names {unknown}, not streams of this run "
                f"({sorted(set(names))})")
        return RunStart(
            tx=tuple([TxEntry(e.stream.handle, e.queue, int(e.count), False,
                              tuple(_phase(p) for p in e.phases), h, int(e.start_ns),
                              rules.get(name, ()))
                      for e, h, name in zip(native, hw[:n], names)]
                     + [TxEntry(s.handle, 0, 0, True, (), h, 0, rules.get(name, ()))
                        for s, h, name in zip(expected, hw[n:], names[n:])]),
            rx=tuple((p.port_id, q) for p in rx_ports for q in range(p.rx_queues)),
            duration_ns=int(self.duration_s * 1e9),
            drain_ns=int(self.drain_s * 1e9),
            start_delay_ns=int(self.start_delay_s * 1e9),
            burst=self.burst,
            timing_samples=int(self.timing_samples),
            forwarders=tuple(_forwarder(f) for f in self.forward),
            latency_sub_bits=latency_sub_bits(self.latency_digits),
            capture_frames=int(capture_default if self.capture is None else self.capture),
            capture_snaplen=int(self.capture_snaplen),
            hist_pages=_hist_pages(self.hist_pages),
            interval_ns=round(self.interval_s * 1e9),
        )


# ---- the host's operations -----------------------------------------------------------------


class HostOps(Protocol):
    """The operations an engine host answers: ``{"op": name, **arguments}`` calls
    ``op_<name>(**arguments)``. `host.Host` (DPDK) and `fake.FakeHost` (a modelled DUT)
    implement exactly these, with these signatures."""

    eal_args: list[str]  # the EAL's arguments: serve removes its runtime dir at the end

    def idle(self) -> bool:
        """Between requests: work to do (ARP/ND to answer)? False: nothing."""

    # lifecycle (hello answers `Hello.encode()`)
    def op_hello(self, eal_args: list[str] | None = None, log_path: str | None = None,
                 cpu_wait_s: float = 0.0, client: dict[str, Any] | None = None,
                 remote: bool = False, **eal_options: Any) -> dict[str, Any]: ...
    def op_close(self, drop_log: bool = False) -> None: ...
    def op_mem_stats(self) -> dict[str, int]: ...
    def op_hist_bench(self, n: int) -> int: ...
    def op_crash(self) -> None: ...

    # ports (options: `PortSpec`'s fields)
    def op_port_open(self, device: str, lock_wait_s: float = 0.0,
                     **options: Any) -> dict[str, Any]: ...
    def op_port_info(self, port_id: int) -> dict[str, Any]: ...
    def op_port_link(self, port_id: int) -> dict[str, Any]: ...
    def op_port_stats(self, port_id: int) -> dict[str, int]: ...  # `PortStats`
    def op_port_set_queue_rate(self, port_id: int, queue: int, mbps: int) -> None: ...
    def op_port_set_addr(self, port_id: int, mac: str, ip: str, vlan: int = 0,
                         reply_pps: int = 0) -> None: ...
    def op_port_announce(self, port_id: int) -> None: ...
    def op_port_resolve(self, port_id: int, peer_ip: str, timeout_ms: int,
                        retry_ms: int) -> str: ...
    def op_port_nd_stats(self, port_id: int) -> dict[str, Any]: ...
    def op_port_close(self, port_id: int) -> None: ...

    # streams (spec: `StreamSpec.encode()`; or `traffic.Stream.compile()`'s dict, which
    # decodes alike)
    def op_stream_load(self, port_id: int, spec: dict[str, Any],
                       pool_mbufs: int = 0) -> dict[str, Any]: ...
    def op_stream_free(self, handle: int) -> None: ...

    # runs (`RunStart.encode()` is ``tx``, ``rx`` and the settings; polls answer
    # `RunStatus`, results `RunResults`)
    def op_run_start(self, tx: list[dict[str, Any]], rx: list[tuple[int, int]],
                     **settings: Any) -> int: ...
    def op_run_poll(self, run_id: int, wait_ms: int = 100) -> dict[str, Any]: ...
    def op_run_stop(self, run_id: int) -> None: ...
    def op_run_results(self, run_id: int) -> dict[str, Any]: ...


def host_ops() -> dict[str, Any]:
    """The operations of `HostOps` by name (without the ``op_`` prefix)."""
    return {name[3:]: value for name, value in vars(HostOps).items()
            if name.startswith("op_")}

