"""The search core's one measurer protocol and its one value of a trial's common settings:
`TrialSettings` checks itself with the texts the procedures always used, every procedure
takes it, and every standard's measurer is `search.Measurer` under an alias, so a new
standard cannot add a protocol of its own."""

from __future__ import annotations

import ast
import math
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pytest_netload
from pytest_netload.errors import NetloadConfigError
from pytest_netload.rfc2544 import BurstMeasurer, binary_search
from pytest_netload.rfc2544 import Measurer as Rfc2544Measurer
from pytest_netload.rfc2544.back_to_back import back_to_back
from pytest_netload.rfc2544.frame_loss import frame_loss_sweep
from pytest_netload.rfc2544.latency import latency_trials
from pytest_netload.rfc2544.mlr import mlr_search
from pytest_netload.rfc2544.recovery import RecoveryMeasurer, system_recovery
from pytest_netload.rfc2889 import (
    AddressLoad,
    AddressMeasurer,
    BroadcastMeasurer,
    CongestionMeasurer,
    ForwardingMeasurer,
    address_caching_capacity,
    address_learning_rate,
    broadcast_forwarding,
    congestion_control,
    fully_meshed,
)
from pytest_netload.search import FunctionMeasurer, Measurer, TrialSettings
from pytest_netload.y1564 import ServiceMeasurer, service_configuration_test

PACKAGE = Path(pytest_netload.__file__).parent
ALIASES = {"rfc2544.Measurer": Rfc2544Measurer, "rfc2544.BurstMeasurer": BurstMeasurer,
           "rfc2544.RecoveryMeasurer": RecoveryMeasurer,
           "rfc2889.ForwardingMeasurer": ForwardingMeasurer,
           "rfc2889.CongestionMeasurer": CongestionMeasurer,
           "rfc2889.BroadcastMeasurer": BroadcastMeasurer,
           "rfc2889.AddressMeasurer": AddressMeasurer, "y1564.ServiceMeasurer": ServiceMeasurer}
PROCEDURES: tuple[Callable[..., Any], ...] = (
    binary_search, mlr_search, back_to_back, frame_loss_sweep, latency_trials,
    system_recovery, fully_meshed,
    broadcast_forwarding, congestion_control, address_caching_capacity, address_learning_rate,
    service_configuration_test)


# ---- TrialSettings checks itself ----------------------------------------------------------


@given(st.floats(0.001, 86_400.0), st.integers(0, 10), st.sampled_from([64, 1518, 9216, "imix"]),
       st.floats(64.0, 9216.0), st.one_of(st.none(), st.floats(1e6, 4e11)))
def test_good_settings_are_kept_as_given(duration: float, retries: int, size: int | str,
                                         mean: float, line: float | None) -> None:
    s = TrialSettings(duration_s=duration, retries=retries, frame_size=size,
                      mean_frame_size=mean, line_rate_bps=line)
    assert (s.duration_s, s.retries, s.frame_size, s.mean_frame_size, s.line_rate_bps) == (
        duration, retries, size, mean, line)
    assert s.timed("p") == duration and s.sized("p") == (size, mean)


@given(st.one_of(st.floats(max_value=0.0), st.just(math.inf), st.just(math.nan),
                 st.booleans(), st.text(max_size=3)))
def test_a_bad_duration_names_itself(duration: object) -> None:
    with pytest.raises(NetloadConfigError, match=r"duration_s=.*: give a finite number > 0"):
        TrialSettings(duration_s=duration)  # type: ignore[arg-type]


@given(st.one_of(st.integers(max_value=-1), st.floats(allow_nan=False), st.booleans(),
                 st.just("2")))
def test_bad_retries_name_themselves(retries: object) -> None:
    with pytest.raises(NetloadConfigError, match=r"retries=.*: give a whole number >= 0"):
        TrialSettings(retries=retries)  # type: ignore[arg-type]


@given(st.one_of(st.integers(max_value=63), st.integers(min_value=9217), st.just("jumbo"),
                 st.just(64.0), st.booleans()))
def test_a_bad_frame_size_names_itself(size: object) -> None:
    with pytest.raises(NetloadConfigError, match=r"frame_size: .* is not a frame size; give "
                       r"bytes with FCS from 64 to 9216"):
        TrialSettings(frame_size=size)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["mean_frame_size", "line_rate_bps"])
@given(value=st.one_of(st.floats(max_value=0.0), st.just(math.inf), st.just(math.nan),
                       st.just("64")))
def test_bad_sizes_and_rates_name_themselves(name: str, value: object) -> None:
    with pytest.raises(NetloadConfigError, match=rf"{name}=.*: give a positive finite number"):
        TrialSettings(**{name: value})  # type: ignore[arg-type]


