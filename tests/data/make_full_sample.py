"""Builds results-full.json: a results document with every kind of measurement.

The RFC 2544 procedures run here against fake DUTs (pure logic, no engine), their results
are recorded as the runner records them and the verdicts come from the real assertion
helpers, so the document has the producer's exact shapes. It adds what a lab run has and
the built-in sample lacks: a line rate (10 Gbit/s), DUT metadata, an IMIX size, MLRsearch,
recovery, a traffic run with a latency meter, expected frames that mismatch, Y.1564, every RFC 2889 procedure (on a fake
4-port switch), invalid trials, a failed test, a throughput the generator's ceiling bounded
(a lower bound: one requirement it clears, one it does not, which errors), and the
optional `environment` and latency `histogram` fields.

    python3 tests/data/make_full_sample.py          # rewrites tests/data/results-full.json

tests/unit/test_report_schema.py also calls `build()` to check that the producer's shapes
still match the schema.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from pytest_netload import GeneratorLimit, assert_latency, assert_loss, assert_throughput
from pytest_netload.measure.dut import DutCounter, attribute_loss
from pytest_netload.measure.histogram import LogHistogram
from pytest_netload.measure.landing import PortCounts
from pytest_netload.measure.latency import LatencyResult
from pytest_netload.measure.recording import record_measurement, recording
from pytest_netload.reports import json as json_report
from pytest_netload.rfc2544 import TrialResult, TrialSettings, binary_search
from pytest_netload.rfc2544.back_to_back import back_to_back
from pytest_netload.rfc2544.frame_loss import frame_loss_sweep
from pytest_netload.rfc2544.latency import latency_trials
from pytest_netload.rfc2544.latency_at import latency_at_loads
from pytest_netload.rfc2544.mlr import mlr_search
from pytest_netload.rfc2544.recovery import (RecoveryLoad, RecoveryTrial, ResetResult,
                                             ResetTrial, system_recovery)
from pytest_netload.rfc2889 import (AddressLoad, AddressTrial, BroadcastTrial, CongestionTrial,
                                    ErroredCase, ErroredTrial, MeshTrial, PartialMeshTrial,
                                    StreamCounts, address_caching_capacity,
                                    address_learning_rate, broadcast_forwarding,
                                    congestion_control, errored_frame_filtering,
                                    fully_meshed, load_steps, maximum_forwarding_rate,
                                    partially_meshed)
from pytest_netload.search import FunctionMeasurer
from pytest_netload.units import frame_bits
from pytest_netload.verdicts.assertions import (assert_delivered_to, assert_not_delivered,
                                                assert_sac, assert_spread)
from pytest_netload.y1564 import (Burst, BurstSample, ServiceSample, bucket_passes, burst_test,
                                  check_services, service_configuration_test,
                                  service_performance_test)

LINE_RATE_BPS = 10_000_000_000
HERE = Path(__file__).parent
# the DUT forwards at most this share of the line rate per frame size
CAPACITY_SHARE = {64: 0.62, 512: 1.0, 1518: 1.0, "imix": 0.93}
MEAN_SIZE = {64: 64.0, 512: 512.0, 1518: 1518.0, "imix": 4342 / 12}
GENERATOR_SHARE = 0.995  # the fake generator falls short on its first try above this share


def _layout() -> np.ndarray:
    """Log-linear bucket lower bounds (ns), like the engine's: exact below 128 ns."""
    steps = [np.arange(128)]
    for k in range(7, 34):
        steps.append((2 ** k + np.arange(64) * 2 ** (k - 6)).astype(np.int64))
    return np.concatenate(steps).astype(np.uint64)


LOWER = _layout()


def _latency(rng: np.random.Generator, n: int, median_ns: float, tail: float) -> LatencyResult:
    """A log-normal latency sample with a heavier tail, as a LatencyResult."""
    values = rng.lognormal(math.log(median_ns), 0.15, n)
    heavy = rng.random(n) < 0.002
    values[heavy] *= tail
    idx = np.searchsorted(LOWER.astype(np.float64), values, side="right") - 1
    counts = np.bincount(idx, minlength=LOWER.size).astype(np.uint64)
    return LatencyResult(LogHistogram(counts, LOWER), clock="tsc-software",
                         resolution_ns=0.4, samples=n, duplicates=0, reordered=0,
                         jitter_ns=float(median_ns * 0.03))


