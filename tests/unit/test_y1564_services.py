"""Y.1564 services: units on every figure, classifiers, and the checks across services."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.units import Rate, frame_bits
from pytest_netload.y1564 import Classifier, Sac, Service, check_services


def test_a_service_keeps_its_rates_at_l2_and_its_sac_as_floats() -> None:
    s = Service("voice", cir="10Mbit/s", eir="5Mbit/s", cbs="12kB", ebs=12176, dscp=46,
                sac={"flr": "0.1%", "ftd": "10ms", "fdv": "500us", "availability": "99.9%"})
    assert (s.cir_bps, s.eir_bps, s.cbs_bytes, s.ebs_bytes) == (10e6, 5e6, 12000, 12176)
    assert s.frame_size == 512 and s.max_bps == 15e6 and s.burst_bytes == 24176
    assert s.sac == Sac(flr="0.1%", ftd="10ms", fdv="500us", availability="99.9%")
    assert (s.sac.flr_ratio, s.sac.ftd_s, s.sac.fdv_s, s.sac.availability_ratio) == \
        (0.001, 0.01, 0.0005, 0.999)
    assert s.classifier == Classifier(dscp=46)
    assert str(s.sac) == "FLR <= 0.1%, FTD <= 10ms, FDV <= 500us, availability >= 99.9%"
    d = s.as_dict()
    assert d["cir_bps"] == 10e6 and d["dscp"] == 46 and d["sac"]["flr_ratio"] == 0.001


def test_a_rate_given_at_l1_is_converted_to_l2_with_the_frame_size() -> None:
    s = Service("data", cir="10Mbit/s@l1", frame_size=64)
    assert s.cir_bps == pytest.approx(10e6 * 64 / 84)
    assert Service("x", cir=Rate(1, "Mbit/s")).cir_bps == 1e6
    assert Service("x", cir="1Mbit/s", cbs="12176B", ebs="1KiB").burst_bytes == 12176 + 1024


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"sac": {"ftd": 10}}, ["service 'voice'", "sac ftd=10 has no unit; write e.g. ftd='10ms'"]),
    ({"sac": {"ftd": "10"}}, ["sac ftd='10'", "no unit"]),
    ({"sac": {"fdv": 0.001}}, ["sac fdv=0.001", "no unit", "fdv='500us'"]),
    ({"sac": {"flr": 0.001}}, ["sac flr=0.001", "no unit", "flr='0.1%'"]),
    ({"sac": {"flr": "1e-3"}}, ["sac flr='1e-3'", "no unit"]),
    ({"sac": {"flr": "120%"}}, ["sac flr='120%'", "0%..100%"]),
    ({"sac": {"availability": 99.9}}, ["sac availability=99.9", "no unit", "'99.9%'"]),
    ({"sac": {"ftd": "10 parsecs"}}, ["sac ftd", "unknown unit"]),
    ({"sac": {"loss": "1%"}}, ["service 'voice'", "unknown keys ['loss']"]),
    ({"cir": 10_000_000}, ["service 'voice'", "cir=10000000 has no unit", "cir='10Mbit/s'"]),
    ({"cir": "10"}, ["cir='10' has no unit"]),
    ({"cir": "1kpps"}, ["cir='1kpps'", "packet rate", "bit rate"]),
    ({"cir": "50%"}, ["cir='50%'", "share of the line rate"]),
    ({"cir": "0Mbit/s"}, ["service 'voice': cir '0Mbit/s' is not above zero"]),
    ({"cir": None}, ["cir is missing"]),
    ({"eir": 5}, ["eir=5 has no unit", "eir='10Mbit/s'"]),
    ({"eir": "5kpps"}, ["eir='5kpps'", "packet rate"]),
    ({"cir": None, "eir": "5Mbit/s"}, ["service 'voice'", "EIR without CIR"]),
    ({"cir": "0Mbit/s", "eir": "5Mbit/s"}, ["EIR without CIR"]),
    ({"cbs": "12 furlongs"}, ["service 'voice': cbs='12 furlongs'", "12kB"]),
    ({"ebs": -1}, ["ebs=-1", "negative"]),
    ({"cbs": 1.5}, ["cbs=1.5", "burst size"]),
    ({"dscp": 64}, ["dscp=64", "0..63"]),
    ({"pcp": 8}, ["pcp=8", "0..7"]),
    ({"vlan": 0}, ["vlan=0", "1..4094"]),
    ({"vlan": 4095}, ["vlan=4095"]),
    ({"dport": 70000}, ["dport=70000", "0..65535"]),
    ({"dscp": True}, ["dscp=True"]),
    ({"frame_size": 20}, ["service 'voice': frame_size"]),
])
def test_bad_service_input_names_the_service_and_the_field(kwargs: dict[str, object],
                                                           words: list[str]) -> None:
    args: dict[str, object] = {"name": "voice", "cir": "10Mbit/s", **kwargs}
    with pytest.raises(NetloadConfigError) as info:
        Service(**args)  # type: ignore[arg-type]
    for word in words:
        assert word in str(info.value)


def test_a_bare_sac_names_its_field_without_a_service() -> None:
    with pytest.raises(NetloadConfigError, match=r"^sac ftd=10 has no unit; write e.g. "
                                                 r"ftd='10ms'"):
        Sac(ftd=10)
    assert Sac().empty and str(Sac()) == "no criteria"
    assert Sac(ftd="1.5ms").ftd_s == 0.0015


def test_check_services_accepts_dicts_and_services() -> None:
    out = check_services([{"name": "a", "cir": "1Mbit/s", "dscp": 10},
                          Service("b", cir="1Mbit/s", dscp=20)], 1e9)
    assert [s.name for s in out] == ["a", "b"] and all(isinstance(s, Service) for s in out)


@pytest.mark.parametrize(("services", "words"), [
    ([], ["services is empty"]),
    ("abc", ["services='abc'"]),
    ([{"cir": "1Mbit/s"}], ["has no name"]),
    ([{"name": "a", "cir": "1Mbit/s", "color": 1}], ["service 'a'", "unknown keys ['color']"]),
    ([{"name": "a", "cir": "1Mbit/s", "dscp": 1}, {"name": "a", "cir": "1Mbit/s", "dscp": 2}],
     ["'a' is used twice"]),
    ([{"name": "a", "cir": "1Mbit/s", "dscp": 46}, {"name": "b", "cir": "1Mbit/s", "dscp": 46}],
     ["'a' and 'b' overlap", "dscp both 46", "distinct dscp/pcp/vlan/dport"]),
    ([{"name": "a", "cir": "1Mbit/s", "vlan": 10}, {"name": "b", "cir": "1Mbit/s", "dscp": 46}],
     ["'a' and 'b' overlap", "vlan 10 and any", "dscp any and 46"]),
    ([{"name": "a", "cir": "1Mbit/s"}, {"name": "b", "cir": "1Mbit/s"}],
     ["'a' and 'b' overlap", "vlan both any"]),
    ([1], ["service 1 is a int"]),
])
def test_bad_service_sets_are_refused(services: object, words: list[str]) -> None:
    with pytest.raises(NetloadConfigError) as info:
        check_services(services, None)  # type: ignore[arg-type]
    for word in words:
        assert word in str(info.value)


def test_distinct_values_in_one_field_do_not_overlap() -> None:
    check_services([{"name": "a", "cir": "1Mbit/s", "vlan": 10, "dscp": 46},
                    {"name": "b", "cir": "1Mbit/s", "vlan": 20, "dscp": 46},
                    {"name": "c", "cir": "1Mbit/s", "vlan": 10, "dport": 5000, "dscp": 0}],
                   None)


def test_cir_and_eir_above_the_line_rate_are_compared_at_l1() -> None:
    # 64 B frames: 9.5 Gbit/s at L2 is 12.47 Gbit/s at L1, above a 10G port
    with pytest.raises(NetloadConfigError, match=r"service 'big': CIR .* at L1 with 64B frames, "
                                                 r"above the line rate"):
        check_services([{"name": "big", "cir": "9.5Gbit/s", "frame_size": 64}], 10e9)
    with pytest.raises(NetloadConfigError, match=r"service 'b': CIR\+EIR"):
        check_services([{"name": "b", "cir": "5Gbit/s", "eir": "5Gbit/s", "frame_size": 1518}],
                       10e9)
    check_services([{"name": "ok", "cir": "9.5Gbit/s", "frame_size": 1518}], 10e9)
    check_services([{"name": "any", "cir": "99Gbit/s"}], None)  # not checkable


def test_the_sum_of_the_cirs_must_fit_and_names_every_service() -> None:
    services = [{"name": n, "cir": "4Gbit/s", "frame_size": 1518, "dscp": d}
                for n, d in (("a", 1), ("b", 2), ("c", 3))]
    with pytest.raises(NetloadConfigError) as info:
        check_services(services, 10e9)
    text = str(info.value)
    assert "CIRs add up to" in text and all(f"'{n}'" in text for n in "abc")
    for bad in (0, -1.0, float("nan"), "10G"):
        with pytest.raises(NetloadConfigError, match="line_rate_bps"):
            check_services(services[:1], bad)  # type: ignore[arg-type]


@given(st.integers(64, 9604), st.floats(1e3, 1e10))
def test_l1_rate_is_the_l2_rate_times_the_layer_ratio(size: int, bps: float) -> None:
    s = Service("s", cir=Rate(bps, "bit/s"), frame_size=size)
    assert s.l1_bps(s.cir_bps) == pytest.approx(bps * frame_bits(size, "l1") / (8 * size))


fields = st.one_of(st.none(), st.integers(0, 3))


@given(st.tuples(fields, fields, fields, fields), st.tuples(fields, fields, fields, fields))
def test_classifiers_overlap_exactly_when_some_frame_matches_both(a: tuple, b: tuple) -> None:
    ca, cb = Classifier(*a), Classifier(*b)
    frames = [(v, p, d, u) for v in range(4) for p in range(4) for d in range(4)
              for u in range(4)]

    def match(c: tuple, f: tuple) -> bool:
        return all(x is None or x == y for x, y in zip(c, f, strict=True))

    both = any(match(a, f) and match(b, f) for f in frames)
    assert (ca.overlap(cb) is not None) == both == (cb.overlap(ca) is not None)
