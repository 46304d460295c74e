"""RFC 2544 throughput of a replayed capture's mix on a DUT of known capacity: the
netns-shaped router lets through a fixed number of bytes per second, so a mix of
frame sizes passes at (rate / 8) / (its mean frame length without FCS) frames per
second; the binary search over the replay's flows (each its share of the load, the
addresses the wire's) finds it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

RATE = 10_000_000
SHAPED = f"netns-shaped:rate_bps={RATE},limit_bytes={RATE // 8 // 100 + 10_000}"


def test_throughput_of_a_replayed_mix_is_the_shapers_byte_rate(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(f"""
        import pytest
        from scapy.layers.inet import IP, TCP, UDP
        from scapy.layers.l2 import Ether
        from scapy.packet import Raw
        from scapy.utils import wrpcap

        from calm import excused_by_a_busy_ceiling
        from pytest_netload import from_pcap

        def capture(path):
            frames = []
            for i in range(60):  # a site's mix: DNS-sized UDP, full TCP, small ACKs
                kind = i % 3
                l4 = (UDP(sport=2000 + i % 4, dport=53) / Raw(bytes(40)) if kind == 0 else
                      TCP(sport=40000, dport=80, flags="PA") / Raw(bytes(1200)) if kind == 1
                      else TCP(sport=40001, dport=80, flags="A"))
                frames.append(Ether() / IP(src="10.0.0.1", dst="10.1.0.2") / l4)
            wrpcap(str(path), frames)
            return path

        @pytest.mark.rfc2544(frame_sizes=["pcap"], trial_duration="2s", drain="100ms",
                             max_rate="6kpps", resolution=0.005, max_trials=12)
        def test_replayed_mix(rfc2544, tmp_path):
            replay = from_pcap(capture(tmp_path / "site.pcap"), addresses="wire")
            found = rfc2544.throughput(stream=replay)["pcap"]
            capacity = ({RATE} // 8) / (replay.mean_frame_size - 4)
            print("replay", replay.summary())
            print("throughput", found.throughput_pps, "capacity", capacity)
            assert found.mean_frame_size == pytest.approx(replay.mean_frame_size)
            with excused_by_a_busy_ceiling(found.trials, found.generator_ceiling_pps):
                assert abs(found.throughput_pps - capacity) / capacity < 0.03
    """)
    shutil.copy(Path(__file__).with_name("calm.py"), pytester.path)  # its busy-machine skip
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", "-rs",
                                           f"--netload-topology={SHAPED}", timeout=900)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)


def test_without_a_signature_flows_are_counted_through_a_router(
        pytester: pytest.Pytester) -> None:
    """The kernel router rewrites the MACs and the TTL (and the IPv4 checksum): a flow's
    addresses, protocol and ports stay, so RX counts every unsigned frame to its flow."""
    pytester.makepyfile("""
        from scapy.layers.inet import IP, TCP, UDP
        from scapy.layers.l2 import Ether
        from scapy.packet import Raw
        from scapy.utils import wrpcap

        from pytest_netload import from_pcap

        def test_unsigned(rate_controller, tmp_path):
            frames = [Ether() / IP(src="10.0.0.1", dst="10.1.0.2")
                      / (UDP(sport=3000 + i % 5, dport=53) if i % 2 else
                         TCP(sport=41000, dport=443, flags="A")) / Raw(bytes(100 + i % 3))
                      for i in range(50)]
            for i, f in enumerate(frames):
                f.time = i * 0.0005
            wrpcap(str(tmp_path / "site.pcap"), frames)
            replay = from_pcap(tmp_path / "site.pcap", signature=False, addresses="wire")
            result = rate_controller().replay(replay, loops=4)
            for part, s in zip(replay.parts, result.streams):
                assert (s.result.tx_packets, s.result.rx_packets) == (4 * part.packets,
                                                                      4 * part.packets)
            assert result.run.foreign == 0
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", "-rs",
                                           "--netload-topology=netns-router", timeout=600)
    result.assert_outcomes(passed=1)
