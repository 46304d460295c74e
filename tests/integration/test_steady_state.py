"""Buffer-aware trials against a shaper with a deep queue, whose capacity is known.

A 60 ms queue lets a 2 s trial pass up to 3 % above the shaper's capacity without
losing a frame. The backlog at the end of traffic and the forwarding rate over the
trial show it, at two operating points. (With steady_state='fail' the RFC 2544 search
finds the capacity within 1 % with 2 s trials: test_rfc2544_duts.py, which holds no engine
of its own while its sessions run.)
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from calm import excuse_failure, machine_took_the_cpu

from pytest_netload.engine.client import Engine
from pytest_netload.rfc2544.trial import STEADY_BACKLOG_RATIO, TrialResult
from pytest_netload.bench.runner import EngineMeasurer
from pytest_netload.topology.builtin import build, shaper_capacity_pps
from pytest_netload.traffic.streams import flow_stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

QUEUE_S = 0.060
RETRIES = 2  # a trial whose generator lagged (a busy machine) is measured again


def _limits(rate_bps: int) -> dict[str, int]:
    burst = max(3028, rate_bps // 8 // 250)
    return {"burst_bytes": burst, "limit_bytes": int(rate_bps / 8 * QUEUE_S) + burst}


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with Engine() as e:
        yield e


def _calm(measurer: EngineMeasurer, load: float, seconds: float) -> TrialResult:
    """A valid trial whose generator kept its schedule within 2 ms and that lost nothing
    (both loads are within what the queue absorbs); a trial disturbed by a busy VM is
    measured again, and the last try is judged."""
    for _ in range(RETRIES + 1):
        trial = measurer.measure(load, seconds)
        run = measurer.engine.last_result
        assert run is not None
        if trial.valid and run.streams[0].tx_max_lag_ns < 2_000_000 and trial.lost == 0:
            return trial
    proof = machine_took_the_cpu(run) if run.streams[0].tx_max_lag_ns >= 2_000_000 else None
    if proof is not None:
        excuse_failure(f"no calm generator in {RETRIES + 1} trials ({proof})")
    return trial


@pytest.mark.parametrize(("rate_bps", "size"), [(10_000_000, 64), (50_000_000, 512)])
def test_backlog_and_forwarding_rate_against_a_known_capacity(engine: Engine, rate_bps: int,
                                                              size: int) -> None:
    capacity = shaper_capacity_pps(rate_bps, size)
    limits = _limits(rate_bps)
    with build("netns-shaped", neighbours="static", rate_bps=rate_bps, **limits) as built:
        flow = built.topology.flows()[0]
        tx, rx = engine.port(flow.tx.device), engine.port(flow.rx.device)
        try:
            stream = engine.load(tx, flow_stream(flow, size=size, name="steady"))
            m = EngineMeasurer(engine, stream, [rx], size, drain_s=0.5)
            m.measure(capacity * 0.5, 0.5)  # learning traffic
            below = _calm(m, capacity * 0.97, 2.0)
            above = _calm(m, capacity * 1.02, 2.0)
            stream.free()
        finally:
            tx.close()
            rx.close()
    print(f"{rate_bps / 1e6:g} Mbit/s, capacity {capacity:,.0f} pps: below {below.as_dict()}")
    print(f"above {above.as_dict()}")
    # below the capacity: nothing lost, nothing held, forwarding at the offered load
    assert below.lost == 0 and below.steady is True
    assert below.backlog_frames is not None and \
        below.backlog_frames <= STEADY_BACKLOG_RATIO * below.tx_packets
    assert below.forwarding_pps == pytest.approx(below.offered_pps, rel=0.01)
    # 2 % above: the queue hides it from the loss count (a 60 ms queue absorbs 2 % over
    # 2 s; a busy host's softirq delays may still drop a few), not from the backlog
    overload = (above.offered_pps - capacity) * above.duration_s
    assert above.lost < 0.25 * overload, "the queue absorbed most of the overload"
    assert above.steady is False
    # the TBF starts the trial with a full bucket (the load below refilled it): its
    # burst_bytes pass at once and never queue (49 frames at 512 B, 166 at 64 B)
    bucket_frames = limits["burst_bytes"] / (size - 4)
    assert above.backlog_frames == pytest.approx(overload - bucket_frames - above.lost, rel=0.25)
    assert above.forwarding_pps == pytest.approx(capacity, rel=0.01)
    assert above.buffer_s is not None and 0.02 < above.buffer_s <= QUEUE_S * 1.2
