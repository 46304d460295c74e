"""The Y.1564 service configuration test against fake DUT models."""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure.histogram import LogHistogram
from pytest_netload.measure.latency import LatencyResult
from pytest_netload.y1564 import (POLICING_OVERSHOOT, SCT_STEP_S, SCT_STEPS, Service,
                                  ServiceSample, SctResult, service_configuration_test)
from pytest_netload.search import TrialSettings

N_BUCKETS = 2560


def _lower(n: int = N_BUCKETS) -> np.ndarray:
    """The engine's bucket layout (native/src/hist.c), as tests/unit/test_latency.py has it."""
    i = np.arange(n, dtype=np.uint64)
    k = np.maximum(i, 128) - 128
    return np.where(i < 128, i, (k % 64 + 64) << (k // 64 + 1)).astype(np.uint64)


LOWER = _lower()


def latency_of(values_ns: list[int], counts: list[int]) -> LatencyResult:
    hist = np.zeros(N_BUCKETS, dtype=np.uint64)
    for v, c in zip(values_ns, counts, strict=True):
        hist[int(np.searchsorted(LOWER, v, side="right")) - 1] += c
    return LatencyResult(LogHistogram(hist, LOWER), clock="fake", samples=int(hist.sum()))


class Policer:
    """A single-rate token-bucket DUT: forwards min(offered, rate + burst/T), a fixed delay
    (plus a 10 % tail of `tail_ns` more), and `loss` of what it forwards lost on the way."""

    def __init__(self, rate_bps: float, burst_bytes: int = 0, delay_ns: int = 50_000,
                 tail_ns: int = 0, loss: float = 0.0, fail_first: int = 0,
                 frame_size: int = 512) -> None:
        self.rate_bps, self.burst, self.delay, self.tail = rate_bps, burst_bytes, delay_ns, tail_ns
        self.loss, self.fail_first, self.frame_size = loss, fail_first, frame_size
        self.calls: list[tuple[dict[str, float], float]] = []

    def measure(self, loads_bps: Mapping[str, float],
                         duration_s: float) -> Mapping[str, ServiceSample]:
        self.calls.append((dict(loads_bps), duration_s))
        out = {}
        for name, load in loads_bps.items():
            bits = 8 * self.frame_size
            tx = round(load * duration_s / bits)
            cap = round((self.rate_bps * duration_s + 8 * self.burst) / bits)
            rx = min(tx, cap)
            rx -= round(rx * self.loss)
            if self.fail_first > 0:
                self.fail_first -= 1
                out[name] = ServiceSample(name, load, duration_s, self.frame_size, tx, 0,
                                          valid=False, invalid_reason="TX short by 3%")
                continue
            lat = None
            if rx:
                tail = rx // 10 if self.tail else 0
                lat = latency_of([self.delay, self.delay + self.tail], [rx - tail, tail])
            out[name] = ServiceSample(name, load, duration_s, self.frame_size, tx, rx, lat)
        return out


VOICE = Service("voice", cir="10Mbit/s", eir="5Mbit/s", cbs=12176, ebs=12176, dscp=46,
                sac={"flr": "0.1%", "ftd": "10ms", "fdv": "1ms"})


def test_a_default_sct_on_a_dut_policing_to_cir_plus_eir_passes() -> None:
    dut = Policer(VOICE.max_bps, burst_bytes=VOICE.burst_bytes)
    r = service_configuration_test(dut, VOICE)
    assert [s.name for s in r.steps] == ["CIR 25%", "CIR 50%", "CIR 75%", "CIR 100%",
                                         "CIR+EIR", "policing"]
    assert [c[1] for c in dut.calls] == [SCT_STEP_S] * 6
    assert [c[0]["voice"] for c in dut.calls] == pytest.approx(
        [2.5e6, 5e6, 7.5e6, 10e6, 15e6, 15e6 * POLICING_OVERSHOOT])
    assert r.passed and not r.dut_failed and r.failures() == [] and r.not_measured == ()
    step = r.steps[3]
    assert step.kind == "cir" and [c.name for c in step.checks] == ["ir", "flr", "ftd", "fdv"]
    assert step.reason.startswith("IR 10.00 Mbit/s meets >= 9.800 Mbit/s; FLR 0 meets <= 0.1%")
    assert "not judged" in r.steps[4].reason and r.steps[5].kind == "policing"
    d = r.as_dict()
    json.dumps(d, allow_nan=False)
    assert d["passed"] is True and d["steps"][0]["name"] == "CIR 25%"
    assert set(d["steps"][0]) >= {"offered_bps", "tx_frames", "rx_frames", "flr", "ir_bps",
                                  "ftd_s", "fdv_s", "checks", "passed", "reason"}
    assert isinstance(d["steps"][3]["ftd_s"], float) and type(d["steps"][3]["tx_frames"]) is int


def test_a_dut_that_does_not_police_fails_the_policing_step_only() -> None:
    r = service_configuration_test(Policer(1e9), VOICE)
    assert [s.passed for s in r.steps] == [True] * 5 + [False]
    assert r.dut_failed and not r.passed
    (line,) = r.failures()
    assert line.startswith("service 'voice' policing: IR 18.75 Mbit/s fails >= 9.800 Mbit/s "
                           "and <= 15.32 Mbit/s")


def test_the_bucket_allowance_lets_the_full_buckets_through() -> None:
    # the DUT forwards CIR+EIR plus its full buckets once: within the allowance
    svc = Service("b", cir="1Mbit/s", eir="1Mbit/s", cbs="100kB", ebs="100kB")
    r = service_configuration_test(Policer(svc.max_bps, burst_bytes=svc.burst_bytes), svc,
                                   settings=TrialSettings(duration_s=1.0))
    assert r.steps[-1].checks[0].high == pytest.approx(2e6 * 1.02 + 200_000 * 8)
    assert r.passed
    svc0 = Service("b", cir="1Mbit/s", eir="1Mbit/s")  # no buckets declared: fails
    r0 = service_configuration_test(Policer(svc0.max_bps, burst_bytes=200_000), svc0,
                                    settings=TrialSettings(duration_s=1.0))
    assert r0.steps[-1].passed is False


def test_a_dut_policing_below_the_cir_fails_the_cir_steps_it_cannot_carry() -> None:
    r = service_configuration_test(Policer(8e6), VOICE)
    assert [s.passed for s in r.steps] == [True, True, True, False, False, False]
    assert "IR 8.000 Mbit/s fails >= 9.800 Mbit/s" in r.steps[3].reason
    assert "FLR 20.00% fails <= 0.1%" in r.steps[3].reason


def test_loss_and_delay_fail_their_criteria() -> None:
    lossy = service_configuration_test(Policer(1e9, loss=0.01), VOICE, policing=False)
    assert all(s.passed is False for s in lossy.steps if s.kind == "cir")
    assert all("FLR 0.999" in s.reason for s in lossy.steps if s.kind == "cir")
    slow = service_configuration_test(Policer(VOICE.max_bps, delay_ns=20_000_000), VOICE,
                                      eir_step=False, policing=False)
    assert [s.name for s in slow.steps] == ["CIR 25%", "CIR 50%", "CIR 75%", "CIR 100%"]
    assert all("FTD 20.1ms fails <= 10ms" in s.reason for s in slow.steps)
    jitter = service_configuration_test(Policer(VOICE.max_bps, tail_ns=5_000_000), VOICE,
                                        policing=False)
    assert all("FDV 5.0" in s.reason and s.passed is False for s in jitter.steps[:4])
    # p50 of the same DUT is within 1 ms
    assert service_configuration_test(Policer(VOICE.max_bps, tail_ns=5_000_000), VOICE,
                                      policing=False, fdv_quantile=50).passed


def test_a_service_without_eir_skips_the_eir_step() -> None:
    svc = Service("d", cir="100Mbit/s", vlan=10)
    r = service_configuration_test(Policer(100e6), svc, steps=(0.5, 1.0))
    assert [s.name for s in r.steps] == ["CIR 50%", "CIR 100%", "policing"]
    assert r.steps[-1].offered_bps == pytest.approx(125e6) and r.passed


def test_invalid_samples_are_retried_then_not_measured() -> None:
    r = service_configuration_test(Policer(1e9, fail_first=2), VOICE, policing=False)
    assert r.steps[0].tries == 3 and r.steps[0].passed is True
    assert r.steps[0].invalid_reasons == ("TX short by 3%",) * 2
    r = service_configuration_test(Policer(1e9, fail_first=3), VOICE, policing=False)
    first = r.steps[0]
    assert first.passed is None and not first.measured and first.tries == 3
    assert r.not_measured == ("CIR 25%",) and not r.passed and not r.dut_failed
    assert "not measured: the generator failed 3 tries (TX short by 3%); not the DUT's" \
        in r.failures()[0]
    d = r.as_dict()
    assert d["not_measured"] == ["CIR 25%"] and d["steps"][0]["tx_frames"] is None
    json.dumps(d, allow_nan=False)


def test_no_latency_samples_leave_delay_criteria_not_measured() -> None:
    class NoLatency(Policer):
        def measure(self, loads_bps, duration_s):  # type: ignore[no-untyped-def]
            return {k: ServiceSample(k, v.offered_bps, v.duration_s, v.frame_size, v.tx_frames,
                                     v.rx_frames)
                    for k, v in super().measure(loads_bps, duration_s).items()}
    r = service_configuration_test(NoLatency(1e9), VOICE, policing=False, eir_step=False)
    assert all(s.passed is None for s in r.steps)
    assert "FTD not measured (no latency samples); required <= 10ms" in r.steps[0].reason


def test_on_step_sees_every_step_and_a_dict_service_works() -> None:
    seen: list[str] = []
    r = service_configuration_test(Policer(1e9), {"name": "x", "cir": "1Mbit/s"},
                                   on_step=lambda s: seen.append(s.name), policing=False)
    assert seen == [s.name for s in r.steps] and isinstance(r, SctResult)


def test_a_measurer_that_leaves_out_the_service_is_an_error() -> None:
    class Wrong:
        def measure(self, loads_bps, duration_s):  # type: ignore[no-untyped-def]
            return {}
    with pytest.raises(NetloadConfigError, match="no sample for service 'voice'"):
        service_configuration_test(Wrong(), VOICE)


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"steps": ()}, "steps=()"), ({"steps": (0.5, 0.25)}, "must increase"),
    ({"steps": (0.5, 0.5)}, "must increase"), ({"steps": (0, 1)}, r"steps=\[0, 1\]"),
    ({"steps": (0.5, 1.5)}, "1.5 is not a share"), ({"steps": "1"}, "steps='1'"),
    ({"duration_s": 0}, "duration_s=0"), ({"duration_s": -1}, "duration_s=-1"),
    ({"policing_overshoot": 1.0}, "policing_overshoot=1.0"),
    ({"policing_overshoot": "1.25"}, "policing_overshoot"),
    ({"ir_tolerance": 1.0}, "ir_tolerance=1.0"), ({"ir_tolerance": -0.1}, "ir_tolerance"),
    ({"retries": -1}, "retries=-1"), ({"retries": 1.5}, "retries"),
    ({"fdv_quantile": 0}, "fdv_quantile=0"), ({"fdv_quantile": 101}, "fdv_quantile"),
])
def test_bad_parameters_name_themselves(kwargs: dict[str, object], word: str) -> None:
    trial = {k: kwargs.pop(k) for k in ("duration_s", "retries") if k in kwargs}
    with pytest.raises(NetloadConfigError, match=word):
        service_configuration_test(Policer(1e9), VOICE,
                                   settings=TrialSettings(**trial),  # type: ignore[arg-type]
                                   **kwargs)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(cir_mbps=st.integers(1, 1000), eir_share=st.sampled_from([0.0, 0.5, 1.0]),
       dut_share=st.floats(0.5, 2.0), size=st.sampled_from([64, 512, 1518]))
