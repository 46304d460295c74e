"""Baselines: figures and their noise bands, baseline files, comparisons (pure logic)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import t as student_t  # type: ignore[import-untyped,unused-ignore]

from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure import stats
from pytest_netload.reports import baseline as bl
from pytest_netload.reports.baseline import HIGHER, LOWER, Key
from pytest_netload.reports.json import SCHEMA_VERSION, session_document
from pytest_netload.rfc2544 import TrialResult, binary_search
from pytest_netload.rfc2544.back_to_back import BackToBackResult
from pytest_netload.rfc2544.summary import Spread
from pytest_netload.search import FunctionMeasurer, TrialSettings

DATA = Path(__file__).resolve().parents[1] / "data"
NODE = "tests/x.py::test_a[64B]"


# ---- hand-made documents, built from the procedures' own as_dict() where possible ----


def fake_dut(capacity: float):  # type: ignore[no-untyped-def]
    """A DUT that forwards everything up to `capacity` pps and loses a frame above it."""
    def measure(load: float, duration_s: float) -> TrialResult:
        tx = max(1, round(load))
        return TrialResult(64, 64.0, load, 1.0, tx, tx if load <= capacity else tx - 1)
    return FunctionMeasurer(measure)


def throughput(capacity: float, max_pps: float = 1e6, resolution: float | None = None,
               size: int | str = 64, duration_s: float = 1.0) -> dict[str, Any]:
    result = binary_search(fake_dut(capacity), max_pps,
                           settings=TrialSettings(duration_s=duration_s, frame_size=size,
                                                  mean_frame_size=64.0),
                           resolution_pps=resolution, max_trials=40)
    return {"kind": "throughput", **result.as_dict()}


def bracket(low: float, high: float | None, size: int | str = 64, **extra: Any) -> dict[str, Any]:
    """A throughput measurement with a given search bracket (only the fields read)."""
    return {"kind": "throughput", "frame_size": size, "throughput_pps": low, "upper_pps": high,
            "method": "binary", "duration_s": 1.0, "loss_tolerance": 0.0, "trials": [],
            **extra}


def pct(p: float, value: float, low: float, high: float) -> dict[str, Any]:
    return {"p": p, "value_ns": value, "ci_low_ns": low, "ci_high_ns": high,
            "confidence": 0.95, "coverage": 0.951}


def latency_dict(**percentiles: dict[str, Any] | None) -> dict[str, Any]:
    return {"count": 1000, "min_ns": 1, "max_ns": 10**6, "mean_ns": 5000.0,
            "percentiles": percentiles, "clock": "tsc-software"}


def latency_rfc(size: int, p99: tuple[float, float, float], means: list[float],
                duration_s: float = 1.0) -> dict[str, Any]:
    return {"kind": "latency_rfc2544", "procedure": "latency", "frame_size": size,
            "mean_frame_size": float(size), "load_pps": 1e5, "duration_s": duration_s,
            "rfc2544_ns": Spread.of(means).as_dict(),
            "latency": latency_dict(p50=pct(50, 900, 880, 920), p99=pct(99, *p99), p99_9=None,
                                    p100=pct(100, 10**6, 10**6, 10**6)),
            "lost": 0, "tx_packets": 1000, "trials": []}


def doc(*tests: tuple[str, list[dict[str, Any]]],
        created: str = "2026-01-01T00:00:00+00:00") -> dict[str, Any]:
    out = session_document([{"nodeid": n, "outcome": "passed", "duration": 1.0,
                             "measurements": ms, "verdicts": []} for n, ms in tests],
                           topology={"name": "fake"}, settings={})
    out["created"] = created
    as_read: dict[str, Any] = json.loads(json.dumps(out))   # as a file holds it
    return as_read


# ---- extraction -----------------------------------------------------------------------


def test_throughput_band_is_the_search_bracket() -> None:
    m = throughput(612_345.0)
    fig = bl.extract_figures(doc((NODE, [m])))[Key(NODE, "throughput", 64)]
    assert fig.value == m["throughput_pps"] <= 612_345.0 < m["upper_pps"]
    assert (fig.noise_low, fig.noise_high) == (m["throughput_pps"], m["upper_pps"])
    assert m["upper_pps"] - m["throughput_pps"] <= 0.005 * 1e6   # the search's resolution
    assert fig.sigma == pytest.approx((fig.noise_high - fig.noise_low) / math.sqrt(12))
    assert (fig.direction, fig.unit, fig.band) == (HIGHER, "pps", "search bracket")
    assert fig.conditions == {"method": "binary", "duration_s": 1.0, "loss_tolerance": 0.0}


def test_throughput_at_the_maximum_is_open_above() -> None:
    fig = bl.extract_figures(doc((NODE, [throughput(2e6)])))[Key(NODE, "throughput", 64)]
    assert (fig.value, fig.noise_low, fig.noise_high, fig.sigma) == (1e6, 1e6, math.inf, None)
    assert fig.as_dict()["high"] is None
    assert json.dumps(fig.as_dict(), allow_nan=False)


def test_mlrsearch_goals_use_their_bounds() -> None:
    goal = {"final_trial_duration_s": 60.0, "relative_width": 0.005}
    m = {"kind": "mlrsearch", "frame_size": "imix", "goals": [
        {"name": "NDR", "loss_ratio": 0.0, "exceed_ratio": 0.0, "goal": goal,
         "lower_bound_pps": 9.0e5, "upper_bound_pps": 9.05e5},
        {"name": "PDR", "loss_ratio": 0.005, "exceed_ratio": 0.0, "goal": goal,
         "lower_bound_pps": 9.5e5, "upper_bound_pps": 9.6e5, "upper_bound_by_generator": True},
        {"name": "X", "lower_bound_pps": None, "upper_bound_pps": 1e3}]}
    figs = bl.extract_figures(doc((NODE, [m])))
    ndr = figs[Key(NODE, "mlrsearch.NDR", "imix")]
    assert (ndr.value, ndr.noise_low, ndr.noise_high) == (9.0e5, 9.0e5, 9.05e5)
    assert ndr.conditions["final_trial_duration_s"] == 60.0
    pdr = figs[Key(NODE, "mlrsearch.PDR", "imix")]
    assert pdr.noise_high == math.inf   # the generator's bound says nothing about the DUT
    x = figs[Key(NODE, "mlrsearch.X", "imix")]
    assert (x.value, x.noise_low, x.noise_high) == (0.0, 0.0, 1e3)


def test_latency_percentiles_use_their_ci_and_the_rfc_figure_a_t_interval() -> None:
    means = [5000.0, 5100.0, 4900.0, 5050.0]
    figs = bl.extract_figures(doc((NODE, [latency_rfc(64, (2000, 1900, 2150), means)])))
    p99 = figs[Key(NODE, "latency.p99", 64)]
    assert (p99.value, p99.noise_low, p99.noise_high) == (2000, 1900, 2150)
    assert (p99.direction, p99.unit) == (LOWER, "ns")
    assert p99.sigma == pytest.approx(250 / (2 * 1.959964), rel=1e-5)
    assert Key(NODE, "latency.p50", 64) in figs
    assert Key(NODE, "latency.p99_9", 64) not in figs   # no samples: None
    assert Key(NODE, "latency.p100", 64) not in figs    # a maximum has no CI
    rfc = figs[Key(NODE, "latency.rfc2544_mean", 64)]
    half = student_t.ppf(0.975, 3) * np.std(means, ddof=1) / 2
    assert rfc.value == pytest.approx(5012.5)
    assert (rfc.noise_low, rfc.noise_high) == pytest.approx((5012.5 - half, 5012.5 + half))
    assert rfc.conditions == {"clock": "tsc-software", "duration_s": 1.0}


def test_one_repetition_has_no_band() -> None:
    fig = bl.extract_figures(doc((NODE, [latency_rfc(64, (1, 1, 1), [5000.0])])))[
        Key(NODE, "latency.rfc2544_mean", 64)]
    assert (fig.noise_low, fig.noise_high, fig.sigma) == (-math.inf, math.inf, None)


def test_latency_meter_figures_are_named_after_the_stream() -> None:
    m = {"kind": "latency", "stream": "s0", "latency": latency_dict(p99=pct(99, 10, 9, 11)),
         "tx_packets": 10, "lost": 0}
    assert list(bl.extract_figures(doc((NODE, [m])))) == [Key(NODE, "latency[s0].p99", None)]


def test_back_to_back_band_adds_the_burst_search_resolution() -> None:
    result = BackToBackResult(TrialSettings(frame_size=64, mean_frame_size=64.0), 1e6, 20_000,
                              (15_000, 15_100, 14_900), ())
    m = {"kind": "back_to_back", **result.as_dict()}
    fig = bl.extract_figures(doc((NODE, [m])))[Key(NODE, "back_to_back", 64)]
    half = student_t.ppf(0.975, 2) * 100 / math.sqrt(3)
    assert fig.noise_low == pytest.approx(15_000 - half)
    assert fig.noise_high == pytest.approx(15_000 + half + 100)   # 20_000 // 200
    assert (fig.direction, fig.unit) == (HIGHER, "frames")
    at_max = BackToBackResult(TrialSettings(frame_size=64, mean_frame_size=64.0), 1e6, 20_000,
                              (20_000, 20_000), ())
    m = {"kind": "back_to_back", **at_max.as_dict()}
    assert bl.extract_figures(doc((NODE, [m])))[Key(NODE, "back_to_back", 64)].noise_high \
        == math.inf


def test_recovery_and_reset_are_lower_is_better_spreads() -> None:
    ms = [{"kind": "recovery", "frame_size": 64, "recovery_s": Spread.of([0.2, 0.3]).as_dict()},
          {"kind": "reset", "frame_size": 64, "reset_s": None, "recovered": False}]
    figs = bl.extract_figures(doc((NODE, ms)))
    assert list(figs) == [Key(NODE, "recovery", 64)]
    assert (figs[Key(NODE, "recovery", 64)].direction, figs[Key(NODE, "recovery", 64)].unit) \
        == (LOWER, "s")


def test_repeated_figures_are_numbered_and_other_kinds_skipped() -> None:
    ms = [{"kind": "calibration", "frame_size": 64, "generator_max_pps": 1e6},
          bracket(1e5, 1.1e5), {"kind": "frame_loss", "frame_size": 64, "points": []},
          {"kind": "traffic", "streams": []}, bracket(2e5, 2.1e5), bracket(3e5, None, 128)]
    assert [(k.metric, k.frame_size) for k in bl.extract_figures(doc((NODE, ms)))] == \
        [("throughput", 64), ("throughput#2", 64), ("throughput", 128)]


@pytest.mark.parametrize("sample", sorted(DATA.glob("*.json")), ids=lambda p: p.name)
def test_sample_documents(sample: Path) -> None:
    document = json.loads(sample.read_text())
    figures = bl.extract_figures(document)
    for fig in figures.values():
        assert fig.noise_low <= fig.value <= fig.noise_high
    assert bl.compare(document, document).counts()["unchanged"] == len(figures)


@pytest.mark.parametrize(("path", "value", "message"), [
    (("tests", 0, "measurements", 0, "throughput_pps"), None,
     ("tests[0].measurements[0].throughput_pps is missing (test tests/x.py::test_a[64B], "
      "kind 'throughput')")),
    (("tests", 0, "measurements", 0, "upper_pps"), "fast", "upper_pps = 'fast': expected a number"),
    (("tests", 0, "measurements", 0, "frame_size"), None, "frame_size is missing"),
    (("tests", 0, "nodeid"), None, "tests[0].nodeid is missing"),
    (("tests",), None, "document.tests is missing"),
    (("created",), 5, "document.created = 5: expected a string"),
    (("tests", 0, "measurements", 1, "latency", "percentiles", "p99", "ci_low_ns"), None,
     "measurements[1].latency.percentiles.p99.ci_low_ns is missing"),
    (("tests", 0, "measurements", 1, "rfc2544_ns", "stdev"), math.nan,
     "rfc2544_ns.stdev = nan: expected a finite number"),
])
def test_malformed_documents_name_the_field(path: tuple[Any, ...], value: Any,
                                            message: str) -> None:
    document = doc((NODE, [bracket(1.0, 2.0), latency_rfc(64, (5, 4, 6), [1.0, 2.0])]))
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    if value is None:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    with pytest.raises(NetloadConfigError, match=_re(message)):
        bl.extract_figures(document)


def _re(text: str) -> str:
    import re
    return ".*" + re.escape(text)


# ---- baseline files -------------------------------------------------------------------


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    document = doc((NODE, [throughput(5e5)]))
    folder = tmp_path / "netload-results" / "baselines"
    path = bl.save_baseline(document, "main", folder)
    assert path == folder / "main.json" and path.is_file()
    assert bl.load_baseline("main", folder) == document
    assert [p.name for p in folder.iterdir()] == ["main.json"]   # no temporary file left
    bl.save_baseline(doc((NODE, [throughput(4e5)])), "main", folder)   # replaced
    assert bl.load_baseline("main", folder)["tests"][0]["measurements"][0]["throughput_pps"] \
        < document["tests"][0]["measurements"][0]["throughput_pps"]
    assert bl.list_baselines(folder) == ["main"]
    assert bl.baseline_dir("netload-results") == Path("netload-results/baselines")


def test_a_failed_save_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bl.save_baseline(doc((NODE, [bracket(1.0, 2.0)])), "b", tmp_path)
    before = (tmp_path / "b.json").read_text()

    def broken(*_: Any) -> None:
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        bl.save_baseline(doc((NODE, [bracket(3.0, 4.0)])), "b", tmp_path)
    assert (tmp_path / "b.json").read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["b.json"]


@pytest.mark.parametrize("name", ["", ".hidden", "..", "../x", "a/b", "a b", "x" * 101, "é", 5])
def test_bad_baseline_names(name: Any, tmp_path: Path) -> None:
    with pytest.raises(NetloadConfigError, match="letters, digits"):
        bl.save_baseline(doc(), name, tmp_path)
    with pytest.raises(NetloadConfigError, match="letters, digits"):
        bl.load_baseline(name, tmp_path)


@pytest.mark.parametrize("name", ["main", "v1.2-router_x", "2026.01.01", "A" * 100])
def test_good_baseline_names(name: str) -> None:
    assert bl.check_baseline_name(name) == name


def test_saving_refuses_a_broken_document(tmp_path: Path) -> None:
    with pytest.raises(NetloadConfigError, match="throughput_pps is missing"):
        bl.save_baseline(doc((NODE, [{"kind": "throughput", "frame_size": 64}])), "x", tmp_path)
    assert not (tmp_path / "x.json").exists()


def test_load_missing_lists_what_exists(tmp_path: Path) -> None:
    with pytest.raises(NetloadConfigError, match="save one with --netload-save-baseline nope"):
        bl.load_baseline("nope", tmp_path / "absent")
    bl.save_baseline(doc(), "main", tmp_path)
    with pytest.raises(NetloadConfigError,
                       match=f"baseline 'nope' not found: {_re(str(tmp_path))}.*saved "
                             "baselines: main"):
        bl.load_baseline("nope", tmp_path)


@pytest.mark.parametrize(("content", "message"), [
    ("", "is truncated"),
    ('{"schema_version": "1.0", "tests": [', "is truncated"),
    ('{"schema_version": "1.', "is truncated"),
    ('{"schema_version": "1.0", "created": "2026-01-', "is truncated"),
    ('{"a": tr', "is truncated"),
    ('{"a": 1} x', "is not valid JSON"),
    ('{"schema_version": "1.0",, "tests": []}', "is not valid JSON (line 1, column 26"),
    ("[1, 2]", "not a JSON object"),
    ('{"schema_version": "2.0", "created": "x", "tests": []}',
     f"schema_version '2.0' is newer than this pytest-netload reads ('{SCHEMA_VERSION}')"),
    ('{"schema_version": "1.9", "created": "x", "tests": []}', "is newer"),
    ('{"schema_version": "one", "created": "x", "tests": []}', "expected a version"),
    ('{"schema_version": "1.0", "tests": []}', "document.created is missing"),
])
def test_load_broken_files(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "b.json").write_text(content)
    with pytest.raises(NetloadConfigError, match=_re(str(tmp_path / "b.json")) + _re(message)):
        bl.load_baseline("b", tmp_path)


def test_load_a_file_cut_anywhere(tmp_path: Path) -> None:
    """Every prefix of a saved file reads as truncated, wherever the cut falls (inside a
    string, a number, a literal, between tokens)."""
    path = bl.save_baseline(doc((NODE, [bracket(1.25e5, None, a=True, b=False), latency_rfc(
        64, (1.5e-5, 1e-5, 1e3), [1.0, 2.0])])), "cut", tmp_path)
    text = path.read_text()
    assert all(word in text for word in ("true", "false", "null", "e-0"))
    for end in range(len(text.rstrip())):
        path.write_text(text[:end])
        with pytest.raises(NetloadConfigError, match="cut.json is truncated"):
            bl.load_baseline("cut", tmp_path)


# ---- comparisons ----------------------------------------------------------------------


def one(figure_ms: list[dict[str, Any]], node: str = NODE) -> dict[str, Any]:
    return doc((node, figure_ms))


def verdicts(cmp: bl.Comparison) -> dict[tuple[str, str], str]:
    return {(r.key.nodeid, r.key.metric): r.verdict for r in cmp.rows}


def test_throughput_ten_percent_down_with_tight_bands_regressed() -> None:
    cmp = bl.compare(one([throughput(450_000.0)]), one([throughput(500_000.0)]), name="main")
    (row,) = cmp.rows
    assert row.verdict == "regressed"
    assert row.change_pct == pytest.approx(-10, abs=0.6)
    assert cmp.regressions_for(NODE) == [row] and cmp.regressions_for("other") == []
    assert bl.compare(one([throughput(550_000.0)]), one([throughput(500_000.0)])).rows[0] \
        .verdict == "improved"


def test_latency_p99_thirty_percent_beyond_its_ci_regressed() -> None:
    base = one([latency_rfc(64, (10_000, 9_700, 10_300), [5e3, 5.1e3, 4.9e3])])
    worse = one([latency_rfc(64, (13_000, 12_600, 13_400), [5e3, 5.1e3, 4.9e3])])
    better = one([latency_rfc(64, (7_000, 6_800, 7_200), [5e3, 5.1e3, 4.9e3])])
    assert verdicts(bl.compare(worse, base))[(NODE, "latency.p99")] == "regressed"
    assert verdicts(bl.compare(better, base))[(NODE, "latency.p99")] == "improved"
    assert verdicts(bl.compare(worse, base))[(NODE, "latency.rfc2544_mean")] == "unchanged"


def test_changes_inside_the_bands_are_unchanged() -> None:
    base = one([latency_rfc(64, (10_000, 9_000, 11_000), [5e3, 5.1e3]), bracket(100, 110)])
    cur = one([latency_rfc(64, (10_900, 10_500, 12_000), [5e3, 5.1e3]), bracket(102, 107)])
    assert set(bl.compare(cur, base).counts().items()) >= {("regressed", 0), ("improved", 0)}


def test_touching_brackets_are_noise() -> None:
    """One run passed load L, the other failed it: the same DUT at its threshold."""
    assert bl.compare(one([bracket(90, 100)]), one([bracket(100, 110)])).rows[0].verdict \
        == "unchanged"
    assert bl.compare(one([bracket(89, 99.9)]), one([bracket(100, 110)])).rows[0].verdict \
        == "regressed"


def test_open_bands() -> None:
    at_max = one([bracket(1e6, None)])
    assert bl.compare(one([bracket(9e5, 9.05e5)]), at_max).rows[0].verdict == "regressed"
    assert bl.compare(at_max, one([bracket(9e5, 9.05e5)])).rows[0].verdict == "improved"
    assert bl.compare(one([bracket(9e5, None)]), at_max).rows[0].verdict == "unchanged"


def test_new_missing_and_not_run() -> None:
    base = doc(("t::a", [bracket(1, 2), bracket(5, 6, 128)]), ("t::gone", [bracket(1, 2)]))
    cur = doc(("t::a", [bracket(1, 2), latency_rfc(64, (5, 4, 6), [1.0, 2.0])]),
              ("t::b", [bracket(1, 2)]))
    cmp = bl.compare(cur, base)
    got = {(r.key.nodeid, r.key.metric, r.key.frame_size): r.verdict for r in cmp.rows}
    assert got[("t::a", "throughput", 64)] == "unchanged"
    assert got[("t::a", "throughput", 128)] == "missing"
    assert got[("t::a", "latency.p99", 64)] == "new"
    assert got[("t::b", "throughput", 64)] == "new"
    assert cmp.not_run == ("t::gone",)
    assert cmp.counts() == {"regressed": 0, "improved": 0, "unchanged": 1, "new": 4,
                            "missing": 1}
    assert cmp.summary_line().endswith("1 missing; 1 baseline test(s) not run")


def test_notes_for_different_conditions_and_unknown_bands() -> None:
    cur = one([bracket(100, 110, duration_s=60.0), latency_rfc(64, (5, 4, 6), [1.0])])
    base = one([bracket(100, 110), latency_rfc(64, (5, 4, 6), [1.0])])
    notes = {r.key.metric: r.note for r in bl.compare(cur, base).rows}
    assert notes["throughput"] == "measured differently: duration_s 1.0 -> 60.0"
    assert notes["latency.rfc2544_mean"] == "no band: one repetition"
    assert notes["latency.p99"] == ""


def test_table_and_json() -> None:
    base = doc(("t.py::test_a[64B]", [bracket(5e5, 5.02e5), latency_rfc(64, (10_000, 9_700,
                                                                          10_300), [5e3, 6e3])]),
               ("t.py::test_b", [bracket(2e5, None, "imix")]))
    cur = doc(("t.py::test_a[64B]", [bracket(4.5e5, 4.52e5), latency_rfc(64, (13_000, 12_600,
                                                                           13_400), [5e3, 6e3])]),
              ("t.py::test_b", [bracket(2e5, None, "imix")]), ("t.py::test_c", [bracket(1, 2)]))
    cmp = bl.compare(cur, base, name="main")
    lines = cmp.table_lines()
    assert lines[0].split() == ["test", "metric", "size", "baseline", "current", "change",
                                "verdict"]
    col = lines[0].index("verdict")
    assert all(line[col - 2:col] == "  " and line[col] != " " for line in lines)
    assert "test_a[64B]  throughput" in lines[1]
    assert "500.0 kpps [500.0, 502.0]" in lines[1] and "-10.0%  regressed" in lines[1]
    assert "13.0us [12.6, 13.4]" in "".join(lines)
    assert "200.0 kpps [200.0, inf)" in "".join(lines)
    assert len(cmp.table_lines(changes_only=True)) < len(lines)
    data = json.loads(json.dumps(cmp.as_dict(), allow_nan=False))
    assert data["baseline"]["name"] == "main" and data["counts"]["regressed"] == 2
    row = data["rows"][0]
    assert (row["verdict"], row["baseline"]["low"], row["current"]["high"]) == \
        ("regressed", 5e5, 4.52e5)


# ---- noise never reads as a regression ------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(low=st.floats(0, 1e7), width=st.floats(0, 1e6), cwidth=st.floats(0, 1e6),
       where=st.floats(0, 1), lower_is_better=st.booleans())
def test_overlapping_bands_never_regress(low: float, width: float, cwidth: float, where: float,
                                         lower_is_better: bool) -> None:
    """Any current band that overlaps the baseline band, however its value moved."""
    c_low = min(max(0.0, low - cwidth + where * (width + cwidth)), low + width)  # <= high
    c_high = max(c_low + cwidth, low)                           # ... c_high >= low
    if lower_is_better:
        def mk(v: float, lo: float, hi: float) -> dict[str, Any]:
            return latency_rfc(64, (v, lo, hi), [1.0, 1.0])
        base, cur = one([mk(low, low, low + width)]), one([mk(c_high, c_low, c_high)])
        rows = [r for r in bl.compare(cur, base).rows if r.key.metric == "latency.p99"]
    else:
        rows = list(bl.compare(one([bracket(c_low, c_high)]),
                               one([bracket(low, low + width)])).rows)
    assert rows and all(r.verdict == "unchanged" for r in rows)


def test_false_alarms_throughput_searches() -> None:
    """1000 pairs of searches on DUTs whose capacity did not change, from different
    maximum loads: the brackets always hold the capacity, so never a regression."""
    rng = np.random.default_rng(7)
    base, cur = [], []
    for i in range(1000):
        capacity = rng.uniform(1e4, 1e6)
        node = f"t.py::test_{i}"
        base.append((node, [throughput(capacity, max_pps=rng.uniform(1e6, 2e6))]))
        cur.append((node, [throughput(capacity, max_pps=rng.uniform(1e6, 2e6))]))
    cmp = bl.compare(doc(*cur), doc(*base))
    assert cmp.counts()["unchanged"] == 1000


def test_false_alarms_repeated_trial_means() -> None:
    """1000 noise-only comparisons of 20-trial means: two 95 % t-intervals miss each other
    on the bad side in about 0.3 % of cases (|d| > 2.77 standard errors, one side)."""
    rng = np.random.default_rng(11)
    runs = [[(f"t::{i}", [latency_rfc(64, (5, 4, 6), list(rng.normal(5e4, 5e3, 20)))])
             for i in range(1000)] for _ in range(2)]
    cmp = bl.compare(doc(*runs[0]), doc(*runs[1]))
    assert [r.verdict for r in cmp.rows if r.key.metric != "latency.rfc2544_mean"] == \
        ["unchanged"] * 2000   # p50 and p99, identical
    assert len(cmp.regressions) <= 10   # expected ~3; P(more than 10) < 1e-3


def test_false_alarms_percentiles() -> None:
    """p99 with its order-statistic CI (stats.percentile_ci) from two samples of one
    distribution, 1000 times: bad-side misses stay rare (two-sided 95 % CIs)."""
    rng = np.random.default_rng(3)
    n = 1000
    rank, (lo, hi) = stats.quantile_rank(n, 0.99), stats.percentile_ci(n, 0.99, 0.95)
    samples = np.sort(rng.lognormal(9, 0.5, (2, 1000, n)), axis=2)
    runs = [[(f"t::{i}", [latency_rfc(64, (x[rank], x[lo], x[hi]), [1.0, 2.0])])
             for i, x in enumerate(run)] for run in samples]
    cmp = bl.compare(doc(*runs[0]), doc(*runs[1]))
    assert len(cmp.regressions) <= 10
