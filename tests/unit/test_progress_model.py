"""The progress model (bench/progress_model.py): n of N, the bracket, elapsed time and ETA,
and the cadence of lines, under a simulated clock at the procedures' default sizes
(RFC 2544's 20 trials of 60 s, Y.1564's 24 h performance test of 1 s intervals)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.bench import progress
from pytest_netload.bench.progress_model import (
    Cadence,
    Status,
    Tracker,
    remaining_trials,
    status_line,
)
from pytest_netload.search.bisection import search_rate
from pytest_netload.search.resolution import DEFAULT_MAX_TRIALS, Resolution
from pytest_netload.y1564.availability import AvailabilityTracker


class Clock:
    """A simulated monotonic clock."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def _bisection(capacity: float, max_pps: float, res: Resolution,
               max_trials: int) -> list[tuple[float, bool]]:
    """The loads the search core tries against a DUT forwarding `capacity`, and verdicts."""
    tried: list[tuple[float, bool]] = []

    @dataclass(frozen=True)
    class Trial:
        load: float
        valid: bool = True

    def measure(load: float) -> Trial:
        tried.append((load, load <= capacity))
        return Trial(load)

    search_rate(measure, lambda t: t.load <= capacity, max_value=max_pps, resolution=res,
                max_trials=max_trials, retries=0, what="test", try_min=False)
    return tried


@settings(max_examples=200, deadline=None)
@given(share=st.floats(0.001, 1.2), ratio=st.sampled_from([0.001, 0.005, 0.01, 0.05]),
       pps=st.one_of(st.none(), st.floats(10.0, 5e4)))
def test_the_trials_left_never_undercount_once_a_load_passed(share: float, ratio: float,
                                                             pps: float | None) -> None:
    """Once the bracket has a lower bound, the estimate of trials left is an upper bound
    of the trials the search core really runs, and never more than the budget left."""
    max_pps, total = 14_880_952.0, DEFAULT_MAX_TRIALS
    res = Resolution(ratio, pps)
    tried = _bisection(share * max_pps, max_pps, res, total)
    lo, hi = 0.0, None
    for n, (load, passed) in enumerate(tried, 1):
        if passed:
            lo = max(lo, load)
        else:
            hi = load if hi is None else min(hi, load)
        left = remaining_trials(lo, hi, res, n, total)
        assert 0 <= left <= total - n
        if lo > 0 or (hi is not None and pps is not None and res.ratio is None):
            assert left >= len(tried) - n, (n, tried)


def _run_search(clock: Clock, tracker: Tracker, tried: list[tuple[float, bool]],
                trial_s: float, overhead_s: float) -> list[Status]:
    out = tracker.feed({"event": "start", "procedure": "throughput", "frame_size": 64,
                        "total": DEFAULT_MAX_TRIALS, "trial_s": trial_s, "max_pps": tried[0][0],
                        "resolution": {"ratio": 0.005, "pps": None}})
    for n, (load, passed) in enumerate(tried, 1):
        clock.advance(overhead_s / 2)
        out += tracker.feed({"event": "trial_start", "offered_pps": load})
        clock.advance(trial_s + overhead_s / 2)
        out += tracker.feed({"event": "trial", "trial": n, "offered_pps": load,
                             "loss_ratio": 0.0 if passed else 0.1, "valid": True,
                             "passed": passed})
    return out