class FakeLab:
    """A DUT with a capacity per frame size behind a generator that falls short near the
    line rate (invalid trials), with latency samples scaled down so the file stays small."""

    def __init__(self, size: Any, seed: int) -> None:
        self.size = size
        self.mean = MEAN_SIZE[size]
        self.line_pps = LINE_RATE_BPS / frame_bits(self.mean, "l1")
        self.capacity = self.line_pps * CAPACITY_SHARE[size]
        self.rng = np.random.default_rng(seed)
        self.tried: set[float] = set()

    def measure(self, load: float, duration_s: float, *, latency: bool = False) -> TrialResult:
        tx = round(load * duration_s)
        first = load not in self.tried
        self.tried.add(load)
        if load > self.line_pps * GENERATOR_SHARE and first:
            sent = int(tx * 0.97)
            return TrialResult(self.size, self.mean, load, duration_s, sent, sent,
                               achieved_tx_pps=sent / duration_s, valid=False,
                               invalid_reason=f"the generator sent {sent:,} of {tx:,} scheduled "
                               "frames", clock="tsc-software")
        rx = min(tx, round(self.capacity * duration_s))
        lat = _latency(self.rng, 4000, 2_000 + self.mean * 4, 30.0) if latency else None
        # the DUT's egress queue counts every frame it dropped (a DUT hook reads it)
        queue = DutCounter("drops", tx - rx, "queue_drop", "egress queue of xe-0/0/1")
        forwarded = DutCounter("tx_packets", rx, "info", "xe-0/0/1")
        attribution = attribute_loss(tx - rx, [queue, forwarded], sources=("conftest.py",))
        return TrialResult(self.size, self.mean, load, duration_s, tx, rx, achieved_tx_pps=load,
                           latency=lat, clock="tsc-software", attribution=attribution,
                           dut_health="ok")


def _test(nodeid: str, body: Callable[[], None], duration_s: float) -> dict[str, Any]:
    """Run `body` in a test record, as the plugin does; a failed assertion fails the test,
    a requirement above the generator's ceiling (GeneratorLimit) errors it."""
    outcome, error = "passed", None
    with recording(nodeid) as record:
        try:
            body()
        except AssertionError:
            outcome = "failed"
        except GeneratorLimit as exc:
            outcome, error = "error", str(exc)
    data = json.loads(json.dumps(record.as_dict(), default=str))
    return {"nodeid": nodeid, "outcome": outcome, "duration_s": duration_s,
            "measurements": data["measurements"], "verdicts": data["verdicts"],
            "captures": data.get("captures", []), **({"error": error} if error else {})}


def _rfc2544_size(size: Any) -> Callable[[], None]:
    def body() -> None:
        lab = FakeLab(size, seed=7)
        record_measurement("calibration", {
            "port": "0000:3b:00.0", "frame_size": size, "generator_max_pps": lab.line_pps,
            "seconds": 1.0, "search_max_pps": lab.line_pps, "latency_bias_ns": 850.0,
            "latency_bias_note": "measured on the p2->p3 cable that bypasses the DUT"})
        trials = TrialSettings(duration_s=2.0, frame_size=size, mean_frame_size=lab.mean,
                               line_rate_bps=LINE_RATE_BPS)
        tput = binary_search(lab, lab.line_pps, settings=trials, max_trials=10,
                             max_source="line_rate")
        stamped = FunctionMeasurer(lambda load, d: lab.measure(load, d, latency=True))
        lat = latency_trials(stamped, tput.throughput_pps, settings=trials, trials=3)
        # throughput(latency_at=[0, 0.5, 0.9, 1.0]): latency at loads, in its record
        tput = replace(tput, latency_at=latency_at_loads(
            stamped, tput.throughput_pps, (0.0, 0.5, 0.9, 1.0), settings=trials))
        record_measurement("throughput", tput.as_dict())
        record_measurement("latency_rfc2544", lat.as_dict())
        loss = frame_loss_sweep(lab, lab.line_pps, settings=trials, max_source="line_rate")
        record_measurement("frame_loss", loss.as_dict())
        assert_throughput(tput, at_least="60%")
        assert_latency(lat, p50="< 50us", p99_9="< 2ms")
        assert_loss(lat, at_most=0)
    return body


