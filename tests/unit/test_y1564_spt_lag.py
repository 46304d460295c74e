"""Y.1564's service performance test judges each interval's generator lag: frames a
policer dropped after the generator's catch-up burst in an interval are the generator's
(the interval is invalid, with the measured lag and its cause), not the DUT's. The same
rule as RFC 2544's trials and Y.1564's configuration steps (validity.shared_late_reason),
on each interval's own lag (engine/intervals.py IntervalTx)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pytest

from pytest_netload.bench.lanes import Lane
from pytest_netload.bench.validity import BurstLimit, late_burst_reason, shared_late_reason
from pytest_netload.bench.y1564_measurers import EngineServiceMeasurer
from pytest_netload.engine.client import Engine, Port
from pytest_netload.engine.fake import FakeDut
from pytest_netload.engine.intervals import Interval, IntervalTx
from pytest_netload.topology.fake import fake_topology
from pytest_netload.traffic.streams import udp
from pytest_netload.y1564 import Service, service_performance_test

FLOW = fake_topology(10e9).flows()[0]
CIR_BPS = 10_000_000
CBS = 12_500  # 10 ms at the CIR: netns-policed's, and the lab file's of the CI failure
POLICER = BurstLimit(CIR_BPS, CBS)
VOICE = Service.of({"name": "voice", "cir": "2Mbit/s", "frame_size": 128, "dscp": 46,
                    "sac": {"flr": "0.1%", "availability": "99%"}})
DATA = Service.of({"name": "data", "cir": "6Mbit/s", "frame_size": 1024, "dscp": 0,
                   "sac": {"flr": "0.1%", "availability": "99%"}})
#: 35 ms late, the worker waiting 34 ms of it in 12 preemptions: the CI run's size of lag
#: (its catch-up burst at 8 Mbit/s: 35,000 bytes into a 12,500-byte bucket).
LATE = IntervalTx(tx_max_lag_ns=35_000_000, tx_lagged_bursts=40, tx_off_cpu_ns=34_500_000,
                  tx_wait_cpu_ns=34_000_000, tx_preemptions=12)


class Doctored:
    """The fake engine, its intervals changed on the way: `late` intervals get LATE as
    every stream's TX counters, `dropped` lose that many frames of each stream."""

    def __init__(self, engine: Engine, late: set[int], dropped: dict[int, int],
                 sender: IntervalTx = LATE) -> None:
        self.engine, self.late, self.dropped, self.sender = engine, late, dropped, sender

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def run(self, *args: Any, on_interval: Callable[[Interval], None] | None = None,
            **kw: Any) -> Any:
        def doctored(iv: Interval) -> None:
            if iv.index in self.dropped:
                iv = replace(iv, rx_packets=iv.rx_packets - np.uint64(self.dropped[iv.index]))
            if iv.index in self.late:
                iv = replace(iv, tx=(self.sender,) * len(iv.tx))
            assert on_interval is not None
            on_interval(iv)

        if on_interval is not None:
            return self.engine.run(*args, on_interval=doctored, **kw)
        run = self.engine.run(*args, **kw)  # one step: the whole run as interval 0 is
        lag = self.sender.tx_max_lag_ns if 0 in self.late else 0
        drop = self.dropped.get(0, 0)
        return replace(run, streams=tuple(
            replace(st, tx_max_lag_ns=lag, tx_wait_cpu_ns=self.sender.tx_wait_cpu_ns,
                    tx_preemptions=self.sender.tx_preemptions, rx_packets=st.rx_packets - drop)
            for st in run.streams))


@dataclass
class Fake:
    """The fake engine and its two ports, open for one test."""

    engine: Engine
    tx: Port
    rx: Port

    def measurer(self, late: set[int], dropped: dict[int, int],
                 limit: BurstLimit | None, sender: IntervalTx = LATE,
                 **kw: Any) -> EngineServiceMeasurer:
        lanes = {s.name: [Lane(self.engine.load(self.tx, udp(size=s.frame_size, name=s.name)
                                                .for_flow(FLOW)), 1.0)] for s in (VOICE, DATA)}
        doctored: Any = Doctored(self.engine, late, dropped, sender)
        return EngineServiceMeasurer(doctored, lanes, [self.rx], burst_limit=limit, **kw)

    def spt(self, late: set[int], dropped: dict[int, int],
            limit: BurstLimit | None = POLICER, seconds: int = 6) -> Any:
        """VOICE and DATA at their CIR for `seconds` 1-s intervals, the intervals as
        `Doctored` changes them, the DUT's policer (or shaper) declared as `limit`."""
        m = self.measurer(late, dropped, limit)
        return service_performance_test(m, [VOICE, DATA], duration_s=seconds, interval_s=1)


