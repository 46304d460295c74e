"""The engine on in-process vdevs: exact counts, byte totals, RX classification, bad input, crashes.

net_ring ports loop their TX back to their own RX, so every count here is exact: no wire, no DUT,
nothing may be lost. One engine host serves the module; the crash test starts its own.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_netload._native_facts import SIGNATURE_FORMAT

from pytest_netload import errors
from pytest_netload.engine.client import Engine, LoadedStream, Port
from pytest_netload.measure.results import RunResult, StreamResult
from pytest_netload.traffic.packets import (
    FCS_BYTES,
    TCP,
    UDP,
    Eth,
    FieldOp,
    IPv4,
    IPv6,
    Template,
    field,
)
from pytest_netload.traffic.streams import SizeSpec, Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine host runs DPDK: needs root"),
]

T4 = (Eth() / IPv4() / UDP()).build()
T6 = (Eth() / IPv6() / UDP()).build()
T4_TCP = (Eth() / IPv4() / TCP()).build()
T6_TCP = (Eth() / IPv6() / TCP()).build()
SIGNATURE = struct.Struct(SIGNATURE_FORMAT)  # magic, stream id, sequence number, TX TSC
MAGIC = 0x4E4C


def assert_exact(s: StreamResult, count: int, frame_bytes: int | None = None) -> None:
    """Every one of ``count`` packets sent once and received once, in order."""
    assert (s.tx_packets, s.rx_packets) == (count, count), s
    assert (s.lost, s.duplicates, s.reordered, s.tx_unsent) == (0, 0, 0, 0), s
    if frame_bytes is not None:
        assert s.tx_bytes == s.rx_bytes == count * frame_bytes, s


def assert_port_counts(r: RunResult, port: Port, sent: int, received: int) -> None:
    counters = r.ports[port.device]
    assert (counters["opackets"], counters["ipackets"]) == (sent, received), counters
    errors_seen = {k: counters[k] for k in ("imissed", "ierrors", "oerrors", "rx_nombuf")}
    assert errors_seen == dict.fromkeys(errors_seen, 0), counters


def sequence_bytes(stream: Stream, count: int) -> int:
    """Frame bytes (FCS excluded) of the first ``count`` packets of ``stream``."""
    sizes, seq = stream.frame_sizes, stream.sequence
    return sum(sizes[seq[i % len(seq)]] - FCS_BYTES for i in range(count))


# ---- count- and duration-bounded runs -------------------------------------------------------


@pytest.mark.parametrize("count", [1, 31, 32, 33, 1000, 1_000_000])
def test_count_bounded_run_is_exact(engine: Engine, ring: Callable[..., Port], count: int) -> None:
    port = ring()
    stream = engine.load(port, Stream(T4, size=64, name="exact"))
    r = engine.run([stream], [port], count=count)
    (s,) = r.streams
    assert_exact(s, count, frame_bytes=60)
    assert r.foreign == 0
    assert int(r.arrays["rx"]["max_seq"][0]) == count  # sequence numbers 0..count-1
    assert int(r.rx_queues["packets"][0]) == count
    assert_port_counts(r, port, count, count)
    assert not r.interrupted


@pytest.mark.parametrize("burst", [1, 7, 128])
def test_burst_size_keeps_counts_exact(engine: Engine, ring: Callable[..., Port],
                                       burst: int) -> None:
    port = ring()
    stream = engine.load(port, Stream(T4, size=64, name=f"burst{burst}"))
    r = engine.run([stream], [port], count=1001, burst=burst)
    assert_exact(r.streams[0], 1001, frame_bytes=60)
    assert_port_counts(r, port, 1001, 1001)


def test_duration_bounded_run(engine: Engine, ring: Callable[..., Port]) -> None:
    port = ring()
    stream = engine.load(port, Stream(T4, size=64, name="timed"))
    r = engine.run([stream], [port], duration_s=0.2)
    (s,) = r.streams
    assert s.tx_packets > 0
    assert s.rx_packets == s.tx_packets
    assert (s.lost, s.duplicates, s.reordered, r.foreign) == (0, 0, 0, 0)
    assert s.tx_bytes == s.rx_bytes == 60 * s.tx_packets
    assert_port_counts(r, port, s.tx_packets, s.rx_packets)


def test_count_ends_a_run_before_its_duration(engine: Engine, ring: Callable[..., Port]) -> None:
    port = ring()
    stream = engine.load(port, Stream(T4, size=64, name="count-first"))
    started = time.monotonic()
    r = engine.run([stream], [port], count=50, duration_s=30.0)
    assert time.monotonic() - started < 10.0
    assert_exact(r.streams[0], 50, frame_bytes=60)


@pytest.mark.parametrize("count", [12, 1000, 100_003])
def test_imix_bytes_follow_the_size_sequence(engine: Engine, ring: Callable[..., Port],
                                             count: int) -> None:
    port = ring()
    imix = Stream(T4, size="imix", name="imix")
    r = engine.run([engine.load(port, imix)], [port], count=count)
    (s,) = r.streams
    assert_exact(s, count)
    assert s.tx_bytes == s.rx_bytes == sequence_bytes(imix, count)
    assert int(r.rx_queues["bytes"][0]) == s.rx_bytes
    assert_port_counts(r, port, count, count)


def test_streams_on_one_port_are_counted_apart(engine: Engine, ring: Callable[..., Port]) -> None:
    port = ring()
    plan: list[tuple[str, Template, SizeSpec, int]] = [  # name, template, size, packets
        ("udp4-64", T4, 64, 1000),
        ("udp6-128", T6, 128, 2500),
        ("tcp4-mix", T4_TCP, {74: 7, 594: 4, 1518: 1}, 3001),  # "imix" has 64: too small for TCP
        ("tcp6-odd", T6_TCP, [95, 1001], 77),
    ]
    streams = {name: Stream(t, size=size, name=name) for name, t, size, _ in plan}
    loaded = {name: engine.load(port, streams[name]) for name in streams}
    assert len({ls.stream_id for ls in loaded.values()}) == len(plan)

    r = engine.run([(loaded[name], n) for name, _, _, n in plan], [port])
    for name, _, _, n in plan:
        assert_exact(r[name], n)
        assert r[name].tx_bytes == r[name].rx_bytes == sequence_bytes(streams[name], n)
        assert r[name].stream_id == loaded[name].stream_id
    total = sum(n for *_, n in plan)
    assert r.tx_packets == r.rx_packets == total
    assert r.foreign == 0
    assert_port_counts(r, port, total, total)

    r = engine.run(list(loaded.values()), [port], count=500)  # one count for every stream
    for name in loaded:
        assert_exact(r[name], 500, frame_bytes=None)
    assert_port_counts(r, port, 2000, 2000)


# ---- expect-only streams and the RX classifier ------------------------------------------------


def test_expected_stream_without_traffic_counts_nothing(engine: Engine,
                                                       ring: Callable[..., Port]) -> None:
    port = ring()
    sent = engine.load(port, Stream(T4, name="sent"))
    expected = engine.load(port, Stream(T4, name="expected"))

    r = engine.run([], [port], expect=[expected], duration_s=0.2)
    (s,) = r.streams
    assert s.name == "expected"
    assert (s.tx_packets, s.rx_packets, s.duplicates, s.reordered) == (0, 0, 0, 0)
    assert s.expected_only and r.lost == 0
    with pytest.raises(errors.NetloadConfigError, match="only expected"):
        s.lost  # noqa: B018 - the TX count lives on the sending engine
    assert r.foreign == 0
    assert_port_counts(r, port, 0, 0)

    # Sent and expected streams in one run: each counts only its own signature.
    r = engine.run([sent], [port], expect=[expected], count=100)
    assert [s.name for s in r.streams] == ["sent", "expected"]
    assert_exact(r["sent"], 100, frame_bytes=60)
    assert (r["expected"].tx_packets, r["expected"].rx_packets) == (0, 0)
    assert r.foreign == 0


def _signed(stream_id: int, seq: int, magic: int = MAGIC) -> Any:
    from scapy.layers.inet import IP
    from scapy.layers.inet import UDP as ScapyUDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    return Ether() / IP() / ScapyUDP() / Raw(bytes(20) + SIGNATURE.pack(magic, stream_id, seq, 0))


@pytest.mark.parametrize(
    ("seqs", "dups", "reordered", "max_seq"),
    [
        ([0, 1, 2, 2, 5, 3, 4, 9, 1], 2, 2, 10),
        ([0xFFFF_FFFE, 0xFFFF_FFFF, 0, 1], 0, 0, (1 << 32) + 2),  # the 32-bit wire seq wraps
        ([70_000, 3, 70_001, 70_001], 1, 1, 70_002),  # 3 lies behind the window: late
    ],
    ids=["dup-and-reorder", "seq-wrap", "behind-window"],
)
def test_rx_classifies_signed_and_foreign_frames(
    engine: Engine, ring: Callable[..., Port], vdev_name: Callable[[str], str], tmp_path: Path,
    seqs: list[int], dups: int, reordered: int, max_seq: int,
) -> None:
    """Frames read from a pcap file: signed ones count for their stream, the rest are foreign."""
    from scapy.layers.l2 import Ether
    from scapy.utils import wrpcap

    holder = ring()
    expected = engine.load(holder, Stream(T4, name="expected"))
    elsewhere = engine.load(holder, Stream(T4, name="not-in-run"))
    frames = [_signed(expected.stream_id, s) for s in seqs]
    foreign = [
        _signed(elsewhere.stream_id, 0),  # a stream of this engine, but not of this run
        _signed(expected.stream_id, 0, magic=0x1234),  # no magic
        Ether() / bytes(50),  # no trailer
        Ether(bytes(20)),  # shorter than any signed frame
    ]
    rx_file = tmp_path / "rx.pcap"
    wrpcap(str(rx_file), frames + foreign)
    port = engine.port(f"{vdev_name('net_pcap')},rx_pcap={rx_file},tx_pcap={tmp_path / 'tx.pcap'}")
    try:
        # start_delay_s=0: frames polled before the start deadline would be dropped uncounted.
        r = engine.run([], [port], expect=[expected], start_delay_s=0, duration_s=0.2)
    finally:
        port.close()
    (s,) = r.streams
    assert (s.rx_packets, s.duplicates, s.reordered) == (len(seqs), dups, reordered)
    assert s.rx_unique == len(seqs) - dups
    assert int(r.arrays["rx"]["max_seq"][0]) == max_seq
    assert r.foreign == len(foreign)
    assert int(r.rx_queues["packets"][0]) == len(seqs) + len(foreign)
    assert r.ports[port.device]["ipackets"] == len(seqs) + len(foreign)


# ---- bad input: refused before any traffic, the engine stays usable --------------------------


def _spec_with_field(engine: Engine, **overrides: object) -> dict[str, Any]:
    """An engine spec dict whose one field skips the Python checks (they go to the C core)."""
    spec = Stream(T4, size=64, name="raw-spec").compile(engine.constants["signature_bytes"])
    spec["fields"] = [{"offset": 42, "width": 2, "op": "inc", "min": 0, "max": 9, "step": 1,
                       **overrides}]
    return spec


BadInput = Callable[[Engine, Port, LoadedStream], object]

BAD_INPUT: list[tuple[str, BadInput, type[Exception], str]] = [
    ("unknown-device", lambda e, p, s: e.port("net_bogus0"),
     errors.NetloadEnvironmentError, r"'net_bogus0'.*could not be probed"),
    ("frame-above-mtu", lambda e, p, s: e.load(p, Stream(T4, size=1600)),
     errors.NetloadConfigError, r"1600-byte frame .* MTU 1500; .* mtu=1582"),
    ("frame-below-headers", lambda e, p, s: Stream(T4, size=60),
     errors.NetloadConfigError, r"frame size 60 .* use size >= 64"),
    ("no-room-for-trailer", lambda e, p, s: e.load(p, Stream(T4_TCP, size=64)),
     errors.NetloadConfigError, r"frame size 64 .* 16-byte trailer .* use size >= 74"),
    ("field-outside-frame", lambda e, p, s: Stream(T4, fields=[field(T4, 100, "inc", width=2)]),
     errors.NetloadConfigError, r"offset 100 .* outside the 60-byte frame"),
    ("field-on-trailer", lambda e, p, s: e.load(p, Stream(T4, fields=[field(T4, 50, "inc",
                                                                              width=2)])),
     errors.NetloadConfigError, r"offset 50 .* overlaps the 16-byte signature trailer"),
    ("native-field-outside-frame", lambda e, p, s: e.load(p, _spec_with_field(e, offset=100)),
     errors.NetloadConfigError, r"offset 100 width 2"),
    ("width-3", lambda e, p, s: field(T4, 42, "inc", width=3),
     errors.NetloadConfigError, r"width 3 is unsupported"),
    ("fieldop-width-3", lambda e, p, s: FieldOp(42, 3, "inc", 0, 5),
     errors.NetloadConfigError, r"width 3 is unsupported"),
    ("native-width-3", lambda e, p, s: e.load(p, _spec_with_field(e, width=3)),
     errors.NetloadConfigError, r"width 3 is not supported"),
    ("min-above-max", lambda e, p, s: field(T4, "udp.sport", "inc", min=5, max=1),
     errors.NetloadConfigError, r"'udp.sport': min 5 > max 1"),
    ("native-min-above-max", lambda e, p, s: e.load(p, _spec_with_field(e, min=5, max=1)),
     errors.NetloadConfigError, r"min 5 > max 1"),
    ("native-max-too-wide", lambda e, p, s: e.load(p, _spec_with_field(e, width=1, max=300)),
     errors.NetloadConfigError, r"max 300 does not fit in 1 bytes"),
    ("too-many-fields", lambda e, p, s: e.load(p, Stream(T4, size=128, fields=[
        field(T4, 42 + 2 * i, "inc", width=2) for i in range(17)])),
     errors.NetloadConfigError, r"17 field modifiers; the engine takes at most 16"),
    ("neither-count-nor-duration", lambda e, p, s: e.run([s], [p]),
     errors.NetloadConfigError, r"stream 'victim' has no packet count and the run no duration"),
    ("negative-count", lambda e, p, s: e.run([s], [p], count=-1),
     errors.NetloadConfigError, r"count=-1"),
    ("burst-too-big", lambda e, p, s: e.run([s], [p], count=10, burst=129),
     errors.NetloadConfigError, r"burst 129; at most 128"),
    ("stream-twice", lambda e, p, s: e.run([s, s], [p], count=10),
     errors.NetloadConfigError, r"stream \d+ is listed twice"),
    ("rx-port-twice", lambda e, p, s: e.run([s], [p, p], count=10),
     errors.NetloadConfigError, r"RX port \d+ queue 0 is listed twice"),
    ("nothing-to-do", lambda e, p, s: e.run([], []),
     errors.NetloadConfigError, r"no TX stream, RX queue or forwarder"),
    ("port-already-open", lambda e, p, s: e.port(p.device),
     errors.NetloadError, r"'net_ring\d+' \(port \d+\) is already open"),
]


@pytest.mark.parametrize(("call", "exc", "match"), [c[1:] for c in BAD_INPUT],
                         ids=[c[0] for c in BAD_INPUT])
def test_bad_input_is_refused_before_traffic(engine: Engine, ring: Callable[..., Port],
                                             call: BadInput, exc: type[Exception],
                                             match: str) -> None:
    port = ring()
    victim = engine.load(port, Stream(T4, size=64, name="victim"))
    before = port.stats()
    with pytest.raises(exc, match=match):
        call(engine, port, victim)
    after = port.stats()
    assert (after["opackets"], after["ipackets"]) == (before["opackets"], before["ipackets"])
    # The engine host is still the same one, and still works.
    assert engine.alive
    r = engine.run([victim], [port], count=100)
    assert_exact(r.streams[0], 100, frame_bytes=60)


def test_mtu_advice_of_the_error_works(engine: Engine, ring: Callable[..., Port]) -> None:
    big = Stream(T4, size=1600, name="big")
    with pytest.raises(errors.NetloadConfigError, match="mtu=1582"):
        engine.load(ring(), big)
    port = ring(mtu=1582)
    assert port.info["mtu"] == 1582
    r = engine.run([engine.load(port, big)], [port], count=1000)
    assert_exact(r.streams[0], 1000, frame_bytes=1596)


# ---- a crashing engine host ------------------------------------------------------------------


def _runtime_dir(e: Engine) -> Path:
    """The DPDK runtime dir of the engine's host (its --file-prefix under /var/run/dpdk)."""
    eal_args = e.hello["eal_args"]
    return Path("/var/run/dpdk", eal_args[eal_args.index("--file-prefix") + 1])


