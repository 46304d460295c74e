"""The DPDK-speed DUT is the suite's default topology (an explicit
--netload-topology still wins)."""


def pytest_configure(config):
    if config.getoption("netload_topology", None) in (None, "netns-router"):
        config.option.netload_topology = "dpdk-testpmd"
