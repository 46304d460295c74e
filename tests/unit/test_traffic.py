"""Unit tests of pytest_netload.traffic.streams: size plans, IMIX interleaving, compiled engine specs."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from typing import Any

import execnet
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.traffic.packets import TCP, UDP, Eth, FieldOp, IPv4, IPv6, Vlan, field
from pytest_netload.traffic.streams import (
    IMIX_PRESETS,
    MAX_FRAMES,
    MAX_SEQUENCE,
    Stream,
    smooth_weighted_round_robin,
)

T4 = (Eth() / IPv4() / UDP()).build()
SPEC_KEYS = {"name", "frames", "sizes", "sequence", "l3_offset", "l4_offset", "l3_proto",
             "l4_proto", "fields", "seed", "stamp_every", "signature", "flow_key"}


def raises(match: str) -> Any:
    """pytest.raises for a NetloadConfigError whose message matches ``match``."""
    return pytest.raises(NetloadConfigError, match=match)


def longest_cyclic_run(seq: list[int] | tuple[int, ...], value: int) -> int:
    best = run = 0
    for x in list(seq) * 2:
        run = run + 1 if x == value else 0
        best = max(best, run)
    return min(best, len(seq))


# ---- size plans --------------------------------------------------------------------------

def test_single_size() -> None:
    s = Stream(T4)
    assert (s.frame_sizes, s.sequence, s.mean_frame_size) == ((64,), (0,), 64.0)
    spec = s.compile(16)
    assert spec["frames"] == [T4.frame(64, 16)] and spec["sizes"] == [64]
    assert spec["sequence"] == [0]


def test_size_list_is_taken_in_order() -> None:
    s = Stream(T4, size=[128, 64, 128, 1518])
    assert s.frame_sizes == (128, 64, 1518)
    assert s.sequence == (0, 1, 0, 2)
    assert s.mean_frame_size == (128 + 64 + 128 + 1518) / 4
    spec = s.compile(0)
    assert [len(f) for f in spec["frames"]] == [124, 60, 1514]
    assert [spec["sizes"][i] for i in spec["sequence"]] == [128, 64, 128, 1518]
    assert Stream(T4, size=(100,)).sequence == (0,)


@pytest.mark.parametrize("preset", ["imix", "imix-simple"])
def test_imix_is_interleaved(preset: str) -> None:
    s = Stream(T4, size=preset)
    assert s.frame_sizes == (64, 594, 1518)
    assert len(s.sequence) == 12
    assert Counter(s.frame_sizes[i] for i in s.sequence) == {64: 7, 594: 4, 1518: 1}
    assert longest_cyclic_run(s.sequence, 0) <= 2  # 7 of 12 spread out, not 7 in a row
    assert longest_cyclic_run(s.sequence, 1) == 1
    assert s.mean_frame_size == pytest.approx((7 * 64 + 4 * 594 + 1518) / 12)
    assert s.size == preset and s.label == f"ipv4-udp-{preset}"
    assert dict(IMIX_PRESETS[preset]) == {64: 7, 594: 4, 1518: 1}


def test_weights_are_reduced_and_smooth() -> None:
    s = Stream(T4, size={64: 3, 1518: 3})
    assert s.sequence == (0, 1)
    s = Stream(T4, size={1518: 1, 64: 4})
    assert s.frame_sizes == (1518, 64) and len(s.sequence) == 5
    assert s.sequence.count(0) == 1 and longest_cyclic_run(s.sequence, 1) == 4
    s = Stream(T4, size={64: 10, 128: 10, 256: 20})
    assert len(s.sequence) == 4 and s.mean_frame_size == (64 + 128 + 2 * 256) / 4


@settings(deadline=None, max_examples=200)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=8))
def test_smooth_weighted_round_robin_counts(weights: list[int]) -> None:
    order = smooth_weighted_round_robin(weights)
    assert len(order) == sum(weights)
    assert Counter(order) == {i: w for i, w in enumerate(weights)}


@settings(deadline=None, max_examples=200)
@given(st.integers(1, 60), st.integers(1, 60))
def test_two_weights_never_bunch(a: int, b: int) -> None:
    heavy, light = max(a, b), min(a, b)
    order = smooth_weighted_round_robin([heavy, light])
    assert longest_cyclic_run(order, 0) <= math.ceil(heavy / light)
    assert longest_cyclic_run(order, 1) == 1


@settings(deadline=None, max_examples=100)
@given(st.dictionaries(st.integers(64, 1518), st.integers(1, 20), min_size=1, max_size=6))
def test_weighted_sequence_and_mean(weights: dict[int, int]) -> None:
    s = Stream(T4, size=weights)
    g = math.gcd(*weights.values())
    assert len(s.sequence) == sum(weights.values()) // g
    counts = Counter(s.frame_sizes[i] for i in s.sequence)
    assert counts == {size: w // g for size, w in weights.items()}
    expected = sum(size * w for size, w in weights.items()) / sum(weights.values())
    assert s.mean_frame_size == pytest.approx(expected)


# ---- compile -----------------------------------------------------------------------------

def test_compile_format() -> None:
    t = (Eth() / Vlan(9) / IPv6() / TCP()).build()
    ops = [field(t, "ip.src", "inc", min=1, max=100), field(t, "tcp.dport", "random")]
    s = Stream(t, size={128: 2, 1024: 1}, fields=ops, name="flows", seed=42)
    spec = s.compile(16)
    assert set(spec) == SPEC_KEYS
    assert spec["name"] == "flows" and spec["seed"] == 42
    assert spec["frames"] == [t.frame(128, 16), t.frame(1024, 16)]
    assert spec["sizes"] == [128, 1024] and spec["sequence"] == [0, 1, 0]
    offsets = (spec["l3_offset"], spec["l4_offset"], spec["l3_proto"], spec["l4_proto"])
    assert offsets == (18, 58, 6, 6)
    assert spec["fields"] == [
        {"offset": 34, "width": 8, "op": "inc", "min": 1, "max": 100, "step": 1},
        {"offset": 60, "width": 2, "op": "random", "min": 0, "max": 0xFFFF, "step": 1}]
    assert execnet.loads(execnet.dumps(spec)) == spec  # crosses the engine channel unchanged
    assert all(type(v) in (str, int, list, bool, bytes) for v in spec.values())


def test_compile_non_ip_and_trailer_errors() -> None:
    spec = Stream(Eth(), size=[64, 9604]).compile(16)
    offsets = (spec["l3_offset"], spec["l4_offset"], spec["l3_proto"], spec["l4_proto"])
    assert offsets == (-1, -1, 0, 0)
    assert spec["name"] == "eth-64B+9604B"
    big = Stream(Eth() / Vlan(1) / IPv6() / TCP(), size=[90, 128])
    with raises(r"frame size 90 .*78 header bytes, a 16-byte trailer.*use size >= 98"):
        big.compile(16)


def test_compile_checks_fields_against_trailer() -> None:
    late = FieldOp(50, 8, "inc", 0, 10)  # in the payload, after the 42 header bytes
    s = Stream(T4, size=[64, 256], fields=[late])
    s.compile(0)
    with raises(r"field at offset 50 \(bytes 50..57\) overlaps the 16-byte signature trailer at "
                r"bytes 44..59; use frame size >= 78"):
        s.compile(16)


def test_default_seed_is_deterministic_and_distinct() -> None:
    a = Stream(T4, size=64).compile(16)["seed"]
    assert a == Stream(T4, size=64).compile(16)["seed"]
    assert a != Stream((Eth() / IPv4(src="198.18.0.2") / UDP()).build()).compile(16)["seed"]
    assert a != Stream(T4, name="other").compile(16)["seed"]
    assert 0 <= a < 2**64


# ---- templates ---------------------------------------------------------------------------

def test_template_kinds() -> None:
    scapy_all = pytest.importorskip("scapy.all")
    from_stack = Stream(Eth() / IPv4() / UDP())
    from_layer = Stream(Eth())
    from_pkt = Stream(scapy_all.Ether() / scapy_all.IP() / scapy_all.UDP() / scapy_all.Raw(b"x"))
    assert from_stack.template == T4
    assert from_layer.template.headers[12:14] == b"\x88\xb5"
    assert from_pkt.template.l4_offset == 34 and len(from_pkt.template.headers) == 42
    assert Stream(Eth() / IPv6() / UDP(), size=128).label == "ipv6-udp-128B"
    with raises(r"template 'eth' is not a Template, a layer stack or a scapy packet"):
        Stream("eth")


def test_stream_is_frozen_hashable_and_replaceable() -> None:
    s = Stream(T4, size="imix", fields=[field(T4, "udp.sport", "inc")])
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.seed = 3  # type: ignore[misc]
    assert s == Stream(T4, size="imix", fields=[field(T4, "udp.sport", "inc")])
    assert hash(s) == hash(Stream(T4, size="imix", fields=[field(T4, "udp.sport", "inc")]))
    assert {s, Stream(T4)} == {s, Stream(T4)}
    r = dataclasses.replace(s, size=[64, 128])
    assert r.sequence == (0, 1) and r.fields == s.fields
    assert "imix" in repr(s)


# ---- validation --------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "match"), [
    ({"size": 63}, r"frame size 63 .*use size >= 64"),
    ({"size": 9605}, r"frame size 9605 exceeds"),
    ({"size": True}, r"size True is invalid"),
    ({"size": 64.0}, r"size 64.0 is invalid"),
    ({"size": "jumbo"}, r"size 'jumbo' is not a preset; use one of imix, imix-simple"),
    ({"size": []}, r"size list \[\] is empty"),
    ({"size": [64, "128"]}, r"holds non-ints \['128'\]"),
    ({"size": [64, 60]}, r"frame size 60 "),
    ({"size": {}}, r"size \{\} is empty"),
    ({"size": {64: 0}}, r"size 64: weight 0 is invalid"),
    ({"size": {64: 1.5}}, r"size 64: weight 1.5 is invalid"),
    ({"size": {"64": 1}}, r"size '64' in \{'64': 1\} is not an int"),
    ({"size": {64: 40000, 128: 30001}}, r"sequence of 70001 packets, more than 65535"),
    ({"size": [64] * (MAX_SEQUENCE + 1)}, r"size list of 65536 entries is longer than 65535"),
    ({"size": list(range(64, 64 + MAX_FRAMES + 1))}, r"65 distinct frame sizes exceed 64"),
    ({"size": {s: 1 for s in range(64, 64 + MAX_FRAMES + 1)}}, r"65 distinct frame sizes"),
    ({"name": ""}, r"stream name '' is invalid"),
    ({"name": "a\nb"}, r"stream name 'a\\nb' is invalid"),
    ({"seed": -1}, r"stream seed -1 is invalid"),
    ({"seed": 2**64}, r"stream seed 18446744073709551616 is invalid"),
    ({"fields": [("udp.sport", "inc")]}, r"stream field \('udp.sport', 'inc'\) is not a FieldOp"),
    ({"fields": [FieldOp(58, 4, "inc", 0, 9)]},
     r"field at offset 58 \(bytes 58..61\) lies outside the 60-byte frame"),
    ({"fields": [field(T4, "ip.src", "inc"), FieldOp(28, 4, "random", 0, 5)]},
     r"field 'ip.src' and field at offset 28 overlap"),
])
def test_stream_errors_name_the_value(kwargs: dict[str, Any], match: str) -> None:
    with raises(match):
        Stream(T4, **kwargs)


def test_max_sizes_are_accepted() -> None:
    s = Stream(T4, size=list(range(64, 64 + MAX_FRAMES)))
    assert len(s.compile(16)["frames"]) == MAX_FRAMES
    s = Stream(T4, size={64: MAX_SEQUENCE - 1, 1518: 1})
    assert len(s.sequence) == MAX_SEQUENCE
    assert longest_cyclic_run(s.sequence, 1) == 1


def test_stamp_every_is_validated_and_compiled() -> None:
    t = (Eth() / IPv4() / UDP()).build()
    assert Stream(t).compile(16)["stamp_every"] == 1
    assert Stream(t, stamp_every=100).compile(16)["stamp_every"] == 100
    for bad in (0, -1, 1.5, "10", 1 << 32):
        with pytest.raises(NetloadConfigError, match="stamp_every"):
            Stream(t, stamp_every=bad)  # type: ignore[arg-type]
