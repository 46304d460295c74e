"""A replayed capture as the traffic of RFC 2544 procedures, in sessions on the fake
engine: its flows are the trial's streams (each its share of the load, accounted on
its own), at frame size "pcap", and the records and the report say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pytest_netload.reports.html  # noqa: F401  (matplotlib before any in-process run)

from labfiles import fake_lab

pytest_plugins = ["pytester"]

FAKE = "--netload-engine=fake:capacity_pps=60000,delay_s=50e-6,buffer_frames=1000"

CAPTURE = """
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import wrpcap


def write(path):
    frames = []
    for i in range(30):  # a mix: small UDP, large TCP, one in three of each flow
        l4 = UDP(sport=1000 + i % 3, dport=53) if i % 2 else TCP(sport=40000, dport=80)
        frames.append(Ether(src="0a:00:00:00:00:01", dst="0a:00:00:00:00:02")
                      / IP(src="10.0.0.1", dst="10.1.0.2") / l4
                      / Raw(bytes(30 if i % 2 else 1000)))
    wrpcap(str(path), frames)
    return path
"""


def test_throughput_of_a_replayed_mix(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(capture=CAPTURE)
    pytester.makepyfile(test_replay="""
        import pytest
        from pytest_netload import assert_throughput, from_pcap
        from capture import write

        @pytest.mark.rfc2544(frame_sizes=["pcap"], trial_duration="2s")
        def test_mix(rfc2544, tmp_path):
            replay = from_pcap(write(tmp_path / "site.pcap"), addresses="wire")
            tp = rfc2544.throughput(stream=replay)
            t = tp["pcap"].passing_trial
            assert abs(tp["pcap"].throughput_pps - 60_000) / 60_000 < 0.01
            assert tp["pcap"].mean_frame_size == pytest.approx(replay.mean_frame_size)
            assert_throughput(tp, at_least="59kpps")

        @pytest.mark.rfc2544(trial_duration="2s")
        def test_wrong_size(rfc2544, tmp_path):
            rfc2544.throughput([128], stream=from_pcap(write(tmp_path / "site.pcap")))
    """)
    result = pytester.runpytest(FAKE, f"--netload-topology={_topology(pytester)}",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*asks for frame size 128: give frame_sizes=?'pcap'?*"])
    assert (pytester.path / "netload-results" / "report.html").exists()
    doc = json.loads((pytester.path / "netload-results" / "results.json").read_text())
    (test,) = [t for t in doc["tests"] if t["nodeid"].endswith("test_mix")]
    (m,) = [m for m in test["measurements"] if m["kind"] == "throughput"]
    streams = m["traffic"]["streams"]
    assert [s["kind"] for s in streams] == ["template"] * 4
    assert [s["name"].split(" ")[0] for s in streams] == ["pcap#1", "pcap#2", "pcap#3",
                                                          "pcap#4"]
    assert sum(s["share"] for s in streams) == pytest.approx(1.0)
    assert streams[0]["share"] == pytest.approx(0.5)  # the TCP flow: 15 of the 30 frames


def _topology(pytester: pytest.Pytester) -> Path:
    path = pytester.path / "lab.toml"
    path.write_text(fake_lab("lab-replay"))
    return path


def test_rate_controller_replays_at_the_captures_timing_and_at_a_rate(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(capture=CAPTURE)
    pytester.makepyfile(test_timing="""
        import pytest
        from pytest_netload import from_pcap
        from capture import write

        def test_timing(rate_controller, tmp_path):
            replay = from_pcap(write(tmp_path / "site.pcap"))
            r = rate_controller().replay(replay, loops=2, timing_samples=100)
            assert [s.result.tx_packets for s in r.streams] == [2 * p.packets
                                                                 for p in replay.parts]
            assert r.run.lost == 0 and r.pattern == "capture"
            first = r.streams[1].result  # the second flow starts one frame in
            assert first.sample_tx_ns[0] == pytest.approx(replay.parts[1].times_ns[0],
                                                          abs=1000)
            fast = rate_controller().replay(replay, speed=2)
            assert fast.pattern == "capture x2"
            paced = rate_controller().run(replay, "10kpps", duration="1s")
            assert sum(s.result.tx_packets for s in paced.streams) == pytest.approx(10_000,
                                                                                    abs=4)
            bare = from_pcap(write(tmp_path / "site.pcap"), signature=False)
            r = rate_controller().replay(bare)
            assert [s.result.rx_packets for s in r.streams] == [p.packets for p in bare.parts]
            assert all(s.result.latency_samples == 0 for s in r.streams)
    """)
    result = pytester.runpytest(FAKE, f"--netload-topology={_topology(pytester)}",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
