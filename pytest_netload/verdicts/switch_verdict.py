"""`assert_rfc2889`: an RFC 2889 result against the figure a switch must reach.

One helper for every procedure the `rfc2889` fixture runs; what `at_least` bounds
depends on the result:

| result of | `at_least` bounds | e.g. |
|---|---|---|
| `fully_meshed()` | the throughput per port | `"100kpps"`, `1e5` |
| `partially_meshed()` | the one port's throughput | `"100kpps"` |
| `maximum_forwarding_rate()` | the MFR (all ports) | `"400kpps"` |
| `broadcast_forwarding()` | the broadcast throughput | `"50kpps"` |
| `address_caching_capacity()` | the address count | `8192` |
| `address_learning_rate()` | the learning rate | `"1000pps"` |

`congestion_control()` takes `head_of_line_blocking` and `back_pressure` instead
(False: must not be seen; True: must be). Every check is recorded, passed or failed,
before anything is raised; a failure reads::

    RFC 2889 address caching capacity 60 is not >= 64
    measured: 60 addresses (61 not all learned; 11 trials)
    required: address caching capacity >= 64

A throughput or learning rate the generator bounded (the result's
``lower_bound_by_generator``: the switch passed the highest load the generator could
offer) is only a lower bound of the switch's. It passes when the bound clears
``at_least``; when it does not, the switch was not judged: GeneratorLimit (pytest:
ERROR, not FAIL) says how far the generator got::

    RFC 2889 broadcast throughput is at least 142.9 kpps (the generator's ceiling; the DUT
    delivered every frame at the highest load offered), which does not clear >= 200.0 kpps:
    the generator, not the DUT, is the limit; give the generator faster ports or more
    cores, or lower the requirement
"""

from __future__ import annotations

from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..measure.recording import record_verdict
from ..rfc2544.lower_bound import invalid_reason_at, lower_bound_reason
from ..units import as_rate
from .explain import generator_limit, lower_bound_verdict

__all__ = ["assert_rfc2889"]

_PASSED = {
    # procedure: what the DUT did at the highest load offered, when that was the generator's
    "rfc2889_fully_meshed": "lost nothing",
    "rfc2889_partially_meshed": "lost nothing",
    "rfc2889_broadcast_forwarding": "delivered every frame",
    "rfc2889_address_learning_rate": "learned every address",
}
_FIGURES = {
    # procedure: (words, attribute, is a frame rate)
    "rfc2889_fully_meshed": ("fully meshed throughput per port", "throughput_pps_per_port", True),
    "rfc2889_broadcast_forwarding": ("broadcast throughput", "throughput_pps", True),
    "rfc2889_address_caching_capacity": ("address caching capacity", "capacity", False),
    "rfc2889_address_learning_rate": ("address learning rate", "learning_rate_fps", True),
    "rfc2889_partially_meshed": ("partially meshed throughput", "throughput_pps", True),
    "rfc2889_maximum_forwarding_rate": ("maximum forwarding rate", "mfr_pps", True),
}


def _bound(value: Any, rate: bool, words: str) -> float:
    if rate:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        parsed = as_rate(value, what="at_least")
        if parsed.kind != "pps":
            raise NetloadConfigError(f"at_least={value!r}: the {words} is a frame rate; give "
                                     "e.g. '100kpps' or a number of frames per second")
        return parsed.value
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise NetloadConfigError(f"at_least={value!r}: the {words} is a number of addresses; "
                                 "give a whole number, e.g. 8192")
    return float(value)


def _show(value: float, rate: bool) -> str:
    return fmt.rate_pps(value) if rate else fmt.count(value)


def _congestion(result: Any, head_of_line_blocking: bool | None,
                back_pressure: bool | None) -> None:
    failed = []
    for name, want in (("head_of_line_blocking", head_of_line_blocking),
                       ("back_pressure", back_pressure)):
        if want is None:
            continue
        if not isinstance(want, bool):
            raise NetloadConfigError(f"{name}={want!r}: give True (must be seen), False (must "
                                     "not) or leave it out")
        seen = bool(getattr(result, name))
        words = name.replace("_", " ")
        ok = seen == want
        record_verdict(f"rfc2889:{name}", ok, "seen" if seen else "not seen",
                       "seen" if want else "not seen", summary=result.as_dict()["summary"])
        if not ok:
            failed.append(f"RFC 2889 congestion control: {words} "
                          f"{'seen' if seen else 'not seen'}, required "
                          f"{'seen' if want else 'not seen'}")
    if head_of_line_blocking is None and back_pressure is None:
        raise NetloadConfigError("assert_rfc2889 on a congestion control result needs "
                                 "head_of_line_blocking= and/or back_pressure= (True or False)")
    if failed:
        raise AssertionError("\n".join([*failed, f"measured: {result.as_dict()['summary']}"]))


