"""The results document's schema and the reader of results files.

The samples: tests/data/results-sample.json is a real run of conftest_examples/rfc2544 on
netns-router (trimmed: only the first trial keeps its latency); results-full.json is built by
tests/data/make_full_sample.py from the RFC 2544 procedures on fake DUTs and has every kind
of measurement.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_netload.errors import NetloadConfigError
from pytest_netload.reports.json import SCHEMA_VERSION, session_document
from pytest_netload.reports.load import load, parse
from pytest_netload.reports.schema import ResultsFileError, json_path, schema, validate

DATA = Path(__file__).parent.parent / "data"
SAMPLE = DATA / "results-sample.json"
FULL = DATA / "results-full.json"
KINDS = {"throughput", "latency_rfc2544", "frame_loss", "back_to_back", "recovery", "reset",
         "mlrsearch", "calibration", "traffic", "latency", "dut_health", "y1564_sct",
         "y1564_spt", "y1564_bursts", "rfc2889_fully_meshed", "rfc2889_congestion_control",
         "rfc2889_address_caching_capacity", "rfc2889_address_learning_rate",
         "rfc2889_broadcast_forwarding", "rfc2889_partially_meshed",
         "rfc2889_maximum_forwarding_rate", "rfc2889_errored_frame_filtering",
         "port_counts", "spread", "delivery", "expected_frames"}


def _sample() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SAMPLE.read_text())
    return data


def _full() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FULL.read_text())
    return data


def _maker() -> Any:
    spec = importlib.util.spec_from_file_location("make_full_sample", DATA / "make_full_sample.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _error(document: Any) -> ResultsFileError:
    with pytest.raises(ResultsFileError) as info:
        validate(document, "results.json")
    return info.value


# ---- the schema itself -------------------------------------------------------------------


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    from jsonschema import Draft202012Validator

    doc = schema()
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(doc)
    kinds = set(doc["$defs"]["measurement"]["properties"]["kind"]["enum"])
    assert kinds == KINDS


def test_schema_ships_as_package_data() -> None:
    from importlib import resources

    files = resources.files("pytest_netload.reports")
    assert files.joinpath("results.schema.json").is_file()
    assert files.joinpath("templates", "report.html.j2").is_file()


# ---- documents that validate ---------------------------------------------------------------


def test_real_sample_validates() -> None:
    doc = _sample()
    validate(doc, str(SAMPLE))
    kinds = {m["kind"] for t in doc["tests"] for m in t["measurements"]}
    assert {"throughput", "latency_rfc2544", "frame_loss", "back_to_back", "reset",
            "calibration"} <= kinds


def test_full_sample_validates_and_has_every_kind() -> None:
    doc = _full()
    validate(doc, str(FULL))
    assert {m["kind"] for t in doc["tests"] for m in t["measurements"]} == KINDS
    assert {t["outcome"] for t in doc["tests"]} == {"passed", "failed", "error"}


def test_the_producers_shapes_match_the_schema() -> None:
    """Built now from the procedures' as_dict() and the real assertion helpers, so a change
    in the producer that the schema does not know fails here."""
    doc = _maker().build()
    validate(json.loads(json.dumps(doc)), "fresh document")
    assert doc == _full(), "tests/data/results-full.json is stale: run make_full_sample.py"


def test_empty_session_document_validates() -> None:
    doc = session_document([], topology={"name": "netns-router"},
                           settings={"topology": "netns-router", "backend": "af_packet",
                                     "engine": "popen", "trial_duration_s": None})
    assert doc["schema_version"] == SCHEMA_VERSION
    validate(json.loads(json.dumps(doc)), "empty")


def _minimal(**test: Any) -> dict[str, Any]:
    doc = _sample()
    doc["tests"] = [{"nodeid": "t.py::test_x", "outcome": "passed", "duration_s": 0.5,
                     "measurements": [], "verdicts": [], **test}]
    return doc


def test_open_records_accept_extra_keys() -> None:
    doc = _minimal(verdicts=[{"check": "custom", "passed": True, "measured": "ok",
                              "required": None, "anything": {"nested": [1, 2]}}],
                   captures=["captures/t.pcap"])
    doc["topology"]["dut"] = {"name": "edge", "firmware": "4.2", "rack": "B7"}
    doc["settings"]["netload_future_option"] = 3
    doc["environment"] = {"dpdk_version": "DPDK 22.11.5", "clock_source": "nic-hardware",
                          "ports": [{"name": "p0", "driver": "net_ice", "numa": 1}],
                          "future": True}
    validate(doc, "results.json")


def test_optional_session_record_and_test_error() -> None:
    """How a session ended and why a test errored: optional in 1.0, checked when present."""
    doc = _minimal(outcome="error", error="engine host died or hung during 'run_poll'\n"
                   "--- last engine log lines ---\nSegmentation fault")
    doc["session"] = {"exit_status": 2, "exit_status_name": "INTERRUPTED", "interrupted": True,
                      "stop_reason": "KeyboardInterrupt", "collected": 5, "ran": 1,
                      "engine_crashes": ["t.py::test_x"]}
    validate(doc, "results.json")
    assert "session" not in _sample()  # documents without it stay valid
    doc["session"]["ran"] = -1
    assert "session.ran" in str(_error(doc))
    doc["session"]["ran"] = 1
    doc["tests"][0]["error"] = 3
    assert "tests[0].error" in str(_error(doc))


def test_optional_histogram_and_hdr_on_a_latency_record() -> None:
    doc = _full()
    lat = next(m for t in doc["tests"] for m in t["measurements"]
               if m["kind"] == "latency")["latency"]
    lat["histogram"] = {"lower_ns": [1000, 1016], "upper_ns": [1016, 1032], "counts": [3, 4]}
    lat["hdr"] = "HISTFAAAAB94nJNpmSzMwMDAxQABzFCaEUzJ..."
    validate(doc, "results.json")


def test_empty_latency_record_validates() -> None:
    """A stream of which nothing arrived: counts 0, every statistic null."""
    empty = {"count": 0, "min_ns": None, "max_ns": None, "mean_ns": None,
             "percentiles": {"p50": None, "p99": None}, "clock": "tsc-software",
             "resolution_ns": 0.4, "samples": 0, "duplicates": 0, "reordered": 0,
             "jitter_ns": None, "ipdv_ns": None}
    doc = _minimal(measurements=[{"kind": "latency", "stream": "probe", "tx_packets": 10,
                                  "rx_packets": 0, "lost": 10, "latency": empty}])
    validate(doc, "results.json")


# ---- violations name the file, the path and the field -------------------------------------


def _tput(doc: dict[str, Any]) -> dict[str, Any]:
    return next(m for m in doc["tests"][0]["measurements"] if m["kind"] == "throughput")


def _set(getter: Callable[[dict[str, Any]], dict[str, Any]], key: str, value: Any
         ) -> Callable[[dict[str, Any]], None]:
    return lambda doc: getter(doc).__setitem__(key, value)


def _pop(getter: Callable[[dict[str, Any]], dict[str, Any]], key: str
         ) -> Callable[[dict[str, Any]], None]:
    return lambda doc: getter(doc).pop(key)


@pytest.mark.parametrize(("mutate", "path", "field", "words"), [
    (_set(_tput, "throughput_pps", "fast"), "$.tests[0].measurements[1].throughput_pps",
     "throughput_pps", "'fast' is not of type number"),
    (_pop(_tput, "max_pps"), "$.tests[0].measurements[1]", "max_pps",
     "missing required field 'max_pps'"),
    (_set(_tput, "bogus", 1), "$.tests[0].measurements[1].bogus", "bogus",
     "unexpected field 'bogus'"),
    (_set(_tput, "frame_size", 3.5), "$.tests[0].measurements[1].frame_size", "frame_size",
     "3.5 is not of type integer or string"),
    (_set(_tput, "frame_size", 32), "$.tests[0].measurements[1].frame_size", "frame_size",
     "less than the minimum of 64"),
    (_set(_tput, "kind", "jitter"), "$.tests[0].measurements[1].kind", "kind",
     "'jitter' is not one of 'throughput'"),
    (_set(lambda d: _tput(d)["trials"][0], "tx_packets", -1),
     "$.tests[0].measurements[1].trials[0].tx_packets", "tx_packets", "minimum of 0"),
    (_set(lambda d: _tput(d)["trials"][0], "tx_packets", 1.5),
     "$.tests[0].measurements[1].trials[0].tx_packets", "tx_packets", "not of type integer"),
    (_pop(lambda d: d["tests"][0]["measurements"][2]["latency"]["percentiles"]["p50"],
          "ci_low_ns"), "$.tests[0].measurements[2].latency.percentiles.p50", "ci_low_ns",
     "missing required field 'ci_low_ns'"),
    (_set(lambda d: d["tests"][0]["measurements"][2]["latency"]["percentiles"], "median", None),
     "$.tests[0].measurements[2].latency.percentiles.median", "median",
     "unexpected field 'median'"),
    (_set(lambda d: d["tests"][0], "outcome", "crashed"), "$.tests[0].outcome", "outcome",
     "'crashed' is not one of 'passed', 'failed', 'skipped', 'error'"),
    (_set(lambda d: d["tests"][0]["verdicts"][0], "passed", "yes"),
     "$.tests[0].verdicts[0].passed", "passed", "not of type boolean"),
    (_set(lambda d: d["topology"], "dut", {"name": 3}), "$.topology.dut.name", "name",
     "3 is not of type string"),
    (_set(lambda d: d["tests"][4]["measurements"][0], "reset_s", 5),
     "$.tests[4].measurements[0].reset_s", "reset_s", "5 is not of type null or object"),
    (_set(lambda d: d["tests"][4]["measurements"][0], "reset_s", {"n": 0}),
     "$.tests[4].measurements[0].reset_s.n", "n", "0 is less than the minimum of 1"),
    (_pop(lambda d: d, "tests"), "$", "tests", "missing required field 'tests'"),
    (_set(lambda d: d, "created", "yesterday"), "$.created", "created", "does not match"),
    (_set(lambda d: d["package"], "name", "other"), "$.package.name", "name",
     "'other' is not 'pytest-netload'"),
])
def test_violations_name_file_path_and_field(mutate: Callable[[dict[str, Any]], None],
                                             path: str, field: str, words: str) -> None:
    doc = _sample()
    mutate(doc)
    err = _error(doc)
    assert isinstance(err, NetloadConfigError) and isinstance(err, ValueError)
    assert (err.source, err.json_path, err.field) == ("results.json", path, field)
    assert str(err).startswith(f"results.json: {path}: ")
    assert words in str(err)
    assert "\n" not in str(err)


def test_a_long_value_is_shortened_in_the_message() -> None:
    doc = _sample()
    _tput(doc)["throughput_pps"] = {"k" * 40: "v" * 400}
    message = str(_error(doc))
    assert len(message) < 250 and "..." in message


@pytest.mark.parametrize(("version", "words"), [
    ("1.5", "written by a newer pytest-netload (schema 1.5); upgrade"),
    ("2.0", "written by a newer pytest-netload (schema 2.0); upgrade"),
    ("0.9", "schema 0.9 is not one this pytest-netload reads"),
    ("one", f"schema_version 'one' is not a version like '{SCHEMA_VERSION}'"),
])
def test_versions_other_than_ours_are_refused_first(version: str, words: str) -> None:
    doc = _sample()
    doc["schema_version"] = version
    _tput(doc)["throughput_pps"] = "also wrong"  # the version is what is reported
    err = _error(doc)
    assert words in str(err)
    assert err.json_path == "$.schema_version"


def test_not_a_results_document() -> None:
    assert "the top level is a list" in str(_error([1, 2]))
    err = _error({"tests": []})
    assert "has no schema_version" in str(err) and err.json_path == "$"


@pytest.mark.parametrize(("parts", "text"), [
    ([], "$"),
    (["tests", 0, "measurements", 2], "$.tests[0].measurements[2]"),
    (["percentiles", "p99.9"], "$.percentiles['p99.9']"),
])
def test_json_path(parts: list[str | int], text: str) -> None:
    assert json_path(parts) == text


# ---- load(): files ------------------------------------------------------------------------


def test_load_returns_the_document(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    target.write_bytes(SAMPLE.read_bytes())
    doc = load(target)
    assert doc == _sample()


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(ResultsFileError, match=r"nope\.json: no such file; give the "
                       "results.json"):
        load(path)


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(ResultsFileError, match="is a directory"):
        load(tmp_path)


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As root chmod 0 does not stop reading: the module's reader refuses instead."""
    import pytest_netload.reports.load as load_module

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise PermissionError(13, "Permission denied")

    path = tmp_path / "results.json"
    path.write_text("{}")
    monkeypatch.setattr(load_module, "read_input_file", refuse)
    with pytest.raises(ResultsFileError, match=f"{path}: cannot be read: Permission denied"):
        load(path)


