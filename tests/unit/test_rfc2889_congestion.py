"""RFC 2889 §5.5 on fake 4-port switches: one that drops C's overload (no HOL
blocking), one whose input queue at A blocks a->d behind a->c (HOL blocking), one that
pauses its senders (back pressure), one whose C is faster than the load."""

from __future__ import annotations

import inspect

import pytest

from pytest_netload.errors import InvalidTrial, NetloadConfigError
from pytest_netload.rfc2889 import (
    EXPECTED_CONGESTED_LOSS,
    TRIAL_S,
    CongestionTrial,
    StreamCounts,
    congestion_control,
)
from pytest_netload.search import TrialSettings


class CongestionSwitch:
    """C forwards at most `c_rate` (a share of the per-port load); `mode` says what
    happens to the overload: "drop" (tail drop at C), "hol" (A's input queue blocks:
    a->d loses the share a->c does), "pause" (the senders are paused so nothing is
    lost), "fast" (C forwards everything)."""

    def __init__(self, mode: str, c_rate: float = 1.0, invalid_first: int = 0) -> None:
        self.mode, self.c_rate, self.invalid_first = mode, c_rate, invalid_first
        self.calls: list[tuple[float, float]] = []

    def measure(self, load_pps_per_port: float, duration_s: float) -> CongestionTrial:
        self.calls.append((load_pps_per_port, duration_s))
        n = round(load_pps_per_port * duration_s)
        if len(self.calls) <= self.invalid_first:
            zero = StreamCounts("a->c", 0, 0)
            return CongestionTrial(load_pps_per_port, duration_s, zero,
                                   StreamCounts("a->d", 0, 0), StreamCounts("b->c", 0, 0),
                                   valid=False, invalid_reason="link down on p1")
        half, pause = n // 2, None
        if self.mode == "fast":
            ac, ad, bc = (half, half), (half, half), (n, n)
        elif self.mode == "pause":
            # C forwards n frames; A and B are paused to 2/3 of their load
            a, b = n * 2 // 3, n * 2 // 3
            ac, ad, bc = (a // 2, a // 2), (a // 2, a // 2), (b, b)
            pause = 1234
        else:
            keep = n / (half + n)  # C forwards n of the 1.5 n frames
            ac, bc = (half, int(half * keep)), (n, int(n * keep))
            ad = (half, int(half * keep)) if self.mode == "hol" else (half, half)
        return CongestionTrial(load_pps_per_port, duration_s, StreamCounts("a->c", *ac),
                               StreamCounts("a->d", *ad), StreamCounts("b->c", *bc),
                               pause_frames=pause, port_names=("p0", "p1", "p2", "p3"))


def test_a_dropping_switch_loses_a_third_of_cs_frames_and_nothing_else() -> None:
    result = congestion_control(CongestionSwitch("drop"), load_pps_per_port=100_000)
    assert result.duration_s == TRIAL_S
    assert result.congested_loss_ratio == pytest.approx(EXPECTED_CONGESTED_LOSS, abs=1e-4)
    assert not result.head_of_line_blocking and result.hol_loss_ratio == 0
    assert not result.back_pressure and result.observed == ("congestion_loss",)
    assert "no head-of-line blocking; no back pressure" in result.describe()


def test_head_of_line_blocking_is_the_uncongested_streams_loss() -> None:
    result = congestion_control(CongestionSwitch("hol"), settings=TrialSettings(duration_s=10),
                                load_pps_per_port=100_000)
    assert result.head_of_line_blocking
    assert result.hol_loss_ratio == pytest.approx(1 / 3, abs=1e-4)
    assert result.observed == ("head_of_line_blocking", "congestion_loss")
    assert "a->d lost 166,667 (33.33%): head-of-line blocking" in result.describe()


def test_back_pressure_holds_the_senders_back_instead_of_dropping() -> None:
    result = congestion_control(CongestionSwitch("pause"), settings=TrialSettings(duration_s=10),
                                load_pps_per_port=90_000)
    assert result.back_pressure and result.congested_lost == 0
    assert result.observed == ("back_pressure",)
    assert result.sender_shortfall == pytest.approx((1 / 3, 1 / 3), abs=1e-4)
    assert "back pressure (1,234 pause frames, senders short" in result.describe()


def test_back_pressure_without_pause_counters_is_read_from_the_shortfall() -> None:
    class Silent(CongestionSwitch):
        def measure(self, load_pps_per_port: float,
                               duration_s: float) -> CongestionTrial:
            t = super().measure(load_pps_per_port, duration_s)
            return CongestionTrial(t.load_pps_per_port, t.duration_s, t.a_to_c, t.a_to_d,
                                   t.b_to_c, pause_frames=None)

    assert congestion_control(Silent("pause"), load_pps_per_port=9000).back_pressure


def test_a_port_faster_than_the_load_is_named() -> None:
    result = congestion_control(CongestionSwitch("fast"), load_pps_per_port=1000)
    assert result.observed == ("no_congestion",) and result.congested_lost == 0
    assert "below the port's rate" in result.describe()


def test_as_dict_keys_and_invalid_trials_retried() -> None:
    switch = CongestionSwitch("drop", invalid_first=2)
    result = congestion_control(switch, settings=TrialSettings(duration_s=2, retries=2),
                                load_pps_per_port=1000)
    assert len(result.trials) == 3 and result.trial.valid
    d = result.as_dict()
    assert set(d) == {"procedure", "load_pps_per_port", "duration_s", "tolerance",
                      "observed", "head_of_line_blocking", "hol_loss_ratio", "back_pressure",
                      "congested_tx", "congested_lost", "congested_loss_ratio",
                      "expected_loss_ratio", "sender_shortfall", "pause_frames", "summary",
                      "trial", "trials"}
    assert d["procedure"] == "rfc2889_congestion_control"
    assert [s["name"] for s in d["trial"]["streams"]] == ["a->c", "a->d", "b->c"]
    assert d["trial"]["port_names"] == ["p0", "p1", "p2", "p3"]
    with pytest.raises(InvalidTrial, match="congestion control trial.*link down on p1"):
        congestion_control(CongestionSwitch("drop", invalid_first=3),
                           settings=TrialSettings(retries=2), load_pps_per_port=1000)


def test_the_defaults() -> None:
    default = inspect.signature(congestion_control).parameters["settings"].default
    assert default == TrialSettings(duration_s=TRIAL_S, retries=2)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"load_pps_per_port": 0}, "load_pps_per_port="),
    ({"load_pps_per_port": "1000"}, "load_pps_per_port="),
    ({"duration_s": float("nan")}, "duration_s="), ({"retries": -1}, "retries="),
    ({"tolerance": 0.5}, "tolerance="), ({"tolerance": -0.1}, "tolerance="),
])
def test_bad_input_names_the_field(kwargs: dict, field: str) -> None:
    switch = CongestionSwitch("drop")
    trial = {k: kwargs.pop(k) for k in ("duration_s", "retries") if k in kwargs}
    with pytest.raises(NetloadConfigError, match=field):
        congestion_control(switch, **{"load_pps_per_port": 1000,
                                      "settings": TrialSettings(**{"duration_s": 1.0, **trial}),
                                      **kwargs})
    assert switch.calls == []


def test_bad_trials_name_the_field() -> None:
    s = StreamCounts("a->c", 1, 1)
    with pytest.raises(NetloadConfigError, match="stream a->d: rx=-1"):
        StreamCounts("a->d", 1, -1)
    with pytest.raises(NetloadConfigError, match="pause_frames=-2"):
        CongestionTrial(1.0, 1.0, s, s, s, pause_frames=-2)
    with pytest.raises(NetloadConfigError, match="port_names="):
        CongestionTrial(1.0, 1.0, s, s, s, port_names=("p0",))
    with pytest.raises(NetloadConfigError, match="b_to_c"):
        CongestionTrial(1.0, 1.0, s, s, (1, 1))  # type: ignore[arg-type]