def test_verdicts_follow_the_dut_rate(cir_mbps: int, eir_share: float, dut_share: float,
                                      size: int) -> None:
    cir = cir_mbps * 1e6
    eir = f"{cir_mbps * eir_share}Mbit/s" if eir_share else None
    svc = Service("s", cir=f"{cir_mbps}Mbit/s", eir=eir, frame_size=size, sac={"flr": "0%"})
    dut_rate = dut_share * svc.max_bps
    r = service_configuration_test(Policer(dut_rate, frame_size=size), svc,
                                   settings=TrialSettings(duration_s=1.0), ir_tolerance=0.02)
    by = {s.name: s for s in r.steps}
    # frames are whole: allow one frame per step of rounding around the edges
    edge = 2 * 8 * size
    if dut_rate >= cir + edge:
        assert by["CIR 100%"].passed
    if dut_rate < cir * 0.98 - edge:
        assert by["CIR 100%"].passed is False
    if cir * 1.0 + edge <= dut_rate <= svc.max_bps * 1.02 - edge:
        assert by["policing"].passed
    if dut_rate > svc.max_bps * 1.02 + edge and dut_rate < svc.max_bps * 1.25 - edge:
        assert by["policing"].passed is False
    assert r.passed == all(s.passed for s in r.steps)