def test_not_text(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    with pytest.raises(ResultsFileError, match="is not UTF-8 text"):
        load(path)


@pytest.mark.parametrize("text", ["", "  \n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "results.json"
    path.write_text(text)
    with pytest.raises(ResultsFileError, match=f"{path}: is empty"):
        load(path)


@pytest.mark.parametrize(("text", "where"), [
    ('{"a" 1}', "Expecting ':' delimiter at line 1 column 6"),
    ('{\n "a": 1,\n "b": x\n}', "Expecting value at line 3 column 7"),
    ('{"a": 1}}', "Extra data at line 1 column 9"),
    ("{'a': 1}", "at line 1 column 2"),
])
def test_corrupt_json_names_line_and_column(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "results.json"
    path.write_text(text)
    with pytest.raises(ResultsFileError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}: is not valid JSON: ")
    assert where in str(info.value)


def test_every_truncation_of_a_real_file_says_truncated() -> None:
    text = SAMPLE.read_text()
    for cut in range(1, len(text) - 2, 53):
        with pytest.raises(ResultsFileError, match="is truncated: it ends at line") as info:
            parse(text[:cut], "results.json")
        assert str(info.value).startswith("results.json: ")


def test_truncated_file_says_where_it_ends(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text('{\n "schema_version": "1.0",\n "tests": [{"nodeid": "t.py::te')
    with pytest.raises(ResultsFileError, match=r"is truncated: it ends at line 3 column 31"):
        load(path)


def test_newer_file_says_upgrade(tmp_path: Path) -> None:
    doc = _sample()
    doc["schema_version"] = "1.5"
    doc["future_section"] = {}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ResultsFileError, match=r"written by a newer pytest-netload \(schema "
                       r"1\.5\); upgrade"):
        load(path)


def test_schema_violation_in_a_file_names_it(tmp_path: Path) -> None:
    doc = copy.deepcopy(_full())
    doc["tests"][5]["measurements"][0]["trials"][0]["overload_pps"] = -5
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ResultsFileError) as info:
        load(path)
    assert str(info.value).startswith(
        f"{path}: $.tests[5].measurements[0].trials[0].overload_pps: -5 is less than")


def test_an_older_minor_of_our_major_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reports.md: a minor bump only lets the schema accept more, so a reader of 1.2
    reads 1.0 and 1.1 documents; 0.x and 2.x it refuses, naming what it reads."""
    from pytest_netload.reports import schema

    monkeypatch.setattr(schema, "SCHEMA_VERSION", "1.2")
    for version in ("1.0", "1.1", "1.2"):
        schema.check_version({"schema_version": version}, "r.json")
    with pytest.raises(Exception, match=r"schema 0.9 is not one this pytest-netload reads "
                                        r"\(it reads schema 1.2 and older 1.x\)"):
        schema.check_version({"schema_version": "0.9"}, "r.json")
    with pytest.raises(Exception, match="written by a newer pytest-netload"):
        schema.check_version({"schema_version": "1.3"}, "r.json")
