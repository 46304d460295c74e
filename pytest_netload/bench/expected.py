"""Expected frames in the procedures: an expectation (`traffic.expect.expect(...)`, a
list of them, or a dict by stream name) made into each stream's rules for a run
(`expect_rules`), the names a topology gives its MACs (`flow_names`: "dut_mac",
"rx_mac", "tx_mac"), and the ``expected_frames`` record of a run's checks
(`record_frames`).

The standards' runners share the rest: `FrameTally` keeps one procedure's rules and
its runs' checks (Y.1564, RFC 2889; RFC 2544's EngineMeasurer keeps its own the same
way), `chosen_expect` takes a call's `expect=` over the marker's, `refuse_expect`
refuses it where a procedure sends frames of its own, and `colour_checked` joins a
colour-aware Y.1564 stream's expected frames with its colours."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import NetloadConfigError
from ..measure.frames import EXPECT_BYTES, FrameCheck, FrameRule, merge_checks
from ..measure.recording import record_measurement
from ..traffic.expect import Expect

__all__ = ["COLOUR_FIELDS", "FrameTally", "check_colour_expect", "check_expect",
           "chosen_expect", "colour_checked", "expect_rules", "flow_names", "record_frames",
           "refuse_expect"]

#: A colour-aware Y.1564 service's colour (its `colour`): the field it is in.
COLOUR_FIELDS = {"dscp": ("dscp", "ip.dscp"), "pcp": ("pcp", "vlan.pcp")}


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


def check_expect(name: str, value: Any) -> Any:
    """A marker's `expect=`: one expect(...) or a list of 1 to 4 of them."""
    items = value if isinstance(value, (list, tuple)) else [value]
    if not 1 <= len(items) <= 4 or not all(isinstance(v, Expect) for v in items):
        raise NetloadConfigError(
            f"{name}={value!r}: give expect(...) (from pytest_netload), or a list of 1 to 4 "
            "of them, e.g. expect=expect(ttl='sent-1', src='dut_mac')")
    return value


def check_expect_names(expect: Any, names: Sequence[str]) -> None:
    """A dict `expect` names only streams of the run (`names`, every one it loads)."""
    if isinstance(expect, Mapping):
        unknown = sorted(set(expect) - set(names))
        if unknown:
            raise NetloadConfigError(f"expect names {unknown}, not streams of this run "
                                     f"({sorted(names)})")


def expect_rules(expect: Any, streams: Sequence[tuple[str, Any]], names: Mapping[str, str],
                 *, whole_run: bool = True) -> dict[str, list[FrameRule]]:
    """Each stream's rules: `streams` is (loaded name, its `traffic.Stream` or the loaded
    stream itself) in order; `expect` applies to all of them, or is a dict by name.
    `whole_run`: `streams` are all the run's, so a dict may name no other (a caller that
    builds the rules stream by stream checks the names itself, check_expect_names)."""
    if expect is None:
        return {}
    if isinstance(expect, Mapping):
        if whole_run:
            check_expect_names(expect, [n for n, _ in streams])
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


@dataclass
class FrameTally:
    """One procedure's expected frames: its streams' rules (`rules`, what
    `Engine.run(expect_frames=...)` takes) and its runs' checks merged per stream."""

    rules: dict[str, list[FrameRule]] = field(default_factory=dict)
    frames: dict[str, FrameCheck] = field(default_factory=dict)
    runs: int = 0
    """Runs whose frames were compared; `mismatch_runs` of them had a mismatch."""
    mismatch_runs: int = 0

    def rules_for(self, streams: Iterable[Any]) -> dict[str, list[FrameRule]]:
        """The rules of the loaded `streams` a run sends (Engine.run refuses others')."""
        return {s.name: self.rules[s.name] for s in streams if s.name in self.rules}

    def keep(self, checks: Mapping[str, FrameCheck]) -> None:
        """A run's checks of this tally's streams, added (mismatches fail nothing here:
        the DUT forwarded those frames; the test judges them with assert_frames_match)."""
        mine = {n: c for n, c in checks.items() if n in self.rules}
        if not mine:
            return
        self.runs += 1
        self.mismatch_runs += any(c.unmatched for c in mine.values())
        for name, check in mine.items():
            self.frames[name] = merge_checks(self.frames.get(name), check)

    def done(self, into: list[FrameCheck], *, procedure: str, **context: Any) -> None:
        """The procedure's checks appended to `into` (a runner's `frames`) and recorded."""
        if not self.frames:
            return
        into.extend(self.frames.values())
        record_frames(self.frames, procedure=procedure, trials=self.runs,
                      mismatch_trials=self.mismatch_runs, **context)


