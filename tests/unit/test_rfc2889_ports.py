"""The RFC 2889 port-count usage error names the procedure, the counts and the fix;
the package exports what the bench binds to."""

from __future__ import annotations

import pytest

import pytest_netload.rfc2889 as rfc2889
from pytest_netload.errors import NetloadConfigError
from pytest_netload.rfc2889 import MIN_PORTS, check_port_count


def test_too_few_ports_name_the_procedure_the_ports_and_the_fix() -> None:
    with pytest.raises(NetloadConfigError) as info:
        check_port_count(4, ["p0", "p1"], "fully_meshed")
    assert str(info.value) == (
        "rfc2889 fully meshed needs 4 ports; the topology has 2 (p0, p1): use a topology "
        "with at least 4 ports, e.g. --netload-topology=netns-bridge:ports=4")
    with pytest.raises(NetloadConfigError, match=r"address caching capacity needs 3 ports; "
                                                 r"the topology has 2: .*ports=3"):
        check_port_count(3, 2, "address_caching_capacity")


def test_enough_ports_pass() -> None:
    assert check_port_count(4, ["p0", "p1", "p2", "p3", "p4"], "congestion_control") == 4
    assert check_port_count(2, 2, "broadcast_forwarding") == 2
    assert check_port_count(8, 8, "fully_meshed") == 8


def test_each_procedures_minimum() -> None:
    assert MIN_PORTS == {"fully_meshed": 2, "congestion_control": 4,
                         "address_caching_capacity": 3, "address_learning_rate": 3,
                         "broadcast_forwarding": 2, "partially_meshed": 3,
                         "maximum_forwarding_rate": 2, "errored_frame_filtering": 2}
    for procedure, least in MIN_PORTS.items():
        with pytest.raises(NetloadConfigError, match=f"ports={least - 1}: rfc2889 "):
            check_port_count(least - 1, 64, procedure)
    with pytest.raises(NetloadConfigError, match="congestion control runs over exactly 4"):
        check_port_count(5, 8, "congestion_control")


@pytest.mark.parametrize(("args", "field"), [
    ((2, 2, "mesh"), "procedure='mesh'"), ((2.0, 2, "fully_meshed"), "ports=2.0"),
    ((True, 2, "fully_meshed"), "ports=True"), ((2, "p0 p1", "fully_meshed"), "available="),
])
def test_bad_input_names_the_field(args: tuple, field: str) -> None:
    with pytest.raises(NetloadConfigError, match=field):
        check_port_count(*args)


def test_the_package_exports_every_name_it_lists() -> None:
    for name in rfc2889.__all__:
        assert hasattr(rfc2889, name), name
    assert rfc2889.TRIAL_S == 30.0
    assert rfc2889.EXPECTED_CONGESTED_LOSS == pytest.approx(1 / 3)