def _back_to_back() -> None:
    for size, buffer in ((64, 60_000), (1518, 40_000)):
        lab = FakeLab(size, seed=3)
        rng = np.random.default_rng(size)

        def burst(n: int, _d: float, lab: FakeLab = lab, limit: int = buffer,
                  rng: np.random.Generator = rng) -> TrialResult:
            held = int(limit * (1 + 0.02 * rng.standard_normal()))
            return TrialResult(lab.size, lab.mean, lab.line_pps, n / lab.line_pps, n,
                               min(n, held), achieved_tx_pps=lab.line_pps)
        result = back_to_back(FunctionMeasurer(burst), rate_pps=lab.line_pps,
                              max_frames=int(lab.line_pps * 0.1),
                              settings=TrialSettings(frame_size=size, mean_frame_size=lab.mean),
                              repetitions=5)
        record_measurement("back_to_back", result.as_dict())


def _recovery() -> None:
    lab = FakeLab(64, seed=5)

    def measure(load: RecoveryLoad, duration_s: float) -> RecoveryTrial:
        overload, relief = load.overload_pps, load.relief_pps
        lost = int((overload - lab.capacity) * 10.0)
        return RecoveryTrial(overload, relief, 10_000_000_000, int(overload * 10 + relief * 5),
                             lost, 10_000_000_000 + 184_000_000)
    result = system_recovery(FunctionMeasurer(measure), throughput_pps=lab.capacity,
                             max_pps=lab.line_pps, overload_s=10.0, relief_s=5.0,
                             settings=TrialSettings(frame_size=64))
    record_measurement("recovery", result.as_dict())


def _reset() -> None:
    trials = (ResetTrial(1_000_000.0, 10_000_000, 2_310_000, 2_311_000_000.0, 2_000_000_000,
                         0.05, 9_999_999_000),
              ResetTrial(1_000_000.0, 10_000_000, 0, 1_000.0, 0, 0.0, 9_999_999_000,
                         valid=False, invalid_reason="the run ended before the reset hook was "
                         "due at 2 s; give a longer duration"),
              ResetTrial(1_000_000.0, 10_000_000, 2_250_000, 2_250_000_000.0, 2_000_000_000,
                         0.05, 9_999_999_000))
    record_measurement("reset", ResetResult(64, trials).as_dict())


def _ndr_pdr() -> None:
    lab = FakeLab(1518, seed=11)
    lab.capacity = lab.line_pps * 0.9

    def measure(load: float, duration_s: float) -> TrialResult:
        tx = round(load * duration_s)
        p = 0.0 if load <= lab.capacity * 0.97 else 0.004 if load <= lab.capacity else \
            1 - lab.capacity / load
        lost = int(lab.rng.binomial(tx, p)) if p else 0
        return TrialResult(1518, 1518.0, load, duration_s, tx, tx - lost, achieved_tx_pps=load,
                           clock="tsc-software")
    result = mlr_search(FunctionMeasurer(measure), min_pps=lab.line_pps / 1000,
                        max_pps=lab.line_pps, goals="ci-fast",
                        settings=TrialSettings(frame_size=1518, mean_frame_size=1518.0,
                                               line_rate_bps=LINE_RATE_BPS),
                        time_budget_s=60.0, max_source="line_rate")
    record_measurement("mlrsearch", result.as_dict())


def _traffic_and_latency() -> None:
    rng = np.random.default_rng(2)
    lat = _latency(rng, 20_000, 4_500, 8.0)
    record_measurement("traffic", {
        "pattern": "poisson", "offered_pps": 100_000.0,
        "streams": [{"name": "p0->p1", "offered_pps": 100_000.0, "tx_packets": 500_012,
                     "rx_packets": 500_012, "lost": 0, "achieved_tx_pps": 100_002.4,
                     "achieved_rx_pps": 100_002.1, "mean_frame_size": 128.0}],
        "duration_s": 5.0})
    record_measurement("latency", {"stream": "p0->p1", "tx_packets": 500_012,
                                   "rx_packets": 500_012, "lost": 0,
                                   "latency": lat.as_dict()})
    _expected_frames()
    assert_latency(lat, p50="< 20us", p99="< 200us")


def _where_frames_land() -> None:
    """ECMP over three next hops: 64 flows spread (L4 hash), one flow on one member."""
    many = PortCounts("p0->p1", "p0", {"p1": 2_200, "p2": 1_700, "p3": 2_500}, 6_400, 64,
                      sampled_flows=64, split_flows=0)
    one = PortCounts("one pair", "p0", {"p1": 0, "p2": 1_000, "p3": 0}, 1_000, 1)
    for pc in (many, one):
        record_measurement("port_counts", {**pc.as_dict(), "rx_packets": pc.rx_packets,
                                           "offered_pps": 2_000.0})
    assert_spread(many, over=["p1", "p2", "p3"], tolerance=0.5)
    assert_delivered_to(one, "p2")
    assert_not_delivered(one, "p1")