def chosen_expect(given: Any, marker: Any) -> Any:
    """A procedure's expected frames: its call's `expect=`, else the marker's."""
    return marker if given is None else given


def refuse_expect(procedure: str, given: Any, marker: Any, why: str, instead: str) -> None:
    """NetloadConfigError when a procedure that sends frames of its own (`why`) is
    given `expect=` (its call's or the marker's): no stream of the user's to compare;
    `instead`: the procedures that take it."""
    if given is None and marker is None:
        return
    where = "its expect=" if given is not None else "the marker's expect="
    raise NetloadConfigError(
        f"{procedure} sends frames of its own ({why}), not the marker's stream=, so "
        f"{where} has no stream to describe; give expect= to {instead}")


def check_colour_expect(expect: Any, service: str, colour: str) -> None:
    """Refuse what a colour-aware service's `expect=` cannot be: more than 2 expected
    frames (each is compared in both colours, and a stream has at most 4 rules), or
    one naming the colour field (the colours set it: green or yellow)."""
    items = list(expect) if isinstance(expect, (list, tuple)) else [expect]
    if len(items) > 2:
        raise NetloadConfigError(
            f"expect: {len(items)} expected frames for colour-aware service {service!r}; "
            "give 1 or 2: each is compared in green and in yellow, and a stream has at "
            "most 4 expected frames")
    names = COLOUR_FIELDS[colour]
    for e in items:
        if any(key in names for key, _ in getattr(e, "changes", ())):
            raise NetloadConfigError(
                f"expect({names[0]}=...): service {service!r} is colour-aware by its "
                f"{colour}, which its colours set (green or yellow, compared apart); leave "
                f"{names[0]} out of expect=")


def colour_checked(rules: Sequence[FrameRule], colour: str, green: int,
                   yellow: int) -> list[FrameRule]:
    """A colour-aware stream's rules: each of `rules` (the user's expected frames) twice,
    its colour field holding the green value, then the yellow one ("expected (green)",
    "expected (yellow)"): a frame counts for the colour it came with when it is as
    expected, else it is mismatched, with its diff (colour_at_rx's "other")."""
    name = COLOUR_FIELDS[colour][1]
    out: list[FrameRule] = []
    for rule in rules:
        ref = next((f for f in rule.fields if f.name == name), None)
        if ref is None or ref.offset + ref.width > EXPECT_BYTES:
            raise NetloadConfigError(
                f"expect: the expected frame ({rule.label!r}) has no {name} to hold the "
                f"service's colour (a popped VLAN tag, or a frame without IP); expect the "
                "colour field kept")
        bits = ref.bits or (1 << 8 * ref.width) - 1
        shift = (bits & -bits).bit_length() - 1
        span = slice(ref.offset, ref.offset + ref.width)
        for label, v in (("green", green), ("yellow", yellow)):
            value, mask = bytearray(rule.value), bytearray(rule.mask)
            raw = int.from_bytes(value[span], "big") & ~bits | (v << shift) & bits
            value[span] = raw.to_bytes(ref.width, "big")
            mask[span] = (int.from_bytes(mask[span], "big") | bits).to_bytes(ref.width, "big")
            out.append(FrameRule(bytes(value), bytes(mask), f"{rule.label} ({label})",
                                 rule.fields))
    return out