def test_an_rfc2544_search_at_its_defaults_counts_trials_and_its_eta_comes_true() -> None:
    """20 trials of 60 s at most, 2.5 s between trials: the ETA is the trials the bracket
    still needs times 62.5 s, and once a load passed, the search ends no later."""
    clock = Clock()
    tracker = Tracker(clock, test="test_router[64B]")
    res = Resolution(ratio=0.005)
    tried = _bisection(0.37 * 14_880_952.0, 14_880_952.0, res, DEFAULT_MAX_TRIALS)
    t0 = clock()
    statuses = _run_search(clock, tracker, tried, 60.0, 2.5)
    start = statuses[0]
    assert start.kind == "start" and start.total == 20 and start.eta_s == pytest.approx(
        res.trials_needed() * 60.0)
    trials = [s for s in statuses if s.kind == "trial"]
    assert [s.n for s in trials] == list(range(1, len(tried) + 1))
    end = clock()
    for s in trials:
        assert s.elapsed_s == pytest.approx(s.n * 62.5)
        assert s.eta_s == pytest.approx(
            remaining_trials(s.lo or 0.0, s.hi, res, s.n, 20) * 62.5)
        if s.lo:  # a lower bound: the estimate is an upper bound of the time left
            assert t0 + s.elapsed_s + s.eta_s >= end - 1e-6
    last = trials[-1]
    assert last.eta_s == 0.0
    assert res.reached(last.lo or 0.0, last.hi or 0.0)
    line = status_line(last)
    assert line.startswith(f"netload: test_router[64B] | 64B | throughput | trial {last.n} of "
                           f"at most 20 | ETA ~0:00, elapsed {math.floor(end - t0) // 60}:")
    assert "| [" in line and "of lo, to 0.5%" in line


def test_a_search_whose_maximum_passes_ends_with_its_first_trial() -> None:
    clock = Clock()
    tracker = Tracker(clock)
    (status,) = _run_search(clock, tracker, [(1e6, True)], 60.0, 1.0)[1:2]
    (trial,) = [s for s in _run_search(clock, Tracker(clock), [(1e6, True)], 60.0, 1.0)
                if s.kind == "trial"]
    assert status.kind == "trial_start"
    assert trial.total == 1 and trial.eta_s == 0.0


def test_a_counted_procedure_measures_its_overhead_into_the_eta() -> None:
    """Latency: 20 trials of 120 s, exactly; 3 s between trials is measured, not guessed."""
    clock = Clock()
    tracker = Tracker(clock)
    (start,) = tracker.feed({"event": "start", "procedure": "latency", "frame_size": 64,
                             "total": 20, "exact": True, "trial_s": 120.0})
    assert start.eta_s == pytest.approx(20 * 120.0)
    for n in range(1, 21):
        clock.advance(123.0)
        (s,) = tracker.feed({"event": "trial", "offered_pps": 1e5, "loss_ratio": 0.0})
        assert s.n == n and s.eta_s == pytest.approx((20 - n) * 123.0)
        assert s.elapsed_s == pytest.approx(n * 123.0)
    assert "| trial 20 of 20 | ETA 0:00, elapsed 41:00 | offered 100.0 kpps" in status_line(s)
    (end,) = tracker.finish()
    assert end.kind == "end"


