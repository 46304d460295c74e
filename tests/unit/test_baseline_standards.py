"""Baselines and trends of ITU-T Y.1564 and RFC 2889 figures (reports/standards.py): what
each record yields, its band, its direction, and how a comparison judges it."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.reports import trend
from pytest_netload.reports.baseline import HIGHER, LOWER, compare, extract_figures
from pytest_netload.reports.load import load

FULL = Path(__file__).parents[1] / "data" / "results-full.json"
SERVICE = "tests/acceptance/test_edge.py::test_service_activation"
SWITCH = "tests/acceptance/test_edge.py::test_switch_rfc2889"


@pytest.fixture(scope="module")
def full() -> dict[str, Any]:
    return load(FULL)


def _figures(doc: dict[str, Any], nodeid: str) -> dict[str, Any]:
    return {k.metric: f for k, f in extract_figures(doc).items() if k.nodeid == nodeid}


def _record(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(m for t in doc["tests"] for m in t["measurements"] if m["kind"] == kind)


def test_every_y1564_service_has_its_five_figures_with_their_directions(
        full: dict[str, Any]) -> None:
    figs = _figures(full, SERVICE)
    for service in ("voice", "data"):
        expected = {"ir": (HIGHER, "bit/s"), "flr": (LOWER, "ratio"), "ftd": (LOWER, "s"),
                    "fdv": (LOWER, "s"), "availability": (HIGHER, "ratio")}
        for name, (direction, unit) in expected.items():
            fig = figs[f"y1564[{service}].{name}"]
            assert (fig.direction, fig.unit) == (direction, unit), (service, name)
            assert fig.noise_low <= fig.value <= fig.noise_high, (service, name, fig)
    spt = _record(full, "y1564_spt")["services"][0]
    assert figs["y1564[voice].ir"].value == spt["ir_bps"]
    assert figs["y1564[voice].fdv"].value == spt["fdv_s"]
    # no loss in 58,590 frames: the exact 95 % bound is 3.69 / n (the "rule of three")
    assert figs["y1564[voice].flr"].noise_high == pytest.approx(3.689 / spt["tx_frames"],
                                                                rel=1e-3)
    # the service configuration test's single-load steps carry no baseline figure
    assert not any(m.startswith("y1564_sct") for m in figs)


def test_every_rfc2889_headline_is_a_figure(full: dict[str, Any]) -> None:
    figs = _figures(full, SWITCH)
    wanted = {"rfc2889.mesh.throughput_per_port": (HIGHER, "pps"),
              "rfc2889.mesh.frmol": (HIGHER, "pps"),
              "rfc2889.congestion.hol_loss": (LOWER, "ratio"),
              "rfc2889.congestion.congested_loss": (LOWER, "ratio"),
              "rfc2889.broadcast.throughput": (HIGHER, "pps"),
              "rfc2889.broadcast.frmol": (HIGHER, "pps"),
              "rfc2889.broadcast.latency[p1].p99": (LOWER, "ns"),
              "rfc2889.address.capacity": (HIGHER, "addresses"),
              "rfc2889.address.learning_rate": (HIGHER, "pps")}
    for metric, (direction, unit) in wanted.items():
        assert (figs[metric].direction, figs[metric].unit) == (direction, unit), metric
    capacity = figs["rfc2889.address.capacity"]
    assert (capacity.value, capacity.noise_low, capacity.noise_high) == (8192, 8192, 8193)
    mesh = _record(full, "rfc2889_fully_meshed")
    assert figs["rfc2889.mesh.frmol"].value == mesh["forwarding_rate_at_max_pps"]
    # broadcast latency is named by the receiving port, p1 to p3
    assert {m for m in figs if "latency[" in m and m.endswith(".p50")} == {
        f"rfc2889.broadcast.latency[p{i}].p50" for i in (1, 2, 3)}


def test_a_search_the_generator_bounded_is_open_above(full: dict[str, Any]) -> None:
    doc = copy.deepcopy(full)
    _record(doc, "rfc2889_fully_meshed")["lower_bound_by_generator"] = True
    _record(doc, "rfc2889_address_caching_capacity")["at_maximum"] = True
    figs = _figures(doc, SWITCH)
    assert math.isinf(figs["rfc2889.mesh.throughput_per_port"].noise_high)
    assert math.isinf(figs["rfc2889.address.capacity"].noise_high)


def test_a_congestion_behaviour_change_is_noted(full: dict[str, Any]) -> None:
    doc = copy.deepcopy(full)
    _record(doc, "rfc2889_congestion_control")["observed"] = ["back_pressure"]
    rows = {r.key.metric: r for r in compare(doc, full).rows}
    assert "behaviour changed: ['congestion_loss'] -> ['back_pressure']" in \
        rows["rfc2889.congestion.congested_loss"].note


def _lose(doc: dict[str, Any], service: int, lost: int) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    s = _record(doc, "y1564_spt")["services"][service]
    s["lost"], s["flr"] = lost, lost / s["tx_frames"]
    return doc


@settings(max_examples=40, deadline=None)
@given(lost=st.integers(0, 2000))
def test_flr_regresses_exactly_when_the_binomial_bands_part(full: dict[str, Any],
                                                           lost: int) -> None:
    cur = _lose(full, 0, lost)
    row = next(r for r in compare(cur, full).rows if r.key.metric == "y1564[voice].flr")
    base, now = row.baseline, row.current
    assert base is not None and now is not None
    assert now.noise_low <= now.value <= now.noise_high
    assert row.verdict == ("regressed" if now.noise_low > base.noise_high else "unchanged")
    # a few lost frames of 58,590 are within the noise of none lost; hundreds are not
    if lost <= 1:
        assert row.verdict == "unchanged"
    if lost >= 10:
        assert row.verdict == "regressed"


@settings(max_examples=40, deadline=None)
@given(scale=st.floats(0.5, 1.5), threshold=st.sampled_from([None, 0.0, 0.01, 0.05, 0.2]))
def test_rfc2889_throughput_follows_the_noise_and_threshold_rule(
        full: dict[str, Any], scale: float, threshold: float | None) -> None:
    doc = copy.deepcopy(full)
    mesh = _record(doc, "rfc2889_fully_meshed")
    mesh["throughput_pps_per_port"] *= scale
    mesh["upper_pps_per_port"] *= scale
    row = next(r for r in compare(doc, full, threshold=threshold).rows
               if r.key.metric == "rfc2889.mesh.throughput_per_port")
    base, now = row.baseline, row.current
    assert base is not None and now is not None
    apart_below, apart_above = now.noise_high < base.noise_low, now.noise_low > base.noise_high
    drop = (base.value - now.value) / base.value
    limit = threshold or 0.0
    expected = "regressed" if apart_below and drop > limit else \
        "improved" if apart_above and -drop > limit else "unchanged"
    assert row.verdict == expected
    if expected == "unchanged" and (apart_below or apart_above):
        assert "within the" in row.note


def test_a_history_finds_a_step_in_a_y1564_and_an_rfc2889_figure(full: dict[str, Any]) -> None:
    docs = []
    for i in range(12):
        doc = _lose(full, 1, 0 if i < 7 else 600)
        doc["created"] = f"2026-11-{i + 1:02d}T00:00:00+00:00"
        cap = _record(doc, "rfc2889_address_caching_capacity")
        cap["capacity"], cap["upper"] = (8192, 8193) if i < 7 else (4096, 4097)
        docs.append(doc)
    trends = trend.analyse(docs)
    by_metric = {(k.nodeid, k.metric): t for k, t in trends.items()}
    for key in ((SERVICE, "y1564[data].flr"), (SWITCH, "rfc2889.address.capacity")):
        changes = by_metric[key].changes
        assert [(c.index, c.kind) for c in changes] == [(7, "regression")], key
    assert not by_metric[(SERVICE, "y1564[voice].flr")].changes


def test_partially_meshed_and_mfr_figures(full: dict[str, Any]) -> None:
    figs = _figures(full, SWITCH)
    partial = _record(full, "rfc2889_partially_meshed")
    tput = figs["rfc2889.partial[one_to_many].throughput"]
    assert (tput.direction, tput.unit, tput.value) == (HIGHER, "pps", partial["throughput_pps"])
    frmol = figs["rfc2889.partial[one_to_many].frmol"]
    assert frmol.value == partial["forwarding_rate_at_max_pps"]
    assert frmol.noise_low <= frmol.value <= frmol.noise_high and not frmol.band.startswith("unknown")
    mfr = figs["rfc2889.mfr"]
    assert (mfr.direction, mfr.unit) == (HIGHER, "pps")
    assert mfr.value == _record(full, "rfc2889_maximum_forwarding_rate")["mfr_pps"]
    assert mfr.noise_low <= mfr.value <= mfr.noise_high and not mfr.band.startswith("unknown")
    # errored frames filtering is a set of verdicts, not a figure with a baseline
    assert not any(m.startswith("rfc2889.errored") for m in figs)


def test_junit_properties_of_the_new_rfc2889_records(full: dict[str, Any]) -> None:
    from pytest_netload.reports.junit import properties

    names = dict(properties([_record(full, "rfc2889_partially_meshed"),
                             _record(full, "rfc2889_maximum_forwarding_rate")]))
    assert names["netload.rfc2889_one_to_many_throughput_pps.64B"] == _record(
        full, "rfc2889_partially_meshed")["throughput_pps"]
    assert names["netload.rfc2889_mfr_pps.64B"] == _record(
        full, "rfc2889_maximum_forwarding_rate")["mfr_pps"]
