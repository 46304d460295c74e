"""Trial validity: a trial the generator failed (no frames, a lag that could flip the
verdict, its own link down) is invalid, and an invalid figure never passes."""

from __future__ import annotations

import re
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from pytest_netload.bench.lanes import Lane
from pytest_netload.bench.runner import EngineMeasurer
from pytest_netload.bench.validity import (
    LAG_SLACK_FRAMES,
    MIN_TRIAL_S,
    BurstLimit,
    generator_failure,
    lag_bound_ns,
    late_burst_reason,
    link_reason,
    timed_lag_bound_ns,
    trial_seconds,
)
from pytest_netload.errors import InvalidTrial, NetloadConfigError
from pytest_netload.measure.results import RunResult, StreamResult
from pytest_netload.rfc2544 import binary_search
from pytest_netload.search import FunctionMeasurer, TrialSettings
from pytest_netload.topology.builtin.shaped import SHAPER_RATE_BPS, default_bucket

PPS = 300_000.0


def stream(tx: int, rx: int | None = None, *, lag_ns: int = 0, span_s: float = 1.0,
           **kw: Any) -> StreamResult:
    rx = tx if rx is None else rx
    return StreamResult(
        name="s", stream_id=0, tx_packets=tx, tx_bytes=tx * 60, tx_unsent=0,
        tx_alloc_failures=0, tx_first_ns=0, tx_last_ns=int(span_s * 1e9) if tx else 0,
        rx_packets=rx, rx_bytes=rx * 60, duplicates=0, reordered=0, rx_first_ns=0,
        rx_last_ns=int(span_s * 1e9), latency_min_ns=0, latency_max_ns=0, latency_sum_ns=0,
        tx_max_lag_ns=lag_ns, tx_lagged_bursts=1 if lag_ns > 1000 else 0,
        tx_end_reason="duration", tx_end_ns=int(span_s * 1e9), **kw)


def run(s: StreamResult, ports: dict[str, dict[str, int]] | None = None,
        interrupted: bool = False) -> RunResult:
    queues = np.zeros(0, dtype=[("packets", "u8"), ("bytes", "u8"), ("foreign", "u8")])
    return RunResult((s,), {}, queues, ports or {}, interrupted)


def judge(s: StreamResult, duration_s: float = 1.0, pps: float = PPS, **kw: Any) -> str | None:
    return generator_failure(run(s, kw.pop("ports", None)), s, pps * duration_s, pps,
                             duration_s, **kw)


def test_a_trial_the_generator_did_its_part_in_is_valid() -> None:
    assert judge(stream(300_000)) is None
    assert judge(stream(300_000, 250_000)) is None  # the DUT's loss is not the generator's


@pytest.mark.parametrize("duration_s", [1e-9, 1e-6, 3e-6])
def test_a_trial_that_schedules_no_frame_is_invalid(duration_s: float) -> None:
    """`trial_duration="1ns"` gave 0-frame "valid" trials that passed at the maximum."""
    reason = judge(stream(0), duration_s=duration_s)
    assert reason is not None and "fewer than one" in reason and "trial_duration" in reason


def test_a_trial_in_which_the_generator_sent_nothing_is_invalid() -> None:
    reason = judge(stream(0, 0))
    assert reason is not None and reason.startswith("the generator sent no frame of the 300,000")


def test_a_generator_stall_with_no_loss_is_invalid_naming_the_lag() -> None:
    """A 1.5 s stall (its own link down) reported 0 loss at full rate: PASS."""
    reason = judge(stream(3_000_000, lag_ns=1_500_000_000), duration_s=10.0)
    assert reason is not None
    assert "lagged 1.50s" in reason and "450,000 frames left late" in reason
    assert "more than the 100ms this trial tolerates" in reason


def test_a_lag_within_one_percent_of_the_trial_is_tolerated() -> None:
    assert judge(stream(300_000, lag_ns=8_000_000)) is None         # 8 ms of a 1 s trial
    assert judge(stream(300_000, lag_ns=10_000_001)) is not None    # just over 1 %


