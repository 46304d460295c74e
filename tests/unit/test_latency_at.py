"""Latency at loads (rfc2544/latency_at.py): one latency trial at each fraction of a
throughput, against a fake DUT whose latency grows with its load. Pure logic, no engine."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure.histogram import LogHistogram
from pytest_netload.measure.latency import LatencyResult
from pytest_netload.rfc2544 import TrialResult, binary_search
from pytest_netload.rfc2544.goals import PRESETS, MlrGoalResult
from pytest_netload.rfc2544.latency_at import (
    CSIT_FRACTIONS,
    NO_LOAD_PPS,
    LatencyAt,
    check_latency_at,
    latency_at_loads,
    latency_base,
    load_at,
)
from pytest_netload.search import TrialSettings

ONE_S_64B = TrialSettings(duration_s=1.0, frame_size=64, mean_frame_size=64)


class QueueingDut:
    """Forwards up to `capacity` pps; its latency is 1 µs plus 20 µs x load/capacity, so
    each load's latency says which load it was. Loads above `generator_max` are invalid
    (the generator could not offer them)."""

    def __init__(self, capacity: float, generator_max: float = math.inf) -> None:
        self.capacity = capacity
        self.generator_max = generator_max
        self.loads: list[float] = []
        self.durations: list[float] = []

    def latency_ns(self, load: float) -> int:
        return int(1_000 + 20_000 * load / self.capacity)

    def measure(self, load: float, duration_s: float) -> TrialResult:
        self.loads.append(load)
        self.durations.append(duration_s)
        tx = max(1, round(load * duration_s))
        if load > self.generator_max:
            return TrialResult(64, 64.0, load, duration_s, tx // 2, tx // 2, valid=False,
                               invalid_reason="the generator sent half its frames")
        rx = min(tx, int(self.capacity * duration_s))
        value = self.latency_ns(load)
        lat = LatencyResult(LogHistogram(np.array([rx], dtype=np.uint64),
                                         np.array([value], dtype=np.uint64)),
                            clock="fake", samples=rx)
        return TrialResult(64, 64.0, load, duration_s, tx, rx, achieved_tx_pps=load,
                           latency=lat)


@settings(max_examples=80, deadline=None)
@given(throughput=st.floats(1e3, 1e8),
       fractions=st.lists(st.floats(0.001, 1.0), min_size=1, max_size=6, unique=True))
def test_the_loads_asked_are_the_fractions_of_the_throughput(
        throughput: float, fractions: list[float]) -> None:
    dut = QueueingDut(capacity=throughput)
    result = latency_at_loads(dut, throughput, fractions, settings=ONE_S_64B)
    assert dut.loads == [f * throughput for f in sorted(fractions)]  # lowest first
    assert [x.fraction for x in result.loads] == sorted(fractions)
    assert [x.load_pps for x in result.loads] == dut.loads
    assert dut.durations == [1.0] * len(fractions)
    assert (result.of, result.base_pps, result.frame_size) == ("throughput", throughput, 64)


@settings(max_examples=40, deadline=None)
@given(throughput=st.floats(1.0, 1e8))
def test_no_load_is_csits_9kpps_or_one_percent_whichever_is_lower(throughput: float) -> None:
    assert load_at(0.0, throughput) == min(NO_LOAD_PPS, 0.01 * throughput)
    assert 0 < load_at(0.0, throughput) <= throughput
    assert load_at(0.5, throughput) == 0.5 * throughput


@settings(max_examples=100, deadline=None)
@given(value=st.one_of(st.floats(allow_nan=True), st.integers(-5, 5)))
def test_a_fraction_is_taken_exactly_when_it_is_from_0_to_1(value: float) -> None:
    if isinstance(value, float) and not math.isnan(value) and 0 <= value <= 1 or \
            isinstance(value, int) and 0 <= value <= 1:
        assert check_latency_at([value]) == LatencyAt((float(value),))
    else:
        with pytest.raises(NetloadConfigError, match=r"^latency_at=\[.*\]: .* is not a fraction "
                                                     r"from 0 to 1; give fractions"):
            check_latency_at([value])


def test_each_load_has_its_own_latency_with_percentiles_and_loss() -> None:
    dut = QueueingDut(capacity=100_000)
    result = latency_at_loads(dut, 100_000, [1.0, 0.1, 0.5], settings=ONE_S_64B)
    means = [x.latency.mean_ns for x in result.loads if x.latency is not None]
    assert len(means) == 3 and means == sorted(means)  # higher load, higher latency
    at_half = result[0.5]
    assert at_half.latency is not None
    # one bucket: its value lies within it, above 50 %'s latency, below 100 %'s
    assert dut.latency_ns(50_000) <= at_half.latency.percentile(99).value_ns < \
        dut.latency_ns(100_000)
    record = result.as_dict()
    assert set(record) == {"of", "base_pps", "preset", "duration_s", "loads"}
    load = record["loads"][1]
    assert (load["fraction"], load["load_pps"], load["lost"], load["tx_packets"],
            load["invalid_reason"]) == (0.5, 50_000.0, 0, 50_000, None)
    lat = load["latency"]
    assert lat["min_ns"] <= lat["mean_ns"] <= lat["max_ns"]
    assert {"p50", "p99", "p99.9"} <= set(lat["percentiles"])
    with pytest.raises(KeyError, match=r"no latency at 0.9 of the throughput at 64B; "
                                       r"measured at \[0.1, 0.5, 1.0\]"):
        result[0.9]


def test_a_load_the_generator_cannot_offer_is_kept_with_its_reasons() -> None:
    dut = QueueingDut(capacity=100_000, generator_max=80_000)
    result = latency_at_loads(dut, 100_000, [0.5, 0.9], settings=replace(ONE_S_64B, retries=1))
    assert dut.loads == [50_000, 90_000, 90_000]  # one retry at 90 %
    assert result[0.5].latency is not None and result[0.5].invalid_reason is None
    assert result[0.9].latency is None
    assert result[0.9].invalid_reason == "the generator sent half its frames"
    assert result.as_dict()["loads"][1]["latency"] is None


def test_a_load_the_generator_cannot_hold_steps_down_when_asked() -> None:
    """After a throughput the generator set: 5 % steps until a try is valid; the record
    keeps the load asked and the one measured, and every try."""
    dut = QueueingDut(capacity=1e6, generator_max=88_000)
    result = latency_at_loads(dut, 100_000, [0.5, 1.0], settings=replace(ONE_S_64B, retries=0),
                              step_down=(0.95, 0.95, 0.95))
    assert dut.loads == pytest.approx([50_000, 100_000, 95_000, 90_250, 85_737.5])
    top = result[1.0]
    assert top.stepped_down and top.load_pps == pytest.approx(85_737.5)
    assert top.asked_pps == 100_000 and top.latency is not None and len(top.trials) == 4
    assert not result[0.5].stepped_down
    record = result.as_dict()["loads"][1]
    assert (record["asked_pps"], record["invalid_reason"]) == (100_000, None)
    # not enough steps: the load is kept without latency, at the last load tried
    short = latency_at_loads(QueueingDut(1e6, generator_max=88_000), 100_000, [1.0],
                             settings=replace(ONE_S_64B, retries=0), step_down=(0.95,))
    assert short[1.0].latency is None and short[1.0].load_pps == pytest.approx(95_000)
    with pytest.raises(NetloadConfigError, match=r"step_down=\[1.05\]: give factors in "
                                                 r"\(0, 1\)"):
        latency_at_loads(dut, 100_000, [1.0], settings=ONE_S_64B, step_down=(1.05,))


def test_a_throughput_of_zero_measures_nothing() -> None:
    dut = QueueingDut(capacity=1_000)
    result = latency_at_loads(dut, 0.0, [0.5], settings=ONE_S_64B)
    assert dut.loads == [] and result.loads == ()


@pytest.mark.parametrize(("base", "fractions", "words"), [
    (-1.0, [0.5], r"base_pps=-1.0 \(the throughput\): give a rate >= 0"),
    (math.nan, [0.5], r"base_pps=nan \(the throughput\): give a rate >= 0"),
    (1e3, [], r"fractions=\[\] names no load"),
    (1e3, [0.5, 0.5], r"fractions=\[0.5, 0.5\] lists a load twice"),
])
def test_bad_inputs_name_themselves(base: float, fractions: list[float], words: str) -> None:
    with pytest.raises(NetloadConfigError, match=words):
        latency_at_loads(QueueingDut(1e3), base, fractions, settings=ONE_S_64B)


def test_after_a_binary_search_the_loads_are_fractions_of_its_throughput() -> None:
    dut = QueueingDut(capacity=123_456)
    tput = binary_search(dut, 1e6, settings=ONE_S_64B)
    searched = len(dut.loads)
    of, base = latency_base(check_latency_at([0.1, 0.5, 0.9, 1.0]), tput.throughput_pps)
    result = latency_at_loads(dut, base, [0.1, 0.5, 0.9, 1.0], settings=ONE_S_64B, of=of)
    assert (of, base) == ("throughput", tput.throughput_pps)
    assert dut.loads[searched:] == [f * tput.throughput_pps for f in (0.1, 0.5, 0.9, 1.0)]
    assert all(x.lost == 0 for x in result.loads)  # at or below the throughput: no loss
    record = replace(tput, latency_at=result).as_dict()
    assert record["latency_at"]["loads"][3]["load_pps"] == tput.throughput_pps


def test_csit_is_of_the_pdr_when_the_search_has_one() -> None:
    ndr, pdr = PRESETS["ci-fast"]
    goals = (MlrGoalResult(ndr, 90_000.0, 91_000.0, 90_000.0),
             MlrGoalResult(pdr, 95_000.0, 96_000.0, 94_900.0))
    csit = check_latency_at("csit")
    assert csit is not None and csit.fractions == CSIT_FRACTIONS and csit.preset == "csit"
    assert latency_base(csit, 90_000.0, goals) == ("PDR", 95_000.0)
    # fractions given: of the throughput, which an MLRsearch's first goal (its NDR) gives
    assert latency_base(LatencyAt((0.5,)), 90_000.0, goals) == ("NDR", 90_000.0)
    # no goal with loss (rfc2544-strict), or a binary search: the throughput stands in
    assert latency_base(csit, 90_000.0, goals[:1]) == ("NDR", 90_000.0)
    assert latency_base(csit, 90_000.0) == ("throughput", 90_000.0)
    dut = QueueingDut(capacity=100_000)
    result = latency_at_loads(dut, 95_000.0, csit.fractions, settings=ONE_S_64B, of="PDR",
                              preset="csit")
    assert dut.loads == [load_at(0.0, 95_000.0), 9_500.0, 47_500.0, 85_500.0]
    assert dut.loads[0] == 950.0  # 1 % of the PDR: below CSIT's 9 kpps
    assert result.as_dict()["preset"] == "csit" and result.as_dict()["of"] == "PDR"


def test_latency_at_refuses_what_it_cannot_read() -> None:
    assert check_latency_at(None) is None
    with pytest.raises(NetloadConfigError, match=r"LatencyAt\(of='ndr'\): use one of "):
        LatencyAt((0.5,), of="ndr")
    with pytest.raises(NetloadConfigError, match=r"^latency_at=0.5: give fractions"):
        check_latency_at(0.5)