def _expected_frames() -> None:
    """The traffic run's frames compared with the expected frame, a router that forgets
    to decrement the TTL: every frame mismatched, the first ones kept with their diff
    (fake_expect's rewrite of the stream's frame); not asserted here."""
    from pytest_netload import expect, udp
    from pytest_netload.bench.expected import record_frames
    from pytest_netload.engine.fake_dut import FakeDut
    from pytest_netload.engine.fake_expect import dut_rewrite
    from pytest_netload.measure.frames import FrameCheck, KeptFrame
    from pytest_netload.topology.fake import FAKE_DUT_MACS, FAKE_PORT_MACS, fake_topology

    (flow,) = fake_topology(None).flows()
    stream = udp(size=128, dscp=10, name="p0->p1").for_flow(flow)
    rule = expect(ttl="sent-1", src="dut_mac", dst="rx_mac", dscp=10).rule(
        stream, {"dut_mac": FAKE_DUT_MACS[1], "rx_mac": FAKE_PORT_MACS[1]})
    frame = dut_rewrite(FakeDut(routed=1, keep_ttl=1), stream.compile(16)["frames"][0])
    check = FrameCheck("p0->p1", (rule,), (0,), 1_000,
                       tuple(KeptFrame(k, len(frame), frame[:128]) for k in range(8)))
    record_frames([check], procedure="traffic")


def _too_strict() -> None:
    lab = FakeLab(64, seed=9)
    tput = binary_search(lab, lab.line_pps,
                         settings=TrialSettings(duration_s=1.0, frame_size=64,
                                                mean_frame_size=64.0,
                                                line_rate_bps=LINE_RATE_BPS),
                         max_trials=6, resolution_ratio=0.1, max_source="line_rate")
    record_measurement("throughput", tput.as_dict())
    assert_throughput(tput, at_least="99%")


def _generator_bound() -> None:
    """A router faster than the generator on a port without a line rate (veth): the search
    starts at 95 % of the generator's calibrated ceiling and passes there, so the
    throughput is a lower bound; it clears 200 kpps, and 1 Mpps errors (GeneratorLimit)."""
    ceiling = 312_000.0
    record_measurement("calibration", {
        "port": "veth-gen0", "frame_size": 64, "generator_max_pps": ceiling, "seconds": 1.0,
        "search_max_pps": ceiling * 0.95, "latency_bias_ns": None,
        "latency_bias_note": "no wire bypasses the DUT on this topology"})

    def measure(load: float, duration_s: float) -> TrialResult:
        tx = round(load * duration_s)
        return TrialResult(64, 64.0, load, duration_s, tx, tx, achieved_tx_pps=load,
                           clock="tsc-software")
    tput = binary_search(FunctionMeasurer(measure), ceiling * 0.95,
                         settings=TrialSettings(duration_s=2.0, frame_size=64,
                                                mean_frame_size=64.0),
                         max_source="generator", generator_max_pps=ceiling)
    record_measurement("throughput", tput.as_dict())
    assert_throughput(tput, at_least="200kpps")
    assert_throughput(tput, at_least="1Mpps")


def _dut_health() -> None:
    """A DUT health hook that failed the test after a trial (the DUT logged an error)."""
    lab = FakeLab(64, seed=11)
    trial = lab.measure(lab.capacity * 0.5, 1.0)
    record_measurement("dut_health", {
        "plugin": "conftest.py", "reason": "kernel: eth1: tx timeout",
        "trial": {"test": "test_dut_health", "procedure": "throughput", "frame_size": 64,
                  "offered_pps": trial.offered_pps, "duration_s": 1.0, "number": 1},
        "result": trial.as_dict()})
    raise AssertionError("DUT health check of conftest.py failed after throughput trial 1 "
                         "(64B at 7,440,476 pps): kernel: eth1: tx timeout")