def test_a_lag_that_cannot_flip_the_verdict_is_tolerated() -> None:
    # half the frames lost: a 200 ms lag moves 60,000 frames, far from flipping a FAIL
    assert judge(stream(300_000, 150_000, lag_ns=200_000_000)) is None
    # near the tolerance, the same lag could have: invalid
    tolerated = int(0.01 * 300_000)
    assert judge(stream(300_000, 300_000 - tolerated, lag_ns=200_000_000),
                 loss_tolerance=0.01) is not None
    # a loss tolerance of 10 %: 200 ms of lag at 0 loss moves less than the margin
    assert judge(stream(300_000, lag_ns=90_000_000), loss_tolerance=0.1) is None


def test_the_lag_bound_is_never_under_one_burst() -> None:
    # 100 pps for 1 s: 1 % is 10 ms, one burst of 32 frames takes 320 ms
    assert lag_bound_ns(100.0, 1.0) == pytest.approx(LAG_SLACK_FRAMES / 100.0 * 1e9)
    assert judge(stream(100, lag_ns=300_000_000), pps=100.0) is None
    assert lag_bound_ns(PPS, 60.0) == pytest.approx(0.6e9)
    assert lag_bound_ns(PPS, 1.0, tx_packets=300_000, lost=30_000) == pytest.approx(0.1e9)


def test_a_timed_trial_judges_its_lag_against_the_time_it_measured() -> None:
    """A reset or recovery trial loses frames on purpose: against the loss verdict's
    margin any lag passed, yet a 500 ms stall adds up to 500 ms to a 200 ms reset."""
    lossy = stream(3_000_000, 2_700_000, lag_ns=500_000_000)  # 1 s of frames lost
    assert judge(lossy, duration_s=10.0) is None  # the loss rule alone: tolerated
    reason = judge(lossy, duration_s=10.0, timed_figure_ns=700e6)
    assert reason is not None and "lagged 500ms" in reason
    assert "more than the 7.00ms this trial tolerates (1% of the 700ms it measured" in reason
    # a calm generator: a lag under 1 % of the reset time, or under one burst, is pacing
    assert judge(stream(3_000_000, 2_900_000, lag_ns=2_000_000), duration_s=10.0,
                 timed_figure_ns=300e6) is None
    assert judge(stream(3_000_000, 3_000_000, lag_ns=100_000), duration_s=10.0,
                 timed_figure_ns=0.0) is None  # 32 frames at 300 kpps take 107 us
    assert timed_lag_bound_ns(PPS, 0.0) == pytest.approx(LAG_SLACK_FRAMES / PPS * 1e9)
    assert timed_lag_bound_ns(PPS, 300e6) == pytest.approx(3e6)
    assert timed_lag_bound_ns(0.0, 1e9) == float("inf")


@pytest.mark.parametrize(("counters", "words"), [
    ({"link_up_before": 0, "link_up_after": 1}, "link down when the trial started"),
    ({"link_up_before": 1, "link_up_after": 0}, "link down when the trial ended"),
    ({"link_up_before": 1, "link_up_after": 1, "iface_carrier_down": 2},
     "lost its link during the trial (2 carrier loss(es)"),
])
def test_a_generator_link_that_went_down_makes_the_trial_invalid(
        counters: dict[str, int], words: str) -> None:
    reason = judge(stream(300_000), ports={"net_af_packet0,iface=veth0": counters})
    assert reason is not None and "'net_af_packet0,iface=veth0'" in reason and words in reason


def test_links_that_held_are_no_reason() -> None:
    assert link_reason({"p": {"link_up_before": 1, "link_up_after": 1,
                              "iface_carrier_down": 0}}) is None
    assert link_reason({"p": {"ipackets": 5}}) is None  # not measured: no judgement


def test_the_old_rules_still_hold() -> None:
    assert "sent 200,000 of 300,000" in (judge(stream(200_000)) or "")
    drops = judge(stream(300_000, 299_993), ports={"p": {"imissed": 7}})
    assert drops is not None and "dropped 7 frames and 7 of the stream's were lost" in drops
    # drops that cost the stream no frame (a kernel's count of frames it had no protocol
    # for, after the engine received them) leave the trial valid
    assert judge(stream(300_000, 300_000), ports={"p": {"imissed": 7}}) is None
    s = stream(300_000)
    assert generator_failure(run(s, interrupted=True), s, PPS, PPS, 1.0) == "interrupted"


@pytest.mark.parametrize("value", ["1ns", "999us", 0.0005])
def test_trial_durations_have_a_floor(value: Any) -> None:
    with pytest.raises(NetloadConfigError, match=r"shorter than a trial may be \(1ms"):
        trial_seconds(value, what="trial_duration")
    assert trial_seconds("1ms", what="trial_duration") == MIN_TRIAL_S