@pytest.fixture
def fake() -> Iterator[Fake]:
    with Engine(fake=FakeDut(capacity_pps=1e6, delay_s=50e-6, jitter_s=5e-6)) as e:
        yield Fake(e, e.port("net_fake0"), e.port("net_fake1"))


def test_frames_lost_after_a_catch_up_burst_make_that_interval_invalid(fake: Fake) -> None:
    """Interval 3 lost 55 voice and 16 data frames (the CI run's) and its sender ran
    35 ms late: invalid, with the lag, the bucket and the measured CPU wait; interval 5
    lost as many with a punctual sender: the DUT's loss, counted."""
    result = fake.spt(late={2}, dropped={2: 16, 4: 16}, seconds=20)
    for s in result.services:
        assert s.invalid_intervals == 1 and s.series["valid"][2] is False
        assert s.series["valid"][4] is True and s.series["flr"][4] > 0
        why = s.first_invalid or ""
        assert why.startswith("interval 3: the generator ran 35.0ms late"), why
        assert "more than half the CBS of the DUT's policer (12,500 bytes)" in why
        assert "waited 34.0ms for its CPU in 12 preemptions (another task took the core" \
            in why
        assert s.lost == 16  # interval 5's only
    assert result.valid  # 1 of 20 intervals: within MAX_INVALID_RATIO


def test_at_the_default_15_minutes_one_lagged_interval_is_left_out(fake: Fake) -> None:
    """The marker's default SPT, 900 intervals of 1 s: the CI run's lag in interval 451
    leaves that one out (it would have lost 16 frames of each service); the run is
    valid, and both services pass on the other 899."""
    result = fake.spt(late={450}, dropped={450: 16}, seconds=900)
    assert result.intervals == 900 and result.valid and result.passed, result.failures()
    for s in result.services:
        # a frame in flight across either end of the interval left out is counted sent
        # on one side, received on the other: at most one each
        assert s.invalid_intervals == 1 and s.lost <= 2
        assert (s.first_invalid or "").startswith("interval 451: the generator ran 35.0ms")


def test_a_short_run_spoiled_by_a_lag_says_why_in_its_failure(fake: Fake) -> None:
    """The example's 6-s SPT with one spoiled interval is not valid (1 of 6 is more than
    10 %): its failure names the interval and the proof that the machine took the core,
    where the test harness reads it."""
    result = fake.spt(late={2}, dropped={2: 16})
    assert not result.valid and not result.passed
    text = "\n".join(result.failures())
    assert "the run is not valid: 16.7% of the intervals were invalid" in text
    assert "the first, of service 'voice': interval 3: the generator ran 35.0ms late" in text
    assert "(another task took the core" in text


def test_a_declared_shapers_queue_takes_the_same_rule(fake: Fake) -> None:
    """On a DUT that shapes (netns-shaped at 10 Mbit/s, test_replay_rfc2544's 22,500-byte
    queue) the CI run's lag, a 35,000-byte burst at 8 Mbit/s, is 23,750 bytes beyond half
    the queue (41 frames of the 576 bytes lost on average): the interval that lost 16
    frames of each service is the generator's, and says it was the shaper's queue."""
    shaper = BurstLimit(10_000_000, 22_500, "shaper")
    result = fake.spt(late={2}, dropped={2: 16}, limit=shaper, seconds=20)
    for s in result.services:
        assert s.invalid_intervals == 1 and s.series["valid"][2] is False and s.lost == 0
        why = s.first_invalid or ""
        assert why.startswith("interval 3: the generator ran 35.0ms late"), why
        assert "more than half the queue of the DUT's shaper (22,500 bytes), so the shaper " \
            "drops frames a punctual sender gets through" in why
    assert result.valid and result.passed
    beyond = fake.spt(late={2}, dropped={2: 30}, limit=shaper, seconds=20)  # 60 > 41 frames
    assert all(s.invalid_intervals == 0 and s.lost == 30 for s in beyond.services)


