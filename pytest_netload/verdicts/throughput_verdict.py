"""assert_throughput: a search's throughput at a frame size against a required rate,
with the final bracket in the message (an MLRsearch's: every goal's bounds, NDR and PDR)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..measure.recording import record_verdict
from ..rfc2544.lower_bound import every_try_invalid, invalid_reason_at, lower_bound_reason
from ..rfc2544.mlr import MlrGoalResult, MlrResult
from ..rfc2544.mlr_text import goal_bracket
from ..rfc2544.throughput import FrameSizeThroughput, ThroughputResult
from ..rfc2544.trial import frame_size_label
from ..units import LAYER_TEXT, Size, check_layer, frame_bits
from .bounds import compare, parse_rate_bound
from .explain import (
    _conditions,
    _failure,
    _real_attr,
    generator_limit,
    loss_line,
    lower_bound_verdict,
)


def _normalise_size(frame_size: object) -> object:
    if isinstance(frame_size, Size):
        return frame_size.bytes
    if isinstance(frame_size, str):
        m = re.fullmatch(r"\s*(\d+)\s*B?\s*", frame_size)
        return int(m.group(1)) if m else frame_size.strip().lower()
    return frame_size


def _mlr_results(obj: object) -> tuple[MlrResult, ...] | None:
    """`obj` as MLRsearch results (what ``ndr_pdr()`` returns: a list); None otherwise."""
    if isinstance(obj, MlrResult):
        return (obj,)
    if isinstance(obj, Sequence) and not isinstance(obj, str) and obj and \
            all(isinstance(r, MlrResult) for r in obj):
        return tuple(obj)
    return None


def _pick_size(obj: object, frame_size: object) -> tuple[FrameSizeThroughput | None, str]:
    """The measured size, or (None, why it is missing) when the result lacks it (an
    MLRsearch result as the throughput of its first goal)."""
    want = _normalise_size(frame_size)
    mlr = _mlr_results(obj)
    if mlr is not None:
        labels = ", ".join(r.label for r in mlr)
        if frame_size is None:
            if len(mlr) > 1:
                raise NetloadConfigError(
                    f"assert_throughput: the NDR/PDR results hold {len(mlr)} frame sizes "
                    f"({labels}); say which with frame_size=, e.g. frame_size=64")
            return mlr[0].throughput(), ""
        for r in mlr:
            if r.frame_size == want:
                return r.throughput(), ""
        return None, (f"no NDR/PDR was measured at {frame_size_label(want)}; "  # type: ignore[arg-type]
                      f"measured: {labels}")
    if isinstance(obj, FrameSizeThroughput):
        if frame_size is not None and want != obj.frame_size:
            return None, (f"throughput was measured at {obj.label} only, not at "
                          f"{frame_size_label(want)}")  # type: ignore[arg-type]
        return obj, ""
    if isinstance(obj, ThroughputResult):
        labels = ", ".join(s.label for s in obj.sizes) or "none"
        if frame_size is None:
            if len(obj.sizes) == 1:
                return obj.sizes[0], ""
            if not obj.sizes:
                return None, "the throughput result holds no frame size"
            raise NetloadConfigError(
                f"assert_throughput: the result holds {len(obj.sizes)} frame sizes ({labels}); "
                "say which with frame_size=, e.g. frame_size=64")
        try:
            return obj[want], ""  # type: ignore[index]
        except KeyError:
            return None, (f"no throughput was measured at {frame_size_label(want)}; "  # type: ignore[arg-type]
                          f"measured: {labels}")
    raise NetloadConfigError(
        f"assert_throughput: {type(obj).__name__} is not a throughput result; give a "
        "ThroughputResult or a FrameSizeThroughput (rfc2544.throughput), or what "
        "rfc2544.ndr_pdr() returns")


def _for_goal(fst: FrameSizeThroughput, goal: str | None) -> FrameSizeThroughput:
    """An MLRsearch throughput read for another of its goals (`goal`); as it is for None."""
    if goal is None:
        return fst
    if not fst.goals:
        raise NetloadConfigError(
            f"assert_throughput: goal={goal!r} picks an MLRsearch goal, but this throughput "
            f"came from a {fst.method} search; drop goal= or measure with "
            "search='mlrsearch' (or rfc2544.ndr_pdr())")
    for g in fst.goals:
        if g.name.casefold() == goal.casefold():
            return replace(fst, throughput_pps=g.lower_bound_pps or 0.0,
                           upper_pps=g.upper_bound_pps, loss_tolerance=g.loss_ratio,
                           settings=replace(fst.settings,
                                            duration_s=g.goal.final_trial_duration_s),
                           goals=(g, *(o for o in fst.goals if o is not g)))
    raise NetloadConfigError(
        f"assert_throughput: goal={goal!r}: the MLRsearch at {fst.label} has no such goal; "
        f"give one of {[g.name for g in fst.goals]}")


def _goals_text(goals: tuple[MlrGoalResult, ...]) -> str:
    """E.g. "MLRsearch bounds: NDR [50,015, 50,266] pps, PDR [50,266, 50,518] pps"."""
    return "MLRsearch bounds: " + ", ".join(
        goal_bracket(g.name, g.lower_bound_pps, g.upper_bound_pps, g.upper_bound_by_generator)
        for g in goals)


def _goals_measured(goals: tuple[MlrGoalResult, ...]) -> str:
    """What the measured line says of an MLRsearch: which goal's lower bound is judged,
    and every goal's conditional throughput."""
    judged = goals[0]
    text = (f"the {judged.name}'s relevant lower bound" if judged.lower_bound_pps is not None
            else f"no lower bound found for the {judged.name} (the search's minimum load "
                 "was already an upper bound)")
    conditional = ", ".join(f"{g.name} {fmt.rate_pps_exact(g.conditional_throughput_pps)}"
                            for g in goals)
    return f"{text} (MLRsearch, RFC 9971); conditional throughput: {conditional}"