def test_trial_durations_have_a_ceiling() -> None:
    with pytest.raises(NetloadConfigError, match="more than 24 h"):
        trial_seconds("1e9s", what="trial_duration")


# ---- through the measurer and the search: an invalid figure never passes ----------------


class ZeroFrameEngine:
    """An engine whose generator sends nothing (as 1 ns trials did)."""

    def __init__(self, s: StreamResult) -> None:
        self.s = s
        self.runs = 0

    def run(self, *args: Any, **kwargs: Any) -> RunResult:
        self.runs += 1
        return run(self.s)


def _measurer(engine: Any) -> EngineMeasurer:
    loaded = SimpleNamespace(mean_frame_size=64.0, port=SimpleNamespace(device="net_null0"))
    return EngineMeasurer(engine, loaded, [], 64)  # type: ignore[arg-type]


def test_zero_frame_trials_never_give_a_throughput() -> None:
    engine = ZeroFrameEngine(stream(0, 0))
    m = _measurer(engine)
    trial = m.measure(PPS, 1e-9)
    assert not trial.valid and "fewer than one" in (trial.invalid_reason or "")
    with pytest.raises(InvalidTrial, match="every trial of the throughput search"):
        binary_search(FunctionMeasurer(lambda load, _d: m.measure(load, 1.0)), PPS,
                      settings=TrialSettings(duration_s=1.0, frame_size=64, mean_frame_size=64.0),
                      loss_tolerance=0.0)


def test_a_stalled_generator_never_gives_a_throughput() -> None:
    stalled = stream(300_000, lag_ns=500_000_000)
    m = _measurer(ZeroFrameEngine(stalled))
    trial = m.measure(PPS, 1.0)
    assert not trial.valid and "lagged 500ms" in (trial.invalid_reason or "")


# ---- a DUT that polices with a known bucket: the generator's catch-up burst -------------

CIR_BPS = 200_000_000  # 25 MB/s
CBS = 125_000          # 5 ms at the CIR
POLICER = BurstLimit(CIR_BPS, CBS)


def test_a_catch_up_burst_under_half_the_bucket_is_no_reason() -> None:
    # 2 ms late at the CIR: 50,000 bytes, under the 62,500 of half the bucket
    assert late_burst_reason(stream(300_000, lag_ns=2_000_000), CIR_BPS, POLICER) is None
    assert late_burst_reason(stream(300_000, lag_ns=10**9), CIR_BPS, None) is None


def test_a_catch_up_burst_over_half_the_bucket_names_lag_burst_and_bucket() -> None:
    s = stream(300_000, lag_ns=6_000_000, tx_preemptions=3, tx_wait_cpu_ns=5_900_000)
    why = late_burst_reason(s, CIR_BPS, POLICER)
    assert why is not None
    assert "6.00ms late" in why and "150,000 bytes" in why and "(125,000 bytes)" in why
    assert "waited 5.90ms for its CPU in 3 preemptions (another task took the core" in why


def _policed(engine: Any) -> EngineMeasurer:
    loaded = SimpleNamespace(mean_frame_size=64.0, port=SimpleNamespace(device="net_null0"))
    return EngineMeasurer(engine, loaded, [], 64,  # type: ignore[arg-type]
                          burst_limit=POLICER)


def test_a_policed_trial_the_lag_failed_is_the_generators() -> None:
    """6 ms late at 500 kpps of 64 B (256 Mbit/s, the policer fed at most its CIR):
    150,000 bytes back to back overflow a 125,000-byte bucket, and 537 frames were
    lost, within the 1 % of a 1-s trial the lag rule alone grants: the CI failure of an
    OVS-DPDK policer measured 5 % under its CIR."""
    s = stream(500_000, 500_000 - 537, lag_ns=6_000_000)
    assert judge(s, pps=500_000.0) is None  # the lag rule alone lets it through
    trial = _policed(ZeroFrameEngine(s)).measure(500_000.0, 1.0)
    assert not trial.valid and "more than half the CBS of the DUT's policer" in trial.invalid_reason


