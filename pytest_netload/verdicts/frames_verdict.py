"""``assert_frames_match``: every received frame of the streams run with expected frames
(`traffic.expect.expect`) matched, or an AssertionError with the field-by-field diff
of the first mismatches.

It takes what carries `measure.frames.FrameCheck`s: one, a list or dict of them, a
`RunResult` (its ``frames``), a `RateResult` (its run's), the harness's
``expect_frames`` answer, or an ``expected_frames`` record (a results.json
measurement, or its dict)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import NetloadConfigError
from ..measure.frames import FrameCheck
from ..measure.recording import record_verdict

__all__ = ["assert_frames_match", "frame_checks_of"]


def _from_record(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {"stream": str(entry["stream"]), "received": int(entry["received"]),
            "mismatched": int(entry["mismatched"]),
            "message": "\n".join(
                f"  frame seq {m['seq']} ({m['length']} bytes): "
                + ("; ".join(m["diff"]) or "differs beyond the named fields")
                for m in entry.get("mismatches", ())[:3])}


def frame_checks_of(obj: object) -> list[dict[str, Any]]:
    """Each stream's outcome in `obj` as {"stream", "received", "mismatched", "message"}."""
    if isinstance(obj, FrameCheck):
        return [{"stream": obj.stream, "received": obj.received,
                 "mismatched": obj.unmatched, "message": obj.message()}]
    frames = getattr(obj, "frames", None)
    if frames is None and getattr(obj, "run", None) is not None:
        frames = getattr(obj.run, "frames", None)  # type: ignore[attr-defined]
    if isinstance(frames, Mapping) and all(isinstance(v, FrameCheck) for v in frames.values()):
        return [c for check in frames.values() for c in frame_checks_of(check)]
    if isinstance(obj, Mapping):
        if obj.get("kind") == "expected_frames" or "streams" in obj and "kind" not in obj:
            return [_from_record(e) for e in obj.get("streams", ())]
        if all(isinstance(v, FrameCheck) for v in obj.values()) and obj:
            return [c for check in obj.values() for c in frame_checks_of(check)]
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        return [c for item in obj for c in frame_checks_of(item)]
    raise NetloadConfigError(
        f"assert_frames_match({type(obj).__name__}): give a FrameCheck, a run or rate result "
        "run with expect_frames=, netload.expect_frames(...)'s answer, or an "
        "'expected_frames' record")


def assert_frames_match(obj: object, *, at_least: int = 1) -> None:
    """Check that every frame of the streams in `obj` came back as expected, and at
    least `at_least` of each came back. A failure names each stream's mismatched share
    and the first mismatches' diffs ("ip.ttl: expected 63, got 64"); the verdict is
    recorded either way."""
    __tracebackhide__ = True
    if isinstance(at_least, bool) or not isinstance(at_least, int) or at_least < 0:
        raise NetloadConfigError(f"assert_frames_match: at_least={at_least!r}: give a "
                                 "number of frames >= 0")
    checks = frame_checks_of(obj)
    if not checks:
        raise NetloadConfigError("assert_frames_match: no stream was run with expected frames")
    failed = [c for c in checks if c["mismatched"] or c["received"] < at_least]
    for c in checks:
        ok = c not in failed
        record_verdict(f"frames@{c['stream']}", ok,
                       f"{c['mismatched']} of {c['received']} frames mismatched",
                       f"0 mismatched, at least {at_least} received",
                       **({} if ok else {"message": c["message"]}))
    if failed:
        lines = []
        for c in failed:
            if c["mismatched"]:
                lines.append(c["message"])
            else:
                lines.append(f"stream {c['stream']!r}: {c['received']} frames came back, "
                             f"fewer than {at_least} to compare")
        raise AssertionError("received frames differ from the expected frame\n"
                             + "\n".join(lines))