def _bracket_text(fst: FrameSizeThroughput) -> str:
    """E.g. "bracket [6,421, 6,453] pps (resolution 0.5% of the lower bound)"; with
    "not reached" when the search ran out of trials; "" for a search without a
    resolution (MLRsearch) or an open bracket (the maximum passed)."""
    lo, hi = fst.bracket_pps
    if fst.resolution is None or hi is None:
        return ""
    text = (f"bracket [{fmt.rate_pps_exact(lo).removesuffix(' pps')}, "
            f"{fmt.rate_pps_exact(hi).removesuffix(' pps')}] pps "
            f"(resolution {fst.resolution.describe()}")
    if fst.resolution_reached is False:
        text += ", not reached: the search ran out of max_trials first"
    return text + ")"


def _goal_fields(fst: FrameSizeThroughput) -> dict[str, Any]:
    if not fst.goals:
        return {}
    return {"goal": fst.goals[0].name, "goals": [g.as_dict() for g in fst.goals]}


def _bracket_fields(fst: FrameSizeThroughput) -> dict[str, Any]:
    if fst.resolution is None:
        return {}
    return {"bracket_pps": list(fst.bracket_pps), **fst.resolution.as_dict(),
            "resolution_reached": fst.resolution_reached}


def _lower_bound_text(fst: FrameSizeThroughput) -> str:
    """What the measured line adds for a throughput the generator bounded."""
    reason = lower_bound_reason(max_pps=fst.max_pps, max_source=fst.max_source,
                                generator_max_pps=fst.generator_max_pps,
                                ceiling_pps=fst.generator_ceiling_pps,
                                why=invalid_reason_at(fst.trials, fst.generator_ceiling_pps))
    return (f"; only a lower bound of the DUT's throughput: {reason}, so the DUT was never "
            "saturated")


def _passed_words(fst: FrameSizeThroughput) -> str:
    """What the DUT did at the highest load offered, for a lower bound's verdict line."""
    if fst.goals:
        return f"met the {fst.goals[0].name} goal"
    if fst.loss_tolerance == 0:
        return "lost nothing"
    return f"lost no more than {fmt.loss_ratio_exact(fst.loss_tolerance)}"


