"""Every parser of user input, fed arbitrary input by hypothesis: it parses, or raises
the documented error (NetloadConfigError; ResultsFileError, a NetloadConfigError, for
results files), never another exception, and never takes long (a per-example deadline).

Units (Rate, Duration, Size and the run-time bound), marker arguments (both markers,
then the check against a topology), the topology loader (arbitrary text and TOML-shaped
documents), packet templates and field ops (arbitrary ints), and the results loader
(arbitrary text, arbitrary JSON, and the sample document with one value replaced).
Valid inputs of these parsers have their own tests (test_units.py, test_markers.py,
test_topology_toml.py, test_packets.py, test_report_schema.py); this file is about
the rest of the input space.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError

FUZZ = settings(max_examples=150, deadline=datetime.timedelta(seconds=5),
                suppress_health_check=[HealthCheck.too_slow])
DATA = Path(__file__).parent.parent / "data"

# ---- strategies ----------------------------------------------------------------------------

NUMBERS = st.one_of(
    st.integers(), st.integers(-(10**400), 10**400),
    st.floats(allow_nan=True, allow_infinity=True), st.decimals(allow_nan=True))
# text that looks like a quantity, so the parsers' deeper branches are reached
QUANTITY_TEXT = st.from_regex(
    r"\s?[-+]?[0-9]{0,6}\.?[0-9]{0,4}([eE][-+]?[0-9]{1,6})?\s?"
    r"(|[kMGT]?(pps|bit/s|bps)|%|h|m|min|s|ms|us|ns|µs|B|KB|x)(@[a-z0-9-]{0,9})?\s?",
    fullmatch=True)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=40), QUANTITY_TEXT,
                    st.binary(max_size=8))
ANY_VALUE = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner),
    st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)


def _only_config_errors(call: Any, *args: Any, **kwargs: Any) -> Any:
    """Call it; a NetloadConfigError is an answer too (returned, for further checks)."""
    try:
        return call(*args, **kwargs)
    except NetloadConfigError as exc:
        assert str(exc), "an error without a message"
        return exc


# ---- units ---------------------------------------------------------------------------------


LONG_NUMBERS = st.builds(lambda n, unit: "9" * n + unit, st.integers(0, 6000),
                        st.sampled_from(["", "B", "pps", "s", "e9", ".5"]))


@FUZZ
@given(text=st.one_of(st.text(), QUANTITY_TEXT, LONG_NUMBERS))
def test_unit_texts_parse_or_raise_config_errors(text: str) -> None:
    from pytest_netload.units import Duration, Rate, Size, as_rate, run_seconds

    for parse in (Rate, as_rate, Duration, Size, lambda t: run_seconds(t, what="duration"),
                  lambda t: run_seconds(t, what="drain", zero_ok=True)):
        _only_config_errors(parse, text)


@FUZZ
@given(value=SCALARS, unit=st.one_of(st.none(), st.text(max_size=8), QUANTITY_TEXT),
       layer=st.one_of(st.none(), st.sampled_from(["l1", "l2", "l2-nofcs"]), st.text(max_size=8)))
def test_rate_constructor_takes_anything(value: Any, unit: Any, layer: Any) -> None:
    from pytest_netload.units import Rate

    rate = _only_config_errors(Rate, value, unit, layer=layer)
    if isinstance(rate, Rate):   # what parsed formats back to itself
        assert Rate(str(rate)) == rate


@FUZZ
@given(value=ANY_VALUE)
def test_duration_and_size_take_any_value(value: Any) -> None:
    from pytest_netload.units import Duration, Size, as_duration

    for parse in (Duration, Size, as_duration):
        _only_config_errors(parse, value)


# ---- marker arguments ----------------------------------------------------------------------

# values each argument takes, and values of the other arguments' types
MARKER_VALUES = st.one_of(
    SCALARS, ANY_VALUE, st.sampled_from(
        ["mlrsearch", "binary", "warn", "fail", "off", "cbr", "poisson", "max", "ci-fast",
         "rfc2544-strict", "1s", "0s", "25h", "1e9s", "95%", "1Mpps", "1Gbit/s@l1", 0, 1, 2, 64]),
    st.lists(st.one_of(st.integers(-10, 10**5), st.text(max_size=6),
                       st.sampled_from(["imix", 64, 1518, 9000])), max_size=4))


def _marker_kwargs(args: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.dictionaries(st.sampled_from([*args, "bogus"]), MARKER_VALUES, max_size=5),
        # MLRsearch's arguments only count with search='mlrsearch'
        st.dictionaries(st.sampled_from(["goals", "time_budget", "frame_sizes"]),
                        MARKER_VALUES, max_size=2).map(lambda kw: {**kw, "search": "mlrsearch"})
        if "goals" in args else st.nothing())


@FUZZ
@given(data=st.data(), name=st.sampled_from(["netload", "rfc2544"]),
       positional=st.lists(SCALARS, max_size=1))
def test_marker_arguments_parse_or_raise_config_errors(data: st.DataObject, name: str,
                                                        positional: list[Any]) -> None:
    from pytest_netload.plugin.markers import (
        NETLOAD_ARGS,
        RFC2544_ARGS,
        TopologyFacts,
        check_against_topology,
        parse_netload,
        parse_rfc2544,
    )

    kwargs = data.draw(_marker_kwargs(NETLOAD_ARGS if name == "netload" else RFC2544_ARGS))
    mark = getattr(pytest.mark, name)(*positional, **kwargs).mark
    parsed = _only_config_errors(parse_netload if name == "netload" else parse_rfc2544, mark)
    if not isinstance(parsed, NetloadConfigError):
        facts = TopologyFacts("t", data.draw(st.lists(st.just("p0->p1"), min_size=1, max_size=3)),
                              data.draw(st.one_of(st.none(), st.integers(1, 10**12))),
                              data.draw(st.one_of(st.none(), st.integers(68, 9600))), "fix")
        _only_config_errors(check_against_topology, parsed, facts)


# ---- topology files ------------------------------------------------------------------------

TOML_SCALARS = st.one_of(st.booleans(), st.integers(-(2**63), 2**63 - 1),
                         st.floats(allow_nan=True), st.text(max_size=20),
                         st.sampled_from(["p0", "p1", "02:00:00:00:00:01", "198.18.0.2",
                                          "net_null0", "veth0", "10Gbit/s", "95%"]))
TOML_VALUES = st.recursive(TOML_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8)


def _table(keys: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.one_of(st.sampled_from(keys), st.text(max_size=6)), TOML_VALUES,
                           max_size=len(keys) + 1)


@st.composite
def topology_documents(draw: st.DrawFn) -> Any:
    from pytest_netload.topology import toml

    doc: dict[str, Any] = {}
    for key, strategy in (("topology", _table(toml._TOPOLOGY_KEYS)),
                          ("dut", st.dictionaries(st.text(max_size=6), TOML_VALUES, max_size=2)),
                          ("ports", st.lists(_table(toml._PORT_KEYS), max_size=3)),
                          ("wires", st.lists(_table(toml._WIRE_KEYS), max_size=3))):
        if draw(st.booleans()):
            doc[key] = draw(st.one_of(strategy, TOML_VALUES))
    if draw(st.booleans()):
        doc[draw(st.text(max_size=6))] = draw(TOML_VALUES)
    return doc if draw(st.integers(0, 9)) else draw(TOML_VALUES)


@FUZZ
@given(document=topology_documents())
def test_topology_documents_load_or_raise_config_errors(document: Any) -> None:
    from pytest_netload.topology import Topology, parse_topology

    topology = _only_config_errors(parse_topology, document, "fuzz.toml")
    assert isinstance(topology, (Topology, NetloadConfigError))
    if isinstance(topology, NetloadConfigError):
        assert str(topology).startswith("fuzz.toml"), topology


@FUZZ
@given(text=st.one_of(st.text(), st.binary().map(lambda b: b.decode("latin-1")),
                      st.builds(lambda n, c: c * n, st.integers(0, 3000),
                                st.sampled_from(["[", "{a=", "a.", '"', "[[ports]]\n"])),
                      st.builds(lambda n, o, c: f"x = {o * n}{c * n}\n", st.integers(0, 5000),
                                st.sampled_from(["[", "{a="]), st.sampled_from(["]", "}"]))))
def test_topology_file_text_loads_or_raises_config_errors(text: str) -> None:
    from pytest_netload.topology import load_topology

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.toml"
        path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
        _only_config_errors(load_topology, path)


# ---- packet templates and field ops ---------------------------------------------------------

INTS = st.one_of(st.integers(-5, 70_000), st.integers(), st.sampled_from([0, 1, 64, 65535, 2**64]))


@FUZZ
@given(sport=INTS, dport=INTS, flows=INTS, size=st.one_of(INTS, st.lists(INTS, max_size=3),
                                                          st.dictionaries(INTS, INTS, max_size=3)),
       stamp_every=INTS, src=st.one_of(st.none(), st.text(max_size=10), st.ip_addresses().map(str)))
def test_udp_streams_build_or_raise_config_errors(sport: int, dport: int, flows: int, size: Any,
                                                  stamp_every: int, src: str | None) -> None:
    from pytest_netload.topology import PortSpec
    from pytest_netload.topology.model import Flow
    from pytest_netload.traffic.streams import UdpSpec, udp

    spec = _only_config_errors(udp, src, size=size, flows=flows, sport=sport, dport=dport,
                               stamp_every=stamp_every)
    if isinstance(spec, UdpSpec):   # what udp() accepted binds to a wire without surprise
        tx = PortSpec("p0", "net_null0", None, "02:00:00:00:00:01", ip="198.18.0.2")
        rx = PortSpec("p1", "net_null1", None, "02:00:00:00:00:02", ip="198.19.0.2")
        _only_config_errors(spec.for_flow, Flow(tx, rx))


@FUZZ
@given(name=st.one_of(st.sampled_from(["udp.sport", "udp.dport", "ip.src", "ip.dst", "eth.src",
                                       "ip.ttl", "nope"]), INTS, st.text(max_size=6)),
       op=st.one_of(st.sampled_from(["set", "inc", "dec", "random"]), st.text(max_size=5)),
       low=st.one_of(st.none(), INTS, st.text(max_size=8)),
       high=st.one_of(st.none(), INTS, st.text(max_size=8)),
       value=st.one_of(st.none(), INTS), step=INTS,
       width=st.one_of(st.none(), st.sampled_from([1, 2, 4, 6, 8]), INTS))
def test_field_ops_build_or_raise_config_errors(name: Any, op: Any, low: Any, high: Any,
                                                value: Any, step: Any, width: Any) -> None:
    from pytest_netload.traffic.packets import UDP, Eth, IPv4, field
    from pytest_netload.traffic.streams import Stream

    template = (Eth() / IPv4() / UDP()).build()
    made = _only_config_errors(field, template, name, op, min=low, max=high, value=value,
                               step=step, width=width)
    if not isinstance(made, NetloadConfigError):
        _only_config_errors(Stream, template, 128, fields=[made])


@FUZZ
@given(ttl=INTS, tos=INTS, ident=INTS, sport=INTS, dport=INTS, vid=INTS, pcp=INTS,
       mac=st.one_of(st.text(max_size=20), INTS, st.binary(max_size=8)))
def test_layers_build_or_raise_config_errors(ttl: Any, tos: Any, ident: Any, sport: Any,
                                             dport: Any, vid: Any, pcp: Any, mac: Any) -> None:
    from pytest_netload.traffic.packets import UDP, Eth, IPv4, Vlan

    def build() -> Any:
        return (Eth(src=mac) / Vlan(vid, pcp) / IPv4(ttl=ttl, tos=tos, id=ident)
                / UDP(sport, dport)).build()

    _only_config_errors(build)


# ---- the results loader --------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
              st.text(max_size=10)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20)
SAMPLE = json.loads((DATA / "results-sample.json").read_text())


def _leaf_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _leaf_paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _leaf_paths(item, (*path, i))
    return out


SAMPLE_PATHS = _leaf_paths(SAMPLE)[1:]


@FUZZ
@given(document=st.one_of(JSON_VALUES, st.fixed_dictionaries(
    {"schema_version": st.sampled_from(["1.0", "0.9", "1.1", "2.0", "x"])}, optional={
        "tests": JSON_VALUES, "created": JSON_VALUES, "settings": JSON_VALUES})))
def test_any_json_document_is_a_results_document_or_a_results_file_error(document: Any) -> None:
    from pytest_netload.reports.baseline import extract_figures
    from pytest_netload.reports.load import parse
    from pytest_netload.reports.schema import ResultsFileError, validate

    for text in (json.dumps(document), json.dumps(document)[: len(json.dumps(document)) // 2]):
        try:
            validate(parse(text, "fuzz.json"), "fuzz.json")
        except ResultsFileError as exc:
            assert str(exc).startswith("fuzz.json: "), exc
    _only_config_errors(extract_figures, document)


@FUZZ
@given(data=st.data(), replacement=JSON_VALUES)
def test_the_sample_with_one_value_replaced_loads_or_names_the_field(
        data: st.DataObject, replacement: Any) -> None:
    """A results document one edit away from a valid one: the loader accepts it (and the
    report renders) or names the file; a baseline of it loads or names the field."""
    from pytest_netload.reports.baseline import extract_figures
    from pytest_netload.reports.load import parse
    from pytest_netload.reports.schema import ResultsFileError, validate

    path = data.draw(st.sampled_from(SAMPLE_PATHS))
    document = copy.deepcopy(SAMPLE)
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = replacement
    try:
        validate(parse(json.dumps(document), "fuzz.json"), "fuzz.json")
    except ResultsFileError as exc:
        assert str(exc).startswith("fuzz.json: "), exc
    _only_config_errors(extract_figures, document)


@FUZZ
@given(text=st.one_of(st.text(), st.builds(
    lambda n, c: c * n, st.integers(0, 200_000), st.sampled_from(["[", '{"a":', "-", "1e9"]))))
def test_any_text_is_parsed_or_refused_as_a_results_file(text: str) -> None:
    from pytest_netload.reports.load import load
    from pytest_netload.reports.schema import ResultsFileError

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "results.json"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            load(path)
        except ResultsFileError as exc:
            assert str(exc).startswith(os.fspath(path)), exc
