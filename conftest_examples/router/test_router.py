"""A DUT regression suite in the shape users write for a router: RFC 2544 throughput
in both directions at once, latency and loss under Poisson load, over whichever IP
family the topology's ports have.

Nothing on the router is static: the generator answers its ARP requests (IPv6:
neighbour solicitations) and resolves its MACs when the session opens the ports.

- `sudo .venv/bin/python -m pytest conftest_examples/router` builds netns-router over IPv4;
- `... --netload-topology=netns-router:family=ipv6` runs the same tests over IPv6;
- `... --netload-topology=lab.toml` runs them on real NICs (docs/real-dut.md).

Durations here are short so the suite finishes in under a minute; a vendor
acceptance run uses the RFC's 60 s trials (drop `trial_duration`, or pass
--netload-trial-duration). 128 B is the smallest size tested, since IPv6 with UDP
and the generator's signature needs at least 66 B frames.
"""

import pytest

from pytest_netload import assert_latency, assert_loss, assert_throughput, udp


@pytest.mark.netload_requires(both_ways=True)
@pytest.mark.rfc2544(frame_sizes=[128, 512], direction="both", trial_duration="1s",
                     drain="200ms", max_trials=6, resolution=0.1, loss_tolerance=0)
def test_router_throughput_both_ways(rfc2544):
    result = rfc2544.throughput()
    assert_throughput(result, at_least="10kpps", frame_size=128)
    assert_throughput(result, at_least="10kpps", frame_size=512)


def test_router_was_resolved_not_configured(netload_topology, netload_ports):
    """The topology gave the router's addresses, not its MACs: ARP/ND found them."""
    for given, used in zip(netload_topology.ports, netload_ports.topology.ports):
        assert given.peer_ip is not None, f"port {given.name} has no peer_ip"
        assert used.peer_mac is not None, f"port {given.name}: no MAC for {given.peer_ip}"


def test_latency_under_load(netload_ports, rate_controller, latency_meter):
    tx, rx = netload_ports
    stream = udp(size=128, flows=1024)
    with latency_meter(rx, stream) as lat:
        rate_controller(tx, pattern="poisson", rate="10kpps").run(stream, duration="2s")
    assert_latency(lat, p50="< 5ms", p99="< 50ms")
    assert_loss(lat, at_most=1e-3)