def _bound_reason(result: Any, procedure: str) -> str:
    """How the generator bounded the result's search (rfc2544.lower_bound)."""
    if procedure == "rfc2889_fully_meshed":
        ceiling = result.generator_ceiling_pps_per_port
        return lower_bound_reason(max_pps=result.max_pps_per_port,
                                  max_source=result.max_source,
                                  generator_max_pps=result.generator_max_pps_per_port,
                                  ceiling_pps=ceiling, why=invalid_reason_at(
                                      result.trials, ceiling, "offered_pps_per_port"))
    if procedure == "rfc2889_address_learning_rate":
        return lower_bound_reason(max_pps=result.max_rate_fps, max_source=None,
                                  generator_max_pps=None, ceiling_pps=result.ceiling_fps,
                                  unit="fps", why=invalid_reason_at(
                                      result.trials, result.ceiling_fps, "learning_rate_fps"))
    return lower_bound_reason(max_pps=result.max_pps, max_source=result.max_source,
                              generator_max_pps=result.generator_max_pps,
                              ceiling_pps=result.generator_ceiling_pps,
                              why=invalid_reason_at(result.trials, result.generator_ceiling_pps))


def assert_rfc2889(result: Any, *, at_least: Any = None,
                   head_of_line_blocking: bool | None = None,
                   back_pressure: bool | None = None) -> None:
    """Pass when the RFC 2889 `result` reaches `at_least` (see the module for what it
    bounds), or for congestion control shows (True) or does not show (False) head-of-line
    blocking and back pressure; else AssertionError with measured beside required. A
    figure the generator bounded that does not clear `at_least` raises GeneratorLimit (an
    ERROR: the switch was not judged) instead."""
    __tracebackhide__ = True
    procedure = getattr(result, "as_dict", lambda: {})().get("procedure")
    if procedure == "rfc2889_congestion_control":
        if at_least is not None:
            raise NetloadConfigError("at_least= does not apply to congestion control; give "
                                     "head_of_line_blocking= or back_pressure=")
        _congestion(result, head_of_line_blocking, back_pressure)
        return
    if procedure not in _FIGURES:
        raise NetloadConfigError(
            f"assert_rfc2889 got {type(result).__name__}; give what an rfc2889 procedure "
            "returns (fully_meshed(), partially_meshed(), congestion_control(), "
            "maximum_forwarding_rate(), address_caching_capacity(), "
            "address_learning_rate(), broadcast_forwarding()); an errored frames result "
            "is judged by its outcomes (result.outcome('oversized').verdict)")
    if head_of_line_blocking is not None or back_pressure is not None:
        raise NetloadConfigError("head_of_line_blocking= and back_pressure= apply to "
                                 "congestion control only; give at_least=")
    words, attribute, rate = _FIGURES[procedure]
    if at_least is None:
        raise NetloadConfigError(f"assert_rfc2889 on the {words} needs at_least=, e.g. "
                                 + ("'100kpps'" if rate else "8192"))
    need = _bound(at_least, rate, words)
    measured = float(getattr(result, attribute) or 0.0)
    ok = measured >= need
    trials = getattr(result, "trials", ())
    bounded = procedure in _PASSED and bool(getattr(result, "lower_bound_by_generator", False))
    check = f"rfc2889:{procedure[len('rfc2889_'):]}"
    if bounded:
        verdict = lower_bound_verdict(f"RFC 2889 {words}", _show(measured, rate),
                                      f">= {_show(need, rate)}", ok, _PASSED[procedure])
        record_verdict(check, ok, measured, need, trials=len(trials),
                       lower_bound_by_generator=True, message=verdict,
                       **({} if ok else {"outcome": "error"}))
        if not ok:  # not the switch's FAIL: the generator could not offer more
            raise generator_limit([
                verdict, f"measured: {_show(measured, rate)} ({len(trials)} trials); only a "
                f"lower bound: {_bound_reason(result, procedure)}, so the DUT was never "
                "saturated", f"required: {words} >= {_show(need, rate)}"])
        return
    record_verdict(check, ok, measured, need, trials=len(trials))
    if not ok:
        raise AssertionError(
            f"RFC 2889 {words} {_show(measured, rate)} is not >= {_show(need, rate)}\n"
            f"measured: {_show(measured, rate)} ({len(trials)} trials)\n"
            f"required: {words} >= {_show(need, rate)}")
