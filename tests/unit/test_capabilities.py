"""What a topology can test (topology/capabilities.py) and what a test asks of it."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology import PortSpec, Topology, Wire
from pytest_netload.topology.capabilities import Capabilities, check_requirements

BOTH = (Wire("p0", "p1"), Wire("p1", "p0"))


def _topology(ports: int = 2, wires: tuple[Wire, ...] = BOTH, **kw: Any) -> Topology:
    return Topology("lab", tuple(PortSpec(f"p{i}", f"net_null{i}", None) for i in range(ports)),
                    wires, **kw)


def test_the_shape_is_read_from_the_topology() -> None:
    has = Capabilities.of(_topology(4, line_rate_bps=10_000_000_000))
    assert (has.ports, has.both_ways, has.line_rate_bps) == (4, True, 10_000_000_000)
    assert not (has.dut or has.dut_counters or has.dut_reset)
    assert Capabilities.of(_topology(wires=(Wire("p0", "p1"),))).both_ways is False
    assert Capabilities.of(_topology(1, wires=(Wire("p0", "p0"),))).both_ways is True  # hairpin


@pytest.mark.parametrize(("info", "expected"), [
    ({"cir_bps": "10000000", "cbs_bytes": "12500"},  # netns-policed
     {"policer_bps": 10_000_000, "policer_cbs_bytes": 12_500}),
    ({"policer_cir_bps": "200000000", "policer_cbs_bytes": "250000"},  # ovs-dpdk
     {"policer_bps": 200_000_000, "policer_cbs_bytes": 250_000}),
    ({"rate_bps": "20000000"}, {"shaper_bps": 20_000_000}),
    ({"rate_bps": "10000000", "burst_bytes": "5000", "limit_bytes": "22500"},  # netns-shaped
     {"shaper_bps": 10_000_000, "shaper_queue_bytes": 22_500}),
    ({"port_rate_bps": "none"}, {}),  # netns-bridge unshaped
    ({"port_rate_bps": "5000000"}, {"shaper_bps": 5_000_000}),
    ({"port_rate_bps": "5000000", "limit_bytes": "15625"},  # netns-bridge's port shapers
     {"shaper_bps": 5_000_000, "shaper_queue_bytes": 15_625}),
    ({"limit_bytes": "15625"}, {}),  # a queue is a shaper's only where its rate is known
    ({"loss_ratio": "0.01"}, {"loss_ratio": 0.01}),  # netns-lossy
    ({"name": "netns-router"}, {}),
])
def test_a_built_in_dut_declares_what_its_info_says(info: dict[str, str],
                                                    expected: dict[str, Any]) -> None:
    has = Capabilities.of(_topology(), dut_info=info, dut=True, dut_counters=True,
                          dut_reset=True)
    got = {k: getattr(has, k) for k in ("policer_bps", "policer_cbs_bytes", "shaper_bps",
                                        "shaper_queue_bytes", "loss_ratio")
           if getattr(has, k) is not None}
    assert got == expected


def test_a_file_s_declaration_wins_over_dut_info() -> None:
    topology = _topology(capabilities={"policer_bps": 5_000_000})
    assert Capabilities.of(topology, dut_info={"cir_bps": "10000000"}).policer_bps == 5_000_000


def test_what_is_missing_and_what_there_is_in_words() -> None:
    has = Capabilities.of(_topology(wires=(Wire("p0", "p1"),)),
                          dut_info={"cir_bps": "10000000", "cbs_bytes": "12500"}, dut=True)
    assert has.describe() == ("2 ports wired one way, no line rate, a DUT with commands, "
                              "a policer at 10.00 Mbit/s (CBS 12,500 B)")
    needs = check_requirements({"ports": 4, "both_ways": True, "line_rate": True,
                                "dut": True, "dut_counters": True, "dut_reset": True,
                                "policer": "20Mbit/s", "shaper": True, "loss": True})
    assert has.missing(needs) == [
        "4 ports", "ports wired both ways", "a line rate",
        "the DUT's counters (a built-in DUT or a pytest_netload_dut_counters hook)",
        "a DUT reset (a built-in DUT or a pytest_netload_dut_reset hook)",
        "a policer at 20.00 Mbit/s", "a shaper of known rate",
        "a DUT that drops a known share of frames"]
    assert has.missing(check_requirements({"ports": 2, "dut": True, "policer": True})) == []
    # a CIR within 1 % matches: 10 Mbit/s declared, 10.05 asked
    assert has.missing(check_requirements({"policer": "10.05Mbit/s"})) == []
    assert has.missing(check_requirements({"policer": "10.2Mbit/s"})) == [
        "a policer at 10.20 Mbit/s"]
    assert Capabilities.of(_topology()).describe().endswith(
        "no DUT commands, counters or reset, no declared policer, shaper or loss")


def test_a_shaper_is_described_with_its_queue_where_it_is_known() -> None:
    shaped = Capabilities.of(_topology(), dut_info={"rate_bps": "10000000",
                                                    "limit_bytes": "35000"})
    assert shaped.describe().endswith(", a shaper at 10.00 Mbit/s (queue 35,000 B)")
    rate_only = Capabilities.of(_topology(capabilities={"shaper_bps": 10_000_000}))
    assert rate_only.describe().endswith(", a shaper at 10.00 Mbit/s")


def test_false_asks_for_nothing() -> None:
    assert check_requirements({"dut": False, "both_ways": False, "policer": False}) == {}


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((), {"ports": 0}, "ports=0: give a number of ports"),
    ((), {"ports": True}, "ports=True: give a number of ports"),
    ((), {"policer": "10kpps"}, "policer = '10kpps' is not a bit rate"),
    ((), {"policer": -1}, "give a bit rate above zero"),
    ((), {"dut": "yes"}, "dut='yes': give True (needed) or False"),
    ((), {"switch": True}, "no requirement 'switch'; the requirements are ports, both_ways"),
    (("policer",), {}, "give requirements as keywords"),
])
def test_a_bad_requirement_is_named(args: tuple[Any, ...], kwargs: dict[str, Any],
                                    message: str) -> None:
    with pytest.raises(NetloadConfigError) as info:
        check_requirements(kwargs, args)
    assert message in str(info.value)


def test_the_model_refuses_unknown_capabilities() -> None:
    with pytest.raises(NetloadConfigError, match="capabilities = .*must map some of"):
        _topology(capabilities={"ports": 4})