class FakePolicer:
    """A Y.1564 DUT: each service policed at its own rate, a fixed latency spread; the
    colour-aware data service's load above its 8 Mbit/s CIR is yellow, passed after green."""

    def __init__(self, policed_bps: dict[str, float]) -> None:
        self.policed_bps = policed_bps
        self.rng = np.random.default_rng(5)

    def measure(self, loads_bps: Mapping[str, float],
                duration_s: float) -> dict[str, ServiceSample]:
        out = {}
        for name, bps in loads_bps.items():
            size = 512 if name == "data" else 128
            green = min(bps, 8e6) if name == "data" else bps  # data is colour-aware
            tx = round(green * duration_s / (size * 8))
            y_tx = round((bps - green) * duration_s / (size * 8))
            passed = round(self.policed_bps[name] * duration_s / (size * 8))
            rx = min(tx, passed)
            y_rx = min(y_tx, passed - rx)
            out[name] = ServiceSample(name, bps, duration_s, size, tx, rx,
                                      latency=_latency(self.rng, max(rx, 1), 40_000, 2.0),
                                      yellow_tx_frames=y_tx or None,
                                      yellow_rx_frames=y_rx if y_tx else None)
        return out


class FakeBucket:
    """A Y.1564 DUT for bursts: a token bucket of `depth` bytes filled at `fill_bps`,
    full at each burst; bursts leave at the line rate."""

    def __init__(self, depth: int, fill_bps: float) -> None:
        self.depth, self.fill_bps = depth, fill_bps

    def measure(self, load: Burst, duration_s: float) -> BurstSample:
        rate = LINE_RATE_BPS * 512 / (512 + 20)
        rx = bucket_passes(load.frames, 512, self.depth, self.fill_bps, rate)
        return BurstSample(load.service, 512, load.frames, rx, rate)


Y1564_SERVICES = [
    {"name": "voice", "cir": "2Mbit/s", "frame_size": 128, "dscp": 46,
     "sac": {"flr": "0.1%", "ftd": "10ms", "fdv": "5ms", "availability": "99.9%"}},
    {"name": "data", "cir": "8Mbit/s", "eir": "2Mbit/s", "cbs": "16kB", "frame_size": 512,
     "colour": "dscp", "green": 10, "yellow": 12, "sac": {"flr": "1%", "ftd": "20ms"}}]


def _y1564() -> None:
    """Y.1564 on a policer that lets the data service's excess through (its policing
    step fails), then the performance test of both services."""
    services = check_services(Y1564_SERVICES, LINE_RATE_BPS)
    dut = FakePolicer({"voice": 2e6, "data": 12e6})
    # what each service sent, as bench/y1564.py records it: voice its own stream= (a VLAN
    # IPv6 template), data the default UDP in both colours
    streams = [{"service": "voice", "colour": "green", "wire": "p0->p1",
                "name": "voice p0->p1", "kind": "template", "share": 1.0,
                "mean_frame_size": 128.0},
               *({"service": "data", "colour": colour, "wire": "p0->p1",
                  "name": f"data{suffix} p0->p1", "kind": "udp", "share": 1.0,
                  "mean_frame_size": 512.0} for colour, suffix in (("green", ""),
                                                                    ("yellow", "/yellow")))]

    def traffic(*names: str) -> dict[str, Any]:
        return {"wire": "p0->p1", "direction": "one", "layer": "l2",
                "layer_text": "frame bytes with FCS (Y.1564 IR and CIR)", "drain_s": 0.1,
                "streams": [x for x in streams if x["service"] in names]}

    results = []
    for service in services:
        sct = service_configuration_test(dut, service, settings=TrialSettings(duration_s=10.0))
        record_measurement("y1564_sct", {**sct.as_dict(), "traffic": traffic(service.name)})
        results.append(sct)
    bursts = burst_test(FakeBucket(16_000, 8e6), services[1], line_rate_bps=LINE_RATE_BPS,
                        shares=(0.8, 2.0), ebs=False)
    record_measurement("y1564_bursts", {**bursts.as_dict(), "traffic": traffic("data")})
    spt = service_performance_test(dut, services, duration_s=30.0)
    record_measurement("y1564_spt", {**spt.as_dict(), "traffic": traffic("voice", "data"),
                                     "checkpoint": None, "resumed": False})
    assert_sac([*results, bursts, spt])


