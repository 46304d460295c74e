"""The fake engine host (engine/fake.py) driven by the unchanged Engine client: the
measurer, the pure searches, the rate controller and the latency meter against a
modelled DUT whose answers are known. No root, no DPDK; a 60-s trial takes ms.

Each engine here is a real execnet popen gateway booting the fake host, so every
result crossed the channel in the wire format and went through build_run_result.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.bench.harness import LatencyMeter
from pytest_netload.bench.ratecontrol import RateController
from pytest_netload.bench.runner import IN_FLIGHT_SLACK_FRAMES, EngineMeasurer
from pytest_netload.engine import fake
from pytest_netload.engine.client import Engine, LoadedStream, Port, Tx
from pytest_netload.engine.fake import FakeDut, FakeHost, parse_fake_engine
from pytest_netload.engine.wire import unpack_array
from pytest_netload.errors import EngineCrashed, NetloadConfigError, NetloadEnvironmentError
from pytest_netload.measure.recording import recording
from pytest_netload.rfc2544 import binary_search
from pytest_netload.rfc2544.mlr import mlr_search
from pytest_netload.search import FunctionMeasurer, TrialSettings
from pytest_netload.topology.fake import fake_topology
from pytest_netload.traffic.patterns import CBR
from pytest_netload.traffic.streams import udp
from pytest_netload.units import Rate, frame_bits

HEADER = Path(__file__).resolve().parents[2] / "native" / "include" / "netload_api.h"
TOPOLOGY = fake_topology(10e9)
FLOW = TOPOLOGY.flows()[0]

# The shaper-like DUT: 100 Mbit/s at L1 (148,810 pps of 64-B frames, 8,127 of 1518-B),
# 100 us of delay, a 1000-frame buffer.
SHAPER = FakeDut(capacity_bps=100e6, capacity_layer="l1", delay_s=100e-6, buffer_frames=1000)
DEEP = FakeDut(capacity_pps=50_000, delay_s=20e-6, buffer_frames=1_000_000)
LOSSY = FakeDut(capacity_pps=1e6, loss_ratio=0.01, delay_s=50e-6, jitter_s=20e-6, seed=7)


class Wired:
    """A fake engine with its two ports open, and loaded streams by frame size."""

    def __init__(self, dut: FakeDut) -> None:
        self.engine = Engine(fake=dut).start()
        self.tx: Port = self.engine.port("net_fake0")
        self.rx: Port = self.engine.port("net_fake1")
        self.streams: dict[int, LoadedStream] = {}

    def stream(self, size: int) -> LoadedStream:
        if size not in self.streams:
            self.streams[size] = self.engine.load(
                self.tx, udp(size=size, name=f"s{size}").for_flow(FLOW))
        return self.streams[size]

    def measurer(self, size: int, **kw: object) -> EngineMeasurer:
        return EngineMeasurer(self.engine, self.stream(size), [self.rx], size,
                              **kw)  # type: ignore[arg-type]

    def cbr(self, pps: float, seconds: float, **kw: object):  # noqa: ANN201
        phases = tuple(CBR().phases(lambda _r: pps, Rate(pps, "pps"), seed=1))
        return self.engine.run([Tx(self.stream(64), 0, phases)], [self.rx], duration_s=seconds,
                               **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def shaper() -> Iterator[Wired]:
    wired = Wired(SHAPER)
    yield wired
    wired.engine.close()


@pytest.fixture(scope="module")
def deep() -> Iterator[Wired]:
    wired = Wired(DEEP)
    yield wired
    wired.engine.close()


@pytest.fixture(scope="module")
def lossy() -> Iterator[Wired]:
    wired = Wired(LOSSY)
    yield wired
    wired.engine.close()


# ---- the fake models the native core's facts -------------------------------------------


def _header_enum() -> dict[str, int]:
    body = re.search(r"enum netload_constants \{(.*?)\};", HEADER.read_text(), re.S)
    assert body is not None
    return {k: int(v, 0) for k, v in re.findall(r"(NETLOAD_\w+) = (\w+)", body.group(1))}


def _header_struct(name: str) -> list[tuple[str, str]]:
    body = re.search(rf"struct {name} \{{(.*?)\}};", HEADER.read_text(), re.S)
    assert body is not None
    types = {"uint64_t": "u8", "int": "i4"}
    return [(field, types[ctype]) for ctype, field in
            re.findall(r"^\s*(uint64_t|int)\s+(\w+);", body.group(1), re.M)]


def test_the_fake_reports_the_header_s_constants_and_abi_version() -> None:
    enum = _header_enum()
    assert fake.FAKE_ABI_VERSION == enum["NETLOAD_ABI_VERSION"]
    for key, value in fake.CONSTANTS.items():
        name = "NETLOAD_ABI_VERSION" if key == "abi_version" else f"NETLOAD_{key.upper()}"
        assert value == enum[name], key
    assert fake.HIST_SUB_BITS == enum["NETLOAD_HIST_SUB_BITS"]
    assert fake.LATENCY_SUB_BITS == enum["NETLOAD_LATENCY_SUB_BITS"]
    assert fake.hist_buckets(fake.HIST_SUB_BITS) == enum["NETLOAD_HIST_BUCKETS"]
    assert fake.MAX_BURST == enum["NETLOAD_MAX_BURST"]


def test_the_fake_s_result_records_have_the_header_s_struct_fields() -> None:
    for spec, struct in ((fake.TX_STATS, "netload_tx_stats"),
                         (fake.RX_STREAM_STATS, "netload_rx_stream_stats"),
                         (fake.RX_QUEUE_STATS, "netload_rx_queue_stats")):
        assert list(spec) == _header_struct(struct), struct
    assert list(fake.PORT_STATS) == [f for f, _ in _header_struct("netload_port_stats")]


def test_the_fake_s_layouts_match_the_built_engine() -> None:
    pytest.importorskip("pytest_netload_engine._netload_native", reason="native engine not built")
    from pytest_netload.engine import facade

    for bits in range(fake.HIST_MIN_SUB_BITS, fake.HIST_MAX_SUB_BITS + 1):
        np.testing.assert_array_equal(fake.hist_lower_bounds_ns(bits),
                                      facade.hist_lower_bounds_ns(bits))
    for spec, struct in ((fake.TX_STATS, "struct netload_tx_stats"),
                         (fake.RX_STREAM_STATS, "struct netload_rx_stream_stats"),
                         (fake.RX_QUEUE_STATS, "struct netload_rx_queue_stats")):
        dtype = facade.struct_dtype(struct)
        fields = dtype.fields or {}
        assert [(n, fields[n][0].str[1:]) for n in fields] == list(spec)


# ---- the DUT model's settings ----------------------------------------------------------


def test_a_fake_engine_setting_parses_into_its_dut() -> None:
    assert parse_fake_engine("popen") is None
    assert parse_fake_engine("fake") == FakeDut()
    dut = parse_fake_engine("fake:capacity_pps=50000,loss_ratio=0,delay_s=100e-6,"
                            "buffer_frames=1000")
    assert dut == FakeDut(capacity_pps=50_000, delay_s=100e-6, buffer_frames=1000)
    assert parse_fake_engine("fake:capacity_pps=50kpps,delay_s=100us,jitter_s=5us") == \
        FakeDut(capacity_pps=50_000, delay_s=100e-6, jitter_s=5e-6)
    bps = parse_fake_engine("fake:capacity_bps=20Mbit/s@l1,seed=3")
    assert bps == FakeDut(capacity_bps=20e6, capacity_layer="l1", seed=3)
    assert bps is not None and bps.capacity_at(64) == pytest.approx(20e6 / (84 * 8))
    for dut in (SHAPER, DEEP, LOSSY, FakeDut()):  # its spec reads back as itself
        assert parse_fake_engine(dut.spec()) == dut
        assert FakeDut(**dut.params()) == dut


@pytest.mark.parametrize(("text", "says"), [
    ("fake:capacity=5", "has no parameter 'capacity'"),
    ("fake:capacity_pps", "is not key=value"),
    ("fake:", "no DUT parameters"),
    ("fake:loss_ratio=1", "loss_ratio=1.0: give a share in [0, 1)"),
    ("fake:loss_ratio=x", "is not a number"),
    ("fake:delay_s=-1", "negative"),
    ("fake:buffer_frames=2.5", "buffer_frames=2.5: give a whole number"),
    ("fake:capacity_pps=0", "give a rate > 0"),
    ("fake:capacity_bps=5kpps", "give a bit rate"),
    ("fake:capacity_pps=1,capacity_bps=1Mbit/s", "give one of them"),
    ("fake:seed=1,seed=2", "seed is given twice"),
])
def test_a_bad_fake_setting_names_the_parameter_and_the_fix(text: str, says: str) -> None:
    with pytest.raises(NetloadConfigError) as err:
        parse_fake_engine(text)
    assert says in str(err.value)
    assert "fake" in str(err.value)


def test_engine_refuses_a_bad_fake_dut_before_starting() -> None:
    with pytest.raises(NetloadConfigError, match="no parameter 'speed'"):
        Engine(fake={"speed": 1})
    with pytest.raises(NetloadConfigError, match="jitter_s"):
        Engine(fake="jitter_s=soon")


# ---- the model, in-process: deterministic -----------------------------------------------


def _host_results(dut: FakeDut) -> dict[str, bytes]:
    host = FakeHost(dut)
    host.op_hello()
    a, b = host.op_port_open("net_fake0")["port_id"], host.op_port_open("net_fake1")["port_id"]
    spec = udp(size=128, name="x").for_flow(FLOW).compile(16)
    handle = host.op_stream_load(a, spec)["handle"]
    phases = [p.as_spec() for p in CBR().phases(lambda _r: 3e5, Rate("300kpps"), seed=1)]
    out = {}
    for n in range(3):
        run = host.op_run_start([{"handle": handle, "count": 0, "phases": phases}], [(b, 0)],
                                duration_ns=10**9, drain_ns=10**8, timing_samples=100)
        while host.op_run_poll(run)["state"] != "done":
            pass
        out.update({f"{n}{k}": unpack_array(v).tobytes()
                    for k, v in host.op_run_results(run)["arrays"].items()})
    return out


def test_the_model_is_deterministic_for_a_seed() -> None:
    assert _host_results(LOSSY) == _host_results(LOSSY)
    other = _host_results(FakeDut(**{**LOSSY.params(), "seed": 8}))
    assert other["0rx"] != _host_results(LOSSY)["0rx"]


# ---- the procedures against the model --------------------------------------------------


@pytest.mark.parametrize("size", [64, 1518])
def test_binary_search_finds_the_capacity_within_its_resolution(shaper: Wired,
                                                                size: int) -> None:
    capacity = SHAPER.capacity_at(size)
    m = shaper.measurer(size)
    max_pps = 10e9 / frame_bits(size, "l1")
    result = binary_search(FunctionMeasurer(lambda load, _d: m.measure(load, 60.0)), max_pps,
                           settings=TrialSettings(duration_s=60.0, frame_size=size,
                                                  mean_frame_size=size),
                           resolution_ratio=0.005)
    assert result.resolution_reached
    # every load at or below the capacity passes; above it, the buffer hides at most
    # buffer_frames over the trial
    top = capacity + SHAPER.buffer_frames / 60.0
    assert capacity * (1 - 0.005) <= result.throughput_pps <= top
    assert result.upper_pps is not None and result.upper_pps > capacity
    assert all(t.valid for t in result.trials)


def test_mlrsearch_ndr_finds_the_capacity(shaper: Wired) -> None:
    capacity = SHAPER.capacity_at(64)
    m = shaper.measurer(64)
    max_pps = 10e9 / frame_bits(64, "l1")
    result = mlr_search(m, settings=TrialSettings(frame_size=64, mean_frame_size=64),
                        min_pps=max_pps / 1000, max_pps=max_pps, goals="rfc2544-strict")
    ndr = result.goals[0]
    assert ndr.lower_bound_pps is not None and ndr.upper_bound_pps is not None
    assert capacity * (1 - 0.005) <= ndr.lower_bound_pps <= capacity + SHAPER.buffer_frames / 60
    assert ndr.upper_bound_pps > capacity


def test_loss_ratio_is_measured_within_its_binomial_interval(lossy: Wired) -> None:
    trial = lossy.measurer(64).measure(100_000, 10.0)
    n = trial.tx_packets
    assert n == 1_000_000
    p = LOSSY.loss_ratio
    half = 3.29 * math.sqrt(p * (1 - p) / n)  # 99.9 %
    assert p - half <= trial.loss_ratio <= p + half
    assert trial.loss_ratio != p  # a draw, not the mean
    assert trial.valid


def test_latency_meter_reports_the_configured_delay(shaper: Wired) -> None:
    rc = RateController(shaper.engine, shaper.tx, line_rate_bps=10e9, rx=[shaper.rx])
    # the meter records what it measured: into a record of its own here, not this
    # session's results (the plugin tests check a session's records)
    with recording("latency-meter"), LatencyMeter(shaper.engine, shaper.rx, "probe") as meter:
        rc.run(udp(size=64, name="probe").for_flow(FLOW), "10kpps", duration="60s")
        rc.run(udp(size=64, name="probe").for_flow(FLOW), "20kpps", duration="1s")
    delay_ns = SHAPER.delay_s * 1e9
    lat = meter.latency
    assert meter.lost == 0 and meter.tx_packets == 620_000
    assert lat.count == 620_000
    assert all(r.latency_min_ns == delay_ns == r.latency_max_ns for r in meter.results)
    # the histogram's percentile is its bucket's midpoint: within half a bucket
    bucket = lat.histogram.upper_ns - lat.histogram.lower_ns
    half = float(bucket[np.searchsorted(lat.histogram.lower_ns, delay_ns, side="right") - 1]) / 2
    assert abs(lat.percentile(50).value_ns - delay_ns) <= half
    assert meter.clock == "tsc-software" and meter.results[0].clock_resolution_ns == 1.0


def test_jitter_spreads_the_delay_uniformly(lossy: Wired) -> None:
    s = lossy.cbr(100_000, 2.0).streams[0]
    lo, hi = LOSSY.delay_s * 1e9, (LOSSY.delay_s + LOSSY.jitter_s) * 1e9
    assert lo <= s.latency_min_ns and s.latency_max_ns <= hi
    lat = s.latency_result()
    assert lat.percentile(50).value_ns == pytest.approx((lo + hi) / 2, rel=0.01)
    assert lat.percentile(90).value_ns == pytest.approx(lo + 0.9 * (hi - lo), rel=0.01)
    assert s.jitter_ns == pytest.approx(LOSSY.jitter_s * 1e9 / 3, rel=0.01)


def test_a_deep_buffer_holds_the_overload_as_backlog(deep: Wired) -> None:
    capacity, seconds = DEEP.capacity_pps, 10.0
    assert capacity is not None
    trial = deep.measurer(64).measure(capacity * 1.02, seconds)
    overload = 0.02 * capacity * seconds
    assert trial.lost == 0
    assert trial.backlog_frames is not None
    assert abs(trial.backlog_frames - overload) <= IN_FLIGHT_SLACK_FRAMES + 1
    assert trial.forwarding_pps == pytest.approx(capacity, rel=1e-3)
    assert trial.steady is False  # a 1.96 % backlog: the buffer, not forwarding, kept them
    assert trial.valid


def test_a_full_buffer_drops_the_rest(deep: Wired) -> None:
    capacity = DEEP.capacity_pps
    assert capacity is not None
    run = deep.cbr(capacity * 2, 60.0, drain_s=30.0)
    s = run.streams[0]
    assert s.tx_packets == 6_000_000
    assert s.rx_packets == round(capacity * 60) + DEEP.buffer_frames
    assert s.rx_after_tx_end == pytest.approx(DEEP.buffer_frames, abs=2)


def test_overload_then_relief_recovers_when_the_rate_drops(shaper: Wired) -> None:
    capacity = SHAPER.capacity_at(64)
    trial = shaper.measurer(64).measure_recovery(1.1 * capacity, 0.5 * capacity, 5.0, 5.0)
    assert trial.valid and trial.overloaded
    # a tail-drop FIFO drops while full: until the rate drops, never after
    assert trial.lost == pytest.approx(0.1 * capacity * 5 - SHAPER.buffer_frames, abs=2)
    assert trial.switch_ns == 5 * 10**9
    assert trial.recovery_ns == 0
    run = shaper.engine.last_result
    assert run is not None
    s = run.streams[0]
    # the frames that waited longest filled the buffer: buffer / capacity, plus the delay
    full_wait_ns = SHAPER.buffer_frames / capacity * 1e9 + SHAPER.delay_s * 1e9
    assert s.latency_max_ns == pytest.approx(full_wait_ns, rel=1e-3)
    assert s.latency_min_ns == SHAPER.delay_s * 1e9
    assert s.latency_result().percentile(99).value_ns == pytest.approx(full_wait_ns, rel=0.01)


def test_rate_controller_offers_and_achieves_its_rates(shaper: Wired) -> None:
    rc = RateController(shaper.engine, shaper.tx, line_rate_bps=10e9, rx=[shaper.rx])
    stream = udp(size=64, name="rc").for_flow(FLOW)
    below = rc.run(stream, "100kpps", duration="60s")
    s = below["rc"]
    assert s.offered_pps == 100_000
    assert s.achieved_tx_pps == pytest.approx(100_000, rel=1e-6)
    assert s.achieved_rx_pps == pytest.approx(100_000, rel=1e-4)
    assert not below.warnings and s.result.lost == 0
    capacity = SHAPER.capacity_at(64)
    above = rc.run(stream, "50Mbit/s@l1", duration="60s")["rc"]  # 74,405 pps offered
    assert above.offered_pps == pytest.approx(50e6 / (84 * 8))
    assert above.achieved_tx_pps == pytest.approx(above.offered_pps, rel=1e-6)
    over = rc.run(stream, "200kpps", duration="60s")["rc"]
    assert over.achieved_rx_pps == pytest.approx(capacity, rel=1e-3)
    flat = rc.run(stream, duration="1s")  # maximum rate: the fake port's line rate
    assert flat.pacing == "none"
    assert flat["rc"].achieved_tx_pps == pytest.approx(10e9 / (84 * 8), rel=1e-6)
    poisson = rc.run(stream, "30kpps", pattern="poisson", duration="10s")["rc"]
    assert poisson.achieved_tx_pps == pytest.approx(30_000, rel=0.01)
    weighted = rc.run([(udp(size=64, name="a").for_flow(FLOW), 3),
                       (udp(size=64, name="b").for_flow(FLOW), 1)], "40kpps", count=1000)
    assert weighted["a"].offered_pps == 30_000 and weighted["b"].offered_pps == 10_000
    assert weighted["a"].result.tx_packets == 1000 == weighted["b"].result.tx_packets
    assert weighted["a"].result.tx_end_reason == "count"


def test_a_60_s_trial_takes_milliseconds_and_polls_its_states(shaper: Wired) -> None:
    import time

    states: list[str] = []
    started = time.perf_counter()
    run = shaper.engine.run([Tx(shaper.stream(64), 0, tuple(CBR().phases(
        lambda _r: 1e5, Rate("100kpps"), seed=1)))], [shaper.rx], duration_s=60,
        progress=lambda st: states.append(st["state"]))
    assert time.perf_counter() - started < 5
    assert states == ["sending", "draining", "done"]
    s = run.streams[0]
    assert (s.tx_packets, s.tx_end_reason, s.tx_end_ns) == (6_000_000, "duration", 60 * 10**9)
    assert (s.tx_max_lag_ns, s.tx_off_cpu_ns, s.tx_preemptions, s.tx_unsent) == (0, 0, 0, 0)
    assert run.generator_drops == 0 and run.foreign == 0 and not run.interrupted


def test_a_stopped_run_keeps_what_it_sent_until_the_stop(shaper: Wired) -> None:
    def stop(status: dict[str, object]) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        shaper.cbr(100_000, 60.0, progress=stop)
    last = shaper.engine.last_result
    assert last is not None and last.interrupted
    s = last.streams[0]
    assert s.tx_end_reason == "stopped"
    assert s.tx_packets == 3_000_000  # the first poll found it half way
    assert s.lost == 0


def test_a_reset_hook_is_due_at_once_only(shaper: Wired) -> None:
    calls: list[int] = []
    m = shaper.measurer(64)
    trial = m.measure_reset(10_000, 10.0, lambda: calls.append(1), 0.0)
    assert calls == [1] and trial.valid  # the model has no outage: the gaps stay 100 us
    assert trial.longest_gap_ns == pytest.approx(100_000, rel=0.02)
    late = m.measure_reset(10_000, 10.0, lambda: calls.append(2), 2.0)
    assert calls == [1] and not late.valid  # the fake's run ends before 2 s pass
    assert "ended before the reset hook was due" in str(late.invalid_reason)


def test_ports_count_what_the_runs_moved(shaper: Wired) -> None:
    before_tx, before_rx = shaper.tx.stats(), shaper.rx.stats()
    run = shaper.cbr(1000, 1.0)
    assert shaper.tx.stats()["opackets"] - before_tx["opackets"] == 1000
    assert shaper.rx.stats()["ipackets"] - before_rx["ipackets"] == 1000
    assert run.ports["net_fake0"]["opackets"] == 1000
    assert run.ports["net_fake1"]["link_up_after"] == 1
    assert shaper.tx.driver == "net_fake" and shaper.tx.info["link_speed_mbps"] == 10_000
    with pytest.raises(NetloadEnvironmentError, match="no hardware rate limiting"):
        shaper.tx.set_queue_rate(100)


def test_timing_samples_and_capture(shaper: Wired) -> None:
    run = shaper.engine.run([Tx(shaper.stream(64), 0, tuple(CBR().phases(
        lambda _r: 1e4, Rate("10kpps"), seed=1)))], [shaper.rx], duration_s=1,
        timing_samples=50, capture=8)
    s = run.streams[0]
    assert s.sample_tx_ns is not None and len(s.sample_tx_ns) == 50
    np.testing.assert_array_equal(s.inter_departure_ns, np.full(49, 100_000))
    assert set(s.latency_result().delays_ns.tolist()) == {100_000.0}  # type: ignore[union-attr]
    frames = run.captured
    assert len(frames) == 8 and all(length == 60 for _, length, _ in frames)


def test_the_fake_refuses_what_it_does_not_model(shaper: Wired) -> None:
    with pytest.raises(NetloadEnvironmentError, match="fake engine has no native histogram"):
        shaper.engine.histogram_record_cycles(10)
    host = FakeHost(FakeDut())
    port = host.op_port_open("net_fake0")["port_id"]
    handle = host.op_stream_load(port, udp(size=64).for_flow(FLOW).compile(16))["handle"]
    with pytest.raises(NetloadConfigError, match="no count and the run no duration"):
        host.op_run_start([{"handle": handle, "count": 0, "phases": []}], [])
    with pytest.raises(NetloadEnvironmentError, match="runs no delay lines"):
        host.op_run_start([{"handle": handle, "count": 1}], [],
                          forwarders=[{"rx_port": 0, "tx_port": 0, "delay_ns": 1}])
    with pytest.raises(NetloadConfigError, match="frame 0 is 10 bytes"):
        host.op_stream_load(port, {"name": "tiny", "frames": [b"x" * 10], "sequence": [0]})
    with pytest.raises(NetloadConfigError, match="stream handle 99 is not loaded"):
        host.op_run_start([{"handle": 99, "count": 1}], [])


@given(freed=st.integers(0, 3))
@settings(max_examples=4, deadline=None)
def test_the_stream_limit_is_the_native_one_with_its_fix(freed: int) -> None:
    """As the engine: NETLOAD_MAX_STREAMS streams load, one more is refused with the count
    and the fix, and each stream freed makes room for one."""
    host = FakeHost(FakeDut())
    port = host.op_port_open("net_fake0")["port_id"]
    spec = udp(size=64).for_flow(FLOW).compile(16)
    handles = [host.op_stream_load(port, spec)["handle"] for _ in range(fake.MAX_STREAMS)]
    with pytest.raises(NetloadConfigError,
                       match=rf"{fake.MAX_STREAMS} streams are loaded.*free the streams"):
        host.op_stream_load(port, spec)
    for h in handles[:freed]:
        host.op_stream_free(h)
    for _ in range(freed):
        host.op_stream_load(port, spec)
    assert len(host.streams) == fake.MAX_STREAMS


def test_a_crash_of_the_fake_host_is_an_engine_crash() -> None:
    with Engine(fake=FakeDut()) as engine:
        port = engine.port("net_fake0")
        with pytest.raises(EngineCrashed, match="'crash'"):
            engine.crash_for_test()
        assert not port.alive
        assert engine.port("net_fake0").alive  # the next call starts a fresh host