def test_a_host_killed_mid_run_is_a_crash_and_the_next_call_restarts(tmp_path: Path) -> None:
    """SIGKILL (the OOM killer's way) while traffic runs: no log line from the host
    itself, yet the run ends in EngineCrashed within seconds, and leaves no DPDK
    runtime dir."""
    import signal

    with Engine(log_dir=str(tmp_path)) as e:
        port = e.port("net_ring0")
        stream = e.load(port, Stream(T4, name="killed"))
        pid = e.hello["pid"]
        runtime_dir = _runtime_dir(e)
        killed: list[float] = []

        def kill(_status: dict[str, Any]) -> None:
            if not killed:
                killed.append(time.monotonic())
                os.kill(pid, signal.SIGKILL)

        with pytest.raises(errors.EngineCrashed, match="died or hung during 'run_poll'"):
            e.run([stream], [port], duration_s=30.0, progress=kill)
        assert time.monotonic() - killed[0] < 10.0  # found at once, not after the 30 s
        assert not e.alive and not runtime_dir.exists()
        fresh = e.port("net_ring1")
        assert e.hello["pid"] != pid
        r = e.run([e.load(fresh, Stream(T4, name="after-kill"))], [fresh], count=1000)
        assert_exact(r.streams[0], 1000, frame_bytes=60)