class FakeSwitch:
    """An RFC 2889 DUT: 4 ports forwarding at most `port_pps` each (dropping the rest), a
    fabric of `fabric_pps` in all, a table of `table` addresses learned up to `learn_fps`,
    broadcast replicated to `bcast_pps`, no head-of-line blocking."""

    names = ("p0", "p1", "p2", "p3")

    def __init__(self, port_pps: float = 148_809.5, fabric_pps: float = 500_000.0,
                 table: int = 8192, learn_fps: float = 25_000.0,
                 bcast_pps: float = 100_000.0) -> None:
        self.port_pps, self.fabric_pps, self.table, self.learn_fps, self.bcast_pps = (
            port_pps, fabric_pps, table, learn_fps, bcast_pps)
        self.rng = np.random.default_rng(3)

    def mesh(self, load: float, d: float) -> MeshTrial:
        tx = round(load * d)
        rx = min(tx, round(min(self.port_pps, self.fabric_pps / 4) * d))
        return MeshTrial(load, (tx,) * 4, (rx,) * 4, d, port_names=self.names)

    def one_to_many(self, load: float, d: float) -> PartialMeshTrial:
        each = round(load * d / 3)
        rx = min(each, round(self.port_pps * d))
        return PartialMeshTrial(load, (3 * each, 0, 0, 0), (0, rx, rx, rx), d,
                                port_names=self.names)

    def errored(self, case: ErroredCase, d: float) -> ErroredTrial:
        tx = round(1000 * d)
        return ErroredTrial(case, tx, 0, d)

    def congestion(self, load: float, d: float) -> CongestionTrial:
        half, full = round(load * d / 2), round(load * d)
        share = min(1.0, self.port_pps * d / (half + full))  # C drops its overload
        return CongestionTrial(load, d, StreamCounts("p0->p2", half, round(half * share)),
                               StreamCounts("p0->p3", half, half),
                               StreamCounts("p1->p2", full, round(full * share)),
                               pause_frames=0, port_names=self.names)

    def addresses(self, load: AddressLoad, _d: float) -> AddressTrial:
        count, learning_fps = load.count, load.learning_rate_fps
        learned = min(count, self.table) if learning_fps <= self.learn_fps else count // 2
        return AddressTrial(count, count, learned, count - learned,
                            learning_rate_fps=learning_fps, test_rate_fps=load.test_rate_fps)

    def broadcast(self, load: float, d: float) -> BroadcastTrial:
        tx = round(load * d)
        rx = min(tx, round(self.bcast_pps * d))
        latency = tuple(_latency(self.rng, rx, 4_000 + 500 * i, 1.5) for i in range(3))
        return BroadcastTrial(load, d, tx, (rx,) * 3, latency, port_names=self.names[1:])


_FULL_MESH = [(i, j) for i in range(4) for j in range(4) if i != j]


def _rfc2889() -> None:
    """Every RFC 2889 procedure on a 4-port fake switch, recorded as bench/rfc2889.py does."""
    switch, line = FakeSwitch(), 148_809.5  # 100 Mbit/s at 64 B
    timed = TrialSettings(duration_s=30.0)
    addresses = FunctionMeasurer(switch.addresses)
    for result in (
            fully_meshed(FunctionMeasurer(switch.mesh), ports=4, max_pps_per_port=line,
                         settings=timed, max_source="line_rate"),
            congestion_control(FunctionMeasurer(switch.congestion), load_pps_per_port=line,
                               settings=timed),
            address_caching_capacity(addresses, low=1024, high=16384),
            address_learning_rate(addresses, count=4096, max_rate_fps=line),
            broadcast_forwarding(FunctionMeasurer(switch.broadcast), ports=4, max_pps=line,
                                 settings=timed, max_source="line_rate"),
            partially_meshed(FunctionMeasurer(switch.one_to_many), direction="one_to_many",
                             ports=4, max_pps=line, settings=timed, max_source="line_rate"),
            maximum_forwarding_rate(FunctionMeasurer(switch.mesh), ports=4,
                                    loads=load_steps(line, 4), settings=timed,
                                    pressure="the ports leave the gap to their MAC (96 bits)"),
            errored_frame_filtering(FunctionMeasurer(switch.errored), cases=(
                ErroredCase("undersized", skipped_reason="the engine pads to 64 bytes"),
                ErroredCase("oversized", frame_size=1519),
                ErroredCase("bad_fcs", skipped_reason="the MAC computes the FCS")),
                settings=timed)):
        data = result.as_dict()
        meshes = {"rfc2889_fully_meshed": _FULL_MESH, "rfc2889_maximum_forwarding_rate":
                  _FULL_MESH, "rfc2889_partially_meshed": [(0, j) for j in (1, 2, 3)],
                  "rfc2889_congestion_control": [(0, 2), (0, 3), (1, 2)]}
        pairs = meshes.get(data["procedure"])
        sent = {} if pairs is None else {"traffic": {"streams": [  # the default UDP
            {"wire": f"p{i}->p{j}", "name": f"udp p{i}->p{j}", "kind": "udp", "share": 1.0,
             "mean_frame_size": 64.0} for i, j in pairs]}}
        record_measurement(data["procedure"], {**data, "frame_size": 64,
                                               "port_names": list(switch.names), **sent})


