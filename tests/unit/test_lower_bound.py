"""A throughput the generator bounded is a lower bound, not the DUT's figure: the pure
notion (rfc2544/lower_bound.py) in the binary search, MLRsearch and RFC 2889's searches,
against fake DUTs faster and slower than the generator; the verdicts (a bound that clears
the requirement passes, one that does not is GeneratorLimit, an ERROR, not a FAIL); and
how the summary, JUnit and the HTML report show it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload import GeneratorLimit, NetloadError, assert_rfc2889, assert_throughput
from pytest_netload import format as fmt
from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure.recording import recording
from pytest_netload.plugin.terminal import rows_of
from pytest_netload.reports import html
from pytest_netload.reports.junit import properties
from pytest_netload.reports.load import load
from pytest_netload.rfc2544 import TrialResult, binary_search
from pytest_netload.rfc2544.frame_loss import frame_loss_sweep
from pytest_netload.rfc2544.lower_bound import (
    LOWER_BOUND_NOTE,
    SearchMax,
    check_max_source,
    lower_bound_by_generator,
    lower_bound_reason,
)
from pytest_netload.rfc2544.mlr import LossGoal, mlr_search
from pytest_netload.rfc2889 import (
    AddressLoad,
    AddressTrial,
    BroadcastTrial,
    MeshTrial,
    address_learning_rate,
    broadcast_forwarding,
    fully_meshed,
)
from pytest_netload.search import FunctionMeasurer, TrialSettings

SHARE = 0.95   # the runner searches from 95 % of the generator's calibrated ceiling
GOAL = LossGoal("NDR", 0.0, exceed_ratio=0.0, relative_width=0.005,
                initial_trial_duration_s=0.1, final_trial_duration_s=1.0, duration_sum_s=1.0)
FULL = Path(__file__).parents[1] / "data" / "results-full.json"


class Rig:
    """A DUT forwarding `capacity` pps behind a generator that offers at most `offers` pps:
    above that every trial is invalid (the generator sent 90 %)."""

    def __init__(self, capacity: float, offers: float = float("inf")) -> None:
        self.capacity, self.offers = capacity, offers

    def measure(self, load: float, duration_s: float = 1.0) -> TrialResult:
        tx = max(1, round(load * duration_s))
        if load > self.offers:
            return TrialResult(64, 64.0, load, duration_s, int(tx * 0.9), int(tx * 0.9),
                               valid=False, invalid_reason="the generator sent 90 %")
        rx = min(tx, int(self.capacity * duration_s))
        return TrialResult(64, 64.0, load, duration_s, tx, rx, achieved_tx_pps=load)


def search(rig: Rig, top: SearchMax, retries: int = 2, **kwargs: Any) -> Any:
    return binary_search(rig, top.pps,
                         settings=TrialSettings(duration_s=1.0, retries=retries, frame_size=64,
                                                mean_frame_size=64.0),
                         **top.source_args, **kwargs)


def generator_max(ceiling: float) -> SearchMax:
    return SearchMax(ceiling * SHARE, "generator", ceiling)


# ---- the notion itself ------------------------------------------------------------------


@pytest.mark.parametrize(("found", "upper", "ceiling", "source", "expected"), [
    (95.0, None, None, "generator", True),      # the generator's maximum passed
    (95.0, None, None, "line_rate", False),     # the DUT forwards at line rate
    (95.0, None, None, "max_rate", False),      # the limit the test asked for
    (95.0, None, None, None, False),            # not told: never claimed
    (50.0, None, 60.0, "line_rate", True),      # the generator could not offer 60
    (50.0, None, 60.0, None, True),
    (50.0, 55.0, 60.0, "generator", False),     # the DUT failed a valid trial at 55
    (50.0, 55.0, None, "generator", False),
    (0.0, None, 60.0, "generator", False),      # nothing passed: no figure at all
])
def test_lower_bound_by_generator(found: float, upper: float | None, ceiling: float | None,
                                  source: str | None, expected: bool) -> None:
    assert lower_bound_by_generator(found, upper, ceiling, 95.0, source) is expected


def test_max_sources_are_checked() -> None:
    assert check_max_source(None) == (None, None)
    assert check_max_source("generator", 100) == ("generator", 100.0)
    assert check_max_source("generator") == ("generator", None)
    with pytest.raises(NetloadConfigError, match="max_source='veth'.*'line_rate'"):
        check_max_source("veth")
    with pytest.raises(NetloadConfigError, match="goes with max_source='generator' only"):
        check_max_source("line_rate", 100.0)
    for bad in (0, -1.0, float("nan"), True, "100"):
        with pytest.raises(NetloadConfigError, match="generator_max_pps"):
            check_max_source("generator", bad)
    with pytest.raises(NetloadConfigError, match="needs its calibrated rate"):
        SearchMax(95.0, "generator")
    with pytest.raises(NetloadConfigError, match="needs its source"):
        SearchMax(95.0, None)  # type: ignore[arg-type]
    with pytest.raises(NetloadConfigError, match="positive rate"):
        SearchMax(0.0, "line_rate")
    assert SearchMax(95.0, "generator", 100.0).source_args == {
        "max_source": "generator", "generator_max_pps": 100.0}
    with pytest.raises(NetloadConfigError, match="max_source"):
        binary_search(Rig(1e6), 1e5,
                      settings=TrialSettings(duration_s=1.0, frame_size=64, mean_frame_size=64.0),
                      max_source="calibrated")  # type: ignore[arg-type]


def test_reasons_say_how_the_generator_bounded_it() -> None:
    assert lower_bound_reason(max_pps=95_000.0, max_source="generator",
                              generator_max_pps=100_000.0, ceiling_pps=None) == (
        "the search's maximum, 95% of the generator's calibrated 100,000 pps, passed")
    assert lower_bound_reason(max_pps=95_000.0, max_source="line_rate",
                              generator_max_pps=None, ceiling_pps=60_000.0, unit="fps") == (
        "the generator could not offer 60,000 fps (every try invalid) and every load below "
        "it passed")


# ---- the binary search, for any DUT faster or slower than the generator -----------------


@settings(max_examples=80, deadline=None)
@given(ceiling=st.floats(1e3, 1e7), faster=st.floats(1.0, 100.0))
def test_a_dut_faster_than_the_generator_gives_a_lower_bound(ceiling: float,
                                                             faster: float) -> None:
    r = search(Rig(ceiling * faster), generator_max(ceiling))
    assert r.lower_bound_by_generator
    assert r.throughput_pps == r.max_pps == ceiling * SHARE and r.upper_pps is None
    d = r.as_dict()
    assert (d["lower_bound_by_generator"], d["max_source"], d["generator_max_pps"]) == (
        True, "generator", ceiling)


@settings(max_examples=80, deadline=None)
@given(ceiling=st.floats(1e3, 1e7), share=st.floats(0.01, 0.9))
def test_a_dut_slower_than_the_generator_gives_its_own_figure(ceiling: float,
                                                              share: float) -> None:
    capacity = ceiling * share   # below the search's maximum (95 % of the ceiling)
    r = search(Rig(capacity), generator_max(ceiling), max_trials=40)
    assert not r.lower_bound_by_generator
    assert r.upper_pps is not None and r.throughput_pps <= capacity + 1   # whole frames
    assert r.as_dict()["lower_bound_by_generator"] is False


@settings(max_examples=60, deadline=None)
@given(offers=st.floats(1e3, 1e6), faster=st.floats(1.01, 50.0),
       source=st.sampled_from(["line_rate", "max_rate"]))
def test_a_load_the_generator_cannot_offer_closes_a_lower_bound(offers: float, faster: float,
                                                                source: str) -> None:
    """Whatever the maximum, when the lowest load that did not pass is one the generator
    could not offer (the DUT never failed a valid trial), the figure is a lower bound."""
    top = SearchMax(offers * 2, source)  # type: ignore[arg-type]
    r = search(Rig(offers * faster, offers=offers), top, retries=0)
    assert r.generator_ceiling_pps is not None and r.upper_pps is None
    assert r.lower_bound_by_generator and r.throughput_pps <= offers


def test_a_passing_line_rate_or_max_rate_is_not_a_lower_bound() -> None:
    for source in ("line_rate", "max_rate"):
        r = search(Rig(1e9), SearchMax(1e6, source))  # type: ignore[arg-type]
        assert r.throughput_pps == 1e6 and r.upper_pps is None
        assert not r.lower_bound_by_generator and r.generator_max_pps is None
    untold = binary_search(Rig(1e9), 1e6,
                           settings=TrialSettings(duration_s=1.0, frame_size=64,
                                                  mean_frame_size=64.0))
    assert untold.max_source is None and not untold.lower_bound_by_generator


def test_frame_loss_keeps_where_its_maximum_came_from() -> None:
    r = frame_loss_sweep(Rig(1e9), 95_000.0,
                         settings=TrialSettings(duration_s=1.0, frame_size=64,
                                                mean_frame_size=64.0),
                         max_source="generator", generator_max_pps=1e5)
    assert r.as_dict()["max_source"] == "generator"
    assert r.as_dict()["generator_max_pps"] == 1e5
    assert r.points[0].lost == 0   # 100 % of the generator's ceiling: the DUT not saturated


# ---- MLRsearch ----------------------------------------------------------------------------


def mlr(rig: Rig, top: SearchMax) -> Any:
    return mlr_search(FunctionMeasurer(lambda load, d: rig.measure(load, d)),
                      settings=TrialSettings(frame_size=64, mean_frame_size=64.0),
                      min_pps=top.pps / 1000, max_pps=top.pps, goals=(GOAL,), **top.source_args)


@pytest.mark.parametrize(("rig", "top", "expected"), [
    (Rig(1e7), SearchMax(95_000.0, "generator", 1e5), True),   # the maximum, the generator's
    (Rig(1e7), SearchMax(95_000.0, "line_rate"), False),        # line rate: the DUT's figure
    (Rig(1e7, offers=60_000.0), SearchMax(95_000.0, "line_rate"), True),  # a ceiling
    (Rig(50_000.0), SearchMax(95_000.0, "generator", 1e5), False),        # the DUT failed
])
def test_mlrsearch_goals_say_when_the_generator_set_the_lower_bound(
        rig: Rig, top: SearchMax, expected: bool) -> None:
    r = mlr(rig, top)
    assert r.ndr.lower_bound_by_generator is expected
    assert r.ndr.as_dict()["lower_bound_by_generator"] is expected
    assert (r.max_source, r.generator_max_pps) == (top.source, top.generator_max_pps)
    assert r.as_dict()["max_source"] == top.source
    fst = r.throughput()   # what throughput() with search="mlrsearch" reports
    assert fst.lower_bound_by_generator is expected
    assert fst.as_dict()["generator_max_pps"] == top.generator_max_pps


# ---- RFC 2889 -------------------------------------------------------------------------------


class Switch:
    """Two ports forwarding at most `capacity` pps each; the generator offers at most
    `offers`."""

    def __init__(self, capacity: float, offers: float = float("inf")) -> None:
        self.capacity, self.offers = capacity, offers

    def mesh(self, load: float, d: float) -> MeshTrial:
        tx = round(load * d)
        rx = min(tx, round(self.capacity * d))
        return MeshTrial(load, (tx, tx), (rx, rx), d, valid=load <= self.offers,
                         invalid_reason=None if load <= self.offers else "tx short")

    def broadcast(self, load: float, d: float) -> BroadcastTrial:
        tx = round(load * d)
        return BroadcastTrial(load, d, tx, (min(tx, round(self.capacity * d)),),
                              valid=load <= self.offers,
                              invalid_reason=None if load <= self.offers else "tx short")

    def addresses(self, load: AddressLoad, _d: float) -> AddressTrial:
        ok = load.learning_rate_fps <= self.offers
        return AddressTrial(load.count, load.count, load.count, 0, valid=ok,
                            invalid_reason=None if ok else "learning frames short",
                            learning_rate_fps=load.learning_rate_fps,
                            test_rate_fps=load.test_rate_fps)


def test_rfc2889_searches_say_when_the_generator_bounded_them() -> None:
    fast, slow = Switch(1e7), Switch(20_000.0)
    one_s = TrialSettings(duration_s=1.0)
    mesh = fully_meshed(FunctionMeasurer(fast.mesh), settings=one_s, ports=2,
                        max_pps_per_port=95_000.0, max_source="generator",
                        generator_max_pps_per_port=1e5)
    assert mesh.lower_bound_by_generator and mesh.as_dict()["generator_max_pps_per_port"] == 1e5
    assert not fully_meshed(FunctionMeasurer(slow.mesh), settings=one_s, ports=2,
                            max_pps_per_port=95_000.0, max_source="generator",
                            generator_max_pps_per_port=1e5).lower_bound_by_generator
    assert not fully_meshed(FunctionMeasurer(fast.mesh), settings=one_s, ports=2,
                            max_pps_per_port=95_000.0,
                            max_source="line_rate").lower_bound_by_generator
    bcast = broadcast_forwarding(FunctionMeasurer(fast.broadcast), settings=one_s, ports=2,
                                 max_pps=95_000.0, max_source="generator",
                                 generator_max_pps=1e5)
    assert bcast.lower_bound_by_generator and bcast.as_dict()["lower_bound_by_generator"]
    assert not broadcast_forwarding(FunctionMeasurer(slow.broadcast), settings=one_s, ports=2,
                                    max_pps=95_000.0, max_source="generator",
                                    generator_max_pps=1e5).lower_bound_by_generator
    # the learning rate's maximum is given: only a rate the generator cannot offer bounds it
    assert not address_learning_rate(FunctionMeasurer(fast.addresses), count=10,
                                     max_rate_fps=5000).lower_bound_by_generator
    capped = address_learning_rate(FunctionMeasurer(Switch(1e7, offers=3000.0).addresses),
                                   settings=TrialSettings(retries=0),
                                   count=10, max_rate_fps=5000)
    assert capped.ceiling_fps is not None and capped.upper_fps is None
    assert capped.lower_bound_by_generator and capped.as_dict()["lower_bound_by_generator"]


# ---- the verdicts -----------------------------------------------------------------------------


def test_a_lower_bound_passes_only_when_it_clears_the_requirement() -> None:
    r = search(Rig(1e9), generator_max(8016.0))   # 7,615 pps: the generator's
    assert r.lower_bound_by_generator
    with recording("t") as record:
        assert_throughput(r, at_least="7kpps")
        with pytest.raises(GeneratorLimit) as info:
            assert_throughput(r, at_least="14137pps")
    err = info.value
    assert isinstance(err, NetloadError) and not isinstance(err, AssertionError)
    lines = str(err).splitlines()
    assert lines[0] == (
        "throughput at 64B is at least 7,615 pps (the generator's ceiling; the DUT lost "
        "nothing at the highest load offered), which does not clear >= 14,137 pps: the "
        "generator, not the DUT, is the limit; give the generator faster ports or more "
        "cores, or lower the requirement")
    assert lines[1].endswith("only a lower bound of the DUT's throughput: the search's "
                             "maximum, 95% of the generator's calibrated 8,016 pps, passed, "
                             "so the DUT was never saturated")
    assert lines[2] == "required: throughput >= 14.137kpps"
    assert lines[3].startswith("conditions: frame size 64B, searched up to 7,615 pps")
    passed, errored = record.verdicts   # both recorded, the error before it was raised
    assert passed["passed"] and passed["lower_bound_by_generator"] and "outcome" not in passed
    assert passed["message"].endswith("which clears >= 7,000 pps")
    assert not errored["passed"] and errored["outcome"] == "error"
    assert errored["generator_max_pps"] == 8016.0 and errored["max_source"] == "generator"
    assert errored["message"] == lines[0]
    assert not record.failed   # not the DUT's failure: no capture for it
    json.dumps(record.verdicts)


def test_a_lower_bound_with_a_loss_tolerance_and_an_mlrsearch_goal() -> None:
    r = search(Rig(1e9), generator_max(1e5), loss_tolerance=0.001)
    with pytest.raises(GeneratorLimit, match=r"the DUT lost no more than 0\.1% at the "):
        assert_throughput(r, at_least="1Mpps")
    goal = mlr(Rig(1e7), SearchMax(95_000.0, "generator", 1e5))
    with pytest.raises(GeneratorLimit, match=r"is at least 95,000 pps \(the NDR, the "
                                             r"generator's ceiling; the DUT met the NDR goal"):
        assert_throughput(goal, at_least="1Mpps")
    assert_throughput(goal, at_least="90kpps")


def test_the_dut_figure_still_fails_as_before() -> None:
    r = search(Rig(5_000.0), generator_max(1e5), max_trials=40)
    with pytest.raises(AssertionError) as info:
        assert_throughput(r, at_least="1Mpps")
    assert type(info.value) is AssertionError
    assert "is not >= 1,000,000 pps" in str(info.value)
    assert "only a lower bound" not in str(info.value)


def test_assert_rfc2889_errors_on_a_lower_bound_below_the_requirement() -> None:
    bcast = broadcast_forwarding(FunctionMeasurer(Switch(1e7).broadcast),
                                 settings=TrialSettings(duration_s=1.0), ports=2,
                                 max_pps=95_000.0, max_source="generator", generator_max_pps=1e5)
    with recording("t") as record:
        assert_rfc2889(bcast, at_least="90kpps")
        with pytest.raises(GeneratorLimit) as info:
            assert_rfc2889(bcast, at_least="200kpps")
    assert str(info.value).splitlines() == [
        "RFC 2889 broadcast throughput is at least 95.00 kpps (the generator's ceiling; the "
        "DUT delivered every frame at the highest load offered), which does not clear >= "
        "200.0 kpps: the generator, not the DUT, is the limit; give the generator faster "
        "ports or more cores, or lower the requirement",
        "measured: 95.00 kpps (1 trials); only a lower bound: the search's maximum, 95% of "
        "the generator's calibrated 100,000 pps, passed, so the DUT was never saturated",
        "required: broadcast throughput >= 200.0 kpps"]
    passed, errored = record.verdicts
    assert passed["passed"] and passed["lower_bound_by_generator"]
    assert errored["outcome"] == "error" and not errored["passed"]
    slow = broadcast_forwarding(FunctionMeasurer(Switch(20_000.0).broadcast),
                                settings=TrialSettings(duration_s=1.0), ports=2,
                                max_pps=95_000.0, max_source="generator", generator_max_pps=1e5)
    with pytest.raises(AssertionError, match="is not >= 200.0 kpps"):
        assert_rfc2889(slow, at_least="200kpps")


# ---- how it reads -----------------------------------------------------------------------------


def test_at_least_is_ascii_in_text_and_a_sign_in_html() -> None:
    assert fmt.at_least(fmt.rate_pps(241_500)) == ">= 241.5 kpps"
    assert fmt.at_least(fmt.rate_pps(241_500, fmt.HTML), fmt.HTML) == "\u2265 241.5 kpps"
    assert fmt.at_least("-") == "-" and fmt.at_least("\u2013", fmt.HTML) == "\u2013"
    assert fmt.at_least(fmt.rate_pps(241_500)).isascii()


def test_the_summary_row_reads_as_a_lower_bound() -> None:
    bound = search(Rig(1e9), generator_max(254_210.0))
    dut = search(Rig(50_000.0), generator_max(254_210.0), max_trials=40)
    record = {"measurements": [{"kind": "throughput", **bound.as_dict()}]}
    (row,) = rows_of("t.py::test_router[64B]", "passed", record)
    assert row[1:3] == ("64B", ">= 241.5 kpps") and row[6] == "PASS"
    assert row[7].startswith(LOWER_BOUND_NOTE) and LOWER_BOUND_NOTE == \
        "generator ceiling; DUT not saturated"
    (row,) = rows_of("t.py::test_router[64B]", "error", record)
    assert row[6] == "ERROR"
    (row,) = rows_of("t.py::test_router[64B]", "passed",
                     {"measurements": [{"kind": "throughput", **dut.as_dict()}]})
    assert not row[2].startswith(">=") and LOWER_BOUND_NOTE not in row[7]
    mesh = fully_meshed(FunctionMeasurer(Switch(1e7).mesh), settings=TrialSettings(duration_s=1.0),
                        ports=2,
                        max_pps_per_port=95_000.0, max_source="generator",
                        generator_max_pps_per_port=1e5)
    (row,) = rows_of("t.py::test_mesh", "passed", {"measurements": [
        {"kind": "rfc2889_fully_meshed", **mesh.as_dict(), "frame_size": 64}]})
    assert row[7] == f"RFC 2889 mesh throughput >= 95.00 kpps ({LOWER_BOUND_NOTE})"
    # the procedures that run at it, or from the generator's maximum, say so too
    sweep = frame_loss_sweep(Rig(1e9), 95_000.0,
                             settings=TrialSettings(duration_s=1.0, frame_size=64,
                                                    mean_frame_size=64.0),
                             max_source="generator", generator_max_pps=1e5)
    (row,) = rows_of("t.py::test_x", "passed", {"measurements": [
        {"kind": "frame_loss", **sweep.as_dict()},
        {"kind": "recovery", "frame_size": 64, "recovery_s": None, "trials": [],
         "throughput_lower_bound_by_generator": True}]})
    assert row[7] == ("frame loss 0 at 100% (the generator's ceiling); recovery: no overload "
                      "loss (the throughput is the generator's ceiling: the DUT was not "
                      "overloaded)")


def test_junit_flags_each_throughput_figure() -> None:
    bound = search(Rig(1e9), generator_max(1e5))
    props = properties([{"kind": "throughput", **bound.as_dict()}])
    assert props == [("netload.throughput_pps.64B", 95_000.0),
                     ("netload.lower_bound_by_generator.throughput_pps.64B", 1)]
    bcast = broadcast_forwarding(FunctionMeasurer(Switch(20_000.0).broadcast),
                                 settings=TrialSettings(duration_s=1.0), ports=2,
                                 max_pps=95_000.0)
    props = properties([{"kind": "rfc2889_broadcast_forwarding", **bcast.as_dict(),
                         "frame_size": 64}])
    assert props[1] == ("netload.lower_bound_by_generator.rfc2889_broadcast_throughput_pps.64B",
                        0)
    # a record written before the field existed gets no flag
    assert properties([{"kind": "throughput", "frame_size": 64, "throughput_pps": 1.0}]) == [
        ("netload.throughput_pps.64B", 1.0)]


def test_the_report_shows_the_bound_and_the_error() -> None:
    doc = load(FULL)   # its test_router_beyond_the_generator: a bound, then an error
    (test,) = [t for t in doc["tests"] if t["nodeid"].endswith("beyond_the_generator")]
    assert test["outcome"] == "error" and test["error"].startswith(
        "throughput at 64B is at least 296,400 pps")
    assert [v.get("outcome") for v in test["verdicts"]] == [None, "error"]
    page = html.render(doc)
    assert "\u2265 296.4 kpps" in page
    assert "a lower bound: the generator&#39;s ceiling (calibrated 312.0 kpps)" in page
    assert '<span class="badge ERROR">ERROR</span>' in page


def test_a_ceiling_says_why_its_tries_were_invalid() -> None:
    """The last invalid try's reason at the ceiling: the user (and a busy-machine check)
    reads why the generator could not offer it."""
    from types import SimpleNamespace as T

    from pytest_netload.rfc2544.lower_bound import invalid_reason_at

    trials = [T(offered_pps=800.0, invalid_reason=None),
              T(offered_pps=814.0, invalid_reason="first"),
              T(offered_pps=814.0, invalid_reason="worker waited 959ms (another task took "
                                                  "the core)"),
              T(offered_pps=900.0, invalid_reason="other load")]
    why = invalid_reason_at(trials, 814.0)
    assert why == "worker waited 959ms (another task took the core)"
    assert invalid_reason_at(trials, 1000.0) is None and invalid_reason_at(trials, None) is None
    meshed = [T(offered_pps_per_port=500.0, invalid_reason="lagged 3 ms")]  # RFC 2889's
    assert invalid_reason_at(meshed, 500.0, "offered_pps_per_port") == "lagged 3 ms"
    assert invalid_reason_at(meshed, 500.0) is None  # no offered_pps: nothing matched
    text = lower_bound_reason(max_pps=1000.0, max_source="max_rate", generator_max_pps=None,
                              ceiling_pps=814.0, why=why)
    assert "(every try invalid: worker waited 959ms (another task took the core)) and every " \
        "load below it passed" in text
