"""Paged RX histograms (docs/latency.md): every value a stream's four histograms take
(latency, IPDV up and down, inter-arrival gaps) is either in a page or counted as
unrecorded, never lost or written wild; counts stay exact either way.

net_ring ports loop TX back to RX, so the expected additions are known: one latency per
frame (every frame is stamped), one gap per frame after the first, and one IPDV value per
consecutive pair."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from pytest_netload import errors
from pytest_netload.engine.client import Engine, Port
from pytest_netload.measure.results import StreamResult
from pytest_netload.traffic.packets import IPv4, UDP, Eth, field
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine host runs DPDK: needs root"),
]

T4 = (Eth() / IPv4() / UDP()).build()


def streams(n: int) -> list[Stream]:
    return [Stream(T4, size=64 + 32 * i, name=f"s{i}",
                   fields=[field(T4, "udp.sport", "random", min=1, max=60000)])
            for i in range(n)]


def recorded(s: StreamResult) -> int:
    hists = (s.latency, s.rx_gaps, s.ipdv_increase, s.ipdv_decrease)
    assert all(h is not None for h in hists), s
    return sum(h.total for h in hists if h is not None)


def expected_additions(s: StreamResult) -> int:
    return s.latency_samples + (s.rx_packets - 1) + s.ipdv_pairs  # the first frame has no gap


def test_interleaved_streams_fill_their_histograms_exactly(
        engine: Engine, ring: Callable[..., Port]) -> None:
    port = ring()
    loaded = [engine.load(port, s) for s in streams(4)]
    r = engine.run(loaded, [port], count=20_000, burst=7)  # odd bursts: runs cut mid-stream
    for s in r.streams:
        assert (s.tx_packets, s.rx_packets, s.lost, s.duplicates, s.reordered) == \
            (20_000, 20_000, 0, 0, 0), s
        assert s.latency_samples == 20_000 and s.ipdv_pairs == 19_999, s
        assert s.hist_unrecorded == 0, s
        assert recorded(s) == expected_additions(s), s
        lat = s.latency_result()
        assert s.latency_min_ns <= lat.percentile(50).value_ns <= s.latency_max_ns * 1.01


def test_a_thousand_streams_fill_their_histograms_exactly(
        engine: Engine, ring: Callable[..., Port]) -> None:
    """Additions wait in each RX queue's log and are applied in batches (rx_account.c
    netload_rx_hlog_apply): with 1,000 streams a batch spans many streams and pages, and the
    last one is applied when the worker ends the run. None may be lost, doubled or land in
    another stream."""
    port = ring()
    loaded = [engine.load(port, Stream(T4, size=64, name=f"s{i}")) for i in range(1000)]
    r = engine.run(loaded, [port], count=300)
    for s in r.streams:
        assert (s.rx_packets, s.lost, s.duplicates, s.reordered) == (300, 0, 0, 0), s
        assert s.hist_unrecorded == 0, s
        assert recorded(s) == expected_additions(s), s


def test_a_run_short_of_pages_counts_what_it_could_not_record(
        engine: Engine, ring: Callable[..., Port]) -> None:
    port = ring()
    loaded = [engine.load(port, s) for s in streams(3)]
    r = engine.run(loaded, [port], count=5_000, hist_pages=3)
    short = [s for s in r.streams if s.hist_unrecorded]
    assert short, "3 pages cannot hold 3 streams' 4 histograms each"
    for s in r.streams:
        assert (s.tx_packets, s.rx_packets, s.lost) == (5_000, 5_000, 0), s
        assert recorded(s) + s.hist_unrecorded == expected_additions(s), s
    with pytest.raises(errors.NetloadConfigError, match=rf"{short[0].name!r}.*values missed"):
        short[0].latency_result()
    assert short[0].latency_mean_ns is not None  # min/max/mean stay exact


@pytest.mark.parametrize("bad", [-1, 1.5, True, "4"])
def test_a_bad_page_count_is_refused_naming_it(
        engine: Engine, ring: Callable[..., Port], bad: object) -> None:
    port = ring()
    (s,) = streams(1)
    with pytest.raises(errors.NetloadConfigError, match=r"hist_pages=.*number of histogram pages"):
        engine.run([engine.load(port, s)], [port], count=10, hist_pages=bad)  # type: ignore[arg-type]
