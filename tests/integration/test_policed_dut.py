"""netns-policed: the router with a token-bucket policer (CIR, CBS) towards p1.

Parameter checks come before anything is built (root included), so their tests run
anywhere. The DUT itself needs root and the engine (CI runs them as root):
- built and removed, also when building fails or the test raises; the policer's BPF
  program goes with it;
- truth: offered 1.25x the CIR for 2 s, what arrives (frames x size x 8 / 2 s, the
  frame counted with its FCS) is the CIR plus the bucket (CBS x 8 / 2 s) within 2 %,
  at two CIRs and three sizes; offered 0.9x, nothing is lost; every lost frame is one
  the policer counted (0 unaccounted), and its byte count is the frame with FCS;
- p1 -> p0 is not policed; the loss attribution names the policer.
Timing checks go through calm.calm_run: judged on a run whose generator kept its
schedule (a late generator catches up in a burst, which a policer rightly drops).
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
import subprocess
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

import pytest

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.topology.builtin import (
    BUILTIN,
    BuiltTopology,
    build,
    netns_policed,
    policer_burst_frames,
    policer_conforming_pps,
)
from pytest_netload.topology.builtin import policed as policed_module

from calm import calm_run
from netutil import open_ports, present

NEEDS_ROOT = pytest.mark.skipif(
    os.geteuid() != 0, reason="the DUT is namespaces and veths, and the engine runs DPDK: "
    "needs root")
F = TypeVar("F", bound=Callable[..., Any])


def root_test(fn: F) -> F:
    """The marks every test that builds the DUT carries."""
    return cast(F, pytest.mark.integration(NEEDS_ROOT(fn)))


DURATION_S = 2.0
OVERLOAD, UNDERLOAD = 1.25, 0.9

# ---------------------------------------------------------- parameters (no root)

BAD_PARAMS = {
    "cir below range": ({"cir_bps": 7_999},
                        r"cir_bps = 7999 must be an integer from 8000 to 10000000000 "
                        r"\(the CIR in bit/s"),
    "cir above range": ({"cir_bps": 10_000_000_001}, r"cir_bps = 10000000001 must be"),
    "cir as a float": ({"cir_bps": 1e7}, r"cir_bps = 10000000\.0 must be an integer"),
    "cir as a string": ({"cir_bps": "10Mbit"}, r"cir_bps = '10Mbit' must be"),
    "cir as a bool": ({"cir_bps": True}, r"cir_bps = True must be"),
    "cbs below a frame": ({"cir_bps": 10_000_000, "cbs_bytes": 1_517},
                          r"cbs_bytes = 1517 must be an integer from 1518 to 1250000 "
                          r"\(from one full-size frame to one second"),
    "cbs over a second": ({"cir_bps": 10_000_000, "cbs_bytes": 1_250_001},
                          r"cbs_bytes = 1250001 must be an integer from 1518 to 1250000"),
    "cbs as a float": ({"cbs_bytes": 3036.0}, r"cbs_bytes = 3036\.0 must be"),
    "bad neighbours": ({"neighbours": "dynamic"}, r"neighbours = 'dynamic': give one of"),
    "bad prefix": ({"prefix": "Bad"}, r"prefix = 'Bad' must be"),
    "bad backend": ({"backend": "net_pcap"}, r"backend = 'net_pcap'.*\['af_packet'"),
    "misspelt parameter": ({"cir": 10_000_000},
                           r"'netns-policed' takes `backend`='af_packet', `cir_bps`=10000000, "
                           r"`cbs_bytes`=None, `prefix`='nl', `neighbours`='arp' "
                           r"\(the defaults\), not \['cir'\]"),
}


@pytest.mark.parametrize(("params", "message"), BAD_PARAMS.values(), ids=BAD_PARAMS)
def test_bad_parameters_are_refused_before_root(
    monkeypatch: pytest.MonkeyPatch, params: dict[str, Any], message: str
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(NetloadConfigError, match=message):
        build("netns-policed", **params)


@pytest.mark.parametrize("params", [{"cir_bps": 8_000, "cbs_bytes": 3_036},
                                    {"cir_bps": 10_000_000_000, "cbs_bytes": 1_250_000_000},
                                    {"backend": "af_xdp", "prefix": "t"}])
def test_good_parameters_reach_the_root_check(
    monkeypatch: pytest.MonkeyPatch, params: dict[str, Any]
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(NetloadEnvironmentError, match="needs root"):
        build("netns-policed", **params)


def test_registered_and_validated_without_building() -> None:
    assert BUILTIN["netns-policed"] is netns_policed
    with pytest.raises(NetloadConfigError, match="cir_bps = 0 must be"):
        netns_policed(cir_bps=0)


def test_known_answer_counts_frames_with_fcs() -> None:
    assert policer_conforming_pps(10_000_000, 512) == pytest.approx(1_250_000 / 512, rel=1e-12)
    assert policer_conforming_pps(5_000_000, 1_518) == pytest.approx(625_000 / 1_518, rel=1e-12)
    assert policer_conforming_pps(8_000, 64) == pytest.approx(1_000 / 64, rel=1e-12)
    # whole bytes per second, rounded down
    assert policer_conforming_pps(10_000_007, 64) == policer_conforming_pps(10_000_000, 64)
    assert policer_burst_frames(12_500, 512) == 24
    assert policer_burst_frames(3_036, 1_518) == 2


@pytest.mark.parametrize(("call", "message"), [
    (lambda: policer_conforming_pps(10_000_000, 63),
     r"frame_size_with_fcs = 63 must be an integer from 64 to 1518"),
    (lambda: policer_conforming_pps(10_000_000, 1_519), r"frame_size_with_fcs = 1519 .* MTU"),
    (lambda: policer_conforming_pps(0, 64), r"cir_bps = 0 must be"),
    (lambda: policer_burst_frames(100, 64), r"cbs_bytes = 100 must be an integer from 1518"),
])
def test_known_answer_refuses_bad_input(call: Any, message: str) -> None:
    with pytest.raises(NetloadConfigError, match=message):
        call()


# ----------------------------------------------------------------------- helpers


def _names(built: BuiltTopology) -> set[str]:
    assert built.topology.namespace is not None
    return {p.iface for p in built.topology.ports if p.iface} | {built.topology.namespace}


def _prog_id(built: BuiltTopology) -> int:
    assert built.dut is not None
    out = built.dut.run(["tc", "filter", "show", "dev", built.dut.interfaces[1],
                         "egress"]).stdout
    words = out.split()
    return int(words[words.index("id") + 1])


def _prog_exists(prog_id: int) -> bool:
    """BPF_PROG_GET_FD_BY_ID: is a program of this id still loaded?"""
    attr = ctypes.create_string_buffer(struct.pack("<I", prog_id), 16)
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(ctypes.c_long(321), ctypes.c_int(13), attr, ctypes.c_uint(16))
    if fd >= 0:
        os.close(fd)
        return True
    return False


def _gone(prog_id: int) -> bool:
    for _ in range(40):  # freed after an RCU grace period
        if not _prog_exists(prog_id):
            return True
        time.sleep(0.05)
    return False




def _json(dut: Any, cmd: list[str]) -> Any:
    return json.loads(dut.run(cmd).stdout)


def _flow(built: BuiltTopology, tx: str) -> Any:
    return next(f for f in built.topology.flows() if f.tx.name == tx)


# ------------------------------------------------------------------- built / removed


@root_test
@pytest.mark.parametrize("params", [{}, {"cir_bps": 5_000_000, "cbs_bytes": 20_000}])
def test_built_and_removed(params: dict[str, Any]) -> None:
    with build("netns-policed", neighbours="static", **params) as built:
        dut = built.dut
        assert dut is not None and dut.policer is not None
        d0, d1 = dut.interfaces
        cir = params.get("cir_bps", 10_000_000)
        assert dict(built.topology.dut) == dict(dut.info)
        assert {k: dut.info[k] for k in ("name", "namespace", "policer", "cir_bps",
                                         "cbs_bytes", "policed_wire", "policed_interface",
                                         "accounting")} == {
            "name": "netns-policed", "namespace": dut.namespace, "policer": "police",
            "cir_bps": str(cir), "cbs_bytes": str(params.get("cbs_bytes", 12_500)),
            "policed_wire": "p0->p1", "policed_interface": d1, "accounting": "l2"}
        assert dut.info["model"].endswith(f"policer on {d1} egress")
        qdiscs = {q["kind"] for q in _json(dut, ["tc", "-j", "qdisc", "show", "dev", d1])}
        assert qdiscs == {"noqueue", "clsact"}  # nothing queues: frames are dropped
        assert {q["kind"] for q in _json(dut, ["tc", "-j", "qdisc", "show", "dev", d0])} == {
            "noqueue"}  # p1 -> p0: not policed
        assert "netload_police direct-action" in dut.run(
            ["tc", "filter", "show", "dev", d1, "egress"]).stdout
        assert dut.policer.counters() == dict.fromkeys(
            ("conform_packets", "conform_bytes", "exceed_packets", "exceed_bytes"), 0)
        prog, policer = _prog_id(built), dut.policer
        names = _names(built)
        assert present(names) == names and _prog_exists(prog)
    assert present(names) == set()
    assert (policer.map_fd, policer.prog_fd) == (None, None)
    assert _gone(prog), f"BPF program {prog} outlived its topology"
    with pytest.raises(NetloadEnvironmentError, match="read its counters inside"):
        policer.counters()


@root_test
def test_removed_after_an_exception() -> None:
    with pytest.raises(RuntimeError, match="boom"), build("netns-policed") as built:
        names, prog = _names(built), _prog_id(built)
        raise RuntimeError("boom")
    assert present(names) == set() and _gone(prog)


@root_test
def test_removed_when_attaching_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []

    def refuse(policer: Any, iface: str) -> None:
        made.append(policer)
        raise OSError(95, "Operation not supported")

    before = _present_spaces()
    monkeypatch.setattr(policed_module, "_attach", refuse)
    with pytest.raises(NetloadEnvironmentError,
                       match=r"attaching the netns-policed policer to nl\w+d1 egress .* "
                             r"Operation not supported; the kernel needs"):
        with build("netns-policed"):
            pass
    (policer,) = made
    assert (policer.map_fd, policer.prog_fd) == (None, None)
    assert _present_spaces() == before


def _present_spaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


# ------------------------------------------------------------------------ truth


@root_test
# two operating points, each rate and each size once (5 Mbit/s at 1518 B and 10 Mbit/s at
# 512 B measured -0.069 % and -0.025 %; the other two pairings -0.066 % and -0.069 %)
@pytest.mark.parametrize(("cir", "size"), [(5_000_000, 1518), (10_000_000, 512)])
def test_policer_passes_the_cir_and_drops_the_rest(engine: Any, cir: int, size: int) -> None:
    """1.25x the CIR for 2 s: the L2 rate received (frames x size with FCS x 8 / 2 s) is
    the CIR + the bucket's (CBS x 8 / 2 s) within 2 %; every lost frame is one the
    policer dropped; 0.9x the CIR loses nothing."""
    from pytest_netload import RateController
    from pytest_netload.traffic.streams import flow_stream

    pps = policer_conforming_pps(cir, size)
    with build("netns-policed", neighbours="static", cir_bps=cir) as built, \
            open_ports(engine, built) as ports:
        dut = built.dut
        assert dut is not None and dut.policer is not None
        cbs = int(dut.info["cbs_bytes"])
        rc = RateController(engine, ports["p0"], rx=[ports["p1"]])

        def once(load: float) -> tuple[Any, dict[str, int]]:
            before = dut.policer.counters()  # type: ignore[union-attr]
            time.sleep(cbs / (cir // 8) + 0.01)  # the bucket refills: each run starts full
            r = rc.run(flow_stream(_flow(built, "p0"), size=size), f"{load * pps:.1f}pps",
                       duration=f"{DURATION_S}s", drain="0.5s")
            after = dut.policer.counters()  # type: ignore[union-attr]
            return r, {k: after[k] - before[k] for k in after}

        over, police = calm_run(lambda: once(OVERLOAD), result_of=lambda x: x[0])
        under, spared = calm_run(lambda: once(UNDERLOAD), result_of=lambda x: x[0])
    s = over.streams[0].result
    received_bps = s.rx_packets * size * 8 / DURATION_S
    expected_bps = cir + cbs * 8 / DURATION_S
    error = received_bps / expected_bps - 1
    note = (f"CIR {cir:,} bit/s, CBS {cbs:,} B, {size} B: received {received_bps:,.0f} bit/s "
            f"({error:+.3%} of CIR + CBS/T = {expected_bps:,.0f}), sent {s.tx_packets:,}, "
            f"lost {s.lost:,}, policer {police}")
    print(note)
    assert s.tx_pps > 1.2 * pps, note  # the offered load really was over the CIR
    assert abs(error) < 0.02, note
    # every frame lost is one the policer dropped; every one it passed arrived
    assert (police["exceed_packets"], police["conform_packets"]) == (s.lost, s.rx_packets), note
    assert s.lost > 0 and over.run.generator_drops == 0, note
    # its bytes are the frame with FCS: skb->len at the clsact egress hook + 4
    assert police["conform_bytes"] == size * police["conform_packets"], police
    assert police["exceed_bytes"] == size * police["exceed_packets"], police
    assert (s.duplicates, s.reordered, over.run.foreign) == (0, 0, 0), note
    u = under.streams[0].result
    assert (u.lost, spared["exceed_packets"]) == (0, 0), (u, spared)
    assert spared["conform_packets"] == u.rx_packets == u.tx_packets, (u, spared)


@root_test
def test_p1_to_p0_is_not_policed(engine: Any) -> None:
    from pytest_netload import RateController
    from pytest_netload.traffic.streams import flow_stream

    pps = policer_conforming_pps(5_000_000, 512)
    with build("netns-policed", neighbours="static", cir_bps=5_000_000) as built, \
            open_ports(engine, built) as ports:
        rc = RateController(engine, ports["p1"], rx=[ports["p0"]])
        r = rc.run(flow_stream(_flow(built, "p1"), size=512), f"{2 * pps:.0f}pps",
                   duration="1s", drain="0.5s")
        counted = built.dut.policer.counters()  # type: ignore[union-attr]
    s = r.streams[0].result
    assert (s.lost, s.duplicates, s.reordered) == (0, 0, 0), s
    assert counted["conform_packets"] == counted["exceed_packets"] == 0, counted


@root_test
def test_loss_attribution_names_the_policer(engine: Any) -> None:
    """A trial through EngineMeasurer with the DUT's trial_counters (as the plugin's
    built-in DUT hooks read them): the policer accounts for every lost frame."""
    from pytest_netload.bench.dut_trial import CounterHooks
    from pytest_netload.bench.measurer import EngineMeasurer
    from pytest_netload.traffic.streams import flow_stream

    pps = policer_conforming_pps(10_000_000, 512)
    with build("netns-policed", neighbours="static") as built, \
            open_ports(engine, built) as ports:
        dut = built.dut
        assert dut is not None
        stream = engine.load(ports["p0"], flow_stream(_flow(built, "p0"), size=512))
        try:
            m = EngineMeasurer(engine, stream, [ports["p1"]], 512, drain_s=0.5,
                               hooks=CounterHooks({"netns": dut.trial_counters}))
            trial = m.measure(OVERLOAD * pps, 1.0)
        finally:
            stream.free()
        d1 = dut.interfaces[1]
    table = trial.attribution
    note = table.text()
    print(note)
    assert trial.lost > 0 and table.unaccounted == 0, (note, table.as_dict())
    rows = [(r.kind, r.name, r.where) for r in table.rows if r.kind != "generator_drop"]
    assert rows == [("filter_drop", "exceed_packets", f"policer on {d1} egress")], rows
    assert f"dropped by the DUT's filter (policer on {d1} egress)" in note
