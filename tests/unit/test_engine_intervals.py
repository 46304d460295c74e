"""A run counted in intervals: the snapshot arithmetic (cumulative snapshots into
per-interval differences, TX queue parts summed, lost snapshots marked), the fake
engine's model of it, and the Y.1564 SPT measuring all its intervals in one run."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.engine.client import Engine, Tx
from pytest_netload.engine.fake import FakeDut
from pytest_netload.engine.intervals import FIELDS, Intervals, pack
from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology.fake import fake_topology
from pytest_netload.traffic.patterns import CBR
from pytest_netload.traffic.streams import udp
from pytest_netload.units import Rate
from pytest_netload.y1564 import Service, ServiceSample, service_performance_test

BUCKETS = 8
LOWER = np.arange(BUCKETS, dtype=np.uint64)


def _cumulative(steps: np.ndarray) -> np.ndarray:
    return np.cumsum(steps, axis=0).astype(np.uint64)


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[int], np.ndarray, np.ndarray, list[list[bool]]]:
    """Parts per stream, per-interval increments of every native entry's counters and
    histograms, and which snapshots were lost."""
    parts = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    entries, n = sum(parts), draw(st.integers(1, 8))
    counts = st.integers(0, 10_000)
    stats = np.array(draw(st.lists(st.lists(st.lists(counts, min_size=len(FIELDS),
                                                     max_size=len(FIELDS)),
                                            min_size=entries, max_size=entries),
                                   min_size=n, max_size=n)), dtype=np.uint64)
    hist = np.array(draw(st.lists(st.lists(st.lists(counts, min_size=BUCKETS,
                                                    max_size=BUCKETS),
                                           min_size=entries, max_size=entries),
                                  min_size=n, max_size=n)), dtype=np.uint64)
    lost = draw(st.lists(st.lists(st.booleans(), min_size=entries, max_size=entries),
                         min_size=n, max_size=n))
    lost[-1] = [False] * entries  # the last one is the run's end state: never lost
    return parts, stats, hist, lost


@settings(max_examples=200, deadline=None)
@given(runs())
def test_intervals_are_the_differences_of_the_snapshots(
        run: tuple[list[int], np.ndarray, np.ndarray, list[list[bool]]]) -> None:
    parts, steps, hsteps, lost = run
    cum, hcum = _cumulative(steps), _cumulative(hsteps)
    decoder = Intervals(parts)
    bounds = np.cumsum([0, *parts])
    got = [decoder.add(pack(k, lost[k], cum[k], hcum[k], LOWER if k == 0 else None))
           for k in range(len(cum))]
    for k, iv in enumerate(got):
        assert iv.index == k and (iv.latency_lower_ns == LOWER).all()
        for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
            bad = any(lost[k][lo:hi]) or (k > 0 and any(lost[k - 1][lo:hi]))
            assert iv.valid[i] is (not bad)
            if bad:
                continue
            # a valid interval: exactly what arrived in it, its parts summed
            want = steps[k, lo:hi].sum(axis=0)
            for name in ("tx_packets", "rx_packets", "rx_bytes", "duplicates",
                         "latency_samples"):
                assert int(getattr(iv, name)[i]) == int(want[FIELDS.index(name)])
            assert (iv.latency_hist[i] == hsteps[k, lo:hi].sum(axis=0)).all()
            assert int(iv.rx_unique[i]) == max(int(want[1]) - int(want[3]), 0)
    # with nothing lost, the intervals add up to the run's totals
    if not any(any(x) for x in lost):
        for name in ("tx_packets", "rx_packets"):
            total = sum(getattr(iv, name) for iv in got)
            want = [int(cum[-1, lo:hi, FIELDS.index(name)].sum())
                    for lo, hi in zip(bounds[:-1], bounds[1:])]
            assert [int(x) for x in total] == want


def test_snapshots_out_of_order_are_refused() -> None:
    decoder = Intervals([1])
    one = np.zeros((1, len(FIELDS)), dtype=np.uint64)
    h = np.zeros((1, BUCKETS), dtype=np.uint64)
    with pytest.raises(ValueError, match="in order"):
        decoder.add(pack(1, [False], one, h, LOWER))


TOPOLOGY = fake_topology(10e9)
FLOW = TOPOLOGY.flows()[0]


def _engine_run(interval_s: float, seconds: float = 4.0, pps: float = 20_000.0,
                on_interval: Callable[..., None] | None = None):  # noqa: ANN202
    with Engine(fake=FakeDut(capacity_pps=1e6, delay_s=50e-6, jitter_s=5e-6)) as engine:
        tx, rx = engine.port("net_fake0"), engine.port("net_fake1")
        stream = engine.load(tx, udp(size=128, name="s").for_flow(FLOW))
        phases = tuple(CBR().phases(lambda _r: pps, Rate(pps, "pps"), seed=1))
        return engine.run([Tx(stream, 0, phases)], [rx], duration_s=seconds,
                          interval_s=interval_s, on_interval=on_interval)


def test_the_fake_engine_counts_a_run_in_intervals() -> None:
    got: list = []
    whole = _engine_run(1.0, on_interval=got.append).streams[0]
    assert [iv.index for iv in got] == [0, 1, 2, 3]
    assert sum(int(iv.tx_packets[0]) for iv in got) == whole.tx_packets
    assert sum(int(iv.rx_packets[0]) for iv in got) == whole.rx_packets
    assert sum(int(iv.latency_hist[0].sum()) for iv in got) <= whole.latency_samples
    for iv in got:
        assert iv.valid == (True,)
        assert int(iv.tx_packets[0]) == pytest.approx(20_000, abs=2)
    for a, b in zip(got, got[1:]):  # arrivals follow each other: a frame time apart
        assert 0 < int(b.first_rx_ns[0]) - int(a.last_rx_ns[0]) < 1e9 / 20_000 * 2


@pytest.mark.parametrize(("interval_s", "seconds", "word"),
                         [(0.3, 1.0, "whole number"), (0.001, 1.0, "10 ms"),
                          (1.0, 0.0, "duration_s")])
def test_bad_intervals_name_themselves(interval_s: float, seconds: float, word: str) -> None:
    with pytest.raises(NetloadConfigError, match=word):
        _engine_run(interval_s, seconds)


class ContinuousDut:
    """A measurer with measure_intervals: all intervals from one call, in order, of a
    DUT that loses `loss`; raises RuntimeError after `crash_after` intervals."""

    def __init__(self, sizes: Mapping[str, int], loss: float = 0.0,
                 crash_after: int | None = None) -> None:
        self.sizes, self.loss, self.crash_after = sizes, loss, crash_after
        self.calls: list[int] = []

    def measure(self, loads: Mapping[str, float], duration_s: float) -> dict[str, ServiceSample]:
        raise AssertionError("a continuous measurer is never asked one interval at a time")

    def measure_intervals(self, loads: Mapping[str, float], interval_s: float, count: int,
                          on_interval: Callable[[Mapping[str, ServiceSample]], None]) -> None:
        self.calls.append(count)
        for k in range(count):
            if self.crash_after is not None and k == self.crash_after:
                raise RuntimeError("the harness crashed")
            out = {}
            for name, bps in loads.items():
                size = self.sizes[name]
                tx = round(bps * interval_s / (8 * size))
                out[name] = ServiceSample(name, bps, interval_s, size, tx,
                                          tx - round(tx * self.loss))
            on_interval(out)


SERVICES = [Service("data", cir="10Mbit/s", frame_size=512, sac={"flr": "0.1%"})]


def test_the_spt_measures_all_its_intervals_in_one_call() -> None:
    dut = ContinuousDut({"data": 512})
    result = service_performance_test(dut, SERVICES, duration_s=30, interval_s=1)
    assert dut.calls == [30] and result.intervals == 30 and result.passed


def test_a_crash_mid_run_loses_at_most_checkpoint_every(tmp_path: Path) -> None:
    path = tmp_path / "spt.jsonl"
    crashing = ContinuousDut({"data": 512}, crash_after=17)
    with pytest.raises(RuntimeError, match="crashed"):
        service_performance_test(crashing, SERVICES, duration_s=30, interval_s=1,
                                 checkpoint=path, checkpoint_every_s=5)
    lines = sum('"interval"' in line for line in path.read_text().splitlines())
    assert 17 - 5 < lines <= 17  # intervals 0..16 measured: at most 5 s lost
    resumed = ContinuousDut({"data": 512})
    result = service_performance_test(resumed, SERVICES, duration_s=30, interval_s=1,
                                      checkpoint=path, resume=True, checkpoint_every_s=5)
    assert resumed.calls == [30 - lines] and result.resumed_intervals == lines
    assert result.intervals == 30 and result.passed
    fresh = service_performance_test(ContinuousDut({"data": 512}), SERVICES, duration_s=30,
                                     interval_s=1)
    assert result.service("data").as_dict() == fresh.service("data").as_dict()


def test_a_measurer_that_gives_too_few_intervals_is_refused() -> None:
    class Short(ContinuousDut):
        def measure_intervals(self, loads, interval_s, count, on_interval):  # noqa: ANN001,ANN202
            super().measure_intervals(loads, interval_s, count - 1, on_interval)

    with pytest.raises(NetloadConfigError, match="gave 4 of the 5"):
        service_performance_test(Short({"data": 512}), SERVICES, duration_s=5, interval_s=1)


def test_a_24_hour_spt_is_one_call_of_86400_intervals() -> None:
    """Y.1564's longest SPT, 24 h in 1-s intervals: one measurer call, every interval
    counted (a run per interval would have paused 86,400 times)."""
    dut = ContinuousDut({"data": 512})
    result = service_performance_test(dut, SERVICES, duration_s=86_400, interval_s=1)
    assert dut.calls == [86_400] and result.intervals == 86_400 and result.passed


def test_the_default_15_minute_spt_run_splits_exactly_into_its_intervals() -> None:
    """The SPT's default, 15 min in 1-s intervals, as one fake-engine run: 900 intervals,
    in order, whose counts add up to the run's."""
    got: list = []
    whole = _engine_run(1.0, 900.0, on_interval=got.append).streams[0]
    assert [iv.index for iv in got] == list(range(900))
    assert sum(int(iv.tx_packets[0]) for iv in got) == whole.tx_packets
    assert sum(int(iv.rx_packets[0]) for iv in got) == whole.rx_packets
    assert all(iv.valid == (True,) for iv in got)