def test_a_policed_trial_that_passed_or_lagged_little_stays_valid() -> None:
    passed = stream(500_000, lag_ns=6_000_000)  # a lag never makes a policer drop less
    assert _policed(ZeroFrameEngine(passed)).measure(500_000.0, 1.0).valid
    punctual = stream(500_000, 490_000, lag_ns=1_000_000)
    assert _policed(ZeroFrameEngine(punctual)).measure(500_000.0, 1.0).valid
    unknown = stream(500_000, 490_000, lag_ns=6_000_000)  # no bucket declared: lag rule
    assert _measurer(ZeroFrameEngine(unknown)).measure(500_000.0, 1.0).valid


def test_far_above_the_cir_a_lag_that_cannot_move_the_loss_is_no_reason() -> None:
    """A frame-loss trial at 1.5x the CIR loses a third of its frames to the policer; a
    4.6 ms lag's burst may cost at most ~800 more: no reason to retry it (every try at
    100 % was thrown away on a busy CPU)."""
    s = stream(833_000, 550_000, lag_ns=4_600_000)
    assert _policed(ZeroFrameEngine(s)).measure(833_000.0, 1.0).valid
    assert late_burst_reason(s, CIR_BPS, POLICER, frame_bytes=64, excess_lost=283_000) is None
    why = late_burst_reason(s, CIR_BPS, POLICER, frame_bytes=64, excess_lost=500)
    assert why is not None and "up to 820 frames" in why and "lost 500 more" in why


