"""An RFC 2544 §26 run against the DUT, short enough for a demo (about two minutes).

`.venv/bin/python -m pytest conftest_examples/rfc2544` runs it on the built-in
netns-router (root needed) and writes netload-results/results.json. For an
acceptance run drop `trial_duration` and the shortened repetitions: the
procedures' defaults are the RFC's (60 s trials, 20 latency trials of 120 s,
50 back-to-back repetitions).
"""

import time

import pytest

from pytest_netload import assert_latency, assert_loss, assert_throughput

SIZES = [64, 512, 1518]
# 8 loads reach a bracket within 2 % of its lower bound (0.5 % would take 10)
SHORT = dict(trial_duration="1s", drain="200ms", max_trials=8, resolution=0.02, loss_tolerance=0)


@pytest.mark.rfc2544(frame_sizes=SIZES, **SHORT)
def test_throughput_latency_and_loss(rfc2544, frame_size):
    throughput = rfc2544.throughput()
    assert_throughput(throughput, at_least="10kpps")
    latency = rfc2544.latency(throughput=throughput, trials=3)[0]
    assert_latency(latency, p50="< 10ms")
    assert_loss(latency, at_most=0.01)
    rfc2544.frame_loss()


@pytest.mark.rfc2544(frame_sizes=[64], **SHORT)
def test_back_to_back(rfc2544):
    result = rfc2544.back_to_back(repetitions=3, burst="0.1s")[0]
    assert result.spread.min > 0


@pytest.mark.netload_requires(dut=True)  # a Linux router: reset by its sysctl
@pytest.mark.rfc2544(frame_sizes=[64], **SHORT)
def test_reset(rfc2544, dut):
    def reset():  # the router stops forwarding for half a second
        dut.run(["sysctl", "-qw", "net.ipv4.ip_forward=0"])
        time.sleep(0.5)
        dut.run(["sysctl", "-qw", "net.ipv4.ip_forward=1"])

    result = rfc2544.reset(reset, load="20kpps", at="1s", duration="3s")[0]
    assert result.recovered
    assert 0.4 <= result.reset_s.mean <= 1.5
