"""assert_loss: frames lost against a ratio (with a Clopper-Pearson upper bound) or a
count."""

from __future__ import annotations

import numbers
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..measure.recording import record_verdict
from ..measure.stats import clopper_pearson_upper
from .explain import _check_confidence, _conditions, _failure, _is_real, loss_line


def _count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise NetloadConfigError(f"assert_loss: {what} = {value!r} is not a count >= 0")
    return int(value)


def _loss_counts(obj: Any) -> tuple[int, int]:
    """(sent, lost) frames of a trial, a stream or a run (summed over its sent streams)."""
    streams = getattr(obj, "streams", None)
    if isinstance(streams, tuple | list):
        sent = lost = 0
        for s in streams:
            if getattr(s, "expected_only", False):
                continue  # its TX count is on the engine that sent it
            s_sent, s_lost = _loss_counts(s)
            sent, lost = sent + s_sent, lost + s_lost
        return sent, lost
    if not hasattr(obj, "tx_packets") or not (hasattr(obj, "lost")
                                              or hasattr(obj, "rx_packets")):
        raise NetloadConfigError(
            f"assert_loss: {type(obj).__name__} has no frame counts; give a result with "
            "tx_packets and rx_packets (or lost): a TrialResult, StreamResult or RunResult")
    sent = _count(obj.tx_packets, "tx_packets")
    if hasattr(obj, "lost"):
        lost = _count(obj.lost, "lost")
    else:
        lost = max(sent - _count(obj.rx_packets, "rx_packets"), 0)
    if lost > sent:
        raise NetloadConfigError(f"assert_loss: {fmt.count(lost)} frames lost of {fmt.count(sent)} sent: the "
                                 "counts disagree")
    return sent, lost


def assert_loss(obj: object, *, at_most: float | None = None, max_lost: int | None = None,
                confidence: float = 0.95) -> None:
    """Check frame loss: ``assert_loss(trial, at_most=0)`` or ``assert_loss(run, max_lost=10)``.

    ``obj`` has ``tx_packets`` and ``rx_packets`` (or ``lost``): a TrialResult, a
    StreamResult, or a RunResult (summed over the streams it sent). Give exactly one of
    ``at_most``, a loss ratio in [0, 1) (0: no frame may be lost), or ``max_lost``, a count.

    The verdict is on the measured ratio (lost / sent <= at_most) or count (lost <=
    max_lost). The message (kept in the verdict record also on a pass) states what the
    sample shows about the true loss ratio: its one-sided Clopper-Pearson upper bound at
    ``confidence`` (:func:`stats.clopper_pearson_upper`).
    """
    __tracebackhide__ = True
    confidence = _check_confidence(confidence, "assert_loss")
    if (at_most is None) == (max_lost is None):
        which = "not both" if at_most is not None else "one of them"
        raise NetloadConfigError(
            f"assert_loss: give at_most (a loss ratio in [0, 1), e.g. at_most=0 or "
            f"at_most=1e-6) or max_lost (a number of frames), {which}")
    if at_most is not None and (not _is_real(at_most) or not 0 <= float(at_most) < 1):
        raise NetloadConfigError(f"assert_loss: at_most={at_most!r}: give a loss ratio in "
                                 "[0, 1), e.g. 0 (no frame lost) or 1e-6")
    if max_lost is not None and (isinstance(max_lost, bool)
                                 or not isinstance(max_lost, numbers.Integral)
                                 or int(max_lost) < 0):
        raise NetloadConfigError(f"assert_loss: max_lost={max_lost!r}: give a whole number of "
                                 "frames >= 0")
    criterion = "at_most" if at_most is not None else "max_lost"
    limit: float | int = float(at_most) if at_most is not None else int(max_lost or 0)
    if at_most is None:
        required = f"at most {fmt.count(limit)} frames lost (max_lost={limit})"
    elif limit == 0:
        required = "no frame lost (at_most=0)"
    else:
        required = (f"loss ratio <= {fmt.loss_ratio_exact(limit)} (at_most; verdict on the "
                    "measured ratio)")
    sent, lost = _loss_counts(obj)
    cond = _conditions(obj)
    details: dict[str, Any] = {"criterion": criterion, "sent": sent, "lost": lost,
                               "confidence": confidence, "method": "clopper-pearson",
                               "conditions": cond}
    if sent == 0:
        record_verdict("loss", False, None, limit, reason="no frames were sent",
                       message="no frames were sent", **details)
        raise _failure([("no frames were sent: a loss verdict needs frames (check the "
                         "trial's rate, duration and that the stream was started)"),
                        "measured: 0 frames sent", f"required: {required}"], cond)
    ratio = lost / sent
    upper = clopper_pearson_upper(lost, sent, confidence)
    conf = fmt.percent(confidence)
    if lost == sent:
        statement = f"{fmt.count(lost)} of {fmt.count(sent)} frames lost: every frame"
    else:
        shown = f" (loss ratio {fmt.loss_ratio(ratio)})" if lost else ""
        statement = (f"{fmt.count(lost)} of {fmt.count(sent)} frames lost{shown}: loss ratio < "
                     f"{fmt.loss_ratio(upper)} at {conf} confidence (Clopper-Pearson)")
    ok = ratio <= limit if at_most is not None else lost <= limit
    measured: float | int = ratio if at_most is not None else lost
    record_verdict("loss", ok, measured, limit, loss_ratio=ratio, upper_bound=upper,
                   message=statement, **details)
    if not ok:
        if at_most is not None:
            verdict = (f"loss ratio {fmt.loss_ratio(ratio)} is not <= "
                       f"{fmt.loss_ratio_exact(limit)}")
        else:
            verdict = f"{fmt.count(lost)} frames lost is not <= {fmt.count(limit)}"
        where = loss_line(obj)
        raise _failure([verdict, f"measured: {statement}", f"required: {required}",
                        *([where] if where else [])], cond)
