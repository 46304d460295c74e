"""OVS-DPDK with its policer at 200 Mbit/s is the suite's default topology (an explicit
--netload-topology still wins): the policer, not the generator, is then the limit, and
the throughput has a known answer."""

POLICED_OVS = "ovs-dpdk:policer_cir_bps=200000000"


def pytest_configure(config):
    if config.getoption("netload_topology", None) in (None, "netns-router"):
        config.option.netload_topology = POLICED_OVS
