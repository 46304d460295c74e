"""The Y.1564 service performance test against fake DUTs: availability, SAC over available
intervals, invalid intervals, and the checkpoint (a 24 h run resumed after a crash)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure.histogram import LogHistogram
from pytest_netload.measure.latency import LatencyResult
from pytest_netload.y1564 import (INTERVAL_S, SPT_DURATION_S, Service, ServiceSample,
                                  SptResult, availability, service_performance_test)

N_BUCKETS = 2560


def _lower(n: int = N_BUCKETS) -> np.ndarray:
    i = np.arange(n, dtype=np.uint64)
    k = np.maximum(i, 128) - 128
    return np.where(i < 128, i, (k % 64 + 64) << (k // 64 + 1)).astype(np.uint64)


LOWER = _lower()


def latency_of(values_ns: list[int], counts: list[int]) -> LatencyResult:
    hist = np.zeros(N_BUCKETS, dtype=np.uint64)
    for v, c in zip(values_ns, counts, strict=True):
        hist[int(np.searchsorted(LOWER, v, side="right")) - 1] += c
    return LatencyResult(LogHistogram(hist, LOWER), clock="fake", samples=int(hist.sum()),
                         jitter_ns=12.5, duplicates=0, reordered=0)


class Crash(RuntimeError):
    pass


class Dut:
    """A fake network over time: each service loses `loss` of its frames, and everything
    in [outage_start, outage_start + outage_s) (interval index); the generator fails the
    intervals in `invalid`; the delay grows by `drift_ns` per interval (so the merged
    latency depends on which intervals are available). Raises Crash at interval `crash_at`.
    """

    def __init__(self, services: list[Service], *, loss: float = 0.0, outage_start: int = -1,
                 outage_s: int = 0, invalid: frozenset[int] = frozenset(),
                 crash_at: int | None = None, drift_ns: int = 0,
                 outage_flr: float = 1.0, start: int = 0) -> None:
        self.sizes = {s.name: s.frame_size for s in services}
        self.loss, self.outage, self.invalid = loss, (outage_start, outage_s), invalid
        self.crash_at, self.drift, self.outage_flr = crash_at, drift_ns, outage_flr
        self.t = start  # the interval the next call measures (a resumed run starts later)
        self.cache: dict[tuple[str, int], LatencyResult] = {}

    def measure(self, loads_bps: Mapping[str, float],
                         duration_s: float) -> Mapping[str, ServiceSample]:
        t = self.t
        if t == self.crash_at:
            raise Crash(f"harness crashed at interval {t}")
        self.t += 1
        start, length = self.outage
        out = {}
        for k, (name, load) in enumerate(loads_bps.items()):
            size = self.sizes[name]
            tx = round(load * duration_s / (8 * size))
            if t in self.invalid:
                out[name] = ServiceSample(name, load, duration_s, size, tx, 0, valid=False,
                                          invalid_reason="RX drops on the generator's port")
                continue
            flr = self.outage_flr if start <= t < start + length else self.loss
            rx = tx - round(tx * flr)
            delay = 10_000 * (k + 1) + self.drift * t
            key = (name, delay) if rx else (name, -1)
            if rx and key not in self.cache:
                self.cache[key] = latency_of([delay, delay + 2_000], [99, 1])
            lat = self.cache[key] if rx else None
            out[name] = ServiceSample(name, load, duration_s, size, tx, rx, lat)
        return out


SERVICES = [
    Service("voice", cir="10Mbit/s", dscp=46, frame_size=128,
            sac={"flr": "0.1%", "ftd": "5ms", "fdv": "1ms", "availability": "99.9%"}),
    Service("video", cir="50Mbit/s", dscp=34, frame_size=1024,
            sac={"flr": "0.1%", "ftd": "10ms", "availability": "99.5%"}),
    Service("data", cir="100Mbit/s", eir="100Mbit/s", dscp=0, frame_size=1518,
            sac={"flr": "1%"}),
]


def test_a_default_spt_on_a_clean_dut_passes() -> None:
    calls: list[int] = []
    r = service_performance_test(Dut(SERVICES), SERVICES, on_interval=lambda i, s:
                                 calls.append(i))
    assert r.intervals == 900 == SPT_DURATION_S / INTERVAL_S and calls == list(range(900))
    assert r.passed and r.valid and r.failures() == []
    voice = r.service("voice")
    assert voice.availability.ratio == 1.0 and voice.flr == 0.0
    assert voice.ir_bps == pytest.approx(10e6, rel=1e-3)
    assert voice.ftd_s == pytest.approx(10.02e-6, rel=0.01)
    assert [c.name for c in voice.checks] == ["ir", "flr", "ftd", "fdv", "availability"]
    d = r.as_dict()
    json.dumps(d, allow_nan=False)
    assert d["procedure"] == "y1564_spt" and "available intervals only" in d["note"]
    sv = d["services"][0]
    assert set(sv["series"]) == {"flr", "ir_bps", "ftd_s", "fdv_s", "available", "valid"}
    assert len(sv["series"]["flr"]) == 900 and sv["availability"]["availability_ratio"] == 1.0
    assert set(sv) >= {"service", "flr", "ir_bps", "ftd_s", "fdv_s", "availability", "checks",
                       "passed", "latency", "invalid_intervals", "tx_frames", "rx_frames"}


def test_an_outage_of_k_seconds_costs_availability_and_only_that() -> None:
    r = service_performance_test(Dut(SERVICES, outage_start=100, outage_s=30), SERVICES,
                                 duration_s=600)
    voice = r.service("voice")
    assert voice.availability.unavailable == 30 and voice.availability.ratio == 570 / 600
    flags = voice.series["available"]
    assert flags[100:130] == (False,) * 30 and all(flags[:100]) and all(flags[130:])
    assert voice.flr == 0.0  # over the available intervals only
    assert not r.passed and "availability 95.00% fails >= 99.9%" in voice.reason
    assert r.service("data").passed  # no availability criterion


def test_an_outage_shorter_than_n_counts_as_loss_not_unavailability() -> None:
    r = service_performance_test(Dut(SERVICES, outage_start=100, outage_s=5), SERVICES,
                                 duration_s=300)
    voice = r.service("voice")
    assert voice.availability.ratio == 1.0
    assert voice.flr == pytest.approx(5 / 300, rel=1e-3) and voice.passed is False
    assert "FLR 1.667% fails <= 0.1%" in voice.reason


def test_partial_loss_below_the_ses_threshold_stays_available() -> None:
    r = service_performance_test(Dut(SERVICES, outage_start=0, outage_s=60, outage_flr=0.3),
                                 SERVICES, duration_s=60)
    assert r.service("voice").availability.ratio == 1.0
    assert r.service("voice").flr == pytest.approx(0.3, rel=1e-2)


def test_the_latency_of_unavailable_intervals_is_left_out() -> None:
    services = SERVICES[:1]
    dut = Dut(services, drift_ns=1_000, outage_start=20, outage_s=15, outage_flr=0.6)
    r = service_performance_test(dut, services, duration_s=60)
    voice = r.service("voice")
    flags = voice.series["available"]
    assert flags[20:35] == (False,) * 15
    parts = [latency_of([10_000 + 1_000 * t, 12_000 + 1_000 * t], [99, 1])
             for t in range(60) if flags[t]]
    merged = LatencyResult.merge(parts)
    assert voice.latency is not None and voice.latency.count == merged.count
    assert np.array_equal(voice.latency.histogram.counts, merged.histogram.counts)
    assert voice.ftd_s == merged.mean_ns / 1e9
    assert voice.latency.jitter_ns == merged.jitter_ns and voice.latency.clock == "fake"


def test_invalid_intervals_are_excluded_and_too_many_invalidate_the_run() -> None:
    few = frozenset(range(10, 15))
    r = service_performance_test(Dut(SERVICES, invalid=few), SERVICES, duration_s=100)
    voice = r.service("voice")
    assert voice.invalid_intervals == 5 and r.valid and r.passed
    assert voice.series["valid"][10:15] == (False,) * 5
    assert voice.series["available"][10:15] == (None,) * 5
    assert voice.series["flr"][10] is None and voice.availability.excluded == 5
    many = frozenset(range(0, 100, 5))
    r = service_performance_test(Dut(SERVICES, invalid=many), SERVICES, duration_s=100)
    assert not r.valid and not r.passed and r.invalid_ratio == 0.2
    assert "the run is not valid: 20.0% of the intervals were invalid" in r.failures()[0]


def test_a_lossy_dut_fails_flr() -> None:
    r = service_performance_test(Dut(SERVICES, loss=0.002), SERVICES, duration_s=30)
    assert r.service("voice").passed is False and r.service("data").passed is True


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"duration_s": 0}, "duration_s"), ({"duration_s": 10.5}, "whole number of intervals"),
    ({"duration_s": 100_000}, "duration_s"), ({"interval_s": -1}, "interval_s"),
    ({"availability_threshold": 1.5}, "availability_threshold=1.5"),
    ({"availability_n": 0}, "availability_n=0"), ({"fdv_quantile": 0}, "fdv_quantile"),
    ({"ir_tolerance": 2}, "ir_tolerance"), ({"resume": "yes"}, "resume='yes'"),
    ({"resume": True}, "resume=True needs checkpoint"),
    ({"checkpoint_every_s": 0}, "checkpoint_every_s"),
])
def test_bad_parameters_name_themselves(kwargs: dict[str, object], word: str) -> None:
    with pytest.raises(NetloadConfigError, match=word):
        service_performance_test(Dut(SERVICES), SERVICES, **kwargs)  # type: ignore[arg-type]


def test_services_are_checked_together() -> None:
    with pytest.raises(NetloadConfigError, match="'a' and 'b' overlap"):
        service_performance_test(Dut(SERVICES), [{"name": "a", "cir": "1Mbit/s"},
                                                 {"name": "b", "cir": "1Mbit/s"}])
    with pytest.raises(NetloadConfigError, match="CIRs add up to"):
        service_performance_test(Dut(SERVICES), [{"name": "a", "cir": "60Mbit/s", "vlan": 1},
                                                 {"name": "b", "cir": "60Mbit/s", "vlan": 2}],
                                 line_rate_bps=100e6)


# ---- checkpoint ------------------------------------------------------------------------


def test_an_existing_checkpoint_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "spt.jsonl"
    service_performance_test(Dut(SERVICES), SERVICES, duration_s=20, checkpoint=path)
    before = path.read_bytes()
    with pytest.raises(NetloadConfigError, match=r"checkpoint '.*spt.jsonl' exists.*resume=True"):
        service_performance_test(Dut(SERVICES), SERVICES, duration_s=20, checkpoint=path)
    assert path.read_bytes() == before
    lines = [json.loads(x) for x in before.decode().splitlines()]
    assert [x["type"] for x in lines[:3]] == ["header", "layout", "interval"]
    assert len(lines) == 22 and lines[0]["parameters"]["duration_s"] == 20


def test_a_checkpoint_of_another_run_is_refused_saying_what_differs(tmp_path: Path) -> None:
    path = tmp_path / "spt.jsonl"
    with pytest.raises(Crash):
        service_performance_test(Dut(SERVICES, crash_at=5), SERVICES, duration_s=20,
                                 checkpoint=path)
    with pytest.raises(NetloadConfigError, match=r"another run: duration_s=20.0 \(this run: "
                                                 r"30.0\); delete the file, or pass resume"):
        service_performance_test(Dut(SERVICES), SERVICES, duration_s=30, checkpoint=path,
                                 resume=True)
    other = [SERVICES[0], Service("video", cir="60Mbit/s", dscp=34, frame_size=1024),
             SERVICES[2]]
    with pytest.raises(NetloadConfigError, match=r"service 'video' cir_bps=50000000.0 \(this "
                                                 r"run: 60000000.0\)"):
        service_performance_test(Dut(other), other, duration_s=20, checkpoint=path,
                                 resume=True)
    with pytest.raises(NetloadConfigError, match=r"services \['voice', 'video', 'data'\]"):
        service_performance_test(Dut(SERVICES[:1]), SERVICES[:1], duration_s=20,
                                 checkpoint=path, resume=True)


def test_resume_without_a_file_starts_a_run(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    r = service_performance_test(Dut(SERVICES), SERVICES, duration_s=10, checkpoint=path,
                                 resume=True)
    assert r.resumed_intervals == 0 and path.exists()


@settings(max_examples=15, deadline=None)
@given(crash_at=st.integers(0, 59), cut=st.integers(0, 200), every=st.sampled_from([1, 7, 100]))
def test_resume_after_a_crash_gives_the_uninterrupted_result(tmp_path_factory: pytest.
                                                             TempPathFactory, crash_at: int,
                                                             cut: int, every: int) -> None:
    path = tmp_path_factory.mktemp("ckpt") / "spt.jsonl"
    kw = {"duration_s": 60, "availability_n": 5}
    model = {"outage_start": 20, "outage_s": 12, "drift_ns": 500, "invalid": frozenset({3, 40})}
    whole = service_performance_test(Dut(SERVICES, **model), SERVICES, **kw)
    with pytest.raises(Crash):
        service_performance_test(Dut(SERVICES, crash_at=crash_at, **model), SERVICES,
                                 checkpoint=path, checkpoint_every_s=every, **kw)
    data = path.read_bytes()
    path.write_bytes(data[:max(len(data) - cut, 0)])  # a crash may cut the last line short
    kept = _intervals_in(path)
    assert kept >= min(crash_at, 60) - every - 2  # at most `every` intervals lost, and the cut
    dut = Dut(SERVICES, start=kept, **model)
    resumed = service_performance_test(dut, SERVICES, checkpoint=path, resume=True,
                                       checkpoint_every_s=every, **kw)
    assert resumed.resumed_intervals == kept and dut.t == 60  # only the rest was measured
    a, b = whole.as_dict(), resumed.as_dict()
    a.pop("resumed_intervals"), b.pop("resumed_intervals")
    assert a == b
    lines = path.read_text().splitlines()
    assert [json.loads(x)["i"] for x in lines if '"interval"' in x] == list(range(60))


def _intervals_in(path: Path) -> int:
    """Complete interval lines of a checkpoint (what a resume reads back)."""
    return sum(1 for line in path.read_bytes().split(b"\n")[:-1] if b'"interval"' in line)


def _day(tmp_path: Path | None, crash_at: int | None = None, resume: bool = False,
         start: int = 0) -> SptResult:
    """The simulated day; checkpointed under `tmp_path` (None: not checkpointed)."""
    model = {"outage_start": 50_000, "outage_s": 120, "invalid": frozenset({7, 70_000})}
    return service_performance_test(Dut(SERVICES, crash_at=crash_at, start=start, **model),
                                    SERVICES, duration_s=86_400,
                                    checkpoint=None if tmp_path is None else
                                    tmp_path / "day.jsonl", resume=resume)


def test_a_24h_run_with_checkpointing_resumes_after_a_crash(tmp_path: Path) -> None:
    whole = _day(None)  # the uninterrupted day the resumed one must equal
    voice = whole.service("voice")
    assert whole.intervals == 86_400 and voice.availability.unavailable == 120
    assert voice.availability.excluded == 2 and voice.availability.ratio == pytest.approx(
        1 - 120 / 86_398)
    assert voice.series["available"][50_000:50_120] == (False,) * 120
    t0 = time.perf_counter()
    with pytest.raises(Crash):
        _day(tmp_path, crash_at=60_001)
    size = (tmp_path / "day.jsonl").stat().st_size
    print(f"\ncheckpointed 60,001 intervals, 3 services: {time.perf_counter() - t0:.1f} s, "
          f"{size / 1e6:.1f} MB")
    t0 = time.perf_counter()
    assert _intervals_in(tmp_path / "day.jsonl") == 60_001  # the crash closed it cleanly
    resumed = _day(tmp_path, resume=True, start=60_001)
    resumed_s = time.perf_counter() - t0
    print(f"resume (60,001 intervals read back, 26,399 measured): {resumed_s:.1f} s")
    assert resumed_s < 60
    assert resumed.resumed_intervals == 60_001
    a, b = whole.as_dict(), resumed.as_dict()
    a.pop("resumed_intervals"), b.pop("resumed_intervals")
    assert a == b
    assert availability([None if v is None else (0.0 if v else 1.0)
                         for v in voice.series["available"]]).flags == \
        voice.series["available"]


def test_a_damaged_checkpoint_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "spt.jsonl"
    service_performance_test(Dut(SERVICES), SERVICES, duration_s=10, checkpoint=path)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:3] + ["{not json\n"] + lines[4:6]))
    with pytest.raises(NetloadConfigError, match=r"line 4 is not JSON; the file is damaged"):
        service_performance_test(Dut(SERVICES), SERVICES, duration_s=10, checkpoint=path,
                                 resume=True)
    path.write_text("".join(lines[:3] + lines[4:6]))
    with pytest.raises(NetloadConfigError, match=r"interval 2 follows 0"):
        service_performance_test(Dut(SERVICES), SERVICES, duration_s=10, checkpoint=path,
                                 resume=True)
    path.write_text('{"type": "other"}\n')
    with pytest.raises(NetloadConfigError, match=r"does not start with a netload-y1564-spt"):
        service_performance_test(Dut(SERVICES), SERVICES, duration_s=10, checkpoint=path,
                                 resume=True)


def test_a_sample_checks_its_counts_and_reads_its_figures() -> None:
    lat = latency_of([10_000, 12_000], [99, 1])
    s = ServiceSample("v", 1e6, 1.0, 128, 1000, 990, lat)
    assert (s.lost, s.flr, s.ir_bps) == (10, 0.01, 990 * 128 * 8)
    assert s.ftd_s == lat.mean_ns / 1e9
    assert s.fdv_s(99.9) == (lat.percentile(99.9).value_ns - lat.min_ns) / 1e9
    assert s.fdv_s(100) == (lat.max_ns - lat.min_ns) / 1e9
    assert ServiceSample("v", 1e6, 1.0, 128, 0, 0).flr == 0.0
    for bad in ({"tx_frames": -1}, {"rx_frames": 1.5}, {"duration_s": 0},
                {"offered_bps": float("nan")}):
        args = {"service": "v", "offered_bps": 1e6, "duration_s": 1.0, "frame_size": 128,
                "tx_frames": 1, "rx_frames": 1, **bad}
        with pytest.raises(NetloadConfigError, match=f"service 'v': sample {next(iter(bad))}"):
            ServiceSample(**args)  # type: ignore[arg-type]
