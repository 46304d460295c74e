"""Per-packet latency in C: histogram, RFC 3550 jitter, RFC 5481 IPDV, every-Nth stamping."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from pytest_netload import UDP, Engine, Eth, IPv4, Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine needs root (run as root or in CI)"),
]

TMPL = (Eth() / IPv4() / UDP()).build()


def test_every_packet_stamped_fills_the_histogram(engine: Engine) -> None:
    port = engine.port("net_ring_lat0")
    try:
        stream = engine.load(port, Stream(TMPL, size=64, name="all"))
        s = engine.run([stream], [port], count=50_000).streams[0]
    finally:
        port.close()
    assert s.rx_packets == s.latency_samples == 50_000
    assert s.latency is not None and s.latency.total == 50_000
    assert s.latency.min_ns <= s.latency_min_ns <= s.latency_max_ns <= s.latency.max_ns
    assert s.latency_min_ns <= s.latency_mean_ns <= s.latency_max_ns  # type: ignore[operator]
    assert abs(s.latency.mean_ns - s.latency_mean_ns) <= s.latency_mean_ns / 32  # type: ignore[operator]
    # In order and nothing lost: every arrival but the first pairs with its predecessor.
    assert s.ipdv_pairs == 49_999
    assert s.ipdv_increase is not None and s.ipdv_decrease is not None
    assert s.ipdv_increase.total + s.ipdv_decrease.total == 49_999
    assert 0 <= s.jitter_ns <= s.latency_max_ns


def test_every_nth_stamp_measures_only_those(engine: Engine) -> None:
    port = engine.port("net_ring_lat1")
    try:
        stream = engine.load(port, Stream(TMPL, size=64, name="tenth", stamp_every=10))
        s = engine.run([stream], [port], count=10_001).streams[0]
    finally:
        port.close()
    assert s.rx_packets == 10_001 and s.lost == 0
    assert s.latency_samples == math.ceil(10_001 / 10)
    assert s.latency is not None and s.latency.total == s.latency_samples
    assert s.ipdv_pairs == 0  # consecutive sequence numbers are never both stamped


def test_histogram_quantiles_agree_with_timing_samples(engine: Engine) -> None:
    port = engine.port("net_ring_lat2")
    try:
        stream = engine.load(port, Stream(TMPL, size=64, name="sampled"))
        r = engine.run([stream], [port], count=20_000, timing_samples=20_000)
    finally:
        port.close()
    s = r.streams[0]
    assert s.sample_tx_ns is not None and s.sample_rx_ns is not None
    raw = (s.sample_rx_ns.astype(np.int64) - s.sample_tx_ns.astype(np.int64)).astype(float)
    assert s.latency is not None
    for q in (0.5, 0.9, 0.99):
        exact = float(np.quantile(raw, q, method="inverted_cdf"))
        # Bucket width <= 1/64 of the value; the TSC to ns rounding adds a few ns.
        assert abs(s.latency.quantile_ns(q) - exact) <= exact / 64 + 4, (q, exact)


def test_latency_result_reports_percentiles_with_cis(engine: Engine) -> None:
    port = engine.port("net_ring_lat3")
    try:
        stream = engine.load(port, Stream(TMPL, size=64, name="pct"))
        r = engine.run([stream], [port], count=20_000, timing_samples=20_000)
    finally:
        port.close()
    lat = r.streams[0].latency_result()
    assert lat.clock == "tsc-software" and lat.resolution_ns is not None and lat.count == 20_000
    p50, p99 = lat.percentile(50), lat.percentile(99)
    assert p50.ci_low_ns <= p50.value_ns <= p50.ci_high_ns <= p99.ci_high_ns
    assert "p50" in str(lat) and "tsc-software" in str(lat)
    assert len(lat.ipdv_values_ns()) == 19_999


def test_hardware_clock_on_a_vdev_is_refused_naming_the_port(engine: Engine) -> None:
    from pytest_netload import NetloadConfigError, NetloadEnvironmentError

    port = engine.port("net_ring_lat4")
    try:
        with pytest.raises(NetloadEnvironmentError, match="no hardware timestamping.*clock='tsc'"):
            engine.load(port, Stream(TMPL), clock="hardware")
        with pytest.raises(NetloadConfigError, match="clock 'sundial'"):
            engine.load(port, Stream(TMPL), clock="sundial")
        assert engine.load(port, Stream(TMPL), clock="tsc").stream_id >= 0
    finally:
        port.close()


def test_hardware_timestamps_are_detected_and_auto_falls_back_to_tsc(engine: Engine) -> None:
    """No software PMD has RX timestamp offload: "auto" (the default) must open
    the port without it, time the stream on the TSC and say so in the result;
    asking for it outright fails naming the port and the way out."""
    from pytest_netload import NetloadConfigError, NetloadEnvironmentError

    with pytest.raises(NetloadEnvironmentError, match="net_ring_lat5.*no RX timestamp offload.*TSC"):
        engine.port("net_ring_lat5", hw_timestamps=True)
    with pytest.raises(NetloadConfigError, match="hw_timestamps='yes'.*'auto'"):
        engine.port("net_ring_lat5", hw_timestamps="yes")
    port = engine.port("net_ring_lat5")
    try:
        assert port.info["hw_timestamps"] is False and port.info["nic_clock_hz"] == 0
        assert port.info["has_read_clock"] is False
        stream = engine.load(port, Stream(TMPL))
        assert stream.clock == "auto"
        r = engine.run([stream], rx=[port], count=1000)
        s = r.streams[0]
        assert s.clock == "tsc-software" and s.hw_stamp_missing == 0
        assert s.latency_result().clock == "tsc-software"
        assert s.clock_resolution_ns == pytest.approx(s.tsc_resolution_ns)
    finally:
        port.close()


def test_latency_over_a_veth_loopback(engine: Engine) -> None:
    from pytest_netload import flow_stream
    from pytest_netload.topology.builtin import build

    with build("loopback", backend="af_packet") as built:
        flow = built.topology.flows()[0]
        tx = engine.port(str(flow.tx.device))
        rx = engine.port(str(flow.rx.device))
        try:
            stream = engine.load(tx, flow_stream(flow, size=128))
            r = engine.run([stream], [rx], count=5000)
        finally:
            tx.close()
            rx.close()
    s = r.streams[0]
    assert s.lost == 0 and s.latency_samples == 5000
    lat = s.latency_result()
    assert 0 < lat.percentile(50).value_ns < lat.percentile(99.9).ci_high_ns
    assert s.jitter_ns > 0 and s.ipdv_pairs == 4999


@pytest.mark.parametrize("digits, width", [(1, 1 / 16), (2, 1 / 128), (3, 1 / 1024)])
def test_latency_digits_set_the_histogram_precision(engine: Engine, digits: int,
                                                    width: float) -> None:
    port = engine.port(f"net_ring_dig{digits}")
    try:
        stream = engine.load(port, Stream(TMPL, size=64, name=f"d{digits}"))
        r = engine.run([stream], [port], count=10_000, timing_samples=10_000,
                       latency_digits=digits)
    finally:
        port.close()
    s = r.streams[0]
    assert s.latency is not None and s.latency.total == 10_000
    exact = (s.sample_rx_ns.astype(np.int64) - s.sample_tx_ns.astype(np.int64)).astype(float)  # type: ignore[union-attr]
    for q in (0.5, 0.99):
        true = float(np.quantile(exact, q, method="inverted_cdf"))
        assert abs(s.latency.quantile_ns(q) - true) <= true * width + 2, (digits, q)


def test_bad_latency_digits_are_refused(engine: Engine) -> None:
    from pytest_netload import NetloadConfigError

    port = engine.port("net_ring_dig_bad")
    try:
        stream = engine.load(port, Stream(TMPL))
        for bad in (0, 4, 2.5):
            with pytest.raises(NetloadConfigError, match="latency_digits"):
                engine.run([stream], [port], count=10, latency_digits=bad)  # type: ignore[arg-type]
    finally:
        port.close()


def test_histograms_merge_across_runs(engine: Engine) -> None:
    from pytest_netload import NetloadConfigError

    port = engine.port("net_ring_merge")
    try:
        stream = engine.load(port, Stream(TMPL, size=64, name="m"))
        a = engine.run([stream], [port], count=3000).streams[0].latency
        b = engine.run([stream], [port], count=2000).streams[0].latency
        c = engine.run([stream], [port], count=10, latency_digits=3).streams[0].latency
    finally:
        port.close()
    assert a is not None and b is not None and c is not None
    both = a.merge(b)
    assert both.total == 5000
    assert min(a.min_ns, b.min_ns) == both.min_ns and max(a.max_ns, b.max_ns) == both.max_ns
    with pytest.raises(NetloadConfigError, match="same latency_digits"):
        a.merge(c)
