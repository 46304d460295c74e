"""Trials in both directions at once (RFC 2544 §14) and trials of several streams: the
per-direction breakdown of a trial, a loss in either direction failing it, the searches
loading both, and the measurer summing a run's lanes (bench/lanes.py), on pure fakes and on
the fake engine host."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_netload.bench.harness import WiredPorts
from pytest_netload.bench.lanes import (
    Lane,
    load_lanes,
    plan_wires,
    recovery_of,
    reset_of,
    trial_counts,
)
from pytest_netload.bench.runner import EngineMeasurer
from pytest_netload.engine.client import Engine
from pytest_netload.engine.fake import FakeDut
from pytest_netload.errors import NetloadConfigError
from pytest_netload.rfc2544 import binary_search
from pytest_netload.rfc2544.mlr import mlr_search
from pytest_netload.rfc2544.recovery import RecoveryTrial
from pytest_netload.rfc2544.trial import DirectionResult, TrialResult
from pytest_netload.search import FunctionMeasurer, TrialSettings
from pytest_netload.topology.model import PortSpec, Topology, Wire
from pytest_netload.traffic.mix import as_mix
from pytest_netload.traffic.streams import tcp, udp

WIRES = ("p0->p1", "p1->p0")


def both_ways_trial(load: float, caps: tuple[float, float], duration_s: float = 1.0,
                    **kw: Any) -> TrialResult:
    """A both-ways trial through a DUT whose directions forward at most `caps` pps."""
    sent = round(load * duration_s)
    dirs = tuple(DirectionResult(w, sent, min(sent, round(cap * duration_s)))
                 for w, cap in zip(WIRES, caps))
    return TrialResult(64, 64.0, load, duration_s, sum(d.tx_packets for d in dirs),
                       sum(d.rx_packets for d in dirs), directions=dirs, **kw)


# ---- the trial ---------------------------------------------------------------------------

def test_a_loss_in_either_direction_fails_the_trial() -> None:
    clean = both_ways_trial(1000, (1e9, 1e9))
    assert clean.passed(0) and clean.aggregate_offered_pps == 2000
    one_side = both_ways_trial(1000, (1e9, 990))  # 1 % lost on p1->p0, 0.5 % overall
    assert not one_side.passed(0)
    assert one_side.loss_ratio == pytest.approx(0.005)
    assert not one_side.passed(0.006), "within the tolerance overall, not on p1->p0"
    assert one_side.passed(0.011)
    assert one_side.judged_counts() == (1000, 10)


@given(a=st.integers(0, 10_000), b=st.integers(0, 10_000), tol=st.floats(0, 0.5))
def test_the_verdict_is_the_worst_directions(a: int, b: int, tol: float) -> None:
    sent = 10_000
    t = both_ways_trial(sent, (sent - a, sent - b))
    worst = max(a, b) / sent
    assert t.passed(tol) == (worst <= tol if tol else worst == 0)
    assert t.judged_counts()[1] / t.judged_counts()[0] == pytest.approx(worst)


def test_the_record_breaks_the_counts_down_by_direction() -> None:
    t = both_ways_trial(1000, (1e9, 900))
    d = t.as_dict()
    assert d["aggregate_offered_pps"] == 2000 and d["offered_pps"] == 1000
    assert [x["wire"] for x in d["directions"]] == list(WIRES)
    assert [x["lost"] for x in d["directions"]] == [0, 100]
    assert d["tx_packets"] == 2000 and d["lost"] == 100
    assert "directions" not in TrialResult(64, 64.0, 1.0, 1.0, 1, 1).as_dict()


def test_the_steady_state_backlog_fails_by_direction() -> None:
    dirs = (DirectionResult("p0->p1", 1000, 1000, backlog_frames=0),
            DirectionResult("p1->p0", 1000, 1000, backlog_frames=50))
    t = TrialResult(64, 64.0, 1000, 1.0, 2000, 2000, directions=dirs, backlog_frames=50,
                    forwarding_pps=1000.0, steady_state="fail")
    assert t.steady is False and t.judged_counts() == (1000, 50)
    assert t.buffer_s == pytest.approx(50 / 2000)  # the backlog over both directions' rate


# ---- the searches load both directions -------------------------------------------------

def test_binary_search_and_mlrsearch_find_the_weaker_direction() -> None:
    caps = (80_000.0, 50_000.0)
    found = binary_search(FunctionMeasurer(lambda load, _d: both_ways_trial(load, caps)), 100_000,
                          settings=TrialSettings(duration_s=1.0, frame_size=64, mean_frame_size=64),
                          max_trials=30)
    assert found.throughput_pps == pytest.approx(50_000, rel=0.006)
    mlr = mlr_search(FunctionMeasurer(lambda load, d: both_ways_trial(load, caps, d)),
                     settings=TrialSettings(frame_size=64, mean_frame_size=64), min_pps=100,
                     max_pps=100_000, goals="ci-fast")
    assert mlr.goals[0].lower_bound_pps == pytest.approx(50_000, rel=0.03)


# ---- lanes: a run's streams summed -------------------------------------------------------

def stream(name: str, tx: int, rx: int, **kw: Any) -> Any:
    base = {"tx_packets": tx, "rx_packets": rx, "duplicates": 0, "reordered": 0,
            "tx_pps": float(tx), "latency": None, "clock": "tsc-software", "tx_first_ns": 0,
            "last_gap_tx_ns": 0, "rx_last_ns": 10**9, "rx_gaps": None}
    base.update(kw)
    return SimpleNamespace(name=name, lost=tx - rx, **base)


def run(*streams: Any) -> Any:
    return SimpleNamespace(streams=list(streams), generator_drops=0, foreign=0)


LANES = (Lane(None, 0.75, 0), Lane(None, 0.25, 0), Lane(None, 1.0, 1))  # type: ignore[arg-type]


def test_trial_counts_sum_the_lanes_and_break_them_down() -> None:
    r = run(stream("udp", 750, 750), stream("tcp", 250, 240), stream("back", 1000, 1000))
    got = trial_counts(r, LANES, WIRES, 1000.0, 1.0, lambda s, o, d: {})
    assert (got["tx_packets"], got["rx_packets"]) == (2000, 1990)
    assert got["achieved_tx_pps"] == 1000.0
    fwd, back = got["directions"]
    assert (fwd.wire, fwd.tx_packets, fwd.lost, fwd.streams) == ("p0->p1", 1000, 10,
                                                                 ("udp", "tcp"))
    assert (back.wire, back.lost) == ("p1->p0", 0)
    one = trial_counts(run(stream("s", 5, 4, duplicates=1)), (LANES[0],), ("",), 5.0, 1.0,
                       lambda s, o, d: {"backlog_frames": 2, "forwarding_pps": 3.0})
    assert (one["rx_packets"], one["backlog_frames"], one["forwarding_pps"]) == (3, 2, 3.0)
    assert "directions" not in one


def test_recovery_and_reset_of_several_lanes() -> None:
    parts = [RecoveryTrial(110.0, 50.0, 1000, 100, 0, 0),
             RecoveryTrial(110.0, 50.0, 1000, 100, 5, 4000)]
    both = recovery_of(parts, (LANES[0], LANES[2]), WIRES)
    assert (both.lost, both.recovery_ns) == (5, 3000)
    assert [d["recovery_ns"] for d in both.directions] == [0, 3000]
    r = run(stream("a", 100, 100, rx_last_ns=9 * 10**8), stream("b", 100, 90))
    reset = reset_of(r, (Lane(None, 0.5, 0), Lane(None, 1.0, 1)),  # type: ignore[arg-type]
                     WIRES, 1000.0, [3e6, 5e6], 1000, 0.0, None)
    # lane a: 3 ms against its 2 ms spacing, lane b: 5 ms against 1 ms: b's 4 ms excess
    assert reset.reset_ns == pytest.approx(4e6)
    assert reset.rx_last_ns == 9 * 10**8 and reset.lost == 10
    assert [d["longest_gap_ns"] for d in reset.directions] == [3e6, 5e6]


# ---- the measurer on the fake engine ----------------------------------------------------

TOPOLOGY = Topology("fake-both", (
    PortSpec("p0", "net_fake0", None, "02:00:00:00:00:01", ip="198.18.0.2",
             peer_mac="02:00:00:00:01:01", peer_ip="198.18.0.1", vlan=100),
    PortSpec("p1", "net_fake1", None, "02:00:00:00:00:02", ip="198.19.0.2",
             peer_mac="02:00:00:00:01:02", peer_ip="198.19.0.1")),
    (Wire("p0", "p1"), Wire("p1", "p0")))


@pytest.fixture(scope="module")
def wired() -> Iterator[WiredPorts]:
    engine = Engine(fake=FakeDut(capacity_pps=60_000, delay_s=50e-6,
                                 buffer_frames=100)).start()
    ports = {"p0": engine.port("net_fake0"), "p1": engine.port("net_fake1")}
    yield WiredPorts(TOPOLOGY, ports)
    engine.close()


def test_a_both_ways_trial_on_the_fake_engine(wired: WiredPorts) -> None:
    engine = wired.tx.engine
    wires = plan_wires(wired, 0, "both")
    with load_lanes(engine, wired, wires, as_mix([(udp(), 3), (tcp(), 1)]), 128) as plan:
        assert plan.directions == WIRES and len(plan.lanes) == 4
        assert plan.record["direction"] == "both" and plan.record["load"] == "per direction"
        m = EngineMeasurer(engine, plan.lanes[0].stream, plan.rx, 128, drain_s=0.1,
                           lanes=plan.lanes, directions=plan.directions)
        below = m.measure(20_000, 1.0)  # 40 kpps in all: the DUT forwards 60
        above = m.measure(40_000, 1.0)  # 80 kpps in all
        calibrated = m.calibrate(0.1)
    assert below.valid and below.lost == 0 and below.aggregate_offered_pps == 40_000
    assert [d.tx_packets for d in below.directions] == [20_000, 20_000]
    assert [d.streams for d in below.directions] == [("udp p0->p1", "tcp p0->p1"),
                                                     ("udp p1->p0", "tcp p1->p0")]
    assert not above.passed(0) and all(d.lost > 0 for d in above.directions)
    assert calibrated > 0


def test_one_wire_refuses_both_ways(wired: WiredPorts) -> None:
    one = WiredPorts(Topology("fake", TOPOLOGY.ports, (Wire("p0", "p1"),)), wired.ports)
    with pytest.raises(NetloadConfigError, match="topology 'fake' has no p1->p0"):
        plan_wires(one, 0, "both")
    assert plan_wires(one, 0, "one") == [one.wire(0)]
