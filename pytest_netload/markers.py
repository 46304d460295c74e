"""The `netload` and `rfc2544` markers: whitelisted arguments, parsed into frozen
dataclasses at collection, so a wrong argument fails before any traffic with
a message naming the test and the argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pytest

from .errors import NetloadConfigError
from .rfc2544 import RFC2544_FRAME_SIZES, FrameSize, check_frame_sizes, frame_size_label
from .units import Rate, as_duration, as_rate

NETLOAD_HELP = (
    "netload(rate=None, pattern='cbr', duration='1s', frame_sizes=None, flows=1, wire=0): "
    "per-test traffic defaults for the rate_controller, traffic and latency_meter fixtures. "
    "Provided by pytest-netload.")
RFC2544_HELP = (
    "rfc2544(frame_sizes=[64, 128, 256, 512, 1024, 1280, 1518], trial_duration='60s', "
    "loss_tolerance=0, search='binary', resolution=0.005, max_trials=20, retries=2, "
    "drain='2s', flows=1, max_rate=None, wire=0, learning_frames=10, warmup='0s', goals='rfc2544-strict', "
    "time_budget=None): settings of the rfc2544 fixture's "
    "procedures; a test taking a `frame_size` argument runs once per size. "
    "Provided by pytest-netload.")

SEARCHES = ("binary", "mlrsearch")


@dataclass(frozen=True)
class NetloadMark:
    rate: Rate | None = None
    pattern: str = "cbr"
    duration_s: float = 1.0
    frame_sizes: tuple[FrameSize, ...] | None = None
    flows: int = 1
    wire: int = 0


@dataclass(frozen=True)
class Rfc2544Mark:
    frame_sizes: tuple[FrameSize, ...] = RFC2544_FRAME_SIZES
    trial_duration_s: float = 60.0
    loss_tolerance: float = 0.0
    search: str = "binary"
    resolution: float = 0.005
    """Search resolution as a share of the maximum load."""
    max_trials: int = 20
    retries: int = 2
    drain_s: float = 2.0
    flows: int = 1
    max_rate: Rate | None = None
    wire: int = 0
    learning_frames: int = 10
    """Frames sent each way before the first trial (§23); 0: none."""
    warmup_s: float = 0.0
    """Uncounted traffic at each trial's load before it."""
    trial_duration_set: bool = False
    """trial_duration was given: it then applies to every procedure's trials."""
    goals: Any = "rfc2544-strict"
    """MLRsearch loss goals: a preset name or a tuple of rfc2544.mlr.LossGoal."""
    time_budget_s: float | None = None
    """MLRsearch: the most trial time one search may spend."""


