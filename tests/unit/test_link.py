"""Link state, the pure parts: reading a port's link (a fake sysfs), placing a drop
between two samples, the invalid reason, the bounded wait, the speed check, the wait
after a trial that lost its link, and the settings. The real links (veth, netns-router)
are tests/integration/test_link_state.py."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_netload.bench.link import (
    LINK_TIMEOUT_S,
    LinkPolicy,
    check_port_link,
    link_timeout_seconds,
    recover_links,
    speed_mismatch,
    speed_note,
    wait_link_up,
)
from pytest_netload.bench.validity import generator_failure, link_down_reason, link_reason
from pytest_netload.engine.client import link_events
from pytest_netload.engine.link import LinkWatch, dpdk_link, kernel_link
from pytest_netload.errors import (
    InvalidTrial,
    LinkSpeedWarning,
    NetloadConfigError,
    NetloadEnvironmentError,
)
from pytest_netload.plugin.options import _flag
from pytest_netload.reports.schema import ResultsFileError, validate
from pytest_netload.rfc2544.trial import TrialResult

SAMPLE = Path(__file__).parent.parent / "data" / "results-sample.json"


# ---- reading a link ------------------------------------------------------------------------


def _iface(root: Path, name: str, *, carrier: str | None = "1", operstate: str = "up",
           speed: str | None = "10000", device: bool = False, downs: int = 0) -> None:
    base = root / name
    base.mkdir(parents=True)
    if carrier is not None:  # an interface that is admin down has no readable carrier
        (base / "carrier").write_text(carrier + "\n")
    (base / "operstate").write_text(operstate + "\n")
    if speed is not None:
        (base / "speed").write_text(speed + "\n")
    (base / "carrier_down_count").write_text(f"{downs}\n")
    if device:
        (base / "device").mkdir()


def test_a_veth_is_up_by_its_carrier_and_has_no_line_rate(tmp_path: Path) -> None:
    _iface(tmp_path, "veth0", speed="10000", downs=3)  # veth claims 10000 Mbit/s
    link = kernel_link("veth0", root=str(tmp_path))
    assert link["up"] is True and link["carrier"] is True and link["operstate"] == "up"
    assert link["speed_mbps"] is None
    assert "veth0 is a virtual interface" in link["speed_note"]
    assert link["carrier_down_count"] == 3 and link["source"] == "kernel interface veth0"


def test_a_nic_reports_its_negotiated_speed(tmp_path: Path) -> None:
    _iface(tmp_path, "eth1", speed="25000", device=True)
    link = kernel_link("eth1", root=str(tmp_path))
    assert link["speed_mbps"] == 25000 and link["speed_note"] is None


@pytest.mark.parametrize("speed", ["-1", "0", "garbage", None])
def test_a_nic_without_a_speed_says_so(tmp_path: Path, speed: str | None) -> None:
    _iface(tmp_path, "eth1", speed=speed, device=True)
    link = kernel_link("eth1", root=str(tmp_path))
    assert link["speed_mbps"] is None and "reports no speed for eth1" in link["speed_note"]


def test_no_carrier_and_admin_down_are_down(tmp_path: Path) -> None:
    _iface(tmp_path, "veth0", carrier="0", operstate="lowerlayerdown")
    _iface(tmp_path, "veth1", carrier=None, operstate="down")  # admin down: EINVAL
    a = kernel_link("veth0", root=str(tmp_path))
    b = kernel_link("veth1", root=str(tmp_path))
    assert (a["up"], a["carrier"], a["operstate"]) == (False, False, "lowerlayerdown")
    assert (b["up"], b["carrier"], b["operstate"]) == (False, None, "down")


def test_a_missing_interface_is_down(tmp_path: Path) -> None:
    link = kernel_link("gone0", root=str(tmp_path))
    assert link["up"] is False and link["operstate"] == "absent"


def test_dpdk_link_trusts_only_a_pci_devices_speed() -> None:
    pci = dpdk_link("0000:01:00.0", {"driver": "net_ice", "link_up": True,
                                     "link_speed_mbps": 100000})
    assert pci["up"] and pci["speed_mbps"] == 100000 and pci["speed_note"] is None
    vdev = dpdk_link("net_null0", {"driver": "net_null", "link_up": True,
                                   "link_speed_mbps": 10000})
    assert vdev["speed_mbps"] is None and "net_null is a virtual device" in vdev["speed_note"]
    unknown = dpdk_link("01:00.1", {"driver": "net_ixgbe", "link_up": False,
                                    "link_speed_mbps": 0})
    assert not unknown["up"] and unknown["speed_mbps"] is None
    assert "reports no speed" in unknown["speed_note"]


# ---- placing a drop --------------------------------------------------------------------------


class Script:
    """A port's link as a list of (up, carrier_down_count) read one per sample."""

    def __init__(self, states: dict[int, list[tuple[bool, int]]]) -> None:
        self.states = states

    def __call__(self, port_id: int) -> dict[str, Any]:
        up, count = self.states[port_id].pop(0)
        return {"up": up, "carrier_down_count": count, "operstate": "up" if up else "down"}


