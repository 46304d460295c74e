"""Expected frames: what the engine's RX path counted of a stream's frames compared to
the frame expected back (traffic/expect.py builds the rules; native/src/rx_expect.c
compares), and the field-by-field diff of the frames that did not match.

A `FrameRule` is one expected frame: value and mask over the frame's first
`EXPECT_BYTES` bytes, a label, and the named fields (offset, width, bit mask) the
diff reads. A `FrameCheck` is one stream's counts over a run, merged over its TX
and RX queues: frames per rule (the first that matched), unmatched ones, and the
first few unmatched frames kept (sequence number, length, first bytes).

Pure: no engine, no pytest; scapy, where installed, only names the received frame's
layers in a summary line (`describe`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _native_facts as facts

__all__ = ["EXPECT_BYTES", "EXPECT_KEEP", "EXPECT_RULES", "FieldRef", "FrameCheck", "FrameRule",
           "KeptFrame", "diff_fields", "frame_checks", "merge_checks", "scapy_fields"]

EXPECT_BYTES: int = facts.EXPECT_BYTES
EXPECT_RULES: int = facts.EXPECT_RULES
EXPECT_KEEP: int = facts.EXPECT_KEEP


@dataclass(frozen=True)
class FieldRef:
    """A named field of a frame for the diff: `width` bytes at `offset`, big-endian,
    of which `bits` (0: all) are the field's (DSCP is 0xfc of the TOS byte)."""

    name: str
    offset: int
    width: int
    bits: int = 0
    fmt: str = "int"  # "int", "hex", "mac", "ipv4", "ipv6"

    def value(self, frame: bytes) -> int | None:
        """The field's value in `frame`; None when the frame is too short for it."""
        if self.offset + self.width > len(frame):
            return None
        v = int.from_bytes(frame[self.offset:self.offset + self.width], "big")
        if self.bits:
            v &= self.bits
            v >>= (self.bits & -self.bits).bit_length() - 1
        return v

    def show(self, v: int | None) -> str:
        if v is None:
            return "(absent)"
        if self.fmt == "mac":
            return ":".join(f"{b:02x}" for b in v.to_bytes(6, "big"))
        if self.fmt == "ipv4":
            return ".".join(str(b) for b in v.to_bytes(4, "big"))
        if self.fmt == "hex":
            return f"{v:#0{2 + 2 * self.width}x}"
        return str(v)

    def mask_bits(self) -> bytes:
        """The field's bits as a byte mask over its `width` bytes."""
        return (self.bits or (1 << 8 * self.width) - 1).to_bytes(self.width, "big")


@dataclass(frozen=True)
class FrameRule:
    """One expected frame: `value` and `mask` (each at most `EXPECT_BYTES`, padded with
    zeros), its `label` ("as sent", "green"), and the fields its diff names."""

    value: bytes
    mask: bytes
    label: str = "expected"
    fields: tuple[FieldRef, ...] = ()

    def __post_init__(self) -> None:
        for name in ("value", "mask"):
            data = bytes(getattr(self, name))
            if len(data) > EXPECT_BYTES:
                raise ValueError(f"FrameRule {name}: {len(data)} bytes, at most {EXPECT_BYTES}")
            object.__setattr__(self, name, data.ljust(EXPECT_BYTES, b"\0"))

    @property
    def span(self) -> int:
        """Bytes up to the last masked one: a frame shorter (before its trailer) fails."""
        return max((i + 1 for i, m in enumerate(self.mask) if m), default=0)

    def matches(self, frame: bytes) -> bool:
        """The native compare, in Python (the fake engine, tests)."""
        if len(frame) < self.span:
            return False
        return all((frame[i] & m) == (self.value[i] & m)
                   for i, m in enumerate(self.mask[:self.span]) if m)


