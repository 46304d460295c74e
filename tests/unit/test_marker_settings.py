"""The markers' settings (bench/settings.py): each class reads its marker through a
table of fields (bench/fields.py) and checks what joins two arguments itself. Every
error text a marker gives at collection is pinned here word for word; the plugin puts
the test's id and the marker in front (tests/plugin/test_markers.py)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_netload.bench.settings import (
    NETLOAD_FIELDS,
    RFC2544_FIELDS,
    RFC2889_FIELDS,
    Y1564_FIELDS,
    NetloadMark,
    Rfc2544Mark,
    Rfc2889Mark,
    Y1564Mark,
)
from pytest_netload.errors import NetloadConfigError
from pytest_netload.rfc2544.latency_at import LatencyAt
from pytest_netload.plugin.markers import NETLOAD_ARGS, RFC2544_ARGS, parse_netload, parse_rfc2544
from pytest_netload.plugin.rfc2889 import RFC2889_ARGS, parse_rfc2889
from pytest_netload.plugin.y1564 import Y1564_ARGS, parse_y1564
from pytest_netload.units import Rate

NAN = float("nan")
LATENCY_AT_FIX = ("give fractions of the throughput from 0 to 1, e.g. [0.1, 0.5, 0.9, 1.0] (0:"
                  " a very low load, as FD.io CSIT's no-load level), or 'csit' (0, 10, 50"
                  " and 90 % of the PDR)")
PARSERS = {"netload": parse_netload, "rfc2544": parse_rfc2544, "rfc2889": parse_rfc2889,
           "y1564": parse_y1564}
CLASSES: dict[str, Any] = {"netload": NetloadMark, "rfc2544": Rfc2544Mark,
                           "rfc2889": Rfc2889Mark, "y1564": Y1564Mark}
TABLES = {"netload": (NETLOAD_ARGS, NETLOAD_FIELDS), "rfc2544": (RFC2544_ARGS, RFC2544_FIELDS),
          "rfc2889": (RFC2889_ARGS, RFC2889_FIELDS), "y1564": (Y1564_ARGS, Y1564_FIELDS)}

# (marker, positional arguments, keyword arguments, the exact error text)
PINNED: list[tuple[str, tuple[Any, ...], dict[str, Any], str]] = [
    ("netload", (1,), {},
     'positional arguments [1]: write them as keywords (rate, pattern, duration,'
     ' frame_sizes, flows, wire)'),
    ("netload", (), {"bogus": 1},
     "unknown argument 'bogus'; netload takes rate, pattern, duration, frame_sizes, flows,"
     ' wire: rename or remove it'),
    ("netload", (), {"rate": "fast"},
     "rate 'fast': cannot parse it as a number and a unit; write e.g. '1.5Mpps',"
     " '9.5Gbit/s' or '95%'"),
    ("netload", (), {"rate": -1},
     'rate -1 is not a rate: it is not a positive finite number, and it has no unit; write'
     " e.g. '1.5Mpps', '9.5Gbit/s' or '95%'"),
    ("netload", (), {"duration": "1e9s"},
     "duration '1e9s' is 1e+09 s, more than 24 h (86400 s), the longest a run may take;"
     ' split a longer soak into runs of at most 24 h'),
    ("netload", (), {"duration": 0},
     "duration 0 is zero; give a duration > 0, e.g. '10s'"),
    ("netload", (), {"flows": True},
     'flows=True: give a whole number from 1 to 64512'),
    ("netload", (), {"flows": 0},
     'flows=0: give a whole number from 1 to 64512'),
    ("netload", (), {"flows": 70000},
     'flows=70000: give a whole number from 1 to 64512'),
    ("netload", (), {"wire": -1},
     'wire=-1: give a whole number from 0 to 1023'),
    ("netload", (), {"wire": 1024},
     'wire=1024: give a whole number from 0 to 1023'),
    ("netload", (), {"wire": 1, "flows": "2"},
     "flows='2': give a whole number from 1 to 64512"),
    ("rfc2544", ('x',), {},
     "positional arguments ['x']: write them as keywords (frame_sizes, trial_duration,"
     ' loss_tolerance, search, resolution, max_trials, retries, drain, flows, max_rate,'
     ' wire, learning_frames, warmup, goals, time_budget, steady_state, direction, stream,'
     ' expect, dut_health, latency_at)'),
    ("rfc2544", (), {"bogus": 1, "another": 2},
     "unknown argument 'another'; rfc2544 takes frame_sizes, trial_duration,"
     ' loss_tolerance, search, resolution, max_trials, retries, drain, flows, max_rate,'
     ' wire, learning_frames, warmup, goals, time_budget, steady_state, direction, stream,'
     ' expect, dut_health, latency_at: rename or remove it'),
    ("rfc2544", (), {"trial_duration": 0},
     "trial_duration 0 is zero; give a duration > 0, e.g. '10s'"),
    ("rfc2544", (), {"trial_duration": "25h"},
     "trial_duration '25h' is 90000 s, more than 24 h (86400 s), the longest a run may"
     ' take; split a longer soak into runs of at most 24 h'),
    ("rfc2544", (), {"search": "mlrsearch", "time_budget": "1e9s"},
     "time_budget='1e9s' is 1e+09 s, more than 24 h (86400 s); give at most '24h'"),
    ("rfc2544", (), {"search": "mlrsearch", "time_budget": 0},
     "time_budget=0: give a duration > 0, e.g. '10s'"),
    ("rfc2544", (), {"learning_frames": -1},
     'learning_frames=-1: give a whole number from 0 to 1000000'),
    ("rfc2544", (), {"learning_frames": 1000001},
     'learning_frames=1000001: give a whole number from 0 to 1000000'),
    ("rfc2544", (), {"warmup": "25h"},
     "warmup '25h' is 90000 s, more than 24 h (86400 s), the longest a run may take; split"
     ' a longer soak into runs of at most 24 h'),
    ("rfc2544", (), {"drain": -1},
     'drain -1 is negative; give a duration >= 0'),
    ("rfc2544", (), {"loss_tolerance": 2},
     'loss_tolerance=2: give a ratio in [0, 1), e.g. 0 or 1e-6'),
    ("rfc2544", (), {"loss_tolerance": NAN},
     'loss_tolerance=nan: give a ratio in [0, 1), e.g. 0 or 1e-6'),
    ("rfc2544", (), {"loss_tolerance": True},
     'loss_tolerance=True: give a ratio in [0, 1), e.g. 0 or 1e-6'),
    ("rfc2544", (), {"loss_tolerance": "0"},
     "loss_tolerance='0': give a ratio in [0, 1), e.g. 0 or 1e-6"),
    ("rfc2544", (), {"steady_state": None},
     "steady_state=None: use one of ['warn', 'fail', 'off'] ('warn' flags a trial whose"
     " DUT buffered an overload, 'fail' fails it)"),
    ("rfc2544", (), {"steady_state": "loud"},
     "steady_state='loud': use one of ['warn', 'fail', 'off'] ('warn' flags a trial whose"
     " DUT buffered an overload, 'fail' fails it)"),
    ("rfc2544", (), {"search": "linear"},
     "search='linear': use one of ['binary', 'mlrsearch']"),
    ("rfc2544", (), {"resolution": 0},
     'resolution=0: give a ratio of the lower bound in (0, 1), e.g. 0.005 (0.5 %), or a'
     " rate, e.g. '100pps' or '1Mbit/s'"),
    ("rfc2544", (), {"resolution": 1.5},
     'resolution=1.5: give a ratio of the lower bound in (0, 1), e.g. 0.005 (0.5 %), or a'
     " rate, e.g. '100pps' or '1Mbit/s'"),
    ("rfc2544", (), {"resolution": True},
     'resolution=True: give a ratio of the lower bound in (0, 1), e.g. 0.005 (0.5 %), or a'
     " rate, e.g. '100pps' or '1Mbit/s'"),
    ("rfc2544", (), {"resolution": "fast"},
     "resolution='fast': give a ratio of the lower bound in (0, 1), e.g. 0.005, or a rate,"
     " e.g. '100pps' or '1Mbit/s'"),
    ("rfc2544", (), {"resolution": "10%"},
     "resolution='10%': a share of the line rate is not a search resolution; give a ratio"
     " of the lower bound in (0, 1), e.g. 0.005, or a rate, e.g. '100pps' or '1Mbit/s'"),
    ("rfc2544", (), {"resolution": "0pps"},
     "resolution='0pps': give a ratio of the lower bound in (0, 1), e.g. 0.005, or a rate,"
     " e.g. '100pps' or '1Mbit/s'"),
    ("rfc2544", (), {"max_trials": 0},
     'max_trials=0: give a whole number from 1 to 1000'),
    ("rfc2544", (), {"max_trials": 1000000000},
     'max_trials=1000000000: give a whole number from 1 to 1000'),
    ("rfc2544", (), {"retries": "2"},
     "retries='2': give a whole number from 0 to 100"),
    ("rfc2544", (), {"retries": 101},
     'retries=101: give a whole number from 0 to 100'),
    ("rfc2544", (), {"flows": 70000},
     'flows=70000: give a whole number from 1 to 64512'),
    ("rfc2544", (), {"wire": -1},
     'wire=-1: give a whole number from 0 to 1023'),
    ("rfc2544", (), {"max_rate": "fast"},
     "max_rate 'fast': cannot parse it as a number and a unit; write e.g. '1.5Mpps',"
     " '9.5Gbit/s' or '95%'"),
    ("rfc2544", (), {"direction": "sideways"},
     "direction='sideways': use 'one' (traffic on the marker's wire) or 'both' (on it and"
     ' its reverse at once, the load offered on each; RFC 2544 §14)'),
    ("rfc2544", (), {"dut_health": "yes"},
     "dut_health='yes': give True (run the DUT's health hooks after every trial), False,"
     ' or None (the ini key netload_dut_health decides)'),
    ("rfc2544", (), {"latency_at": 0.5},
     "latency_at=0.5: " + LATENCY_AT_FIX),
    ("rfc2544", (), {"latency_at": [0.1, 1.5]},
     "latency_at=[0.1, 1.5]: 1.5 is not a fraction from 0 to 1; " + LATENCY_AT_FIX),
    ("rfc2544", (), {"latency_at": [-0.1]},
     "latency_at=[-0.1]: -0.1 is not a fraction from 0 to 1; " + LATENCY_AT_FIX),
    ("rfc2544", (), {"latency_at": [NAN]},
     "latency_at=[nan]: nan is not a fraction from 0 to 1; " + LATENCY_AT_FIX),
    ("rfc2544", (), {"latency_at": [True]},
     "latency_at=[True]: True is not a fraction from 0 to 1; " + LATENCY_AT_FIX),
    ("rfc2544", (), {"latency_at": []},
     "latency_at=[] names no load: " + LATENCY_AT_FIX + ", or leave it out"),
    ("rfc2544", (), {"latency_at": [0.5, 0.5]},
     "latency_at=[0.5, 0.5] lists a load twice; give each once"),
    ("rfc2544", (), {"latency_at": "trex"},
     "latency_at='trex' is not a preset ('csit'); " + LATENCY_AT_FIX),
    ("rfc2544", (), {"dut_health": 1},
     "dut_health=1: give True (run the DUT's health hooks after every trial), False, or"
     ' None (the ini key netload_dut_health decides)'),
    ("rfc2544", (), {"goals": "ci-fast"},
     "goals applies to search='mlrsearch', but the search is binary; add"
     " search='mlrsearch' or drop it"),
    ("rfc2544", (), {"time_budget": "1h"},
     "time_budget applies to search='mlrsearch', but the search is binary; add"
     " search='mlrsearch' or drop it"),
    ("rfc2544", (), {"goals": "ci-fast", "time_budget": "1h"},
     "goals applies to search='mlrsearch', but the search is binary; add"
     " search='mlrsearch' or drop it"),
    ("rfc2544", (), {"search": "mlrsearch", "max_trials": 5},
     'max_trials and resolution bound the binary search; MLRsearch takes its width and'
     ' trial durations from its goals (and time_budget): drop them'),
    ("rfc2544", (), {"search": "mlrsearch", "resolution": 0.01},
     'max_trials and resolution bound the binary search; MLRsearch takes its width and'
     ' trial durations from its goals (and time_budget): drop them'),
    ("rfc2544", (), {"wire": "0", "retries": -1},
     "wire='0': give a whole number from 0 to 1023"),
    ("rfc2889", (64,), {},
     'positional arguments [64]: write them as keywords (frame_size, trial_duration,'
     ' resolution, max_trials, retries, max_rate, drain, ports, low, high, learning_rate,'
     ' test_rate, learning_count, age_time, load_steps, max_frame, stream, expect)'),
    ("rfc2889", (), {"frame_sizes": [64]},
     "unknown argument 'frame_sizes'; rfc2889 takes frame_size, trial_duration,"
     ' resolution, max_trials, retries, max_rate, drain, ports, low, high, learning_rate,'
     ' test_rate, learning_count, age_time, load_steps, max_frame, stream, expect: rename or'
     ' remove it'),
    ("rfc2889", (), {"frame_size": "imix"},
     "frame_size='imix': give bytes with FCS, e.g. 64"),
    ("rfc2889", (), {"trial_duration": 0},
     "trial_duration 0 is zero; give a duration > 0, e.g. '10s'"),
    ("rfc2889", (), {"trial_duration": "25h"},
     "trial_duration '25h' is 90000 s, more than 24 h (86400 s), the longest a run may"
     ' take; split a longer soak into runs of at most 24 h'),
    ("rfc2889", (), {"drain": -1},
     'drain -1 is negative; give a duration >= 0'),
    ("rfc2889", (), {"age_time": 0},
     "age_time 0 is zero; give a duration > 0, e.g. '10s'"),
    ("rfc2889", (), {"resolution": "100pps"},
     "resolution='100pps': give a ratio of the lower bound in (0, 1), e.g. 0.005"),
    ("rfc2889", (), {"resolution": 2},
     'resolution=2: give a ratio of the lower bound in (0, 1), e.g. 0.005 (0.5 %), or a'
     " rate, e.g. '100pps' or '1Mbit/s'"),
    ("rfc2889", (), {"resolution": "fast"},
     "resolution='fast': give a ratio of the lower bound in (0, 1), e.g. 0.005, or a rate,"
     " e.g. '100pps' or '1Mbit/s'"),
    ("rfc2889", (), {"max_rate": "fast"},
     "max_rate 'fast': cannot parse it as a number and a unit; write e.g. '1.5Mpps',"
     " '9.5Gbit/s' or '95%'"),
    ("rfc2889", (), {"learning_rate": "1Mbit/s"},
     "learning_rate='1Mbit/s': give a frame rate > 0, e.g. '1000pps'"),
    ("rfc2889", (), {"learning_rate": "0pps"},
     "learning_rate '0pps' is not above zero; give a positive rate (leave a stream out to"
     ' send nothing)'),
    ("rfc2889", (), {"test_rate": "10%"},
     "test_rate='10%': give a frame rate > 0, e.g. '1000pps'"),
    ("rfc2889", (), {"max_trials": 0},
     'max_trials=0: give a whole number from 1 to 1000'),
    ("rfc2889", (), {"retries": -1},
     'retries=-1: give a whole number from 0 to 100'),
    ("rfc2889", (), {"ports": 1},
     'ports=1: give a whole number from 2 to 1024'),
    ("rfc2889", (), {"ports": 1025},
     'ports=1025: give a whole number from 2 to 1024'),
    ("rfc2889", (), {"low": 0},
     'low=0: give a whole number from 1 to 16777216'),
    ("rfc2889", (), {"high": 33554432},
     'high=33554432: give a whole number from 1 to 16777216'),
    ("rfc2889", (), {"learning_count": 0},
     'learning_count=0: give a whole number from 1 to 16777216'),
    ("rfc2889", (), {"load_steps": 0},
     'load_steps=0: give a whole number from 1 to 100'),
    ("rfc2889", (), {"load_steps": 2.5},
     'load_steps=2.5: give a whole number from 1 to 100'),
    ("rfc2889", (), {"max_frame": 63},
     'max_frame=63: give a whole number from 64 to 9604'),
    ("rfc2889", (), {"max_frame": "1518"},
     "max_frame='1518': give a whole number from 64 to 9604"),
    ("rfc2889", (), {"stream": "imix"},
     "stream='imix' is not a stream; the marker's frame_size sets the meshes' frames (e.g. "
     "frame_size=128): give stream= udp(...), tcp(...), a template (Eth() / Vlan(100) / "
     "IPv6() / UDP()), a Stream or a weighted list of them"),
    ("rfc2889", (), {"low": 10, "high": 5},
     'high=5 is below low=10: give high >= low'),
    ("rfc2889", (), {"high": 5, "low": 10},
     'high=5 is below low=10: give high >= low'),
    ("y1564", ({},), {},
     'positional arguments [{}]: write them as keywords (services, steps, step_duration,'
     ' eir_step, policing, policing_overshoot, ir_tolerance, spt_duration, interval,'
     ' availability_threshold, availability_n, fdv_quantile, drain, retries, wire,'
     ' learning_frames, checkpoint, checkpoint_every, bursts, burst_sizes, burst_idle,'
     ' burst_tolerance, direction, expect)'),
    ("y1564", (), {"service": []},
     "unknown argument 'service'; y1564 takes services, steps, step_duration, eir_step,"
     ' policing, policing_overshoot, ir_tolerance, spt_duration, interval,'
     ' availability_threshold, availability_n, fdv_quantile, drain, retries, wire,'
     ' learning_frames, checkpoint, checkpoint_every, bursts, burst_sizes, burst_idle,'
     ' burst_tolerance, direction, expect: rename or remove it'),
    ("y1564", (), {"services": "data"},
     "services='data': give a list of services, each a dict like {'name': 'data', 'cir':"
     " '10Mbit/s'}"),
    ("y1564", (), {"services": 5},
     "services=5: give a list of services, each a dict like {'name': 'data', 'cir':"
     " '10Mbit/s'}"),
    ("y1564", (), {"steps": "x"},
     "steps='x': give shares of the CIR, e.g. [0.25, 0.5, 0.75, 1.0]"),
    ("y1564", (), {"steps": 5},
     'steps=5: give shares of the CIR, e.g. [0.25, 0.5, 0.75, 1.0]'),
    ("y1564", (), {"step_duration": 0},
     "step_duration 0 is zero; give a duration > 0, e.g. '10s'"),
    ("y1564", (), {"spt_duration": "25h"},
     "spt_duration '25h' is 90000 s, more than 24 h (86400 s), the longest a run may take;"
     ' split a longer soak into runs of at most 24 h'),
    ("y1564", (), {"interval": -1},
     'interval -1 is negative; give a duration >= 0'),
    ("y1564", (), {"checkpoint_every": "x"},
     "checkpoint_every 'x': cannot parse it as a number and a unit; write e.g. '10s',"
     " '500ms', '250us', '2m' or '1h'"),
    ("y1564", (), {"drain": -1},
     'drain -1 is negative; give a duration >= 0'),
    ("y1564", (), {"eir_step": "yes"},
     "eir_step='yes': give True or False"),
    ("y1564", (), {"policing": 1},
     'policing=1: give True or False'),
    ("y1564", (), {"checkpoint": None},
     'checkpoint=None: give True or False'),
    ("y1564", (), {"policing_overshoot": 1.0},
     'policing_overshoot=1.0: give a number from 1.0001 to 10, e.g. 1.25 (125 % of CIR+EIR)'),
    ("y1564", (), {"policing_overshoot": 11},
     'policing_overshoot=11: give a number from 1.0001 to 10, e.g. 1.25 (125 % of CIR+EIR)'),
    ("y1564", (), {"ir_tolerance": 0.6},
     'ir_tolerance=0.6: give a number from 0 to 0.5, e.g. 0.02 (2 %)'),
    ("y1564", (), {"ir_tolerance": True},
     'ir_tolerance=True: give a number from 0 to 0.5, e.g. 0.02 (2 %)'),
    ("y1564", (), {"availability_threshold": 2},
     'availability_threshold=2: give a number from 0 to 1, e.g. 0.5 (an interval losing'
     ' over half)'),
    ("y1564", (), {"fdv_quantile": 40},
     'fdv_quantile=40: give a number from 50 to 100, e.g. 99.9'),
    ("y1564", (), {"availability_n": 0},
     'availability_n=0: give a whole number from 1 to 3600'),
    ("y1564", (), {"retries": 101},
     'retries=101: give a whole number from 0 to 100'),
    ("y1564", (), {"wire": -1},
     'wire=-1: give a whole number from 0 to 1023'),
    ("y1564", (), {"learning_frames": -1},
     'learning_frames=-1: give a whole number from 0 to 1000000'),
    ("y1564", (), {"steps": [0.5], "retries": -1},
     'retries=-1: give a whole number from 0 to 100'),
    ("y1564", (), {"bursts": "yes"},
     "bursts='yes': give True or False"),
    ("y1564", (), {"burst_sizes": 2.0},
     'burst_sizes=2.0: give the bursts as shares of the bucket, e.g. [1.0] or [0.8, 2.0]'),
    ("y1564", (), {"burst_sizes": []},
     'burst_sizes=[]: give the bursts as shares of the bucket, e.g. [1.0] or [0.8, 2.0]'),
    ("y1564", (), {"burst_sizes": [0.8, 0]},
     'burst_sizes=[0.8, 0]: 0 is not a share of the bucket in (0, 100]; give e.g. [0.8,'
     ' 2.0]'),
    ("y1564", (), {"burst_idle": -1},
     'burst_idle -1 is negative; give a duration >= 0'),
    ("y1564", (), {"burst_tolerance": -1},
     'burst_tolerance=-1: give a whole number from 0 to 1000000'),
]


@pytest.mark.parametrize(("name", "args", "kwargs", "text"), PINNED,
                         ids=[f"{n}-{'-'.join(k) or 'positional'}-{i}"
                              for i, (n, _a, k, _t) in enumerate(PINNED)])
def test_a_bad_argument_gives_its_exact_text(name: str, args: tuple[Any, ...],
                                             kwargs: dict[str, Any], text: str) -> None:
    mark = getattr(pytest.mark, name)(*args, **kwargs).mark
    with pytest.raises(NetloadConfigError) as by_plugin:
        PARSERS[name](mark)
    assert str(by_plugin.value) == text
    with pytest.raises(NetloadConfigError) as by_class:
        CLASSES[name].from_marker(mark)
    assert str(by_class.value) == text


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_marker_takes_what_its_table_reads(name: str) -> None:
    args, fields = TABLES[name]
    assert args == tuple(fields)  # the plugin's list (help, errors) is the table's order
    attrs = {f.name for f in dataclasses.fields(CLASSES[name])}
    assert {field.attr for field in fields.values()} <= attrs


def test_a_marker_is_anything_with_a_name_args_and_kwargs() -> None:
    mark = SimpleNamespace(name="netload", args=(), kwargs={"flows": 2, "duration": "2s"})
    assert NetloadMark.from_marker(mark) == NetloadMark(flows=2, duration_s=2.0)


def test_arguments_fill_their_attributes() -> None:
    rfc = Rfc2544Mark.from_marker(pytest.mark.rfc2544(
        trial_duration="2s", drain=0, warmup="1s", resolution="100pps", max_rate="50%",
        stream=None, dut_health=None).mark)
    assert (rfc.trial_duration_s, rfc.trial_duration_set, rfc.drain_s, rfc.warmup_s) == \
        (2.0, True, 0.0, 1.0)
    assert rfc.resolution == Rate(100, "pps") and rfc.max_rate is not None
    assert rfc.max_rate.kind == "percent" and rfc.max_rate.value == 50
    assert rfc.stream is None and rfc.dut_health is None and rfc.latency_at is None
    at = Rfc2544Mark.from_marker(pytest.mark.rfc2544(latency_at=[1.0, 0.1, 0.5]).mark)
    assert at.latency_at == LatencyAt((0.1, 0.5, 1.0))
    csit = Rfc2544Mark.from_marker(pytest.mark.rfc2544(latency_at=" CSIT").mark).latency_at
    assert csit is not None and csit.fractions == (0.0, 0.1, 0.5, 0.9) and csit.of == "pdr"
    assert not Rfc2544Mark.from_marker(pytest.mark.rfc2544().mark).trial_duration_set
    assert Rfc2544Mark.from_marker(pytest.mark.rfc2544(
        search="mlrsearch", goals="ci-fast", time_budget="10m").mark).time_budget_s == 600
    std = Rfc2889Mark.from_marker(pytest.mark.rfc2889(
        learning_rate="500pps", test_rate="2kpps", age_time=None, ports=4).mark)
    assert (std.learning_rate_fps, std.test_rate_fps, std.age_time_s, std.ports) == \
        (500.0, 2000.0, None, 4)
    y = Y1564Mark.from_marker(pytest.mark.y1564(
        services=[{"name": "data", "cir": "10Mbit/s"}], steps=[0.5, 1], interval="2s",
        ir_tolerance=0, checkpoint=False).mark)
    assert y.services[0].name == "data" and y.steps == (0.5, 1.0)
    assert (y.interval_s, y.ir_tolerance, y.checkpoint) == (2.0, 0.0, False)
    assert isinstance(y.ir_tolerance, float)
    b = Y1564Mark.from_marker(pytest.mark.y1564(
        bursts=True, burst_sizes=[0.8, 2], burst_idle="20ms", burst_tolerance=0).mark)
    assert (b.bursts, b.burst_sizes, b.burst_idle_s, b.burst_tolerance) == \
        (True, (0.8, 2.0), 0.02, 0)
    assert Y1564Mark.from_marker(pytest.mark.y1564(burst_idle=None).mark).burst_idle_s is None


def _udp(**kw: Any) -> Any:
    from pytest_netload.traffic.streams import udp

    return udp(**kw)


def _pair() -> Any:
    from pytest_netload.traffic.mix import bidirectional

    return bidirectional(_udp(), _udp(name="back"))


def test_the_marker_checks_its_stream_against_flows_and_direction() -> None:
    with pytest.raises(NetloadConfigError) as flows:
        parse_rfc2544(pytest.mark.rfc2544(flows=8, stream=_udp()).mark)
    assert str(flows.value) == (
        "flows=8 varies the procedures' own UDP stream, but stream= gives the traffic: vary "
        "it there (udp(flows=N), src_ips=N, dst_ips=N) and drop flows")
    with pytest.raises(NetloadConfigError) as one_way:
        parse_rfc2544(pytest.mark.rfc2544(stream=_pair()).mark)
    assert str(one_way.value) == (
        "stream=bidirectional(...) names the reverse wire's streams, but direction is 'one': "
        "add direction='both', or give the forward streams alone")
    assert parse_rfc2544(pytest.mark.rfc2544(stream=_pair(), direction="both").mark
                         ).stream.reverse is not None


def test_a_procedures_stream_is_checked_against_the_marker() -> None:
    mix, name = Rfc2544Mark(flows=4).mix_for(None)
    assert name == "rfc2544" and mix.reverse is None
    assert Rfc2544Mark().mix_for(_udp())[1] is None
    with pytest.raises(NetloadConfigError) as flows:
        Rfc2544Mark(flows=4).mix_for(_udp())
    assert str(flows.value) == (
        "flows=4 varies the procedures' own UDP stream, but stream= gives the traffic: vary "
        "it there (udp(flows=N), src_ips=N, dst_ips=N) and drop flows from the marker")
    with pytest.raises(NetloadConfigError) as one_way:
        Rfc2544Mark().mix_for(_pair())
    assert str(one_way.value) == (
        "bidirectional(...) names the reverse wire's streams, but the marker's direction is "
        "'one': add direction='both' to @pytest.mark.rfc2544, or pass the forward streams "
        "alone")
