"""Buffer-aware trials: a DUT with a deep queue passes short trials above its capacity
without losing a frame, because the drain delivers its backlog after traffic stops. The
backlog and the forwarding rate over the trial show it; steady_state decides what it does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.plugin.terminal import rows_of
from pytest_netload.rfc2544 import binary_search
from pytest_netload.rfc2544.mlr import LossGoal, mlr_search
from pytest_netload.rfc2544.trial import (
    STEADY_BACKLOG_RATIO,
    TrialResult,
    steady_note,
    steady_summary,
)
from pytest_netload.search import TrialSettings


class QueuedDut:
    """Forwards `capacity` pps through a FIFO of `queue_s` seconds at that rate: an
    overload fills the queue first and is lost only once it is full; at the end of
    traffic the queue's content is the backlog. Below capacity the queue stays empty."""

    def __init__(self, capacity: float, queue_s: float, steady_state: str = "warn") -> None:
        self.capacity, self.queue_frames, self.steady_state = capacity, capacity * queue_s, \
            steady_state

    def measure(self, load: float, duration_s: float) -> TrialResult:
        tx = round(load * duration_s)
        excess = max(0.0, (load - self.capacity) * duration_s)
        backlog = round(min(excess, self.queue_frames))
        lost = round(max(0.0, excess - self.queue_frames))
        forwarded_by_end = round(min(load, self.capacity) * duration_s)
        return TrialResult(64, 64.0, load, duration_s, tx, tx - lost, achieved_tx_pps=load,
                           backlog_frames=backlog, forwarding_pps=forwarded_by_end / duration_s,
                           steady_state=self.steady_state)


def _trial(**kw: object) -> TrialResult:
    base: dict[str, object] = dict(frame_size=64, mean_frame_size=64.0, offered_pps=42_500,
                                   duration_s=2.0, tx_packets=85_000, rx_packets=85_000)
    base.update(kw)
    return TrialResult(**base)  # type: ignore[arg-type]


def test_a_trial_without_a_backlog_measurement_is_not_judged() -> None:
    t = _trial()
    assert t.steady is None and t.steady_note() is None and t.judged_lost == 0
    assert "backlog_frames" not in t.as_dict()


def test_a_material_backlog_is_not_steady_and_says_what_would_fix_it() -> None:
    t = _trial(backlog_frames=1_616, forwarding_pps=41_676.0)
    assert t.steady is False
    assert t.passed(0)  # "warn": flagged, the verdict is the loss's
    assert t.buffer_s == pytest.approx(1_616 / 41_676)
    assert t.steady_duration_s == pytest.approx(1_616 / 41_676 / STEADY_BACKLOG_RATIO)
    assert t.steady_note() == (
        "not steady at 42,500 pps: 1,616 frames (1.901%) were still in the DUT's buffers when "
        "traffic stopped; it forwarded 41,676 pps; its buffer holds >= 38.8ms: trials of "
        ">= 39s make it immaterial")
    record = t.as_dict()
    assert record["steady"] is False and record["backlog_frames"] == 1_616
    assert steady_note(record) == t.steady_note()


def test_fail_counts_the_backlog_as_lost() -> None:
    t = _trial(backlog_frames=1_616, forwarding_pps=41_676.0, steady_state="fail")
    assert t.judged_lost == 1_616 and not t.passed(0) and not t.passed(0.01)
    assert t.passed(0.02)  # 1.9 % judged lost is within a 2 % tolerance


@pytest.mark.parametrize("backlog", [0, 1, int(STEADY_BACKLOG_RATIO * 85_000)])
def test_a_backlog_within_the_ratio_is_steady(backlog: int) -> None:
    t = _trial(backlog_frames=backlog, forwarding_pps=42_500.0, steady_state="fail")
    assert t.steady is True and t.judged_lost == 0 and t.passed(0)


