"""Loss attribution on every built-in DUT: each lost frame is found in a counter, exactly.

Each DUT is made to lose frames in a known place, and a trial's attribution must account
for every frame lost with 0 unaccounted:
- netns-lossy: its nftables rule drops 1 % of p0 -> p1 (a filter drop);
- netns-shaped: TBF and HTB at 10 Mbit/s offered 1.25x their capacity (queue drops; a
  frame the generator's own AF_PACKET ring dropped is the generator's);
- netns-router: half the frames carry TTL 1, which it drops as IPv4 header errors;
- netns-bridge: an nftables rule of the bridge family drops every 4th frame.
(A DUT port's MTU below the frames' size is no such place: an AF_PACKET generator's
kernel retries the frames of its TX ring that the veth refused, and d0 counts each
retry, 948,328 drops for 512 frames sent in one second.)
The trials run through EngineMeasurer with the built-in DUT's counters read around each
one (bench/dut_trial.CounterHooks over Dut.trial_counters), as the plugin's
BuiltinDutHooks does; tests/plugin/test_dut_hooks.py covers the hooks themselves, and
conftest_examples/dut_hooks the whole plugin path on netns-lossy.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from pytest_netload.bench.dut_trial import CounterHooks
from pytest_netload.bench.measurer import EngineMeasurer
from pytest_netload.topology.builtin import BuiltTopology, build, shaper_capacity_pps
from pytest_netload.traffic.streams import flow_stream

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces: needs root")]

RATE_BPS = 10_000_000  # the shaper: its 1.25x overload stays within this VM's generator


@contextmanager
def _measurer(engine: Any, built: BuiltTopology, size: int,
              make: Any = None) -> Iterator[EngineMeasurer]:
    """p0 -> p1 trials of `size`-byte frames (of the stream `make(flow)` gives, default
    UDP), the DUT's counters read around each."""
    ports = {}
    try:
        for spec in built.topology.ports:
            assert spec.device is not None
            ports[spec.name] = engine.port(spec.device)
        flow = next(f for f in built.topology.flows() if f.tx.name == "p0")
        spec = make(flow) if make is not None else flow_stream(flow, size=size)
        stream = engine.load(ports["p0"], spec)
        assert built.dut is not None
        try:
            yield EngineMeasurer(engine, stream, [ports["p1"]], size, drain_s=0.5,
                                 hooks=CounterHooks({"netns": built.dut.trial_counters}))
        finally:
            stream.free()
    finally:
        for port in ports.values():
            port.close()


def _exact(trial: Any, kinds: set[str]) -> None:
    table = trial.attribution
    note = table.text()
    print(f"{trial.frame_size} B at {trial.offered_pps:,.0f} pps: {note}")
    assert trial.lost > 0, note
    assert table.unaccounted == 0, (note, table.as_dict())
    assert {r.kind for r in table.rows} <= kinds | {"generator_drop"}, table.as_dict()
    assert any(r.kind in kinds for r in table.rows), table.as_dict()


def test_lossy_filter_drops_account_for_every_lost_frame(engine: Any) -> None:
    with build("netns-lossy", neighbours="static", loss_ratio=0.01) as built, \
            _measurer(engine, built, 64) as m:
        trial = m.measure(20_000, 1.0)
        where = {r.where for r in trial.attribution.rows}
        assert any("nftables inet netload forward" in w for w in where), where
    _exact(trial, {"filter_drop"})
    assert trial.attribution.sources == ("netns",)


@pytest.mark.parametrize("qdisc", ["tbf", "htb"])
def test_shaped_queue_drops_account_for_every_lost_frame(engine: Any, qdisc: str) -> None:
    capacity = shaper_capacity_pps(RATE_BPS, 64)
    with build("netns-shaped", neighbours="static", rate_bps=RATE_BPS, qdisc=qdisc) as built, \
            _measurer(engine, built, 64) as m:
        trial = m.measure(1.25 * capacity, 1.0)
        d1 = built.dut.interfaces[1]  # type: ignore[union-attr]
    _exact(trial, {"queue_drop"})
    queue = [r for r in trial.attribution.rows if r.kind == "queue_drop"]
    assert [r.where for r in queue] == [f"{qdisc} on {d1}"], trial.attribution.as_dict()
    # the veth's tx_dropped (its peer's receive drops) is recorded, never attributed
    assert all(r.name != "tx_dropped" for r in trial.attribution.rows)


def test_router_forwarding_drops_account_for_every_lost_frame(engine: Any) -> None:
    """Half the frames carry TTL 1 (a field op alternates 1 and 2): the router drops those
    as header errors (IPv4 InHdrErrors) and forwards the rest."""
    from pytest_netload.traffic.packets import UDP, Eth, IPv4, field
    from pytest_netload.traffic.streams import Stream

    def ttl_stream(flow: Any) -> Any:
        template = (Eth(dst=flow.dst_mac, src=flow.src_mac)
                    / IPv4(src=flow.src_ip, dst=flow.dst_ip, ttl=1) / UDP()).build()
        return Stream(template, size=64, fields=[field(template, "ip.ttl", "inc", min=1,
                                                       max=2)], name="ttl")

    with build("netns-router", neighbours="static") as built, \
            _measurer(engine, built, 64, ttl_stream) as m:
        trial = m.measure(2_000, 1.0)
    _exact(trial, {"forwarding_drop"})
    assert abs(trial.lost - trial.tx_packets / 2) <= 1, trial
    assert [r.name for r in trial.attribution.rows] == ["InHdrErrors"]


def test_bridge_filter_drops_account_for_every_lost_frame(engine: Any) -> None:
    """An nftables rule of the bridge family drops every 4th frame d0 -> d1 and counts
    it: the bridge's drops show in the attribution like the router's."""
    with build("netns-bridge") as built, _measurer(engine, built, 64) as m:
        dut = built.dut
        assert dut is not None
        d0 = dut.interfaces[0]
        dut.run(["nft", "-f", "-"], input=(
            "table bridge nltest {\n chain nlfwd {\n  type filter hook forward priority 0; "
            f"policy accept;\n  iifname {d0} numgen inc mod 4 == 0 counter drop\n }}\n}}\n"))
        trial = m.measure(4_000, 1.0)
    _exact(trial, {"filter_drop"})
    assert abs(trial.lost - trial.tx_packets / 4) <= 1, trial
    assert "nftables bridge nltest nlfwd" in trial.attribution.rows[0].where


def test_no_loss_no_rows(engine: Any) -> None:
    with build("netns-router", neighbours="static") as built, \
            _measurer(engine, built, 64) as m:
        trial = m.measure(5_000, 0.5)
    table = trial.attribution
    assert (trial.lost, table.rows, table.unaccounted) == (0, (), 0), table.as_dict()
    # the forwarded frames show among the counters' growth (info, not attributed)
    d1 = built.dut.interfaces[1]  # type: ignore[union-attr]
    assert table.as_dict()["counters"][f"tx_packets ({d1})"] >= trial.rx_packets
