"""What a verdict's failure message says beside the measured and required values: the
trial conditions (frame size, offered load at a layer, duration, ...) read from a result,
and the AssertionError that carries them."""

from __future__ import annotations

import math
import numbers
from typing import Any

from .. import format as fmt
from ..errors import GeneratorLimit, NetloadConfigError
from ..measure.latency import LatencyResult
from ..rfc2544.lower_bound import GENERATOR_FIX
from ..rfc2544.trial import frame_size_label
from ..units import frame_bits


def _is_real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


# Numbers read as format.py writes them (TEXT): measured times to 3 digits ("61.2us"),
# rates exact ("41,601 pps"), bit rates to 4 digits, given shares and durations exactly.


def _real_attr(obj: object, name: str) -> float | None:
    value = getattr(obj, name, None)
    if _is_real(value) and math.isfinite(float(value)):  # type: ignore[arg-type]
        return float(value)  # type: ignore[arg-type]
    return None


def _conditions(obj: object, latency: LatencyResult | None = None) -> dict[str, Any]:
    """What the object says about how it was measured; JSON-able; unknown ones skipped."""
    out: dict[str, Any] = {}
    name = getattr(obj, "name", None)
    if isinstance(name, str):
        out["stream"] = name
    streams = getattr(obj, "streams", None)
    if isinstance(streams, tuple | list):
        out["streams"] = len(streams)
    size = getattr(obj, "frame_size", None)
    if isinstance(size, int | str) and not isinstance(size, bool):
        out["frame_size"] = size
    mean = _real_attr(obj, "mean_frame_size")
    if mean is not None and mean != size:
        out["mean_frame_size"] = mean
    for key in ("offered_pps", "duration_s", "loss_tolerance", "line_rate_bps", "max_pps"):
        value = _real_attr(obj, key)
        if value is not None:
            out[key] = value
    trials = getattr(obj, "trials", None)
    if isinstance(trials, tuple | list):
        out["trials"] = len(trials)
        out["valid_trials"] = sum(1 for t in trials if getattr(t, "valid", True))
    method = getattr(obj, "method", None)
    if isinstance(method, str):
        out["method"] = method
    own = getattr(obj, "latency", None)
    lat = latency if latency is not None else own if isinstance(own, LatencyResult) else None
    clock = getattr(obj, "clock", None)
    if not isinstance(clock, str) and lat is not None:
        clock = lat.clock
    if isinstance(clock, str):
        out["clock"] = clock
    if lat is not None:
        resolution = _real_attr(lat, "resolution_ns")
    else:
        resolution = _real_attr(obj, "clock_resolution_ns")
        if resolution is None:
            resolution = _real_attr(obj, "tsc_resolution_ns")
    if resolution is not None:
        out["clock_resolution_ns"] = resolution
    return out


def _conditions_text(cond: dict[str, Any], layer: str = "l1") -> str | None:
    parts: list[str] = []
    if "stream" in cond:
        parts.append(f"stream {cond['stream']!r}")
    if "streams" in cond:
        parts.append(f"{cond['streams']} streams")
    size = cond.get("frame_size")
    mean = cond.get("mean_frame_size")
    if size is not None:
        text = f"frame size {frame_size_label(size)}"
        parts.append(text + (f" (mean {mean:g}B)" if mean is not None else ""))
    elif mean is not None:
        parts.append(f"mean frame size {mean:g}B")
    if "offered_pps" in cond:
        text = f"offered {fmt.rate_pps_exact(cond['offered_pps'])}"
        frame = mean if mean is not None else size if isinstance(size, int) else None
        if frame is not None and frame > 4:
            bps = cond["offered_pps"] * frame_bits(frame, layer)
            text += f" ({fmt.bitrate(bps)} at {layer.upper()})"
        parts.append(text)
    if "max_pps" in cond:
        parts.append(f"searched up to {fmt.rate_pps_exact(cond['max_pps'])}")
    if "duration_s" in cond:
        per = " per trial" if "trials" in cond else ""
        parts.append(f"duration {fmt.time_s_exact(cond['duration_s'])}{per}")
    if "loss_tolerance" in cond:
        parts.append(f"loss tolerance {fmt.percent(cond['loss_tolerance'])}")
    if "trials" in cond:
        method = f" ({cond['method']} search)" if "method" in cond else ""
        n = cond["trials"]
        parts.append(f"{n} trial{'s' if n != 1 else ''}, {cond['valid_trials']} valid{method}")
    if "line_rate_bps" in cond:
        parts.append(f"line rate {fmt.bitrate(cond['line_rate_bps'])}")
    if "clock" in cond:
        res = cond.get("clock_resolution_ns")
        parts.append(f"clock {cond['clock']}"
                     + (f" (resolution {fmt.time_ns(res)})" if res else ""))
    return ", ".join(parts) if parts else None


def loss_line(obj: object) -> str | None:
    """Where the lost frames went, for a failure message: the attribution of a trial (its
    `attribution`), or of the trial that lost frames at the lowest valid load of a result
    with trials (the one that bounded the search); None when there is none."""
    from ..measure.dut import loss_note

    table = getattr(obj, "attribution", None)
    if table is not None and getattr(table, "lost", 0):
        return f"where: {table.text()}"
    trials = getattr(obj, "trials", None)
    if isinstance(trials, tuple | list):
        note = loss_note([t.as_dict() for t in trials
                          if getattr(t, "attribution", None) is not None])
        if note is not None:
            return f"where: {note}"
    return None


def _failure(lines: list[str], cond: dict[str, Any], layer: str = "l1") -> AssertionError:
    text = _conditions_text(cond, layer)
    if text is not None:
        lines = [*lines, f"conditions: {text}"]
    return AssertionError("\n".join(lines))


def lower_bound_verdict(figure: str, at_least: str, required: str, ok: bool,
                        passed: str = "lost nothing", judged: str | None = None) -> str:
    """The verdict line of a figure that is only a lower bound the generator set:
    "throughput at 64B is at least 7,615 pps (the generator's ceiling; the DUT lost nothing
    at the highest load offered), which does not clear >= 14,137 pps: the generator, not
    the DUT, is the limit; give ..." (`ok`: "which clears ..."). `judged` names what was
    judged (an MLRsearch goal, "the NDR")."""
    what = f"{judged}, " if judged else ""
    head = (f"{figure} is at least {at_least} ({what}the generator's ceiling; the DUT {passed} "
            f"at the highest load offered), which ")
    if ok:
        return head + f"clears {required}"
    return head + (f"does not clear {required}: the generator, not the DUT, is the limit; "
                   f"{GENERATOR_FIX}")


def generator_limit(lines: list[str], cond: dict[str, Any] | None = None,
                    layer: str = "l1") -> GeneratorLimit:
    """The error (pytest: ERROR, not the DUT's FAIL) of a lower bound the generator set
    that does not clear a requirement: `lines` (the verdict line of
    :func:`lower_bound_verdict`, then measured and required) and the conditions."""
    text = _conditions_text(cond, layer) if cond else None
    return GeneratorLimit("\n".join([*lines, *([f"conditions: {text}"] if text else [])]))


def _check_confidence(confidence: object, helper: str) -> float:
    if not _is_real(confidence) or not 0 < float(confidence) < 1:  # type: ignore[arg-type]
        raise NetloadConfigError(f"{helper}: confidence={confidence!r}: give a number in "
                                 "(0, 1), e.g. 0.95")
    return float(confidence)  # type: ignore[arg-type]
