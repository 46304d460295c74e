"""A DUT regression suite in the shape users write: RFC 2544 throughput per
frame size, latency and loss under Poisson load.

Runs on any topology: `pytest conftest_examples/router` builds the
netns-router DUT (root needed); `--netload-topology=lab.toml` runs the same
tests on real NICs. Durations here are short so the suite finishes in under
a minute; a vendor acceptance run uses the RFC's 60 s trials (drop
`trial_duration`, or pass --netload-trial-duration).
"""

import pytest

from pytest_netload import assert_latency, assert_loss, assert_throughput, udp


@pytest.mark.rfc2544(frame_sizes=[64, 512], trial_duration="1s", drain="200ms",
                     max_trials=6, resolution=0.1, loss_tolerance=0)
def test_router_throughput(rfc2544):
    result = rfc2544.throughput()
    assert_throughput(result, at_least="10kpps", frame_size=64)
    assert_throughput(result, at_least="10kpps", frame_size=512)


def test_latency_under_load(netload_ports, rate_controller, latency_meter):
    tx, rx = netload_ports
    stream = udp(size=128, flows=1024)
    with latency_meter(rx, stream) as lat:
        rate_controller(tx, pattern="poisson", rate="10kpps").run(stream, duration="2s")
    assert_latency(lat, p50="< 5ms", p99="< 50ms")
    assert_loss(lat, at_most=1e-3)
