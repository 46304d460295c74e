"""The fixtures on the loopback topology (two veth ends, no DUT): marker
defaults, the traffic builder, meters, wiring errors and the missing DUT."""

from __future__ import annotations

import os

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="loopback builds veth pairs: root (CI runs as root)"),
]

SUITE = """
import pytest
from pytest_netload import NetloadConfigError, assert_loss, udp


@pytest.mark.netload(rate="5kpps", pattern="cbr", duration="1s", flows=8)
def test_marker_defaults_drive_the_controller(netload_ports, rate_controller, traffic):
    tx, rx = netload_ports
    stream = traffic.udp(size=256)
    assert stream.frame_sizes == (256,) and len(stream.fields) == 1  # 8 flows: sport varies
    result = rate_controller(tx).run(stream)
    s = result.streams[0]
    assert s.offered_pps == pytest.approx(5000)
    assert 4000 <= s.result.tx_packets <= 6000      # about 1 s at 5 kpps
    assert_loss(s.result, max_lost=0)


def test_wires_and_both_directions(netload_ports, rate_controller, latency_meter):
    assert len(netload_ports.pairs) == 2
    back_tx, back_rx = netload_ports.wire(1)
    assert (back_tx, back_rx) == (netload_ports.rx, netload_ports.tx)
    stream = udp(size=64, name="back")
    with latency_meter(back_rx, stream) as lat:
        rate_controller(back_tx, rate="2kpps").run(stream, count=500)
    assert lat.tx_packets == 500 and lat.lost == 0 and lat.latency.count == 500
    with pytest.raises(NetloadConfigError, match="wire 5: topology .* has wires 0..1"):
        netload_ports.wire(5)


def test_meter_read_inside_its_block_is_an_error(netload_ports, latency_meter):
    tx, rx = netload_ports
    with latency_meter(rx, udp()) as lat:
        with pytest.raises(NetloadConfigError, match="read it after its `with` block"):
            lat.latency
    with pytest.raises(NetloadConfigError, match="saw no run of that stream"):
        lat.latency


def test_no_dut_on_loopback(dut):
    pass


@pytest.mark.rfc2544(trial_duration="1s")
def test_frames_above_the_mtu_are_refused_before_traffic(rfc2544, netload_engine):
    # (in the marker, frame_sizes=[64, 9000] fails collection: tests/plugin)
    runs = []
    netload_engine.observers.append(runs.append)
    with pytest.raises(NetloadConfigError, match="frame size 9000B carries 8982 bytes above L2, "
                       "more than the ports' MTU 1500"):
        rfc2544.throughput(frame_sizes=[64, 9000])
    assert runs == []
"""


def test_fixtures_on_loopback(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SUITE)
    result = pytester.runpytest_subprocess("--netload-topology=loopback", "-rs",
                                           "-p", "no:cacheprovider", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=4, skipped=1)
    result.stdout.fnmatch_lines(["*topology * has no DUT (ports wired straight)*"])


def test_trial_duration_option_overrides_markers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest
        from pytest_netload import udp

        @pytest.mark.netload(rate="2kpps", duration="30s")
        def test_short(netload_ports, rate_controller):
            result = rate_controller().run(udp())
            assert result.run.streams[0].tx_packets <= 1100   # 0.5 s, not 30 s
    """)
    result = pytester.runpytest_subprocess("--netload-topology=loopback",
                                           "--netload-trial-duration=0.5s",
                                           "-p", "no:cacheprovider", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)


def test_a_failed_verdict_writes_the_last_packets_as_pcap(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        from pytest_netload import assert_latency, udp

        def test_too_strict(netload_ports, rate_controller, latency_meter):
            tx, rx = netload_ports
            stream = udp(size=100, name="probe")
            with latency_meter(rx, stream) as lat:
                rate_controller(tx, rate="5kpps").run(stream, count=1000)
            assert_latency(lat, p50="< 1ns")

        def test_fine(netload_ports, rate_controller):
            rate_controller().run(udp(), count=10)
    """)
    result = pytester.runpytest_subprocess("--netload-topology=loopback", "-p", "no:cacheprovider",
                                           "--netload-report-dir=out", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1, failed=1)
    pcap = pytester.path / "out" / "captures" / "test_a_failed_verdict_writes_the_last_packets_as_pcap.py_test_too_strict.pcap"
    result.stdout.fnmatch_lines([f"netload: last packets of failed *test_too_strict: {pcap}"])
    from scapy.all import UDP, rdpcap

    frames = rdpcap(str(pcap))
    assert 1 <= len(frames) <= 256
    assert all(f[UDP].dport == 9 and len(f) == 96 for f in frames if UDP in f)
    assert not list((pytester.path / "out" / "captures").glob("*test_fine*"))