def assert_throughput(obj: object, *, at_least: object, frame_size: object = None,
                      layer: str = "l1", goal: str | None = None) -> None:
    """Check RFC 2544 throughput: ``assert_throughput(result, at_least="95%", frame_size=64)``.

    ``obj`` is a ThroughputResult (``frame_size`` picks the size; required when it holds
    more than one), a FrameSizeThroughput, or MLRsearch results (``rfc2544.ndr_pdr()``'s
    list, or one MlrResult). ``at_least`` is a rate (``"250kpps"``,
    ``"1Gbit/s"``, ``"95%"`` of the line rate, a Rate) or a rate bound (``">= 250kpps"``,
    ``"> 1Mpps"``). A bit rate written without ``@layer`` counts ``layer`` (default L1, as
    line rates do); a Rate keeps its own layer. The check compares packets per second,
    converting with the result's mean frame size (and its line rate for a percentage).
    A failure shows the binary search's final bracket and its resolution, and says when
    the search ran out of trials before reaching it; the verdict record keeps both.

    An MLRsearch result (``search="mlrsearch"``, or ``ndr_pdr()``) is judged on one goal's
    relevant lower bound: ``goal`` ("NDR", "PDR", ...; default: the first goal, the NDR
    of the presets). The verdict, passed or failed, names that goal and gives every goal's
    lower and upper bound; a failure adds their conditional throughputs. The verdict
    record keeps the goals (``goal``, ``goals``).

    A throughput the generator bounded (``lower_bound_by_generator``: the DUT passed the
    highest load the generator could offer) is only a lower bound of the DUT's. It passes
    when the bound itself clears ``at_least``; when it does not, the DUT was not judged:
    :class:`~pytest_netload.errors.GeneratorLimit` (pytest: ERROR, not FAIL) says how far
    the generator got. The verdict is recorded first either way.
    """
    __tracebackhide__ = True
    layer = check_layer(layer, what="assert_throughput: layer")
    bound = parse_rate_bound(at_least, name="at_least", default_op=">=", ops=(">", ">="),
                             layer=layer)
    if goal is not None and not isinstance(goal, str):
        raise NetloadConfigError(f"assert_throughput: goal={goal!r}: give a goal's name, "
                                 "e.g. goal='PDR'")
    fst, missing = _pick_size(obj, frame_size)
    if fst is not None:
        fst = _for_goal(fst, goal)
    if fst is None:
        label = ("unknown" if frame_size is None
                 else frame_size_label(_normalise_size(frame_size)))  # type: ignore[arg-type]
        cond = _conditions(obj)
        record_verdict(f"throughput@{label}", False, None, bound.text, reason=missing,
                       message=missing, conditions=cond)
        raise _failure([missing, "measured: nothing at this frame size",
                        f"required: throughput {bound.text} at {label}"], cond, layer)
    rate = bound.rate
    assert rate is not None
    if rate.kind == "percent" and not fst.line_rate_bps:
        raise NetloadConfigError(
            f"assert_throughput: at_least={at_least!r} is a share of the line rate, but this "
            "throughput result has no line_rate_bps (the topology declares none; veth has "
            "none); give the rate in pps or bit/s")
    mean = fst.mean_frame_size
    required_pps = rate.pps(mean, fst.line_rate_bps)
    measured_pps = fst.throughput_pps
    ok = compare(measured_pps, bound.op, required_pps)
    label, cond = fst.label, _conditions(fst)
    size_text = f"{label} frames" + (f" (mean {mean:g}B)" if mean != fst.frame_size else "")
    measured_bps = measured_pps * frame_bits(mean, layer)
    share = (f"; {fmt.share(fst.bps('l1') / fst.line_rate_bps)} of the "
             f"{fmt.bitrate(fst.line_rate_bps)} line rate" if fst.line_rate_bps else "")
    measured = (f"{fmt.rate_pps_exact(measured_pps)} ({fmt.bitrate(measured_bps)} at "
                f"{LAYER_TEXT[layer]}"
                f"{share}), " + (_goals_measured(fst.goals) if fst.goals else
                                 "the highest load that passed"))
    bracket = _bracket_text(fst)
    if fst.goals:  # an MLRsearch: every goal's bracket is in the verdict line
        pass
    elif bracket:
        measured += f"; the search's final {bracket}"
    elif fst.upper_pps is not None:
        measured += f"; the lowest that failed: {fmt.rate_pps_exact(fst.upper_pps)}"
    else:
        measured += " (the search's maximum)"
    ceiling = _real_attr(fst, "generator_ceiling_pps")
    bounded = fst.lower_bound_by_generator
    if bounded:
        measured += _lower_bound_text(fst)
    elif ceiling is not None:
        measured += (f"; the generator could not offer {fmt.rate_pps_exact(ceiling)} "
                     f"{every_try_invalid(invalid_reason_at(fst.trials, ceiling))},"
                     " so this may be the generator's limit, not the DUT's")
    converted = ("" if rate.kind == "pps" else
                 f" = {fmt.rate_pps_exact(required_pps)} at {size_text}")
    required = f"throughput {bound.text}{converted}"
    judged = f" (the {fst.goals[0].name})" if fst.goals else ""
    required_text = (f"{bound.op} {fmt.rate_pps_exact(required_pps)}"
                     + (f" ({rate})" if rate.kind != "pps" else ""))
    if bounded:
        verdict = lower_bound_verdict(
            f"throughput at {label}", fmt.rate_pps_exact(measured_pps), required_text, ok,
            _passed_words(fst), f"the {fst.goals[0].name}" if fst.goals else None)
    else:
        verdict = (f"throughput at {label} {fmt.rate_pps_exact(measured_pps)}{judged} is "
                   f"{'' if ok else 'not '}{required_text}")
    verdict += f"; {_goals_text(fst.goals)}" if fst.goals else ""
    record_verdict(f"throughput@{label}", ok, measured_pps, bound.text,
                   required_pps=required_pps, op=bound.op, unit="pps", layer=layer,
                   measured_bps=measured_bps, upper_pps=fst.upper_pps,
                   line_rate_bps=fst.line_rate_bps, generator_ceiling_pps=ceiling,
                   lower_bound_by_generator=bounded, max_source=fst.max_source,
                   generator_max_pps=fst.generator_max_pps,
                   **({"outcome": "error"} if bounded and not ok else {}),
                   **_bracket_fields(fst), **_goal_fields(fst), message=verdict,
                   conditions=cond)
    if not ok and bounded:  # not the DUT's FAIL: the generator could not offer enough
        raise generator_limit([verdict, f"measured: {measured}", f"required: {required}"],
                              cond, layer)
    if not ok:
        where = loss_line(fst)
        raise _failure([verdict, f"measured: {measured}", f"required: {required}",
                        *([where] if where else [])], cond, layer)