def test_at_the_default_60_s_trial_the_burst_is_weighed_against_the_whole_loss() -> None:
    """RFC 2544's default trial is 60 s. A lag's catch-up burst does not grow with the
    trial, while a DUT's own loss near its CIR does: at 60 s the same 6 ms lag still
    spoils a trial that lost a few hundred frames, yet cannot excuse a DUT that drops
    0.5 % of 23.6 M frames; and a 300 ms lag, which the generic lag rule grants a 60 s
    trial (1 % of it), is the generator's when its burst could have cost the loss."""
    pps, seconds = 500_000, 60.0
    few = stream(int(pps * seconds), int(pps * seconds) - 537, lag_ns=6_000_000,
                 span_s=seconds)
    assert judge(few, duration_s=seconds, pps=pps) is None
    trial = _policed(ZeroFrameEngine(few)).measure(float(pps), seconds)
    assert not trial.valid and "more than half the CBS" in trial.invalid_reason

    near = round(CIR_BPS / (64 * 8) * 1.005)  # 0.5 % above the CIR, 64 B frames
    sent = int(near * seconds)
    own = stream(sent, sent - sent // 200, lag_ns=6_000_000, span_s=seconds)
    assert _policed(ZeroFrameEngine(own)).measure(float(near), seconds).valid

    long_lag = stream(int(pps * seconds), int(pps * seconds) - 60_000, lag_ns=300_000_000,
                      span_s=seconds)
    assert judge(long_lag, duration_s=seconds, pps=pps) is None  # within 1 % of 60 s
    spoiled = _policed(ZeroFrameEngine(long_lag)).measure(float(pps), seconds)
    assert not spoiled.valid and "300" in spoiled.invalid_reason


# ---- a DUT that shapes with a known queue: the same catch-up burst ----------------------

SHAPER_BPS = 10_000_000        # netns-shaped at 10 Mbit/s: 1.25 MB/s
QUEUE = SHAPER_BPS // 8 // 100 + 10_000  # test_replay_rfc2544's: 10 ms at the rate + 10 KB
SHAPER = BurstLimit(SHAPER_BPS, QUEUE, "shaper")


class FixedEngine:
    """An engine whose every run is these streams' counters."""

    def __init__(self, *streams: StreamResult) -> None:
        self.streams = streams

    def run(self, *args: Any, **kwargs: Any) -> RunResult:
        queues = np.zeros(0, dtype=[("packets", "u8"), ("bytes", "u8"), ("foreign", "u8")])
        return RunResult(self.streams, {}, queues, {}, False)


def _shaped(engine: Any, limit: BurstLimit | None = SHAPER, size: float = 512.0
            ) -> EngineMeasurer:
    loaded = SimpleNamespace(mean_frame_size=size, port=SimpleNamespace(device="net_null0"))
    return EngineMeasurer(engine, loaded, [], 512,  # type: ignore[arg-type]
                          burst_limit=limit)


def test_a_shaped_trial_the_lag_failed_is_the_generators_naming_the_queue() -> None:
    """2 s at 2,400 pps of 512 B (9.8 Mbit/s, under the shaper's 10), 15 ms late: the
    generic rule grants 1 % of the trial (20 ms), but the 18,432-byte burst is 7,182
    bytes (14 frames) beyond half the 22,500-byte queue. A trial that lost 12 frames
    may have lost them all to it: invalid, and the reason says it was the shaper's
    queue, not a policer's bucket."""
    s = stream(4_800, 4_788, lag_ns=15_000_000, span_s=2.0)
    assert judge(s, duration_s=2.0, pps=2_400.0) is None  # the lag rule alone lets it through
    trial = _shaped(FixedEngine(s)).measure(2_400.0, 2.0)
    assert not trial.valid
    why = trial.invalid_reason or ""
    assert "the generator ran 15.0ms late (its worst TX lag): its catch-up burst of 18,432 " \
        "bytes is more than half the queue of the DUT's shaper (22,500 bytes), so the " \
        "shaper drops frames a punctual sender gets through (up to 14 frames, and the " \
        "trial lost 12 more than its verdict allows)" in why, why
    assert "CBS" not in why and "policer" not in why


def test_a_shaped_trial_stays_valid_when_the_lag_cannot_have_cost_its_loss() -> None:
    """The same loss with a punctual sender is the DUT's; a loss larger than the burst can
    cost (20 frames, 14 at most from the burst) is too; a trial that lost nothing is
    valid however late (a lag never makes a shaper drop less); and without a declared
    queue the generic lag rule alone judges."""
    punctual = stream(4_800, 4_788, lag_ns=1_000_000, span_s=2.0)
    assert _shaped(FixedEngine(punctual)).measure(2_400.0, 2.0).valid
    beyond = stream(4_800, 4_780, lag_ns=15_000_000, span_s=2.0)
    assert _shaped(FixedEngine(beyond)).measure(2_400.0, 2.0).valid
    whole = stream(4_800, lag_ns=15_000_000, span_s=2.0)
    assert _shaped(FixedEngine(whole)).measure(2_400.0, 2.0).valid
    spoiled = stream(4_800, 4_788, lag_ns=15_000_000, span_s=2.0)
    assert _shaped(FixedEngine(spoiled), limit=None).measure(2_400.0, 2.0).valid
    # above the shaper's rate the burst is counted at that rate: 15 ms of 10 Mbit/s
    over = late_burst_reason(spoiled, 4 * SHAPER_BPS, SHAPER)
    assert over is not None and "burst of 18,750 bytes" in over


def test_the_replayed_mix_that_lost_27_frames_to_a_lag_is_retried() -> None:
    """tests/integration/test_replay_rfc2544.py's mix on its netns-shaped (10 Mbit/s, a
    22,500-byte queue): 60 frames in six flows, a third each DNS-sized UDP (102 B on the
    wire with the signature and FCS, over four source ports), full TCP (1,274 B) and bare
    ACKs (74 B), 483.3 B on average: 2,607.8 pps at the shaper's rate. On a loaded
    machine that search once lost 27 frames in a trial the generic lag rule let through,
    and came out low. Replayed: a 2-s trial at 2,520 pps (3.4 % under the capacity) whose
    worker stalled 32 ms (its burst outgrows the queue and the 5,000-byte bucket by about
    24 frames) lost 27; every lane's lag is within what the generic rule grants it (one
    TX burst of 32 frames takes 38 ms at the TCP lanes' 840 pps), so it was the DUT's.
    Its 38,976-byte catch-up burst is 27,726 bytes (57 frames of the mix) beyond half
    the queue: the generator's, retried."""
    mix = [("udp-2000", 102, 1 / 12, 3), ("udp-2001", 102, 1 / 12, 2),
           ("udp-2002", 102, 1 / 12, 2), ("udp-2003", 102, 1 / 12, 2),
           ("tcp-data", 1274, 1 / 3, 9), ("tcp-ack", 74, 1 / 3, 9)]
    pps, seconds = 2_520.0, 2.0
    port = SimpleNamespace(device="net_null0")
    lanes = tuple(Lane(SimpleNamespace(name=name, mean_frame_size=float(size),  # type: ignore
                                       port=port), share)
                  for name, size, share, _ in mix)
    streams = [replace(stream(round(pps * seconds * share), round(pps * seconds * share) - lost,
                              lag_ns=32_000_000, span_s=seconds), name=name)
               for name, _, share, lost in mix]
    engine = FixedEngine(*streams)

    def measurer(limit: BurstLimit | None) -> EngineMeasurer:
        return EngineMeasurer(engine, lanes[0].stream, [], "pcap",  # type: ignore[arg-type]
                              lanes=lanes, burst_limit=limit)

    assert measurer(None).measure(pps, seconds).valid  # before: the DUT's 27 frames
    trial = measurer(SHAPER).measure(pps, seconds)
    assert trial.tx_packets - trial.rx_packets == 27
    assert not trial.valid
    why = trial.invalid_reason or ""
    assert "ran 32.0ms late" in why and "catch-up burst of 38,976 bytes" in why, why
    assert "more than half the queue of the DUT's shaper (22,500 bytes)" in why
    assert "(up to 57 frames, and the trial lost 27 more than its verdict allows)" in why


def test_at_netns_shapeds_defaults_and_a_60_s_trial_the_queue_is_weighed_alike() -> None:
    """netns-shaped at its defaults (50 Mbit/s, a 25,000-byte bucket and 20 ms more of
    queue: 150,000 bytes) and RFC 2544's 60-s trial, whose generic rule grants 600 ms of
    lag: at 11,700 pps of 512 B (95 % of the capacity) a 100-ms stall's burst of 599,040
    bytes is 1,024 frames beyond half the queue. A trial that lost 800 frames is the
    generator's; one whose DUT lost 0.5 % of 702,000 (3,510) is the DUT's, stall or not."""
    _bucket, queue = default_bucket(SHAPER_RATE_BPS)
    assert queue == 150_000
    shaper = BurstLimit(SHAPER_RATE_BPS, queue, "shaper")
    pps, seconds = 11_700, 60.0
    sent = int(pps * seconds)
    spoiled = stream(sent, sent - 800, lag_ns=100_000_000, span_s=seconds)
    assert judge(spoiled, duration_s=seconds, pps=pps) is None  # within 1 % of 60 s
    trial = _shaped(FixedEngine(spoiled), limit=shaper).measure(float(pps), seconds)
    assert not trial.valid and "burst of 599,040 bytes" in (trial.invalid_reason or "")
    assert "(up to 1,024 frames, and the trial lost 800" in (trial.invalid_reason or "")
    own = stream(sent, sent - sent // 200, lag_ns=100_000_000, span_s=seconds)
    assert _shaped(FixedEngine(own), limit=shaper).measure(float(pps), seconds).valid


def test_the_declared_burst_limit_is_the_policer_else_the_shaper_with_its_queue() -> None:
    def caps(**kw: Any) -> SimpleNamespace:
        return SimpleNamespace(**{"policer_bps": None, "policer_cbs_bytes": None,
                                  "shaper_bps": None, "shaper_queue_bytes": None, **kw})

    assert BurstLimit.declared(caps(shaper_bps=SHAPER_BPS, shaper_queue_bytes=QUEUE)) == SHAPER
    both = caps(policer_bps=CIR_BPS, policer_cbs_bytes=CBS, shaper_bps=SHAPER_BPS,
                shaper_queue_bytes=QUEUE)
    assert BurstLimit.declared(both) == POLICER
    assert BurstLimit.declared(caps(policer_bps=CIR_BPS, shaper_bps=SHAPER_BPS,
                                    shaper_queue_bytes=QUEUE)) == SHAPER
    assert BurstLimit.declared(caps(shaper_bps=SHAPER_BPS)) is None  # no queue known
    assert BurstLimit.declared(caps(policer_bps=CIR_BPS)) is None
    assert BurstLimit.declared(caps()) is None


@pytest.mark.parametrize(("args", "message"), [
    ((SHAPER_BPS, QUEUE, "queue"), "kind 'queue': use one of 'policer', 'shaper'"),
    ((0, QUEUE, "shaper"), "a shaper's rate of 0 bit/s: give a rate above zero"),
    ((float("nan"), QUEUE), "a policer's rate of nan bit/s"),
    ((SHAPER_BPS, 0, "shaper"), "a shaper's queue of 0 bytes: give a positive whole number"),
    ((SHAPER_BPS, 1.5), "a policer's CBS of 1.5 bytes"),
])
def test_a_bad_burst_limit_is_named(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(NetloadConfigError, match=re.escape(message)):
        BurstLimit(*args)