def test_imix_in_any_case_and_on_trial_must_be_callable() -> None:
    assert TrialSettings(frame_size="IMIX").frame_size == "imix"
    with pytest.raises(NetloadConfigError, match="on_trial=3: give a function of one trial"):
        TrialSettings(on_trial=3)  # type: ignore[arg-type]
    seen: list[object] = []
    assert TrialSettings(on_trial=seen.append) == TrialSettings()   # an observer, not a value


def test_what_a_procedure_needs_is_named_with_it() -> None:
    with pytest.raises(NetloadConfigError, match=r"binary_search runs timed trials: give "
                       r"TrialSettings\(duration_s=\.\.\.\)"):
        binary_search(FunctionMeasurer(_never), 1e6,
                      settings=TrialSettings(frame_size=64, mean_frame_size=64.0))
    with pytest.raises(NetloadConfigError, match=r"latency_trials states its frame size"):
        latency_trials(FunctionMeasurer(_never), 1e6, settings=TrialSettings(duration_s=1.0))
    with pytest.raises(NetloadConfigError, match=r"mlr_search: .*the goals set every trial's "
                       "duration"):
        mlr_search(FunctionMeasurer(_never), min_pps=1.0, max_pps=10.0, goals="ci-fast",
                   settings=TrialSettings(duration_s=1.0, frame_size=64, mean_frame_size=64.0))
    with pytest.raises(NetloadConfigError, match=r"back_to_back: .*a burst's length sets"):
        back_to_back(FunctionMeasurer(_never), rate_pps=1e6, max_frames=10,
                     settings=TrialSettings(duration_s=1.0, frame_size=64, mean_frame_size=64))
    with pytest.raises(NetloadConfigError, match=r"system_recovery states its frame size"):
        system_recovery(FunctionMeasurer(_never), throughput_pps=1.0, max_pps=2.0,
                        overload_s=1.0, relief_s=1.0, settings=TrialSettings())
    with pytest.raises(NetloadConfigError, match=r"address_caching_capacity: .*an address "
                       "trial's count and rates set its duration"):
        address_caching_capacity(FunctionMeasurer(_never), settings=TrialSettings(duration_s=1.0))


def _never(load: object, duration_s: float) -> Any:
    raise AssertionError("a procedure ran a trial with settings it must refuse")


def test_an_address_trials_duration_is_its_loads_own() -> None:
    seen: list[tuple[AddressLoad, float]] = []

    def measure(load: AddressLoad, duration_s: float) -> Any:
        seen.append((load, duration_s))
        from pytest_netload.rfc2889 import AddressTrial
        return AddressTrial(load.count, load.count, load.count, 0)

    address_caching_capacity(FunctionMeasurer(measure), low=1, high=100,
                             learning_rate_fps=50.0, test_rate_fps=100.0)
    load, duration = seen[0]
    assert load == AddressLoad(100, 50.0, 100.0) and duration == 100 / 50.0 + 100 / 100.0


# ---- one protocol --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_every_standards_measurer_is_the_search_cores(name: str) -> None:
    assert typing.get_origin(ALIASES[name]) is Measurer, (
        f"{name} must be search.Measurer[load, trial], not a protocol of its own")


@pytest.mark.parametrize("procedure", PROCEDURES, ids=lambda p: p.__name__)
def test_every_procedure_takes_the_one_measurer_and_trial_settings(
        procedure: Callable[..., Any]) -> None:
    hints = typing.get_type_hints(procedure)
    first = next(iter(typing.get_type_hints(procedure)))
    assert typing.get_origin(hints[first]) is Measurer, (
        f"{procedure.__name__}'s {first}: {hints[first]!r} is not a search.Measurer")
    assert hints["settings"] is TrialSettings


def _protocols_with_a_measure_method(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [ast.unparse(b) for b in node.bases]
        if not any(b == "Protocol" or b.startswith(("Protocol[", "typing.Protocol"))
                   for b in bases):
            continue
        if any(isinstance(f, ast.FunctionDef) and f.name.startswith("measure")
               for f in node.body):
            found.append(f"{path.relative_to(PACKAGE.parent)}::{node.name}")
    return found


def test_no_standard_declares_a_measurer_protocol_of_its_own() -> None:
    found = [name for path in sorted(PACKAGE.rglob("*.py"))
             for name in _protocols_with_a_measure_method(path)]
    assert found == ["pytest_netload/search/trial.py::Measurer"], (
        "a measurer protocol besides search.Measurer: name the standard's as an alias, e.g. "
        "ForwardingMeasurer = Measurer[float, MeshTrial]")


def test_no_standard_imports_another_standards_internals() -> None:
    standards = ("rfc2544", "rfc2889", "y1564")
    for standard in standards:
        for path in (PACKAGE / standard).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                    [a.name for a in node.names] if isinstance(node, ast.Import) else []
                for other in standards:
                    assert other == standard or not any(other in n for n in names), (
                        f"{standard}/{path.name} imports {other}: what standards share goes "
                        "to search/")