def _histogram(latency: dict[str, Any], result: LatencyResult) -> None:
    """The optional `histogram` field (non-empty buckets), as a future producer may add."""
    h = result.histogram
    used = np.flatnonzero(h.counts)
    latency["histogram"] = {"lower_ns": h.lower_ns[used].tolist(),
                            "upper_ns": h.upper_ns[used].tolist(),
                            "counts": h.counts[used].tolist()}


def build() -> dict[str, Any]:
    base = "tests/acceptance/test_edge.py::"
    tests = [_test(f"{base}test_rfc2544[{s}B]" if isinstance(s, int) else
                   f"{base}test_rfc2544[{s}]", _rfc2544_size(s), 41.5) for s in (64, 512, 1518)]
    tests.append(_test(f"{base}test_rfc2544[imix]", _rfc2544_size("imix"), 44.0))
    tests += [_test(f"{base}test_back_to_back", _back_to_back, 12.0),
              _test(f"{base}test_recovery", _recovery, 95.2),
              _test(f"{base}test_reset", _reset, 31.0),
              _test(f"{base}test_ndr_pdr", _ndr_pdr, 58.0),
              _test(f"{base}test_latency_under_load", _traffic_and_latency, 5.4),
              _test(f"{base}test_dut_health", _dut_health, 2.1),
              _test(f"{base}test_ecmp", _where_frames_land, 7.1),
              _test(f"{base}test_service_activation", _y1564, 105.0),
              _test(f"{base}test_switch_rfc2889", _rfc2889, 640.0),
              _test(f"{base}test_router_beyond_the_generator", _generator_bound, 4.2),
              _test(f"{base}test_line_rate_at_64B", _too_strict, 7.9)]
    capture = "netload-results/captures/tests_acceptance_test_edge.py_test_line_rate_at_64B.pcap"
    tests[-1]["captures"] = [capture]
    # the optional histogram on one record, so readers and the HDR plot use it
    lat = next(m for m in tests[0]["measurements"] if m["kind"] == "latency_rfc2544")
    _histogram(lat["latency"], _latency(np.random.default_rng(1), 12_000, 2_256, 30.0))
    doc = json_report.session_document(
        tests,
        topology={"name": "edge-1", "dut": {"name": "edge-1", "model": "ACME R-100",
                                            "firmware": "4.2.1", "serial": "R100-0042"},
                  "source": "lab/edge-1.toml", "line_rate_bps": LINE_RATE_BPS},
        settings={"topology": "lab/edge-1.toml", "backend": "af_packet",
                  "engine": "ssh=root@traffic-gen//python=python3", "trial_duration_s": None})
    doc["report_sections"] = [{"title": "DUT software", "plugin": "conftest.py",
                               "text": "ACME OS 4.2.1 (build 7731), config sha 3f2a9c1"}]
    doc["created"] = "2025-03-14T09:26:53+00:00"
    doc["package"]["version"] = "0.1.0"
    doc["host"] = {"hostname": "traffic-gen", "platform": "Linux-6.1.0-18-amd64-x86_64",
                   "python": "3.11.2", "cpus": 16}
    doc["environment"] = {
        "dpdk_version": "DPDK 22.11.5", "clock_source": "tsc-software", "tsc_hz": 2_500_000_000,
        "ports": [{"name": "p0", "device": "0000:3b:00.0", "driver": "net_ice"},
                  {"name": "p1", "device": "0000:3b:00.1", "driver": "net_ice"}]}
    # how the session ended: every collected test ran; one failed its verdict
    doc["session"] = {"exit_status": 1, "exit_status_name": "TESTS_FAILED",
                      "interrupted": False, "stop_reason": None, "collected": len(tests),
                      "ran": len(tests), "engine_crashes": []}
    return doc


def main() -> int:
    target = HERE / "results-full.json"
    target.write_text(json.dumps(build(), indent=1) + "\n")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
