"""The engine protocol (pytest_netload/engine/protocol.py): the real host and the fake
host answer the same operations with the same signatures as `HostOps`, the codec
carries every message there and back unchanged as plain types, and `RunSpec` is the
one place where a run's seconds and digits become the host's ns and bits."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload import _native_facts as facts
from pytest_netload.engine import protocol
from pytest_netload.engine.client import Engine
from pytest_netload.engine.fake import FakeDut, FakeHost
from pytest_netload.engine.host import Host
from pytest_netload.engine.protocol import (
    PROTOCOL_VERSION,
    ForwarderSpec,
    HostOps,
    PhaseSpec,
    PortSpec,
    RunSpec,
    RunStart,
    RunStatus,
    TxEntry,
)
from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.topology.fake import fake_topology
from pytest_netload.traffic.streams import udp

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
    """Only what an execnet channel carries."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
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


@given(st.one_of(runs, statuses, ports))
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


def test_a_run_start_reads_the_dicts_older_callers_send() -> None:
    start = RunStart.decode({"tx": [{"handle": 3, "count": 5, "phases": [
        {"gaps_ps": (7).to_bytes(8, "little"), "n_gaps": 1, "duration_ns": 10}]}],
        "rx": [[1, 0]], "duration_ns": 10})
    assert start == RunStart(tx=(TxEntry(3, count=5, phases=(PhaseSpec(
        (7).to_bytes(8, "little"), 1, 10),)),), rx=((1, 0),), duration_ns=10)
    assert start.tx[0].phases[0].gaps().tolist() == [7]


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