def test_crash_reports_the_log_and_the_next_call_restarts(tmp_path: Path) -> None:
    with Engine(log_dir=str(tmp_path)) as e:
        old_port = e.port("net_ring0")
        old_stream = e.load(old_port, Stream(T4, name="before-crash"))
        old_pid = e.hello["pid"]
        runtime_dir = _runtime_dir(e)
        assert runtime_dir.is_dir()

        with pytest.raises(errors.EngineCrashed, match="(?s)during 'crash'.*EAL") as info:
            e.crash_for_test()
        assert "EAL" in info.value.log_tail
        assert "Segmentation fault" in info.value.log_tail  # faulthandler's report
        assert not e.alive
        assert not runtime_dir.exists()  # the dead host's DPDK runtime files are removed

        new_port = e.port("net_ring5")  # starts a fresh host
        assert e.alive and e.hello["pid"] != old_pid
        with pytest.raises(errors.NetloadConfigError, match="'net_ring0'.* has ended"):
            old_port.stats()
        with pytest.raises(errors.NetloadConfigError, match="'before-crash'.* has ended"):
            e.run([old_stream], [new_port], count=10)
        with pytest.raises(errors.NetloadConfigError, match="'net_ring0'.* has ended"):
            e.load(old_port, Stream(T4))
        old_port.close()  # harmless on a dead host's handle
        old_stream.free()

        r = e.run([e.load(new_port, Stream(T4, name="after-crash"))], [new_port], count=1000)
        assert_exact(r.streams[0], 1000, frame_bytes=60)
