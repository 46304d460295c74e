"""ECMP: flows spread over the next hops, and a route to one next hop uses it alone, on the
built-in ECMP router (a few seconds, root needed): `.venv/bin/python -m pytest
conftest_examples/ecmp`; on a DUT of your own: `... --netload-topology=lab.toml`, where
p0 sends and every other port is a member (an ECMP next hop or a LAG member).

netns-router:ecmp=4 routes 198.19.128.0/17 over four next hops, one generator port each,
with the kernel's L4 multipath hash: every wire from p0 addresses 198.19.128.1, so a
stream of many UDP source ports is hashed over the members. The spread is judged by a
chi-square test over the stream's 128 flows (docs/functional.md, "Where frames land").
With `--netload-topology=netns-router:ecmp=4,hash=l3` one address pair is one flow to
the hash, every frame lands on one member, and test_flows_spread_over_every_member fails:
the known answer of a DUT that does not spread.
"""

import pytest

from pytest_netload import assert_delivered_to, assert_not_delivered, assert_spread, udp

pytestmark = [pytest.mark.netload_topology("netns-router:ecmp=4", ids=["ecmp"], default=True),
              pytest.mark.netload_requires(ports=3)]


def test_flows_spread_over_every_member(port_counts):
    counts = port_counts(udp(flows=128, name="128 flows"))  # on every port but p0
    assert_spread(counts, over=counts.ports)


def test_one_flow_stays_on_one_member(port_counts):
    counts = port_counts(udp(name="one flow"), count=1_000)
    member = max(counts.counts, key=counts.counts.get)
    assert_delivered_to(counts, member)  # and on no other member
    for other in counts.ports:
        if other != member:
            assert_not_delivered(counts, other)