def diff_fields(rule: FrameRule, frame: bytes) -> list[str]:
    """Where `frame` differs from `rule` under its mask, field by field: "ip.ttl:
    expected 63, got 64" for the rule's named fields; masked bytes no named field
    covers by scapy's field names where scapy is installed ("TCP.urgptr: expected 0,
    got 5"), else as "byte 23: expected 0x3f, got 0x40"."""
    out: list[str] = []
    covered: set[int] = set()
    for f in rule.fields:
        span = range(f.offset, f.offset + f.width)
        fmask = f.mask_bits()
        masked = [rule.mask[i] & fmask[i - f.offset] for i in span if i < EXPECT_BYTES]
        if not any(masked):
            continue
        for i in span:
            covered.add(i)
        exp = bytes(rule.value[i] & rule.mask[i] & fmask[i - f.offset] for i in span
                    if i < EXPECT_BYTES)
        got_raw = frame[f.offset:f.offset + f.width]
        if len(got_raw) < f.width:
            out.append(f"{f.name}: expected {f.show(f.value(rule.value))}, got (frame ends)")
            continue
        got = bytes(b & rule.mask[i] & fmask[i - f.offset]
                    for i, b in zip(span, got_raw))
        if got != exp:
            out.append(f"{f.name}: expected {f.show(f.value(rule.value))}, "
                       f"got {f.show(f.value(frame))}")
    rest: list[str] = []
    substituted = bytearray(frame[:EXPECT_BYTES])
    for i in range(rule.span):
        m = rule.mask[i]
        if not m or i in covered:
            continue
        if i >= len(frame):
            rest.append(f"byte {i}: expected {rule.value[i] & m:#04x}, got (frame ends)")
            break
        if frame[i] & m != rule.value[i] & m:
            rest.append(f"byte {i}: expected {rule.value[i] & m:#04x}, got {frame[i] & m:#04x}")
            substituted[i] = (frame[i] & ~m & 0xFF) | (rule.value[i] & m)
    if rest and len(frame) >= rule.span:
        # bytes no named field covers: scapy names their fields, where it is installed
        named = scapy_fields(bytes(substituted), bytes(frame[:EXPECT_BYTES]))
        if named:
            return out + named
    return out + rest


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def scapy_fields(expected: bytes, got: bytes) -> list[str] | None:
    """The fields in which two frames differ, named as scapy dissects them
    ("TCP.urgptr: expected 0, got 5"): layer by layer while both have the same layers.
    None without scapy, or when it cannot dissect them."""
    try:
        import scapy.layers.inet  # binds IP/UDP/TCP under Ether
        import scapy.layers.inet6  # noqa: F401 - binds IPv6 under Ether
        from scapy.layers.l2 import Ether
        from scapy.packet import NoPayload
    except ImportError:
        return None
    out: list[str] = []
    try:
        a: Any = Ether(expected)
        b: Any = Ether(got)
        while not isinstance(a, NoPayload) and type(a) is type(b):
            for f in a.fields_desc:
                va, vb = a.getfieldval(f.name), b.getfieldval(f.name)
                if va != vb:
                    out.append(f"{type(a).__name__}.{f.name}: expected "
                               f"{_short(str(f.i2repr(a, va)))}, got {_short(str(f.i2repr(b, vb)))}")
            a, b = a.payload, b.payload
    except Exception:  # noqa: BLE001 - a frame scapy cannot dissect: the byte offsets
        return None
    return out or None


def describe(frame: bytes) -> str | None:
    """scapy's one-line summary of a frame, where scapy is installed; else None."""
    try:
        import scapy.layers.inet  # binds IP/UDP/TCP under Ether
        import scapy.layers.inet6  # noqa: F401 - binds IPv6 under Ether
        from scapy.layers.l2 import Ether
    except ImportError:
        return None
    try:
        return str(Ether(bytes(frame)).summary())
    except Exception:  # noqa: BLE001 - a frame scapy cannot dissect: no summary
        return None


@dataclass(frozen=True)
class KeptFrame:
    """An unmatched frame as the engine kept it: its first `EXPECT_BYTES` bytes."""

    seq: int
    length: int
    data: bytes


