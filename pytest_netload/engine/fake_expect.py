"""Expected frames on the fake engine: what its DUT does to a frame (`FakeDut`'s
``routed``, ``keep_ttl``, ``remark_dscp``), and the ``expect_*`` result arrays the
real core's RX path makes (native/src/rx_expect.c), worked out from each stream's
frame templates and how many of its frames arrived. Every arrival is on the run's
first RX entry (the fake spreads nothing over queues); the kept unmatched frames
are the first ones by sequence number."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import _native_facts as facts
from ..topology.fake import FAKE_DUT_MACS, FAKE_PORT_MACS
from .fake_dut import FakeDut
from .fake_model import FakeStream
from .protocol import ExpectRule, RunStart

__all__ = ["dut_rewrite", "expect_arrays"]

_TPIDS = (0x8100, 0x88A8, 0x9100)


def _mac(text: str) -> bytes:
    return bytes(int(x, 16) for x in text.split(":"))


def _ipv4_csum(header: bytes) -> int:
    total = sum(int.from_bytes(header[i:i + 2], "big") for i in range(0, len(header), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def dut_rewrite(dut: FakeDut, frame: bytes) -> bytes:
    """`frame` as the fake DUT forwards it."""
    buf = bytearray(frame)
    off = 12
    while off + 4 <= len(buf) and int.from_bytes(buf[off:off + 2], "big") in _TPIDS:
        off += 4
    etype, l3 = int.from_bytes(buf[off:off + 2], "big"), off + 2
    if dut.routed:
        buf[0:6], buf[6:12] = _mac(FAKE_PORT_MACS[1]), _mac(FAKE_DUT_MACS[1])
    decrement = dut.routed and not dut.keep_ttl
    if etype == 0x0800 and len(buf) >= l3 + 20:
        if decrement and buf[l3 + 8]:
            buf[l3 + 8] -= 1
        if dut.remark_dscp >= 0:
            buf[l3 + 1] = (dut.remark_dscp << 2) | (buf[l3 + 1] & 0x03)
        ihl = (buf[l3] & 0x0F) * 4
        buf[l3 + 10:l3 + 12] = b"\0\0"
        buf[l3 + 10:l3 + 12] = _ipv4_csum(bytes(buf[l3:l3 + ihl])).to_bytes(2, "big")
    elif etype == 0x86DD and len(buf) >= l3 + 40:
        if decrement and buf[l3 + 7]:
            buf[l3 + 7] -= 1
        if dut.remark_dscp >= 0:
            word = int.from_bytes(buf[l3:l3 + 2], "big")
            word = (word & ~0x0FC0) | (dut.remark_dscp << 6)
            buf[l3:l3 + 2] = word.to_bytes(2, "big")
    return bytes(buf)


def _first_match(rules: Sequence[ExpectRule], frame: bytes) -> int:
    """The index of the first rule `frame` matches (before its trailer); -1: none."""
    body = frame[:max(len(frame) - facts.SIGNATURE_BYTES, 0)]
    for r, rule in enumerate(rules):
        span = max((i + 1 for i, m in enumerate(rule.mask) if m), default=0)
        if span > len(body):
            continue
        if all(body[i] & m == rule.value[i] & m for i, m in enumerate(rule.mask[:span]) if m):
            return r
    return -1


def expect_arrays(dut: FakeDut, spec: RunStart, streams: Sequence[FakeStream],
                  rx_packets: np.ndarray) -> dict[str, np.ndarray]:
    """The ``expect_*`` arrays of a run whose TX entries carry rules; {} when none does."""
    if not any(e.expect for e in spec.tx):
        return {}
    n_tx, n_rx = len(spec.tx), max(len(spec.rx), 1)
    rules_n, keep, nbytes = facts.EXPECT_RULES, facts.EXPECT_KEEP, facts.EXPECT_BYTES
    matched = np.zeros((n_tx, n_rx, rules_n), dtype=np.uint64)
    unmatched = np.zeros((n_tx, n_rx), dtype=np.uint64)
    n_kept = np.zeros((n_tx, n_rx), dtype=np.uint32)
    kept_len = np.zeros((n_tx, n_rx, keep), dtype=np.uint32)
    kept_seq = np.zeros((n_tx, n_rx, keep), dtype=np.uint64)
    kept = np.zeros((n_tx, n_rx, keep, nbytes), dtype=np.uint8)
    for i, (entry, stream) in enumerate(zip(spec.tx, streams)):
        if not entry.expect or not spec.rx:
            continue
        out = [dut_rewrite(dut, f) for f in stream.frames]
        which = [_first_match(entry.expect, f) for f in out]
        seq = stream.sequence or [0]
        got = int(rx_packets[i])
        full, rest = divmod(got, len(seq))
        for k, frame_index in enumerate(seq):
            n = full + (1 if k < rest else 0)
            r = which[frame_index]
            if r >= 0:
                matched[i, 0, r] += n
            else:
                unmatched[i, 0] += n
        s = 0  # the first unmatched arrivals, by sequence number
        some = any(which[k] < 0 for k in seq)
        while some and s < got and n_kept[i, 0] < keep:
            index = seq[s % len(seq)]
            if which[index] < 0:
                k = int(n_kept[i, 0])
                data = out[index][:nbytes]
                kept[i, 0, k, :len(data)] = np.frombuffer(data, dtype=np.uint8)
                kept_len[i, 0, k] = len(out[index])
                kept_seq[i, 0, k] = s
                n_kept[i, 0] += 1
            s += 1
    return {"expect_matched": matched, "expect_unmatched": unmatched,
            "expect_n_kept": n_kept, "expect_kept_len": kept_len,
            "expect_kept_seq": kept_seq, "expect_kept": kept}