def _watch(states: dict[int, list[tuple[bool, int]]], times: list[float]) -> LinkWatch:
    clock = iter(times)
    return LinkWatch(states, Script(states), start=10.0, clock=lambda: next(clock))


def test_a_drop_is_placed_between_the_last_up_sample_and_the_first_down_one() -> None:
    # samples at t = 0, 0.1, ... (clock 10.0 is the trial's start)
    watch = _watch({1: [(True, 0), (True, 0), (False, 1), (False, 1), (True, 1)],
                    2: [(True, 0)] * 5}, [10.0, 10.1, 10.2, 10.3, 10.4])
    for _ in range(4):
        watch.sample()
    assert watch.events == [
        {"event": "link_down", "port_id": 1, "t_s": 0.2, "since_s": 0.1, "operstate": "down"},
        {"event": "link_up", "port_id": 1, "t_s": 0.4, "since_s": 0.3},
    ]


def test_a_flap_between_two_samples_shows_in_the_carrier_counter() -> None:
    watch = _watch({1: [(True, 0), (True, 0), (True, 1)]}, [10.0, 10.1, 10.2])
    watch.sample()
    watch.sample()
    assert [(e["event"], e["t_s"], e["since_s"]) for e in watch.events] == [
        ("link_down", 0.2, 0.1), ("link_up", 0.2, 0.1)]


def test_a_link_down_when_the_run_starts() -> None:
    watch = _watch({1: [(False, 0), (False, 0)]}, [9.99, 10.1])  # before the start delay
    watch.sample()
    assert watch.events == [{"event": "link_down", "port_id": 1, "t_s": 0.0,
                             "since_s": None, "at_start": True, "operstate": "down"}]


def test_a_port_closed_mid_run_is_no_event() -> None:
    def read(port_id: int) -> dict[str, Any]:
        if read.calls:  # type: ignore[attr-defined]
            raise KeyError(port_id)
        read.calls += 1  # type: ignore[attr-defined]
        return {"up": True, "carrier_down_count": 0}

    read.calls = 0  # type: ignore[attr-defined]
    watch = LinkWatch([1], read, start=0.0, clock=lambda: 1.0)
    watch.sample()
    assert watch.events == []


def test_events_name_the_port_as_the_topology_does() -> None:
    p1 = SimpleNamespace(label="p1", device="net_af_packet1,iface=g1")
    events = link_events([{"event": "link_down", "port_id": 4, "t_s": 1.3, "since_s": 1.2},
                          {"event": "link_up", "port_id": 9, "t_s": 1.5, "since_s": 1.4}],
                         {4: p1})  # type: ignore[dict-item]
    assert events[0] == {"event": "link_down", "port": "p1",
                         "device": "net_af_packet1,iface=g1", "t_s": 1.3, "since_s": 1.2}
    assert events[1]["port"] == "9" and events[1]["device"] is None


# ---- the invalid reason ------------------------------------------------------------------


DOWN = {"event": "link_down", "port": "p1", "t_s": 1.3, "since_s": 1.2}