@dataclass(frozen=True)
class FrameCheck:
    """One stream's frames compared to what was expected: `matched[i]` frames matched
    rule i first, `unmatched` none; `kept` the first unmatched ones (a few per RX
    queue and TX queue of the stream, by sequence number)."""

    stream: str
    rules: tuple[FrameRule, ...]
    matched: tuple[int, ...]
    unmatched: int
    kept: tuple[KeptFrame, ...] = field(default=(), repr=False)

    @property
    def received(self) -> int:
        return sum(self.matched) + self.unmatched

    @property
    def ok(self) -> bool:
        """Every frame matched, and at least one came."""
        return self.unmatched == 0 and self.received > 0

    def by_label(self) -> dict[str, int]:
        """Matched frames per rule label (two rules of one label add up)."""
        out: dict[str, int] = {}
        for rule, n in zip(self.rules, self.matched):
            out[rule.label] = out.get(rule.label, 0) + n
        return out

    def diffs(self, limit: int = EXPECT_KEEP) -> list[dict[str, Any]]:
        """The kept unmatched frames with their diff against the first rule (the
        others are alternatives, each compared: the closest, fewest fields, wins)."""
        out = []
        for k in self.kept[:limit]:
            best = min((diff_fields(r, k.data) for r in self.rules), key=len)
            out.append({"seq": k.seq, "length": k.length, "diff": best,
                        "summary": describe(k.data), "bytes": k.data[:min(k.length, 64)].hex()})
        return out

    def message(self, limit: int = 3) -> str:
        """A readable account: counts, then the first mismatches' diffs."""
        head = (f"stream {self.stream!r}: {self.unmatched} of {self.received} frames did "
                "not match the expected frame" if self.received else
                f"stream {self.stream!r}: no frame came back to compare")
        lines = [head]
        for d in self.diffs(limit):
            lines.append(f"  frame seq {d['seq']} ({d['length']} bytes): "
                         + ("; ".join(d["diff"]) or "differs beyond the named fields"))
            if d["summary"]:
                lines.append(f"    received: {d['summary']}")
        return "\n".join(lines)

    def as_record(self) -> dict[str, Any]:
        """The results.json ``expected_frames`` entry of this stream."""
        return {"stream": self.stream, "received": self.received,
                "matched": self.received - self.unmatched, "mismatched": self.unmatched,
                "by_rule": self.by_label(), "mismatches": self.diffs()}


def merge_checks(a: FrameCheck | None, b: FrameCheck) -> FrameCheck:
    """`a` and `b` (one stream's checks of two runs with the same rules) as one: counts
    summed, the first `EXPECT_KEEP` kept frames (a's first)."""
    if a is None:
        return b
    return FrameCheck(a.stream, a.rules, tuple(x + y for x, y in zip(a.matched, b.matched)),
                      a.unmatched + b.unmatched, (a.kept + b.kept)[:EXPECT_KEEP])


def _kept(arrays: Mapping[str, np.ndarray], row: int) -> list[KeptFrame]:
    out = []
    n_kept = arrays["expect_n_kept"][row]
    for q in range(n_kept.shape[0]):
        for k in range(int(n_kept[q])):
            length = int(arrays["expect_kept_len"][row, q, k])
            out.append(KeptFrame(int(arrays["expect_kept_seq"][row, q, k]), length,
                                 bytes(arrays["expect_kept"][row, q, k][:min(length,
                                                                             EXPECT_BYTES)])))
    return out


def frame_checks(arrays: Mapping[str, np.ndarray], names: Sequence[str],
                 rows: Sequence[Iterable[int]],
                 rules: Mapping[str, Sequence[FrameRule]]) -> dict[str, FrameCheck]:
    """Each stream's `FrameCheck` from a run's ``expect_*`` arrays (per native entry
    and RX queue): stream i's native entries are `rows[i]`, its rules `rules[name]`."""
    if "expect_matched" not in arrays:
        return {}
    out: dict[str, FrameCheck] = {}
    for name, entry_rows in zip(names, rows):
        if name not in rules:
            continue
        entry_rows = list(entry_rows)
        n = len(rules[name])
        matched = [0] * n
        unmatched = 0
        kept: list[KeptFrame] = []
        for r in entry_rows:
            m = arrays["expect_matched"][r]  # [rx queue][rule]
            for i in range(n):
                matched[i] += int(m[:, i].sum())
            unmatched += int(arrays["expect_unmatched"][r].sum())
            kept += _kept(arrays, r)
        kept.sort(key=lambda k: k.seq)
        out[name] = FrameCheck(name, tuple(rules[name]), tuple(matched), unmatched,
                               tuple(kept[:EXPECT_KEEP]))
    return out
