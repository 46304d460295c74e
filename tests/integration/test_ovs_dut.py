"""The built-in OVS-DPDK DUT, ovs-dpdk: a private Open vSwitch on its DPDK datapath, wired
to the generator over vhost-user as CSIT wires it. Every frame is counted by the generator
and by OVS alike, loss is attributed to OVS's own counters with nothing unaccounted, its
policer passes its CIR as rte_meter counts bytes (the frame without FCS and without its
Ethernet header: size - 18), its reset's drops are counted, and nothing is left behind,
also after the owner is SIGKILLed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from calm import calm_run, excuse_failure
from netutil import counted_through, dut_drops, dut_grown, open_ports, paced

from pytest_netload.bench.link import wait_link_up
from pytest_netload.engine.client import Engine, Tx
from pytest_netload.engine.leftovers import sweep_runtime_dirs
from pytest_netload.measure.dut import DROP_KINDS, counter_deltas
from pytest_netload.topology.builtin import build, sweep_stale
from pytest_netload.topology.builtin.names import SOCKET_ROOT
from pytest_netload.topology.builtin.ovs import machine_took_the_pmd, ovs_policer_capacity_pps
from pytest_netload.topology.builtin.ovs_proc import installed
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
    pytest.mark.skipif(installed() is not None,
                       reason=f"OVS-DPDK is not installed ({installed()}): scripts/setup.sh"),
]

T4 = (Eth() / IPv4() / UDP()).build()
CIR_BPS = 200_000_000
DURATION_S = 2.0


def _excuse_a_busy_dut(before: list[Any], after: list[Any], seconds: float) -> str:
    """The OVS PMD's wait for its CPU over a run; a failure is the machine's when another
    process took that CPU in long slices (OvsDut.health's rule)."""
    waited = dut_grown(before, after, "cpu_wait_ns")
    preempted = dut_grown(before, after, "cpu_preemptions")
    proof = machine_took_the_pmd(waited, preempted, seconds)
    if proof is not None:
        excuse_failure(proof)
    return f"the PMD waited {waited / 1e6:.1f} ms for its CPU ({preempted} preemptions)"


@pytest.fixture
def wired(engine: Engine) -> Iterator[tuple[Any, dict[str, Any]]]:
    with build("ovs-dpdk") as built, open_ports(engine, built) as ports:
        for port in ports.values():
            wait_link_up(port, 10.0)
        built.dut.wait_ready()
        yield built, ports


def test_every_frame_is_counted_by_the_generator_and_by_ovs(
        engine: Engine, wired: tuple[Any, dict[str, Any]]) -> None:
    built, ports = wired
    s, before, after = counted_through(engine, built, ports, T4)
    assert (s.tx_packets, s.rx_packets, s.lost) == (100_000, 100_000, 0), s
    assert (s.duplicates, s.reordered) == (0, 0), s
    assert dut_grown(before, after, "rx_packets", "OVS port vhost-p0") == 100_000
    assert dut_grown(before, after, "tx_packets", "OVS port vhost-p1") == s.rx_packets
    assert dut_grown(before, after, "packets received", "OVS datapath") == 100_000
    assert dut_drops(before, after) == 0
    info = built.dut.info
    assert info["ovs_version"].startswith("3.") and info["dpdk_version"].startswith("DPDK 22.11")
    assert info["transport"] == "vhost-user" and int(info["cpu"]) in os.sched_getaffinity(0)
    assert built.dut.counters()["p0"]["rx_bytes"] >= 100_000 * 60  # frames without FCS


def test_overload_loss_is_all_in_ovss_counters(
        engine: Engine, wired: tuple[Any, dict[str, Any]]) -> None:
    """As fast as the generator sends, for 2 s: whatever is lost, OVS counted it."""
    built, ports = wired
    stream = engine.load(ports["p0"], Stream(T4, size=64, name="overload"))
    try:
        before = built.dut.trial_counters()
        run = engine.run([Tx(stream)], [ports["p1"]], duration_s=DURATION_S, drain_s=0.5)
        after = built.dut.trial_counters()
    finally:
        stream.free()
    s = run.streams[0]
    note = (f"sent {s.tx_packets / DURATION_S / 1e6:.2f} Mpps, lost {s.lost}, "
            f"generator drops {run.generator_drops}, OVS drops {dut_drops(before, after)}, "
            f"{_excuse_a_busy_dut(before, after, DURATION_S)}")
    print(note)
    assert s.tx_packets > 100_000, note
    assert (s.duplicates, s.reordered) == (0, 0), note
    assert s.lost == dut_drops(before, after) + run.generator_drops, (note, after)


# one size for each policer: OVS's ingress policing and its egress-policer QoS
@pytest.mark.parametrize(("policer", "size"), [("ingress", 64), ("egress", 1518)])
def test_the_policer_forwards_its_cir(engine: Engine, policer: str, size: int) -> None:
    """1.25x the CIR for 2 s: p1 receives the CIR within 1 %, counted as rte_meter counts
    it (each frame costs size - 18 bytes: no FCS, no Ethernet header) plus the bucket it
    starts with (CBS / (size - 18) frames); every frame lost is one the policer dropped;
    0.9x the CIR loses nothing."""
    with build("ovs-dpdk", policer_cir_bps=CIR_BPS, policer=policer) as built, \
            open_ports(engine, built) as ports:
        for port in ports.values():
            wait_link_up(port, 10.0)
        dut = built.dut
        dut.wait_ready()
        cbs = int(dut.info["policer_cbs_bytes"])
        pps = ovs_policer_capacity_pps(CIR_BPS, size, policer=policer,
                                       tsc_hz=int(dut.info.get("tsc_hz", 0)) or None)
        stream = engine.load(ports["p0"], Stream(T4, size=size, name="policed"))

        def once(load: float) -> tuple[Any, list[Any], list[Any]]:
            time.sleep(cbs / (CIR_BPS // 8) + 0.05)  # the bucket refills: each run starts full
            before = dut.trial_counters()
            run = engine.run([Tx(stream, 0, paced(load * pps))], [ports["p1"]],
                             duration_s=DURATION_S, drain_s=0.5)
            return run, before, dut.trial_counters()

        try:
            over, before, after = calm_run(lambda: once(1.25), result_of=lambda r: r[0])
            under, before_u, after_u = calm_run(lambda: once(0.9), result_of=lambda r: r[0])
        finally:
            stream.free()
    s = over.streams[0]
    expected_pps = pps + cbs / (size - 18) / DURATION_S
    received_pps = s.rx_packets / DURATION_S
    error = received_pps / expected_pps - 1
    policed = dut_grown(before, after, "ovs_rx_qos_drops" if policer == "ingress"
                     else "ovs_tx_qos_drops")
    note = (f"{policer} policer, CIR {CIR_BPS:,} bit/s ({CIR_BPS // 8:,} B/s of size - 18 "
            f"bytes), CBS {cbs:,} B, {size} B frames: received {received_pps:,.1f} pps "
            f"({error:+.3%} of CIR/(size-18) + CBS/(size-18)/T = {expected_pps:,.1f}), sent "
            f"{s.tx_packets:,}, lost {s.lost:,}, policer dropped {policed:,}, "
            f"{_excuse_a_busy_dut(before, after, DURATION_S)}")
    print(note)
    assert s.tx_pps > 1.2 * pps, note  # the offered load really was over the CIR
    assert abs(error) < 0.01, note
    assert s.lost == policed == dut_drops(before, after), note
    assert (s.duplicates, s.reordered) == (0, 0), note
    u = under.streams[0]
    grown, _ = counter_deltas(before_u, after_u)
    note = (f"0.9x the CIR: sent {u.tx_packets:,}, lost {u.lost:,} "
            f"({[(c.name, c.value) for c in grown if c.value and c.kind in DROP_KINDS]}), "
            f"generator lag {u.tx_max_lag_ns / 1e6:.1f} ms, "
            f"{_excuse_a_busy_dut(before_u, after_u, DURATION_S)}")
    print(note)
    assert u.lost == dut_drops(before_u, after_u) == 0, note


def test_reset_drops_are_counted(engine: Engine, wired: tuple[Any, dict[str, Any]]) -> None:
    built, ports = wired
    stream = engine.load(ports["p0"], Stream(T4, size=64, name="reset"))
    try:
        before = built.dut.trial_counters()
        reset = threading.Timer(0.5, built.dut.reset, kwargs={"outage_s": 0.5})
        reset.start()
        run = engine.run([Tx(stream, 0, paced(20_000))], [ports["p1"]], duration_s=DURATION_S,
                         drain_s=0.3)
        reset.join()
        after = built.dut.trial_counters()
    finally:
        stream.free()
    s = run.streams[0]
    dropped = dut_grown(before, after, "reset_dropped", "OVS port vhost-p1")
    assert 5_000 <= dropped <= 20_000, (dropped, s)  # about 0.5 s of 20 kpps
    assert s.lost == dut_drops(before, after) == dropped, (s, after)
    # forwarding is back, with no reset QoS left on the ports
    assert built.dut.vsctl("list", "qos").strip() == ""


def test_a_dut_that_goes_away_mid_run_comes_back(engine: Engine,
                                                 wired: tuple[Any, dict[str, Any]]) -> None:
    """ovs-vswitchd restarted during a run: the run ends (no hang), the ports reconnect,
    and the next run is exact."""
    built, ports = wired
    stream = engine.load(ports["p0"], Stream(T4, size=64, name="away"))
    try:
        restart = threading.Timer(0.5, built.dut.restart)
        restart.start()
        start = time.monotonic()
        run = engine.run([Tx(stream, 0, paced(100_000))], [ports["p1"]], duration_s=2.0,
                         drain_s=0.3)
        restart.join()
        assert time.monotonic() - start < 30.0
        assert run.streams[0].lost > 0 or run.link_events, run.streams[0]
        for port in ports.values():
            wait_link_up(port, 10.0)
        built.dut.wait_ready()
        before = built.dut.trial_counters()
        again = engine.run([Tx(stream, 20_000, paced(100_000))], [ports["p1"]], drain_s=0.3)
        after = built.dut.trial_counters()
    finally:
        stream.free()
    s = again.streams[0]
    assert (s.tx_packets, s.rx_packets) == (20_000, 20_000), s
    assert s.lost == dut_drops(before, after) + again.generator_drops == 0


def _left_behind(tag: str, owner_pid: int) -> list[str]:
    found = [f"{SOCKET_ROOT}/{n}" for n in os.listdir(SOCKET_ROOT)
             if n.startswith(f"dut-{tag}-{owner_pid}.")]
    found += [f"netns {n}" for n in os.listdir("/run/netns") if n.startswith(tag)] \
        if os.path.isdir("/run/netns") else []
    found += [f"/var/run/dpdk/{n}" for n in os.listdir("/var/run/dpdk")
              if n.startswith(f"netload-{owner_pid}-")] if os.path.isdir("/var/run/dpdk") else []
    return found


def test_nothing_is_left_after_the_with_block() -> None:
    with build("ovs-dpdk") as built:
        ovs = built.dut.proc
        procs = [ovs.ovsdb, ovs.vswitchd]
        tag = built.topology.ports[0].device.split(",")[0].removeprefix("net_virtio_user_")[:-2]
        namespace = built.dut.info["ovs_namespace"]
        assert os.path.exists(f"/run/netns/{namespace}")
        assert _left_behind(tag, os.getpid())
    assert all(p is not None and p.poll() is not None for p in procs)
    assert _left_behind(tag, os.getpid()) == []
    assert ovs._watchdog is None


_OWNER = """
import time
from pytest_netload.topology.builtin import build
with build("ovs-dpdk") as built:
    ovs = built.dut.proc
    tag = built.topology.ports[0].device.split(",")[0].removeprefix("net_virtio_user_")[:-2]
    print(ovs.ovsdb.pid, ovs.vswitchd.pid, ovs._watchdog.pid, tag, flush=True)
    time.sleep(600)
"""


def test_a_killed_owner_takes_ovs_and_everything_it_made_with_it() -> None:
    owner = subprocess.Popen([sys.executable, "-c", _OWNER], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None
        *pids, tag = owner.stdout.readline().split()
        ovsdb, vswitchd, watchdog = (int(p) for p in pids)
        owner.send_signal(signal.SIGKILL)
        owner.wait(10)

        def gone(pid: int) -> bool:
            stat = Path(f"/proc/{pid}/stat")
            return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"

        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not all(map(gone, (ovsdb, vswitchd, watchdog))):
            time.sleep(0.05)
        assert gone(ovsdb) and gone(vswitchd), "OVS outlived its owner"
        assert gone(watchdog), "the watchdog did not finish"
        # the watchdog removed the namespace (with OVS's tap devices) and the dirs
        assert _left_behind(tag, owner.pid) == []
        assert not any(str(owner.pid) in r for r in sweep_stale())
    finally:
        if owner.poll() is None:
            owner.kill()


_OWNER_IN_A_THREAD = """
import os, threading, time
from pytest_netload.topology.builtin import build

def own():  # built from a thread: no parent-death signal, only the watchdog
    try:
        with build("ovs-dpdk") as built:
            ovs = built.dut.proc
            tag = built.topology.ports[0].device.split(",")[0]
            tag = tag.removeprefix("net_virtio_user_")[:-2]
            print(ovs.ovsdb.pid, ovs.vswitchd.pid, ovs._watchdog.pid, tag, flush=True)
            time.sleep(600)
    except Exception as exc:
        print("error", repr(exc).replace(" ", "_"), flush=True)
        os._exit(1)

threading.Thread(target=own, daemon=True).start()
time.sleep(600)
"""


def test_the_sweep_stops_ovs_daemons_that_outlived_owner_and_watchdog() -> None:
    owner = subprocess.Popen([sys.executable, "-c", _OWNER_IN_A_THREAD],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None
        line = owner.stdout.readline().split()
        assert line and line[0] != "error", line  # the owner could not build
        *pids, tag = line
        ovsdb, vswitchd, watchdog = (int(p) for p in pids)
        os.kill(watchdog, signal.SIGKILL)
        owner.send_signal(signal.SIGKILL)
        owner.wait(10)
        time.sleep(0.5)
        assert Path(f"/proc/{vswitchd}").exists() and Path(f"/proc/{ovsdb}").exists()
        removed = sweep_stale()
        assert any(r.startswith("ovs-vswitchd (pid") for r in removed), removed
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (Path(f"/proc/{vswitchd}").exists() or
                                                Path(f"/proc/{ovsdb}").exists()):
            time.sleep(0.05)
        assert not Path(f"/proc/{vswitchd}").exists() and not Path(f"/proc/{ovsdb}").exists()
        assert [r for r in _left_behind(tag, owner.pid) if "/var/run/dpdk" not in r] == []
        sweep_runtime_dirs()  # DPDK's runtime dir of the dead owner: the engine's sweep
        assert _left_behind(tag, owner.pid) == []
    finally:
        if owner.poll() is None:
            owner.kill()
        for pid in (locals().get("ovsdb"), locals().get("vswitchd")):
            if pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def test_ovs_on_hugepages_counts_every_frame(engine: Engine) -> None:
    free_mb = 2 * int(Path("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages")
                      .read_text())
    # scripts/setup.sh reserves 2048 MiB on a dev/CI host; the engine may hold 1024
    assert free_mb >= 512, (f"{free_mb} MiB of hugepages free, OVS needs 512: "
                            "bash scripts/setup.sh (as root) or --hugepages=2048")
    with build("ovs-dpdk", hugepages=True) as built, open_ports(engine, built) as ports:
        for port in ports.values():
            wait_link_up(port, 10.0)
        built.dut.wait_ready()
        assert built.dut.info["memory"] == "hugepages"
        stream = engine.load(ports["p0"], Stream(T4, size=64, name="huge"))
        try:
            run = engine.run([Tx(stream, 20_000, paced(100_000))], [ports["p1"]], drain_s=0.3)
        finally:
            stream.free()
    assert (run.streams[0].tx_packets, run.streams[0].rx_packets) == (20_000, 20_000)