@pytest.mark.parametrize(("events", "reason"), [
    ([DOWN, {"event": "link_up", "port": "p1", "t_s": 1.7, "since_s": 1.6}],
     "link down on p1 at t=1.30s (up again by t=1.70s)"),
    ([DOWN], "link down on p1 at t=1.30s (still down when the trial ended)"),
    ([DOWN, {"event": "link_up", "port": "p1", "t_s": 1.3, "since_s": 1.2}],
     "link down on p1 at t=1.30s (a flap: down and up again since t=1.20s)"),
    ([{"event": "link_down", "port": "p0", "t_s": 0.0, "since_s": None, "at_start": True,
       "operstate": "lowerlayerdown"}],
     "link down on p0 when the trial started (lowerlayerdown)"),
    ([{"event": "link_up", "port": "p1", "t_s": 0.4, "since_s": 0.3}], None),
    ([], None),
])
def test_the_reason_names_the_port_and_the_time(events: list[dict[str, Any]],
                                                reason: str | None) -> None:
    assert link_down_reason(events) == reason


def test_an_up_event_of_another_port_does_not_end_the_drop() -> None:
    events = [DOWN, {"event": "link_up", "port": "p0", "t_s": 1.5, "since_s": 1.4}]
    assert link_down_reason(events) == \
        "link down on p1 at t=1.30s (still down when the trial ended)"


def test_counters_catch_what_no_sample_placed() -> None:
    ports = {"net_af_packet0,iface=g0": {"iface_carrier_down": 1, "link_up_before": 1,
                                         "link_up_after": 1}}
    assert "lost its link during the trial" in (link_reason(ports) or "")
    assert link_reason(ports, [DOWN]).startswith("link down on p1 at t=")  # type: ignore[union-attr]
    assert link_reason({"d": {"link_up_before": 1, "link_up_after": 1}}) is None


def _stream(tx: int, rx: int) -> Any:
    return SimpleNamespace(tx_packets=tx, rx_packets=rx, duplicates=0, tx_max_lag_ns=0,
                           tx_lagged_bursts=0, tx_pps=tx / 2.0, tx_end_reason="duration",
                           tx_unsent=0, tx_alloc_failures=0, tx_off_cpu_ns=0,
                           tx_preemptions=0)


def _run(events: tuple[dict[str, Any], ...] = ()) -> Any:
    return SimpleNamespace(ports={}, link_events=events, generator_drops=0, foreign=0,
                           interrupted=False)


def test_a_lost_link_is_named_before_the_shortfall_it_caused() -> None:
    run = _run((DOWN,))
    assert generator_failure(run, _stream(20_000, 10_000), 40_000, 20_000, 2.0) == \
        "link down on p1 at t=1.30s (still down when the trial ended)"
    assert generator_failure(_run(), _stream(40_000, 40_000), 40_000, 20_000, 2.0) is None


def test_generator_drops_invalidate_only_a_trial_that_lost_frames() -> None:
    """A kernel under an AF_PACKET port counts frames it has no protocol for (QinQ) as
    rx_dropped although the engine received them: with nothing lost, the trial stands."""
    run = SimpleNamespace(ports={}, link_events=(), generator_drops=40_000, foreign=0,
                          interrupted=False)
    assert generator_failure(run, _stream(40_000, 40_000), 40_000, 20_000, 2.0) is None
    assert generator_failure(run, _stream(40_000, 39_990), 40_000, 20_000, 2.0) == (
        "the generator's own RX ports dropped 40,000 frames and 10 of the stream's were lost "
        "(imissed / rx_nombuf / kernel drops)")


