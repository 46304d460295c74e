"""The reference DUT: a delay line in the worker loop gives latencies a meter can be checked on."""

from __future__ import annotations

import os

import numpy as np
import pytest
from scipy import stats

from pytest_netload import UDP, Engine, Eth, IPv4, NetloadConfigError, Rate, Stream
from pytest_netload.bench.reference import ReferenceDut
from pytest_netload.engine.client import Tx
from pytest_netload.traffic.patterns import CBR

from calm import calm_run

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine needs root (run as root or in CI)"),
]

TMPL = (Eth() / IPv4() / UDP()).build()


def paced(stream, pps: float) -> Tx:  # type: ignore[no-untyped-def]
    return Tx(stream, 0, tuple(CBR().phases(lambda r: pps, Rate(pps, "pps"), seed=1)))


def exact_latencies(result) -> np.ndarray:  # type: ignore[no-untyped-def]
    s = result.streams[0]
    return (s.sample_rx_ns.astype(np.int64) - s.sample_tx_ns.astype(np.int64)).astype(float)


def test_delay_line_adds_its_delay(engine: Engine) -> None:
    with ReferenceDut(engine, "100us") as dut:
        stream = engine.load(dut.ingress, Stream(TMPL, size=64, name="ref"))
        # 5000 frames in 0.5 s need a generator that kept its schedule (calm.py)
        r = calm_run(lambda: engine.run([paced(stream, 10_000)], [dut.egress], duration_s=0.5,
                                        forward=[dut.forward], timing_samples=5000))
    s = r.streams[0]
    assert s.tx_packets == s.rx_packets == 5000 and s.lost == 0
    assert r.forwarders == [{"received": 5000, "forwarded": 5000, "dropped": 0,
                             "overflow": 0, "max_held": r.forwarders[0]["max_held"]}]
    lat = exact_latencies(r)
    assert lat.min() >= 100_000  # never before its release time
    assert 100_000 <= np.median(lat) <= 110_000  # loose: this VM stalls now and then
    assert s.latency is not None and s.latency.total == 5000


def test_delay_line_jitter_and_loss(engine: Engine) -> None:
    with ReferenceDut(engine, "50us", jitter=stats.uniform(0, 20e-6), loss=0.1,
                      seed=7) as dut:
        stream = engine.load(dut.ingress, Stream(TMPL, size=64, name="lossy"))
        r = engine.run([paced(stream, 20_000)], [dut.egress], duration_s=0.5,
                       forward=[dut.forward], timing_samples=10_000)
    s, fw = r.streams[0], r.forwarders[0]
    assert fw["received"] == s.tx_packets
    assert s.lost == fw["dropped"] > 0
    assert abs(fw["dropped"] / fw["received"] - 0.1) < 0.02
    lat = exact_latencies(r)
    assert lat.min() >= 50_000
    assert np.percentile(lat, 90) >= 60_000  # the jitter spreads the delays over 50..70 us
    assert s.reordered == 0  # a delay line never reorders


def test_bad_reference_settings_name_the_value(engine: Engine) -> None:
    with pytest.raises(NetloadConfigError, match="loss 1.5"):
        ReferenceDut(engine, "10us", loss=1.5)
    with pytest.raises(NetloadConfigError, match="jitter"):
        ReferenceDut(engine, "10us", jitter=[-1e-6])
    with pytest.raises(NetloadConfigError, match="delay"):
        ReferenceDut(engine, "soon")
