"""NDR/PDR wherever throughput is shown: the goals' text (rfc2544/mlr_text.py), the
summary row of an MLRsearch, its JUnit properties (reports/junit.py) and assert_throughput
on MLRsearch results, passed and failed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure.recording import recording
from pytest_netload.plugin.terminal import rows_of
from pytest_netload.reports.junit import goal_properties, properties
from pytest_netload.rfc2544 import FrameSizeThroughput, TrialResult
from pytest_netload.rfc2544.mlr import LossGoal, MlrGoalResult, MlrResult
from pytest_netload.rfc2544.mlr_text import goal_band, goal_bracket, goal_key, goals_note
from pytest_netload.search import TrialSettings
from pytest_netload.verdicts.assertions import assert_throughput

NDR, PDR = LossGoal("NDR", 0.0), LossGoal("PDR", 0.005, final_trial_duration_s=30.0)


def _trial(load: float, lost: int = 0, seconds: float = 60.0) -> TrialResult:
    tx = round(load * seconds)
    return TrialResult(64, 64.0, load, seconds, tx, tx - lost)


def mlr(frame_size: int = 64, *, ndr: tuple[float | None, float | None] = (50_015.0, 50_266.0),
        pdr: tuple[float | None, float | None] = (50_266.0, 50_518.0),
        pdr_conditional: float | None = 50_017.0, by_generator: bool = False) -> MlrResult:
    goals = (MlrGoalResult(NDR, *ndr, ndr[0]),
             MlrGoalResult(PDR, *pdr, pdr_conditional, upper_bound_by_generator=by_generator))
    trials = (_trial(50_015.0), _trial(50_266.0, lost=200), _trial(50_518.0, lost=30_000))
    settings = TrialSettings(frame_size=frame_size, mean_frame_size=float(frame_size),
                             line_rate_bps=10e9)
    return MlrResult(goals, trials, settings, 14_881.0, 14_880_952.0, 180.0)


# ---- the goals' text ---------------------------------------------------------------------


def test_a_goal_reads_as_its_lower_bound_in_its_bracket() -> None:
    assert goal_band("NDR", 50_015.0, 50_266.0) == "NDR 50.02 kpps [50.02, 50.27]"
    assert goal_band("PDR", 14_880_952.0, None) == "PDR 14.88 Mpps [14.88, inf)"
    assert goal_band("NDR", None, 14_881.0) == "NDR not found (upper bound 14.88 kpps)"
    assert goal_band("NDR", None, None) == "NDR not found"
    assert goal_band("PDR", 50_266.0, 50_518.0, by_generator=True) == \
        "PDR 50.27 kpps [50.27, 50.52] (upper bound: the generator's ceiling)"


def test_a_goal_bracket_reads_exact_as_assertion_messages_write_rates() -> None:
    assert goal_bracket("NDR", 50_015.2, 50_266.0) == "NDR [50,015, 50,266] pps"
    assert goal_bracket("NDR", None, 14_881.0) == "NDR [-, 14,881] pps"
    assert goal_bracket("PDR", 14_880_952.0, None) == "PDR [14,880,952, -] pps"
    assert goal_bracket("PDR", 50_266.0, 50_518.0, by_generator=True) == \
        "PDR [50,266, 50,518] pps (upper bound: the generator's ceiling)"


def test_goal_names_become_property_name_parts() -> None:
    assert [goal_key(n) for n in ("NDR", "PDR", "PDR 1%", "--", "Ndr-0.5")] == \
        ["ndr", "pdr", "pdr_1", "goal", "ndr_0_5"]


def test_the_note_lists_every_goal_of_a_record_in_order() -> None:
    record = mlr().as_dict()
    assert goals_note(record["goals"]) == \
        "NDR 50.02 kpps [50.02, 50.27]; PDR 50.27 kpps [50.27, 50.52]"
    assert goals_note([]) == ""


# ---- the throughput a goal gives -----------------------------------------------------------


def test_an_mlrsearch_gives_the_throughput_of_its_first_goal_with_every_goal() -> None:
    result = mlr()
    fst = result.throughput()
    assert (fst.throughput_pps, fst.upper_pps, fst.loss_tolerance, fst.duration_s) == \
        (50_015.0, 50_266.0, 0.0, 60.0)
    assert fst.method == "mlrsearch" and fst.resolution is None
    assert [g.name for g in fst.goals] == ["NDR", "PDR"]
    pdr = result.throughput("pdr")
    assert (pdr.throughput_pps, pdr.upper_pps, pdr.loss_tolerance, pdr.duration_s) == \
        (50_266.0, 50_518.0, 0.005, 30.0)
    assert [g.name for g in pdr.goals] == ["PDR", "NDR"]  # the judged goal first
    assert mlr(ndr=(None, 14_881.0)).throughput().throughput_pps == 0.0
    assert "goals" not in fst.as_dict()  # the "mlrsearch" record keeps them


# ---- JUnit properties ----------------------------------------------------------------------


def test_every_goal_gives_its_figure_bounds_and_conditional_throughput() -> None:
    record = {"kind": "mlrsearch", **mlr().as_dict()}
    assert properties([record]) == [
        ("netload.ndr_pps.64B", 50_015.0), ("netload.ndr_lower_pps.64B", 50_015.0),
        ("netload.ndr_upper_pps.64B", 50_266.0), ("netload.ndr_conditional_pps.64B", 50_015.0),
        ("netload.lower_bound_by_generator.ndr_pps.64B", 0),
        ("netload.pdr_pps.64B", 50_266.0), ("netload.pdr_lower_pps.64B", 50_266.0),
        ("netload.pdr_upper_pps.64B", 50_518.0), ("netload.pdr_conditional_pps.64B", 50_017.0),
        ("netload.lower_bound_by_generator.pdr_pps.64B", 0),
    ]


def test_a_bound_that_does_not_exist_has_no_property() -> None:
    record = {"kind": "mlrsearch", **mlr(ndr=(None, 14_881.0), pdr=(14_880_952.0, None),
                                          pdr_conditional=14_000_000.0).as_dict()}
    names = [n for n, _ in goal_properties(record)
             if not n.startswith("netload.lower_bound_by_generator.")]
    assert names == ["netload.ndr_upper_pps.64B", "netload.pdr_pps.64B",
                     "netload.pdr_lower_pps.64B", "netload.pdr_conditional_pps.64B"]


def test_goals_alike_once_lower_cased_keep_apart() -> None:
    record = {"frame_size": "imix", "goals": [
        {"name": "PDR 1%", "lower_bound_pps": 1.0}, {"name": "pdr-1", "lower_bound_pps": 2.0}]}
    assert goal_properties(record) == [
        ("netload.pdr_1_pps.imix", 1.0), ("netload.pdr_1_lower_pps.imix", 1.0),
        ("netload.pdr_1_2_pps.imix", 2.0), ("netload.pdr_1_2_lower_pps.imix", 2.0)]


def test_binary_search_and_meter_properties_are_as_before() -> None:
    assert properties([
        {"kind": "throughput", "frame_size": 64, "throughput_pps": 250_000.0,
         "method": "binary"},
        {"kind": "latency", "stream": "s", "lost": 3, "latency": {"percentiles": {
            "p50": {"value_ns": 800.0}, "p99": None}}},
        {"kind": "traffic", "streams": []},
    ]) == [("netload.throughput_pps.64B", 250_000.0), ("netload.latency_p50_ns.s", 800.0),
           ("netload.lost.s", 3)]


# ---- the summary row -----------------------------------------------------------------------


def _records(*results: Any) -> list[dict[str, Any]]:
    return [json.loads(json.dumps({"kind": kind, **r.as_dict()})) for kind, r in results]


def test_ndr_pdr_gets_a_row_with_both_goals_and_their_bounds() -> None:
    rows = rows_of("t.py::test_ndr", "passed",
                   {"measurements": _records(("mlrsearch", mlr()), ("mlrsearch", mlr(128)))})
    assert rows == [
        ("test_ndr", "64B", "50.02 kpps", "-", "-", "0/3,000,900", "PASS",
         "NDR 50.02 kpps [50.02, 50.27]; PDR 50.27 kpps [50.27, 50.52]"),
        ("test_ndr", "128B", "50.02 kpps", "-", "-", "0/3,000,900", "PASS",
         "NDR 50.02 kpps [50.02, 50.27]; PDR 50.27 kpps [50.27, 50.52]"),
    ]


def test_throughput_by_mlrsearch_is_one_row_with_its_search() -> None:
    result = mlr()
    rows = rows_of("t.py::test_tp", "failed", {"measurements": _records(
        ("mlrsearch", result), ("throughput", result.throughput()))})
    assert rows == [("test_tp", "64B", "50.02 kpps", "-", "-", "0/3,000,900", "FAIL",
                     "NDR 50.02 kpps [50.02, 50.27]; PDR 50.27 kpps [50.27, 50.52]")]


def test_a_goal_not_found_reads_so_in_the_row() -> None:
    (row,) = rows_of("t.py::test_low", "failed", {"measurements": _records(
        ("mlrsearch", mlr(ndr=(None, 14_881.0))))})
    assert row[2:6] == ("0 pps", "-", "-", "-")
    assert row[7].startswith("NDR not found (upper bound 14.88 kpps); PDR 50.27 kpps")


# ---- assert_throughput -----------------------------------------------------------------------


def test_a_passed_verdict_names_the_goal_and_every_goals_bounds() -> None:
    with recording("t") as record:
        assert_throughput([mlr()], at_least="45kpps")
        assert_throughput(mlr().throughput(), at_least="45kpps")
    first, second = record.verdicts
    assert first["message"] == (
        "throughput at 64B 50,015 pps (the NDR) is >= 45,000 pps; MLRsearch bounds: "
        "NDR [50,015, 50,266] pps, PDR [50,266, 50,518] pps")
    assert second["message"] == first["message"]
    assert first["passed"] and first["measured"] == 50_015.0 and first["goal"] == "NDR"
    assert [(g["name"], g["lower_bound_pps"], g["upper_bound_pps"])
            for g in first["goals"]] == [("NDR", 50_015.0, 50_266.0), ("PDR", 50_266.0, 50_518.0)]
    json.dumps(record.verdicts)  # JSON-able


def test_a_failed_verdict_adds_the_conditional_throughputs() -> None:
    with recording("t") as record, pytest.raises(AssertionError) as err:
        assert_throughput(mlr().throughput(), at_least="60kpps")
    lines = str(err.value).splitlines()
    assert lines[0] == ("throughput at 64B 50,015 pps (the NDR) is not >= 60,000 pps; "
                        "MLRsearch bounds: NDR [50,015, 50,266] pps, PDR [50,266, 50,518] pps")
    assert lines[1].startswith("measured: 50,015 pps (")
    assert lines[1].endswith("line rate), the NDR's relevant lower bound (MLRsearch, RFC 9971); "
                             "conditional throughput: NDR 50,015 pps, PDR 50,017 pps")
    assert lines[2] == "required: throughput >= 60kpps"
    assert "(mlrsearch search)" in lines[3]
    assert record.verdicts[0]["message"] == lines[0]


def test_goal_picks_the_goal_judged() -> None:
    with recording("t") as record, pytest.raises(AssertionError) as err:
        assert_throughput([mlr(), mlr(128)], at_least="51kpps", frame_size=128, goal="PDR")
    assert str(err.value).splitlines()[0] == (
        "throughput at 128B 50,266 pps (the PDR) is not >= 51,000 pps; MLRsearch bounds: "
        "PDR [50,266, 50,518] pps, NDR [50,015, 50,266] pps")
    assert "loss tolerance 0.5%" in str(err.value)
    assert record.verdicts[0]["goal"] == "PDR"
    with recording("t") as record:
        assert_throughput(mlr().throughput(), at_least="50.1kpps", goal="pdr")  # throughput()
    assert record.verdicts[0]["message"].startswith("throughput at 64B 50,266 pps (the PDR) is")


def test_an_upper_bound_set_by_the_generator_and_a_goal_not_found_say_so() -> None:
    with pytest.raises(AssertionError) as err:
        assert_throughput(mlr(ndr=(None, 14_881.0), by_generator=True), at_least="1kpps")
    first, measured = str(err.value).splitlines()[:2]
    assert first == ("throughput at 64B 0 pps (the NDR) is not >= 1,000 pps; MLRsearch bounds: "
                     "NDR [-, 14,881] pps, PDR [50,266, 50,518] pps (upper bound: the "
                     "generator's ceiling)")
    assert "no lower bound found for the NDR (the search's minimum load was already an " \
           "upper bound) (MLRsearch, RFC 9971); conditional throughput: NDR -, PDR 50,017 pps" \
           in measured


def test_binary_search_messages_do_not_change() -> None:
    fst = FrameSizeThroughput(TrialSettings(duration_s=60.0, frame_size=64, mean_frame_size=64.0),
                              50_000.0, None, 50_000.0, (_trial(50_000.0),), 0.0)
    with recording("t") as record:
        assert_throughput(fst, at_least="45kpps")
    assert record.verdicts[0]["message"] == "throughput at 64B 50,000 pps is >= 45,000 pps"
    assert "goals" not in record.verdicts[0]


@pytest.mark.parametrize(("obj", "kwargs", "message"), [
    (FrameSizeThroughput(TrialSettings(duration_s=1.0, frame_size=64, mean_frame_size=64.0),
                         1.0, None, 1.0, (), 0.0), {"goal": "PDR"},
     "goal='PDR' picks an MLRsearch goal, but this throughput came from a binary search"),
    (mlr(), {"goal": "XDR"},
     "goal='XDR': the MLRsearch at 64B has no such goal; give one of ['NDR', 'PDR']"),
    (mlr(), {"goal": 5}, "goal=5: give a goal's name, e.g. goal='PDR'"),
    ([mlr(), mlr(128)], {}, "the NDR/PDR results hold 2 frame sizes (64B, 128B); say which"),
])
def test_bad_goal_or_size_is_a_config_error(obj: Any, kwargs: dict[str, Any],
                                            message: str) -> None:
    with pytest.raises(NetloadConfigError, match="assert_throughput: ") as err:
        assert_throughput(obj, at_least="1kpps", **kwargs)
    assert message in str(err.value)


def test_a_size_the_search_did_not_measure_fails_naming_the_sizes() -> None:
    with pytest.raises(AssertionError, match=r"no NDR/PDR was measured at 1518B; measured: "
                                             r"64B, 128B"):
        assert_throughput([mlr(), mlr(128)], at_least="1kpps", frame_size=1518)