def test_the_trial_record_keeps_its_events_and_the_schema_reads_them() -> None:
    up = {"event": "link_up", "port": "p1", "device": "net_af_packet1,iface=g1",
          "t_s": 1.7, "since_s": 1.6}
    trial = TrialResult(64, 64.0, 20_000.0, 2.0, 40_000, 30_000, valid=False,
                        invalid_reason=link_down_reason([DOWN, up]), events=(DOWN, up))
    record = trial.as_dict()
    assert record["events"] == [DOWN, up]
    assert "events" not in TrialResult(64, 64.0, 20_000.0, 2.0, 1, 1).as_dict()
    doc = json.loads(SAMPLE.read_text())
    throughput = next(m for t in doc["tests"] for m in t["measurements"]
                      if m["kind"] == "throughput")
    throughput["trials"][0] = json.loads(json.dumps(record))
    validate(doc, "results.json")
    throughput["trials"][0]["events"][0]["event"] = "flap"
    with pytest.raises(ResultsFileError, match="event"):
        validate(doc, "results.json")


# ---- waiting for a link ----------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class FakePort:
    """A port whose link comes up after `up_after` reads (never: None)."""

    def __init__(self, up_after: int | None, *, speed_mbps: int | None = None,
                 device: str = "net_af_packet0,iface=veth0", name: str = "p0") -> None:
        self.up_after = up_after
        self.reads = 0
        self.speed_mbps = speed_mbps
        self.device = device
        self.name = name

    def link(self) -> dict[str, Any]:
        self.reads += 1
        up = self.up_after is not None and self.reads > self.up_after
        return {"up": up, "speed_mbps": self.speed_mbps, "carrier": up,
                "operstate": "up" if up else "lowerlayerdown",
                "source": "kernel interface veth0",
                "speed_note": None if self.speed_mbps else "veth0 is a virtual interface"}


def test_a_link_that_comes_up_is_waited_for() -> None:
    clock, port = FakeClock(), FakePort(up_after=3)
    state = wait_link_up(port, 10.0, clock=clock, sleep=clock.sleep)
    assert state["up"] and port.reads == 4 and clock.now == pytest.approx(0.3)


def test_a_link_that_stays_down_errors_at_the_timeout_naming_what_to_check() -> None:
    clock, port = FakeClock(), FakePort(up_after=None)
    with pytest.raises(NetloadEnvironmentError) as info:
        wait_link_up(port, 2.0, clock=clock, sleep=clock.sleep)
    assert clock.now == pytest.approx(2.0) and port.reads == 21  # bounded: no hang
    text = str(info.value)
    assert text.startswith("port p0 (net_af_packet0,iface=veth0): link still down after "
                           "waiting 2s (kernel interface veth0: operstate lowerlayerdown, "
                           "no carrier)")
    for fix in ("cable", "admin state", "`ip link show veth0` here", "--netload-link-timeout"):
        assert fix in text, fix


def test_timeout_zero_looks_once() -> None:
    clock, port = FakeClock(), FakePort(up_after=None)
    with pytest.raises(NetloadEnvironmentError, match="after waiting 0s"):
        wait_link_up(port, 0.0, clock=clock, sleep=clock.sleep)
    assert port.reads == 1 and clock.sleeps == []


def test_a_pci_port_down_says_what_to_look_at() -> None:
    port = FakePort(up_after=None, device="0000:01:00.0")
    port.link = lambda: {"up": False, "operstate": "down",  # type: ignore[method-assign]
                         "source": "DPDK link of net_ice", "carrier": None}
    with pytest.raises(NetloadEnvironmentError) as info:
        wait_link_up(port, 0.0)
    assert "port p0 (0000:01:00.0): link still down" in str(info.value)
    assert "link LED and `ethtool`" in str(info.value)


# ---- the speed check ---------------------------------------------------------------------


def test_speeds_are_compared_in_whole_mbit() -> None:
    nic = {"speed_mbps": 10_000}
    assert speed_mismatch("p0", "0000:01:00.0", nic, 10_000_000_000) is None
    text = speed_mismatch("p0", "0000:01:00.0", {"speed_mbps": 1_000}, 10_000_000_000)
    assert text is not None and text.startswith(
        "port p0 (0000:01:00.0) negotiated 1.000 Gbit/s, but the topology's line_rate is "
        "10.00 Gbit/s")
    assert "autonegotiation" in text and "`ethtool <if>`" in text
    assert speed_mismatch("p0", "d", nic, None) is None            # nothing to compare with
    assert speed_mismatch("p0", "d", {"speed_mbps": None}, 10**10) is None  # veth: no speed