def _count(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise NetloadConfigError(f"{name}={value!r}: give a whole number from {low} to {high}")
    return value


def _seconds(name: str, value: Any) -> float:
    seconds = as_duration(value, what=name).seconds
    if seconds <= 0:
        raise NetloadConfigError(f"{name}={value!r}: give a duration > 0, e.g. '10s'")
    return seconds


NETLOAD_ARGS = ("rate", "pattern", "duration", "frame_sizes", "flows", "wire")
RFC2544_ARGS = ("frame_sizes", "trial_duration", "loss_tolerance", "search", "resolution",
                "max_trials", "retries", "drain", "flows", "max_rate", "wire", "learning_frames",
                "warmup", "goals", "time_budget")


def _kwargs(mark: pytest.Mark, allowed: tuple[str, ...]) -> dict[str, Any]:
    if mark.args:
        raise NetloadConfigError(
            f"positional arguments {list(mark.args)!r}: write them as keywords "
            f"({', '.join(allowed)})")
    unknown = sorted(set(mark.kwargs) - set(allowed))
    if unknown:
        raise NetloadConfigError(
            f"unknown argument {unknown[0]!r}; {mark.name} takes {', '.join(allowed)}")
    return dict(mark.kwargs)


def parse_netload(mark: pytest.Mark) -> NetloadMark:
    kw = _kwargs(mark, NETLOAD_ARGS)
    out: dict[str, Any] = {}
    for key, value in kw.items():
        if key == "rate":
            out["rate"] = None if value is None else as_rate(value, what="rate")
        elif key == "pattern":
            from .patterns import parse_pattern

            parse_pattern(value)
            out["pattern"] = value
        elif key == "duration":
            out["duration_s"] = _seconds("duration", value)
        elif key == "frame_sizes":
            out["frame_sizes"] = check_frame_sizes(value)
        elif key == "flows":
            out["flows"] = _count("flows", value, 1, 64512)
        elif key == "wire":
            out["wire"] = _count("wire", value, 0, 1023)
    return NetloadMark(**out)


def parse_rfc2544(mark: pytest.Mark) -> Rfc2544Mark:
    kw = _kwargs(mark, RFC2544_ARGS)
    out: dict[str, Any] = {}
    for key, value in kw.items():
        if key == "frame_sizes":
            out["frame_sizes"] = check_frame_sizes(value)
        elif key == "trial_duration":
            out["trial_duration_s"] = _seconds("trial_duration", value)
            out["trial_duration_set"] = True
        elif key == "goals":
            from .rfc2544.mlr import check_goals

            out["goals"] = value if isinstance(value, str) else tuple(value)
            check_goals(out["goals"])
        elif key == "time_budget":
            out["time_budget_s"] = _seconds("time_budget", value)
        elif key == "learning_frames":
            out["learning_frames"] = _count("learning_frames", value, 0, 1_000_000)
        elif key == "warmup":
            seconds = as_duration(value, what="warmup").seconds
            if seconds < 0:
                raise NetloadConfigError(f"warmup={value!r}: give a duration >= 0")
            out["warmup_s"] = seconds
        elif key == "drain":
            seconds = as_duration(value, what="drain").seconds
            if seconds < 0:
                raise NetloadConfigError(f"drain={value!r}: give a duration >= 0")
            out["drain_s"] = seconds
        elif key == "loss_tolerance":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    not 0 <= value < 1:
                raise NetloadConfigError(
                    f"loss_tolerance={value!r}: give a ratio in [0, 1), e.g. 0 or 1e-6")
            out["loss_tolerance"] = float(value)
        elif key == "search":
            if value not in SEARCHES:
                raise NetloadConfigError(f"search={value!r}: use one of {list(SEARCHES)}")
            out["search"] = value
        elif key == "resolution":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    not math.isfinite(value) or not 0 < value < 1:
                raise NetloadConfigError(
                    f"resolution={value!r}: give a share of the maximum load in (0, 1), "
                    "e.g. 0.005")
            out["resolution"] = float(value)
        elif key == "max_trials":
            out["max_trials"] = _count("max_trials", value, 1, 1000)
        elif key == "retries":
            out["retries"] = _count("retries", value, 0, 100)
        elif key == "flows":
            out["flows"] = _count("flows", value, 1, 64512)
        elif key == "wire":
            out["wire"] = _count("wire", value, 0, 1023)
        elif key == "max_rate":
            out["max_rate"] = None if value is None else as_rate(value, what="max_rate")
    if out.get("search", "binary") == "binary":
        given = [k for k in ("goals", "time_budget") if k in kw]
        if given:
            raise NetloadConfigError(
                f"{given[0]} applies to search='mlrsearch', but the search is binary; add "
                "search='mlrsearch' or drop it")
    elif "max_trials" in kw or "resolution" in kw:
        raise NetloadConfigError(
            "max_trials and resolution bound the binary search; MLRsearch takes its width "
            "and trial durations from its goals (and time_budget): drop them")
    return Rfc2544Mark(**out)


def frame_size_id(size: FrameSize) -> str:
    return frame_size_label(size)


def parametrize_frame_sizes(metafunc: pytest.Metafunc) -> None:
    """Run a test taking `frame_size` once per size of its rfc2544 (or netload) marker,
    with ids such as test_x[64B] and test_x[imix]."""
    if "frame_size" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0] if mark.args else mark.kwargs.get("argnames", "")
        if "frame_size" in (names.replace(" ", "").split(",") if isinstance(names, str)
                            else list(names)):
            return  # the user parametrised it
    sizes: tuple[FrameSize, ...] = RFC2544_FRAME_SIZES
    rfc = metafunc.definition.get_closest_marker("rfc2544")
    net = metafunc.definition.get_closest_marker("netload")
    if rfc is not None:
        sizes = parse_rfc2544(rfc).frame_sizes
    elif net is not None and parse_netload(net).frame_sizes:
        sizes = parse_netload(net).frame_sizes or sizes
    metafunc.parametrize("frame_size", sizes, ids=[frame_size_id(s) for s in sizes])


def check_markers(metafunc: pytest.Metafunc) -> None:
    """Parse every netload marker of a test at collection; fail naming test and argument."""
    for name, parse in (("netload", parse_netload), ("rfc2544", parse_rfc2544)):
        for mark in metafunc.definition.iter_markers(name):
            try:
                parse(mark)
                continue
            except NetloadConfigError as exc:
                message = f"{metafunc.definition.nodeid}: @pytest.mark.{name}: {exc}"
            pytest.fail(message, pytrace=False)  # outside `except`: no chained traceback
