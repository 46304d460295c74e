"""Expected frames in the procedures: an expectation (`traffic.expect.expect(...)`, a
list of them, or a dict by stream name) made into each stream's rules for a run
(`expect_rules`), the names a topology gives its MACs (`flow_names`: "dut_mac",
"rx_mac", "tx_mac"), and the ``expected_frames`` record of a run's checks
(`record_frames`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import NetloadConfigError
from ..measure.frames import FrameCheck, FrameRule
from ..measure.recording import record_measurement
from ..traffic.expect import Expect

__all__ = ["expect_rules", "flow_names", "record_frames"]


def _as_list(value: Any, where: str) -> list[Expect]:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not isinstance(item, Expect):
            raise NetloadConfigError(
                f"{where}={item!r}: give expect(...) (from pytest_netload), a list of them "
                "(one frame each, the first that matches counts) or a dict by stream name")
    if not 1 <= len(items) <= 4:
        raise NetloadConfigError(f"{where}: {len(items)} expected frames; give 1 to 4")
    return items


def expect_rules(expect: Any, streams: Sequence[tuple[str, Any]],
                 names: Mapping[str, str]) -> dict[str, list[FrameRule]]:
    """Each stream's rules: `streams` is (loaded name, its `traffic.Stream` or the loaded
    stream itself) in order; `expect` applies to all of them, or is a dict by name."""
    if expect is None:
        return {}
    if isinstance(expect, Mapping):
        unknown = sorted(set(expect) - {n for n, _ in streams})
        if unknown:
            raise NetloadConfigError(f"expect names {unknown}, not streams of this run "
                                     f"({sorted(n for n, _ in streams)})")
        chosen = {n: _as_list(e, f"expect[{n!r}]") for n, e in expect.items()}
    else:
        every = _as_list(expect, "expect")
        chosen = {n: every for n, _ in streams}
    out: dict[str, list[FrameRule]] = {}
    for name, source in streams:
        if name not in chosen:
            continue
        if not hasattr(source, "template"):
            raise NetloadConfigError(
                f"expect: stream {name!r} was given loaded; expected frames are built from "
                "its template: give the Stream (or udp(...)) itself")
        out[name] = [e.rule(source, names) for e in chosen[name]]
    return out


def flow_names(tx_mac: str | None, rx_mac: str | None, dut_mac: str | None) -> dict[str, str]:
    """The names expect() resolves for a wire: the sending port's MAC, the receiving
    port's, and the DUT's facing the receiving port (its egress)."""
    return {k: v for k, v in (("tx_mac", tx_mac), ("rx_mac", rx_mac), ("dut_mac", dut_mac))
            if v}


def record_frames(checks: Mapping[str, FrameCheck] | Sequence[FrameCheck], *,
                  procedure: str, **context: Any) -> None:
    """Keep the checks of one run as an ``expected_frames`` measurement."""
    items = list(checks.values()) if isinstance(checks, Mapping) else list(checks)
    if not items:
        return
    record_measurement("expected_frames", {
        "procedure": procedure, **context,
        "expected": {c.stream: [r.label for r in c.rules] for c in items},
        "streams": [c.as_record() for c in items]})
