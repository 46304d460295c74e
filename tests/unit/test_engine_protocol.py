"""The engine protocol (pytest_netload/engine/protocol.py): the real host and the fake
host answer the same operations with the same signatures as `HostOps`, the codec
carries every message there and back unchanged as plain types, `RunSpec` is the
one place where a run's seconds and digits become the host's ns and bits, and a
stream's `StreamSpec` is `Stream.compile()`'s dict, typed, which both hosts decode alike."""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import re
from pathlib import Path
from typing import Any

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload import _native_facts as facts
from pytest_netload.engine import fake, protocol
from pytest_netload.engine.client import Engine
from pytest_netload.engine.fake import FakeDut, FakeHost
from pytest_netload.engine.host import Host
from pytest_netload.engine.protocol import (
    PROTOCOL_VERSION,
    FieldSpec,
    ForwarderSpec,
    Hello,
    HostOps,
    PhaseSpec,
    PortInfo,
    PortSpec,
    PortStats,
    RunResults,
    RunSpec,
    RunStart,
    RunStatus,
    StreamSpec,
    TxEntry,
)
from pytest_netload.engine.wire import pack_array, unpack_array
from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.topology.fake import fake_topology
from pytest_netload.traffic.streams import tcp, udp

OPS = protocol.host_ops()
FLOW = fake_topology(10e9).flows()[0]


def ops_of(cls: type) -> dict[str, Any]:
    """The `op_<name>` methods a host class defines, by name."""
    return {name[3:]: value for name, value in vars(cls).items() if name.startswith("op_")}


# ---- one protocol, two hosts ---------------------------------------------------------------


@pytest.mark.parametrize("host", [Host, FakeHost], ids=["Host", "FakeHost"])
def test_a_host_answers_exactly_the_protocol_s_operations(host: type) -> None:
    assert sorted(ops_of(host)) == sorted(OPS)
    assert len(OPS) == 21


@pytest.mark.parametrize("op", sorted(OPS))
def test_both_hosts_take_each_operation_as_the_protocol_declares_it(op: str) -> None:
    declared = inspect.signature(OPS[op])
    assert inspect.signature(ops_of(Host)[op]) == declared, f"Host.op_{op}"
    assert inspect.signature(ops_of(FakeHost)[op]) == declared, f"FakeHost.op_{op}"


def test_both_hosts_have_what_serve_reads_of_them() -> None:
    assert FakeHost(FakeDut()).idle() is False
    assert FakeHost(FakeDut()).eal_args == []
    assert callable(Host.idle)
    assert "eal_args" in HostOps.__annotations__


# ---- the codec ---------------------------------------------------------------------------


def _plain(value: Any) -> bool:
    """Only what an execnet channel carries (a run's ports are keyed by their ids)."""
    if isinstance(value, dict):
        return all(isinstance(k, (str, int)) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str, bytes))


u16 = st.integers(0, 2**16 - 1)
u32 = st.integers(0, 2**32 - 1)
u64 = st.integers(0, 2**64 - 1)
gap_tables = st.lists(st.integers(1, 2**40), max_size=8).map(
    lambda gaps: b"".join(g.to_bytes(8, "little") for g in gaps))