def test_a_port_without_a_speed_is_said_to_have_none() -> None:
    note = speed_note("p0", "net_af_packet0,iface=veth0",
                      {"speed_mbps": None, "speed_note": "veth0 is a virtual interface"},
                      10_000_000_000)
    assert note == ("port p0 (net_af_packet0,iface=veth0) has no link speed to compare "
                    "(veth0 is a virtual interface); the topology's line_rate 10.00 Gbit/s "
                    "is taken as given")
    assert speed_note("p0", "d", {"speed_mbps": 1000}, None) is None


def test_check_port_link_warns_errors_with_strict_and_never_for_no_speed() -> None:
    slow = FakePort(up_after=0, speed_mbps=1_000, device="0000:01:00.0")
    with pytest.warns(LinkSpeedWarning, match="negotiated 1.000 Gbit/s.*--netload-link-strict"):
        check_port_link(slow, "p0", LinkPolicy(1.0, False, 10_000_000_000))
    with pytest.raises(NetloadEnvironmentError, match=r"negotiated 1\.000 Gbit/s.*strict"):
        check_port_link(slow, "p0", LinkPolicy(1.0, True, 10_000_000_000))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        state = check_port_link(FakePort(up_after=0), "p0", LinkPolicy(1.0, True, 10**10))
        assert "has no link speed to compare" in state["speed_note"]
        check_port_link(FakePort(up_after=0, speed_mbps=10_000), "p0",
                        LinkPolicy(1.0, True, 10**10))


# ---- after a trial that lost its link ----------------------------------------------------


def test_after_a_lost_link_the_ports_are_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = SimpleNamespace(link_timeout_s=0.3)
    back = FakePort(up_after=1)
    recover_links(_run((DOWN,)), [back], "link down on p1 at t=1.30s", engine)
    assert back.reads == 2
    untouched = FakePort(up_after=None)
    recover_links(_run(), [untouched], None, engine)             # a valid trial
    recover_links(_run(), [untouched], "the generator lagged", engine)  # another reason
    assert untouched.reads == 0


def test_a_link_that_stays_down_stops_the_procedure() -> None:
    engine = SimpleNamespace(link_timeout_s=0.2)
    reason = "link down on p1 at t=1.30s (still down when the trial ended)"
    with pytest.raises(InvalidTrial) as info:
        recover_links(_run((DOWN,)), [FakePort(up_after=None, name="p1")], reason, engine)
    text = str(info.value)
    assert text.startswith(f"the trial was invalid ({reason}), and the link did not come "
                           "back: port p1 (net_af_packet0,iface=veth0): link still down "
                           "after waiting 200ms")
    assert "the procedure stops" in text


# ---- the settings ----------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "seconds"), [
    ("10s", 10.0), ("10", 10.0), ("0", 0.0), ("500ms", 0.5), ("10m", 600.0)])
def test_link_timeouts(value: str, seconds: float) -> None:
    assert link_timeout_seconds(value) == seconds


@pytest.mark.parametrize(("value", "words"), [
    ("-1s", "negative"), ("nan", "not finite"), ("soon", "'soon'"),
    ("11m", "more than the 10m"), ("1e9", "more than")])
def test_bad_link_timeouts_name_the_value_and_a_fix(value: str, words: str) -> None:
    with pytest.raises(NetloadConfigError, match=words) as info:
        link_timeout_seconds(value)
    assert "give" in str(info.value) or "write" in str(info.value)


def test_default_link_timeout() -> None:
    assert LINK_TIMEOUT_S == 10.0 == LinkPolicy().timeout_s


@pytest.mark.parametrize(("value", "strict"), [
    ("true", True), ("1", True), ("Yes", True), ("on", True),
    ("false", False), ("0", False), ("no", False), ("", False)])
def test_strict_flag_words(value: str, strict: bool) -> None:
    assert _flag(value) is strict


def test_strict_flag_refuses_other_words() -> None:
    with pytest.raises(NetloadConfigError, match="'maybe' is not a yes/no value; give true"):
        _flag("maybe")