def test_a_24_hour_spt_by_simulated_clock_lines_every_30_s_with_availability() -> None:
    """Y.1564's longest performance test at its real size: 86,400 intervals of 1 s (each
    0.1 s of drain), a CI log line every 30 s, interval k of n, the availability so far
    and an ETA that lands on the real end."""
    clock = Clock()
    tracker = Tracker(clock, test="test_spt")
    lines = Cadence("lines", clock)
    live = Cadence("live", clock)
    total, shown, redrawn = 86_400, [], 0
    avail = AvailabilityTracker()
    for s in tracker.feed({"event": "start", "procedure": "Y.1564 SPT", "what": "interval",
                           "total": total, "exact": True, "trial_s": 1.0}):
        assert lines.due(s)
    for index in range(total):
        clock.advance(1.1)
        # an outage of 100 s (severely errored seconds) in hour 12
        avail.add(1.0 if 43_200 <= index < 43_300 else 0.0)
        (s,) = tracker.feed({"event": "interval", "interval": index + 1, "total": total,
                             "availability": {"data": avail.ratio_so_far}})
        if lines.due(s):
            shown.append(s)
        redrawn += live.due(s)
    assert shown[-1].n == total  # the last interval is always shown
    gaps = [b.elapsed_s - a.elapsed_s for a, b in zip(shown, shown[1:-1])]
    assert all(30.0 <= g < 30.0 + 1.1 for g in gaps)  # every 30 s, to the interval
    assert len(shown) == total // 28 + 1  # 28 intervals of 1.1 s: the first 30 s apart
    assert redrawn == total  # 1.1 s apart: a terminal redraws each interval
    half = next(s for s in shown if s.n >= total // 2)
    assert half.eta_s == pytest.approx((total - half.n) * 1.1, rel=1e-6)
    assert shown[-1].elapsed_s == pytest.approx(shown[-1].n * 1.1)
    assert avail.ratio_so_far == pytest.approx(1 - 100 / total)
    assert avail.ratio_so_far == avail.result().ratio
    line = status_line(shown[-1])
    assert line == ("netload: test_spt | Y.1564 SPT | interval 86400 of 86400 | ETA 0:00, "
                    "elapsed 26:24:00 | availability data 99.88%")


def test_a_resumed_spt_times_only_the_intervals_it_measured() -> None:
    clock = Clock()
    tracker = Tracker(clock)
    tracker.feed({"event": "start", "procedure": "Y.1564 SPT", "what": "interval",
                  "total": 900, "exact": True, "trial_s": 1.0})
    for index in range(600, 610):  # a checkpoint held 600 intervals
        clock.advance(1.0)
        (s,) = tracker.feed({"event": "interval", "interval": index + 1, "total": 900})
    assert s.n == 610 and s.eta_s == pytest.approx(290.0)


def test_a_long_run_of_its_own_shows_frames_so_far_and_its_end() -> None:
    clock = Clock()
    tracker = Tracker(clock, test="test_soak")
    tracker.feed({"procedure": "traffic", "note": "cbr for 8h"})
    (s,) = tracker.feed({"event": "run", "state": "sending", "tx_packets": 1_000_000,
                         "rx_packets": 999_000, "elapsed_s": 3600.0, "end_s": 28_800.0})
    assert (s.tx_frames, s.unreceived, s.eta_s) == (1_000_000, 1000, 25_200.0)
    assert status_line(s) == ("netload: test_soak | traffic | ETA 7:00:00, elapsed 1:00:00 | "
                              "sent 1,000,000, not received 1,000 (in flight or lost)")


@settings(max_examples=100, deadline=None)
@given(gaps=st.lists(st.floats(0.0, 100.0), min_size=1, max_size=60),
       kinds=st.lists(st.sampled_from(["trial", "tick", "interval", "note"]), min_size=60,
                      max_size=60))
def test_lines_come_once_a_trial_and_otherwise_30_s_apart(gaps: list[float],
                                                          kinds: list[str]) -> None:
    clock = Clock()
    cadence = Cadence("lines", clock)
    off = Cadence("off", clock)
    last_line: float | None = None
    for gap, kind in zip(gaps, kinds):
        clock.advance(gap)
        due = cadence.due(Status(kind))
        assert not off.due(Status(kind))
        if kind in ("trial", "note"):
            assert due
        elif last_line is not None:
            assert due == (clock() - last_line >= 30.0)
        if due:
            last_line = clock()


def test_the_progress_clock_is_injectable() -> None:
    clock = Clock()
    with progress.clock(clock):
        assert progress.now() == 1000.0
        clock.advance(5)
        assert progress.now() == 1005.0
    assert progress.now() != 1005.0


def test_events_go_nowhere_without_a_sink_and_polls_cost_nothing() -> None:
    assert not progress.active() and progress.poller(10.0) is None
    seen: list[dict[str, object]] = []
    with progress.sink(seen.append):
        poll = progress.poller(10.0)
        assert poll is not None
        poll({"state": "sending", "tx_packets": 5, "rx_packets": 4, "elapsed_ns": 10**9,
              "end_ns": 0})
    assert seen == [{"event": "run", "state": "sending", "tx_packets": 5, "rx_packets": 4,
                     "elapsed_s": 1.0, "end_s": 10.0}]


def test_a_cadence_mode_is_checked() -> None:
    with pytest.raises(ValueError, match="progress mode 'loud'"):
        Cadence("loud", Clock())


def test_a_traffic_run_after_a_search_is_its_own_and_not_the_search() -> None:
    clock = Clock()
    tracker = Tracker(clock, test="test_mixed")
    tracker.feed({"event": "start", "procedure": "throughput", "total": 20, "trial_s": 60.0,
                  "resolution": {"ratio": 0.005, "pps": None}, "max_pps": 1e6})
    out = tracker.feed({"procedure": "traffic", "note": "cbr for 1h"})
    assert [s.kind for s in out] == ["end", "note"] and out[0].procedure == "throughput"
    (tick,) = tracker.feed({"event": "run", "state": "sending", "tx_packets": 10,
                            "rx_packets": 10, "elapsed_s": 1.0, "end_s": 3600.0})
    assert (tick.procedure, tick.total, tick.eta_s) == ("traffic", None, 3599.0)


@settings(max_examples=100, deadline=None)
@given(flrs=st.lists(st.one_of(st.none(), st.sampled_from([0.0, 0.0, 0.2, 1.0])),
                     max_size=300), n=st.integers(1, 12))
def test_the_availability_so_far_is_the_trackers_result(flrs: list[float | None],
                                                        n: int) -> None:
    avail = AvailabilityTracker(n=n)
    for flr in flrs:
        avail.add(flr)
        assert avail.ratio_so_far == avail.result().ratio


def test_an_rfc2889_search_reports_procedure_trial_and_bracket() -> None:
    """The RFC 2889 runner's plan and on_trial (in its TrialSettings) feed the same model:
    a fully meshed search at its defaults (20 trials at most, 0.5 %), over 2 ports whose
    DUT forwards 300 kpps a port."""
    from pytest_netload.bench.rfc2889 import Rfc2889Runner
    from pytest_netload.bench.settings import Rfc2889Mark
    from pytest_netload.rfc2889.mesh import MeshTrial, fully_meshed
    from pytest_netload.search.trial import FunctionMeasurer

    runner = object.__new__(Rfc2889Runner)  # its plan and reports need no ports
    runner.test, runner.mark = "test_mesh", Rfc2889Mark()
    clock = Clock()
    tracker = Tracker(clock, test="test_mesh")
    statuses: list[Status] = []

    def measure(load: float, duration_s: float) -> MeshTrial:
        clock.advance(duration_s + 1.0)
        sent = int(load * duration_s)
        got = min(sent, int(300_000 * duration_s))
        return MeshTrial(load, (sent, sent), (got, got), duration_s)

    with progress.sink(lambda e: statuses.extend(tracker.feed(e))):
        fully_meshed(FunctionMeasurer(measure), ports=2, max_pps_per_port=1e6,
                     settings=runner._settings(timed=True, on_trial=runner._progress(
                         "fully meshed", total=runner.mark.max_trials,
                         trial_s=runner.mark.trial_duration_s, max_pps=1e6,
                         resolution=Resolution(ratio=runner.mark.resolution))),
                     max_trials=runner.mark.max_trials)
    trials = [s for s in statuses if s.kind == "trial"]
    assert statuses[0].procedure == "RFC 2889 fully meshed" and statuses[0].total == 20
    assert trials[0].passed is False and trials[-1].eta_s == 0.0
    assert (trials[-1].lo or 0) <= 300_000 <= (trials[-1].hi or 0)
    assert status_line(trials[1]).startswith(
        "netload: test_mesh | 64B | RFC 2889 fully meshed | trial 2 of at most 20 | ETA ~")