phases = st.builds(lambda gaps, d: PhaseSpec(gaps, len(gaps) // 8, d), gap_tables, u64)
entries = st.builds(TxEntry, handle=u32, queue=u16, count=u64, expect_only=st.booleans(),
                    phases=st.lists(phases, max_size=3).map(tuple), hw_clock=st.booleans())
forwarders = st.builds(lambda rx, tx, d, table, loss, seed: ForwarderSpec(
    rx, tx, d, jitter_ps=table, n_jitter=len(table) // 8, loss_ppm=loss, seed=seed),
    u16, u16, u64, gap_tables, st.integers(0, 10**6), u64)
runs = st.builds(
    RunStart, tx=st.lists(entries, max_size=4).map(tuple),
    rx=st.lists(st.tuples(u16, u16), max_size=4).map(tuple),
    duration_ns=u64, drain_ns=u64, start_delay_ns=u64, burst=u16, timing_samples=u32,
    forwarders=st.lists(forwarders, max_size=2).map(tuple), latency_sub_bits=u32,
    capture_frames=u32, capture_snaplen=u32, hist_pages=u64)
statuses = st.builds(RunStatus, st.sampled_from(["waiting", "sending", "draining", "done"]),
                     u64, u64, u64, u64)
ports = st.builds(PortSpec, u16, u16, u16, u16, u16, u32, st.booleans(),
                  st.sampled_from([False, True, "auto"]), st.floats(0, 600))
field_specs = st.builds(FieldSpec, u16, st.sampled_from([1, 2, 4, 6, 8]),
                        st.sampled_from(["inc", "dec", "random", "set"]), u64, u64, u32)
frames = st.binary(min_size=1, max_size=96)
stream_specs = st.builds(
    StreamSpec, name=st.none() | st.text(max_size=12), frames=st.lists(frames, max_size=4).map(
        tuple), sizes=st.lists(u16, max_size=4).map(tuple),
    sequence=st.lists(st.integers(0, 3), max_size=8).map(tuple),
    l3_offset=st.integers(-1, 64), l4_offset=st.integers(-1, 128),
    l3_proto=st.sampled_from([0, 4, 6]), l4_proto=st.sampled_from([0, 6, 17]),
    fields=st.lists(field_specs, max_size=3).map(tuple), seed=u64, stamp_every=u32)
ints = st.lists(u32, max_size=6).map(tuple)
hellos = st.builds(
    Hello, constants=st.dictionaries(st.text(min_size=1, max_size=12), u32, max_size=4),
    workers=u16, eal_args=st.lists(st.text(max_size=20), max_size=4).map(tuple),
    main_cpu=st.none() | u16, worker_cpus=ints, tsc_hz=u64, hist_lower_ns=ints, pid=u32,
    dpdk_version=st.text(max_size=20), cpu_note=st.none() | st.text(max_size=20),
    busy_cpus=ints, hostname=st.none() | st.text(max_size=12),
    log_path=st.none() | st.text(max_size=20),
    fake_dut=st.none() | st.fixed_dictionaries({"capacity_pps": st.floats(0, 1e9)}))
arrays = st.dictionaries(st.sampled_from(["streams", "queues", "hist"]), st.lists(
    u32, max_size=8).map(lambda v: pack_array(np.asarray(v, dtype="<u8"))), max_size=3)
counters = st.dictionaries(st.sampled_from(["ipackets", "opackets", "link_up_before"]), u64)
link_event = st.fixed_dictionaries({"event": st.sampled_from(["link_down", "link_up"]),
                                    "port_id": u16, "t_s": st.floats(0, 60)})
results = st.builds(RunResults, arrays, st.dictionaries(u16, counters, max_size=3),
                    st.lists(link_event, max_size=3).map(tuple))
port_stats = st.builds(PortStats, u64, u64, u64, u64, u64, u64, u64, u64)


@given(st.one_of(runs, statuses, ports, stream_specs, hellos, results, port_stats))
@settings(max_examples=200, deadline=None)
def test_every_message_survives_the_codec_as_plain_types(message: Any) -> None:
    wire = message.encode()
    assert _plain(wire) and wire["v"] == PROTOCOL_VERSION
    assert type(message).decode(wire) == message


def test_the_codec_is_versioned_with_the_abi() -> None:
    assert PROTOCOL_VERSION == facts.ABI_VERSION
    wire = RunStatus("done").encode()
    with pytest.raises(NetloadEnvironmentError, match="protocol version 9"):
        RunStatus.decode({**wire, "v": 9})
    with pytest.raises(TypeError, match="no field 'speed'"):
        PortSpec.decode({"speed": 1})
    with pytest.raises(TypeError, match="no field 'frame'"):
        StreamSpec.decode({"frame": [b"x" * 60]})


def test_a_run_start_reads_the_dicts_older_callers_send() -> None:
    start = RunStart.decode({"tx": [{"handle": 3, "count": 5, "phases": [
        {"gaps_ps": (7).to_bytes(8, "little"), "n_gaps": 1, "duration_ns": 10}]}],
        "rx": [[1, 0]], "duration_ns": 10})
    assert start == RunStart(tx=(TxEntry(3, count=5, phases=(PhaseSpec(
        (7).to_bytes(8, "little"), 1, 10),)),), rx=((1, 0),), duration_ns=10)
    assert start.tx[0].phases[0].gaps().tolist() == [7]


# ---- streams: one spec, built once, decoded alike ------------------------------------------


streams = st.builds(
    lambda make, size, flows, src_ips, vlan, stamp_every, name: make(
        size=size, flows=flows, src_ips=src_ips, vlan=vlan, stamp_every=stamp_every,
        name=name).for_flow(FLOW),
    st.sampled_from([udp, tcp]),
    st.sampled_from([None, 128, [128, 256, 1518], {128: 7, 594: 4, 1518: 1}]),
    st.integers(1, 8), st.integers(1, 4), st.sampled_from([None, 5, (5, 6)]),
    st.integers(1, 100), st.sampled_from([None, "s"]))


@given(streams, st.sampled_from([0, 16]))
@settings(max_examples=60, deadline=None)
def test_a_stream_spec_is_the_compiled_dict_field_for_field(stream: Any, trailer: int) -> None:
    compiled = stream.compile(trailer)
    spec = StreamSpec.of(stream, trailer)
    assert spec.as_dict() == compiled
    assert StreamSpec.of(compiled, trailer) == spec == StreamSpec.of(spec, trailer)
    assert spec.fields == tuple(FieldSpec(**op.as_spec()) for op in stream.fields)
    assert spec.mean_frame_size == stream.mean_frame_size


class _Facade:
    """The real host's facade, for op_stream_load: what it was handed."""

    def __init__(self) -> None:
        self.specs: list[StreamSpec] = []

    def stream_create(self, port_id: int, spec: StreamSpec, pool_mbufs: int = 0) -> Any:
        self.specs.append(spec)
        return type("NativeStream", (), {"stream_id": len(self.specs), "csum_offloaded": True})


def _real_host() -> tuple[Host, _Facade]:
    """A real `Host` without its extension: only what op_stream_load uses."""
    host = Host.__new__(Host)
    facade = _Facade()
    host.facade = facade  # type: ignore[assignment]
    host.streams, host._ids = {}, itertools.count(1)
    return host, facade


@given(streams)
@settings(max_examples=30, deadline=None)
def test_the_real_and_the_fake_host_decode_a_stream_alike(stream: Any) -> None:
    spec = StreamSpec.of(stream, facts.SIGNATURE_BYTES)
    host, facade = _real_host()
    fake_host = FakeHost(FakeDut())
    port = fake_host.op_port_open("net_fake0")["port_id"]
    for sent in (spec.encode(), stream.compile(facts.SIGNATURE_BYTES)):  # typed, or as compiled
        host.op_stream_load(port, sent)
        handle = fake_host.op_stream_load(port, sent)["handle"]
        assert facade.specs[-1] == spec  # what the facade reads
        loaded = fake_host.streams[handle]  # what the fake reads
        assert (loaded.name, loaded.frames, loaded.sequence, loaded.stamp_every) == \
            (spec.name or "", list(spec.frames), list(spec.sequence), spec.stamp_every)


def test_a_stream_spec_reads_the_dicts_older_callers_send() -> None:
    spec = StreamSpec.decode({"name": "tiny", "frames": [bytearray(60)], "sequence": [0],
                              "fields": [{"offset": 30, "width": 2, "op": "inc", "min": 1,
                                          "max": np.uint16(9)}]})
    assert spec == StreamSpec("tiny", (bytes(60),), sequence=(0,),
                              fields=(FieldSpec(30, 2, "inc", 1, 9),))
    assert (spec.l3_offset, spec.l4_offset, spec.seed, spec.stamp_every) == (-1, -1, 0, 1)
    assert spec.mean_frame_size == 64  # no sizes: each frame's own, FCS included


# ---- hello and results ---------------------------------------------------------------------


def test_the_fake_s_hello_and_results_are_the_protocol_s_messages() -> None:
    host = FakeHost(FakeDut())
    hello = Hello.decode(host.op_hello())
    assert hello.constants["abi_version"] == facts.ABI_VERSION and hello.workers == 1
    assert hello.hostname is None and hello.fake_dut == dataclasses.asdict(FakeDut())
    a, b = host.op_port_open("net_fake0")["port_id"], host.op_port_open("net_fake1")["port_id"]
    handle = host.op_stream_load(a, StreamSpec.of(udp(size=64).for_flow(FLOW), 16).encode())
    run = host.op_run_start([{"handle": handle["handle"], "count": 100}], [(b, 0)])
    while host.op_run_poll(run)["state"] != "done":
        pass
    results = RunResults.decode(host.op_run_results(run))
    assert sorted(results.ports) == [a, b] and results.link_events == ()
    assert results.ports[a]["opackets"] == 100 and results.ports[b]["link_up_after"] == 1
    assert all(isinstance(unpack_array(v), np.ndarray) for v in results.arrays.values())
    # a port's counters: struct netload_port_stats (test_fake_engine checks the fake's
    # PORT_STATS, PortStats' fields, against the header)
    assert PortStats.decode(host.op_port_stats(a)).opackets == 100
    assert tuple(f.name for f in dataclasses.fields(PortStats)) == fake.PORT_STATS


def test_engine_hello_is_the_typed_hello_as_a_dict() -> None:
    with Engine(fake=FakeDut(capacity_pps=50_000)) as engine:
        assert engine.host_hello is not None
        assert engine.hello == engine.host_hello.as_dict()
        assert engine.hello["workers"] == engine.workers == 1
        assert engine.environment()["host"] is None
        assert engine.constants == engine.host_hello.constants


# ---- RunSpec: one run, one conversion ---------------------------------------------------------


def test_a_run_spec_converts_its_units_in_one_place() -> None:
    spec = RunSpec(duration_s=1.5, drain_s=0.25, start_delay_s=0.001, latency_digits=3,
                   forward=[{"rx_port": 0, "tx_port": 1, "delay_ns": 5}], hist_pages=4)
    start = spec.start([], [], [], [], capture_default=8)
    assert (start.duration_ns, start.drain_ns, start.start_delay_ns) == \
        (1_500_000_000, 250_000_000, 1_000_000)
    assert start.latency_sub_bits == 11 and start.capture_frames == 8
    assert start.forwarders == (ForwarderSpec(0, 1, 5),) and start.hist_pages == 4
    assert RunSpec(capture=0).start([], [], [], [], capture_default=8).capture_frames == 0


@pytest.mark.parametrize(("kwargs", "says"), [
    ({"count": -1}, "count=-1: give a number of packets >= 0"),
    ({"latency_digits": 4}, "latency_digits=4: give 1, 2 or 3 significant digits"),
    ({"hist_pages": -1}, "hist_pages=-1: give a number of histogram pages >= 0"),
])
def test_a_run_spec_refuses_what_engine_run_refused(kwargs: dict[str, Any], says: str) -> None:
    with pytest.raises(NetloadConfigError, match=says.replace("(", r"\(")):
        RunSpec(**kwargs).start([], [], [], [], capture_default=0)


def test_the_fake_s_phase_limit_is_the_native_one() -> None:
    host = FakeHost(FakeDut())
    port = host.op_port_open("net_fake0")["port_id"]
    handle = host.op_stream_load(port, udp(size=64).for_flow(FLOW).compile(16))["handle"]
    phase = {"gaps_ps": (1000).to_bytes(8, "little"), "n_gaps": 1, "duration_ns": 1000}
    too_many = [phase] * (facts.MAX_PHASES + 1)
    with pytest.raises(NetloadConfigError,
                       match=f"{facts.MAX_PHASES + 1} phases; give 1 to {facts.MAX_PHASES}"):
        host.op_run_start([{"handle": handle, "phases": too_many}], [])


def test_engine_run_takes_a_run_spec_or_its_keywords_alike() -> None:
    with Engine(fake=FakeDut(capacity_pps=50_000)) as engine:
        tx, rx = engine.port("net_fake0"), engine.port("net_fake1")
        stream = engine.load(tx, udp(size=64).for_flow(FLOW))
        by_keywords = engine.run([(stream, 1000)], [rx], drain_s=0.01)
        by_spec = engine.run(RunSpec(tx=((stream, 1000),), rx=(rx,), drain_s=0.01))
        assert by_spec.streams[0].tx_packets == by_keywords.streams[0].tx_packets == 1000
        assert by_spec.streams[0].rx_packets == by_keywords.streams[0].rx_packets
        with pytest.raises(NetloadConfigError, match="not as arguments beside it"):
            engine.run(RunSpec(tx=(stream,)), count=5)


def test_a_port_s_info_is_the_header_s_struct_then_what_the_host_adds() -> None:
    """PortInfo is `struct netload_port_info` field for field, in its order, then the
    queues and the link as the host reads it; the fake answers the same message, and a
    key either host added on its own would fail its decode."""
    header = Path(__file__).resolve().parents[2] / "native" / "include" / "netload_api.h"
    body = re.search(r"struct netload_port_info \{(.*?)\};", header.read_text(), re.S)
    assert body is not None
    struct = re.findall(r"^\s*\w+\s+(\w+)(?:\[\d+\])?;", body.group(1), re.M)
    names = [f.name for f in dataclasses.fields(PortInfo)]
    assert names[:len(struct)] == struct
    assert names[len(struct):] == ["rx_queues", "tx_queues", "link_source", "link_speed_note"]
    host = FakeHost(FakeDut())
    opened = PortInfo.decode(host.op_port_open("net_fake0", rx_queues=2))
    assert opened.rx_queues == 2 and opened.link_up and opened.mac.startswith("02:")
    host.op_port_set_addr(opened.port_id, opened.mac, "10.0.0.1")
    assert PortInfo.decode(host.op_port_info(opened.port_id)) == opened
    with pytest.raises(TypeError, match="no field 'address'"):
        PortInfo.decode({**opened.as_dict(), "address": {"ip": "10.0.0.1"}})


def test_engine_port_info_is_the_typed_reply_as_a_dict() -> None:
    with Engine(fake=FakeDut()) as engine:
        port = engine.port("net_fake0")
        assert port.info == PortInfo.decode(port.refresh()).as_dict()
        assert "v" not in port.info and port.info["tx_queues"] == 1