def test_a_lag_without_loss_or_loss_without_a_policer_stays_the_duts(fake: Fake) -> None:
    """A lag never makes a policer drop less: an interval that lost nothing stays valid.
    Without a declared policer (and no CBS of its own) a lagged interval's loss is the
    DUT's."""
    calm = fake.spt(late={1}, dropped={})
    assert calm.valid and calm.passed
    assert all(s.invalid_intervals == 0 and s.first_invalid is None for s in calm.services)
    unknown = fake.spt(late={2}, dropped={2: 16}, limit=None)
    assert unknown.valid and not unknown.passed
    assert all(s.invalid_intervals == 0 and s.lost == 16 for s in unknown.services)


def test_a_loss_larger_than_the_burst_can_cost_is_the_duts(fake: Fake) -> None:
    """35 ms at 8 Mbit/s is 35,000 bytes, 28,750 beyond half the bucket (77 frames of the
    services' mean 372 bytes): an interval that lost 300 frames of each service lost
    them to the DUT, lag or not."""
    result = fake.spt(late={2}, dropped={2: 300})
    assert all(s.invalid_intervals == 0 and s.lost == 300 for s in result.services)


def test_a_configuration_step_takes_the_same_rule(fake: Fake) -> None:
    """A 1-s step of voice alone with its own 3,000-byte CBS, 12 ms late: within what
    the generic lag rule grants (32 frames' time, 16 ms), but its 3,000-byte burst
    beyond half the bucket may cost 12 frames of 128 B. A step that lost 8 is the
    generator's (retried); one that lost nothing is valid, late or not."""
    twelve = IntervalTx(tx_max_lag_ns=12_000_000, tx_wait_cpu_ns=11_000_000,
                        tx_preemptions=5)
    spoiled = fake.measurer({0}, {0: 8}, None, twelve, burst_bytes={"voice": 3_000})
    step = spoiled.measure({"voice": 2e6}, 1.0)["voice"]
    assert not step.valid and "CBS of service 'voice' (3,000 bytes)" in (step.invalid_reason
                                                                        or "")
    punctual_loss = fake.measurer(set(), {0: 8}, None, twelve, burst_bytes={"voice": 3_000})
    assert punctual_loss.measure({"voice": 2e6}, 1.0)["voice"].valid
    late_no_loss = fake.measurer({0}, {}, None, twelve, burst_bytes={"voice": 3_000})
    assert late_no_loss.measure({"voice": 2e6}, 1.0)["voice"].valid


def test_the_shared_policer_weighs_the_worst_lag_at_the_rate_of_every_stream() -> None:
    """Two streams of one worker lag together: their burst is the worst lag times what
    they feed the policer together (at most its CIR), its cost weighed in the bytes of
    the frames lost: the stall of the netns-policed test, 42 ms at 8 Mbit/s (42,000
    bytes, 35,750 beyond half the bucket), lost 80 voice and 20 data frames (30,720
    bytes), which the services' mean frame (372 bytes, 96 frames) would have called
    more than the burst may cost."""
    quiet = IntervalTx(tx_max_lag_ns=1_000_000)
    stall = IntervalTx(tx_max_lag_ns=42_000_000, tx_off_cpu_ns=42_000_000)
    parts = [(stall, 2e6, 128.0, 80), (quiet, 6e6, 1024.0, 20)]
    why = shared_late_reason(parts, POLICER, 100)
    assert why is not None and "catch-up burst of 42,000 bytes" in why
    lossy = [(stall, 2e6, 128.0, 80), (quiet, 6e6, 1024.0, 40)]  # 51,200 bytes lost
    assert shared_late_reason(lossy, POLICER, 120) is None
    assert shared_late_reason(parts, None, 100) is None
    assert shared_late_reason(parts, POLICER, 0) is None
    # one stream: the rule RFC 2544's trials had before, unchanged
    alone = shared_late_reason([(LATE, 2e6, 128.0, 10)], POLICER, 10)
    assert alone == late_burst_reason(LATE, 2e6, POLICER, frame_bytes=128.0, excess_lost=10)
    # above the CIR the policer passes at most its CIR: 35 ms of 10 Mbit/s
    over = shared_late_reason([(LATE, 20e6, 512.0, 10)], POLICER, 10)
    assert over is not None and "burst of 43,750 bytes" in over