def test_off_judges_nothing() -> None:
    t = _trial(backlog_frames=5_000, forwarding_pps=40_000.0, steady_state="off")
    assert t.steady is None and t.passed(0)


def test_bad_steady_state_is_refused() -> None:
    with pytest.raises(NetloadConfigError, match=r"steady_state='maybe': use one of"):
        _trial(steady_state="maybe")


@settings(max_examples=40, deadline=None)
@given(st.floats(1e3, 1e6), st.floats(0.05, 0.2))
def test_binary_search_with_fail_finds_the_capacity_behind_a_deep_queue(
        capacity: float, queue_s: float) -> None:
    """A 2 s trial hides an overload of queue / 2 s (2.5 to 10 %) from the loss count; with
    steady_state='fail' the search still ends within 0.5 % below the capacity."""
    warn = binary_search(QueuedDut(capacity, queue_s), capacity * 1.5,
                         settings=TrialSettings(duration_s=2.0, frame_size=64,
                                                mean_frame_size=64.0))
    assert warn.throughput_pps > capacity * 1.02  # what loss alone reports
    assert steady_summary([t.as_dict() for t in warn.trials]) is not None
    fail = binary_search(QueuedDut(capacity, queue_s, "fail"), capacity * 1.5,
                         settings=TrialSettings(duration_s=2.0, frame_size=64,
                                                mean_frame_size=64.0))
    assert capacity * (1 - 0.006) <= fail.throughput_pps <= capacity * (1 + STEADY_BACKLOG_RATIO)


def test_mlrsearch_with_fail_finds_the_capacity_behind_a_deep_queue() -> None:
    capacity = 41_667.0
    goal = LossGoal("NDR", 0.0, 0.0, relative_width=0.005, initial_trial_duration_s=1.0,
                    final_trial_duration_s=2.0, duration_sum_s=2.0)
    found = {}
    for mode in ("warn", "fail"):
        dut = QueuedDut(capacity, 0.06, mode)
        result = mlr_search(dut, settings=TrialSettings(frame_size=64, mean_frame_size=64.0),
                            min_pps=capacity / 100, max_pps=capacity * 1.5, goals=(goal,))
        found[mode] = result.ndr.lower_bound_pps or 0.0
    assert found["warn"] > capacity * 1.02
    assert capacity * (1 - 0.01) <= found["fail"] <= capacity * (1 + STEADY_BACKLOG_RATIO)


def test_the_summary_row_carries_the_flag() -> None:
    dut = QueuedDut(41_667.0, 0.06)
    result = binary_search(dut, 41_667.0 * 1.5,
                           settings=TrialSettings(duration_s=2.0, frame_size=64,
                                                  mean_frame_size=64.0))
    record = {"measurements": [{"kind": "throughput", **result.as_dict()}]}
    (row,) = rows_of("t.py::test_x", "passed", record)
    assert row[7].startswith("not steady at ")
    assert "make it immaterial" in row[7] and "trials not steady" in row[7]


def test_steady_fields_are_in_the_results_schema() -> None:
    """A throughput record with judged trials validates against the shipped schema, and
    the HTML report lists the trial that was not steady."""
    import json
    from pathlib import Path

    from pytest_netload.reports import html
    from pytest_netload.reports.schema import validate

    doc = json.loads((Path(__file__).parents[1] / "data" / "results-full.json").read_text())
    dut = QueuedDut(41_667.0, 0.06)
    result = binary_search(dut, 41_667.0 * 1.5,
                           settings=TrialSettings(duration_s=2.0, frame_size=64,
                                                  mean_frame_size=64.0))
    test = next(t for t in doc["tests"] if any(m["kind"] == "throughput"
                                                for m in t.get("measurements", ())))
    test["measurements"].append({"kind": "throughput", **result.as_dict()})
    validate(doc, "steady sample")
    page = html.render(doc)
    assert "Trials that were not steady" in page and "make it immaterial" in page
