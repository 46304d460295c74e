"""The built-in DPDK-speed DUT, dpdk-testpmd, over vhost-user and memif: every frame
counted by the generator and by testpmd alike, loss attributed to testpmd's own
counters with nothing unaccounted, a DUT that connects late, goes away and comes back,
ports that fail to start named with DPDK's reason, and nothing left behind, also after
the owner is SIGKILLed."""

from __future__ import annotations

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

from calm import calm_run
from netutil import counted_through, dut_drops, dut_grown, open_ports, paced

from pytest_netload import errors
from pytest_netload.bench.link import wait_link_up
from pytest_netload.engine.client import Engine, Tx
from pytest_netload.engine.leftovers import sweep_runtime_dirs
from pytest_netload.topology.builtin import build, sweep_stale
from pytest_netload.topology.builtin.names import SOCKET_ROOT
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

T4 = (Eth() / IPv4() / UDP()).build()



@pytest.fixture(params=["vhost", "memif"])
def wired(request: pytest.FixtureRequest, engine: Engine) -> Iterator[tuple[Any, dict[str, Any]]]:
    with build("dpdk-testpmd", transport=request.param) as built, \
            open_ports(engine, built) as ports:
        for port in ports.values():
            wait_link_up(port, 10.0)
        yield built, ports


def test_every_frame_is_counted_by_the_generator_and_by_testpmd(
        engine: Engine, wired: tuple[Any, dict[str, Any]]) -> None:
    built, ports = wired
    s, before, after = counted_through(engine, built, ports, T4)
    assert (s.tx_packets, s.rx_packets, s.lost) == (100_000, 100_000, 0), s
    assert (s.duplicates, s.reordered) == (0, 0), s
    assert dut_grown(before, after, "RX-packets", "testpmd port 0") == 100_000
    assert dut_grown(before, after, "TX-packets", "testpmd port 1") == s.rx_packets
    assert built.dut.info["transport"] in ("vhost-user", "memif")


def test_overload_loss_is_all_in_testpmds_counters(
        engine: Engine, wired: tuple[Any, dict[str, Any]]) -> None:
    """As fast as the generator sends, for 2 s: whatever is lost, testpmd counted it."""
    built, ports = wired
    stream = engine.load(ports["p0"], Stream(T4, size=64, name="overload"))
    try:
        before = built.dut.trial_counters()
        run = engine.run([Tx(stream)], [ports["p1"]], duration_s=2.0, drain_s=0.5)
        after = built.dut.trial_counters()
    finally:
        stream.free()
    s = run.streams[0]
    assert s.tx_packets > 100_000, s
    assert (s.duplicates, s.reordered) == (0, 0), s
    assert s.lost == dut_drops(before, after) + run.generator_drops, (s, run.ports)


def test_a_freed_stream_leaves_no_mbuf_in_use_behind(engine: Engine) -> None:
    """A stream freed while virtio still held its sent mbufs (virtio frees them at its
    next transmit) once let the next stream's pool be corrupted: duplicates and 40 %
    reordered frames. Now the next stream's frames arrive once each, in order."""
    with build("dpdk-testpmd", transport="vhost") as built, open_ports(engine, built) as ports:
        for port in ports.values():
            wait_link_up(port, 10.0)
        for n in range(3):
            first = engine.load(ports["p0"], Stream(T4, size=64, name=f"first{n}"))
            engine.run([Tx(first, 20_000)], [ports["p1"]], drain_s=0.2)
            first.free()
        second = engine.load(ports["p0"], Stream(T4, size=64, name="second"))
        try:
            run = engine.run([Tx(second, 0, paced(500_000))], [ports["p1"]], duration_s=1.0,
                             drain_s=0.3)
        finally:
            second.free()
    s = run.streams[0]
    assert (s.duplicates, s.reordered) == (0, 0), s
    assert s.rx_packets <= s.tx_packets


def test_a_vhost_user_port_whose_peer_never_comes_fails_in_bounded_time(
        engine: Engine, tmp_path: Path) -> None:
    sock = tmp_path / "nobody.sock"
    engine.link_timeout_s = 1.0
    try:
        start = time.monotonic()
        with pytest.raises(errors.NetloadEnvironmentError) as info:
            engine.port(f"net_virtio_user_lonely,path={sock},server=1")
        took = time.monotonic() - start
    finally:
        engine.link_timeout_s = 10.0
    text = str(info.value)
    assert f"no peer connected to its socket {sock} within 1 s" in text
    assert "Failed to accept initial client connection" in text  # DPDK's own reason
    assert took < 10.0
    assert not sock.exists()  # its socket is not left behind
    # the engine is still usable
    assert engine.alive


def test_a_dut_that_connects_late_is_waited_for(engine: Engine) -> None:
    """The generator's vhost-user server port opens before testpmd exists: it waits
    for testpmd to connect (within the link timeout) instead of failing or hanging."""
    with build("dpdk-testpmd", transport="vhost") as built:
        built.dut.proc._end_process()  # the DUT goes away before the ports open
        later = threading.Timer(1.0, built.dut.proc._spawn)
        later.start()
        try:
            with open_ports(engine, built) as ports:
                for port in ports.values():
                    wait_link_up(port, 10.0)
                stream = engine.load(ports["p0"], Stream(T4, size=64, name="late"))
                try:
                    run = engine.run([Tx(stream, 10_000, paced(100_000))], [ports["p1"]],
                                     drain_s=0.3)
                finally:
                    stream.free()
        finally:
            later.join()
    assert run.streams[0].rx_packets == 10_000, run.streams[0]


def test_a_dut_that_goes_away_mid_run_comes_back(engine: Engine) -> None:
    """testpmd restarted during a run: the run ends (no hang) with the outage visible in
    its counts or link events, the ports reconnect, and the next run is exact."""
    with build("dpdk-testpmd", transport="vhost") as built, open_ports(engine, built) as ports:
        for port in ports.values():
            wait_link_up(port, 10.0)
        stream = engine.load(ports["p0"], Stream(T4, size=64, name="away"))
        try:
            restart = threading.Timer(0.5, built.dut.restart)
            restart.start()
            start = time.monotonic()
            run = engine.run([Tx(stream, 0, paced(100_000))], [ports["p1"]], duration_s=2.0,
                             drain_s=0.3)
            restart.join()
            assert time.monotonic() - start < 30.0
            s = run.streams[0]
            assert s.lost > 0 or run.link_events, (s, run.link_events)
            for port in ports.values():
                wait_link_up(port, 10.0)

            def once() -> tuple[Any, list[Any], list[Any]]:
                before = built.dut.trial_counters()  # the restarted testpmd's, from 0
                run = engine.run([Tx(stream, 20_000, paced(100_000))], [ports["p1"]],
                                 drain_s=0.3)
                return run, before, built.dut.trial_counters()

            again, before, after = calm_run(once, result_of=lambda r: r[0])
        finally:
            stream.free()
    s = again.streams[0]
    assert s.tx_packets == 20_000 and s.rx_packets >= 19_800, s
    assert s.lost == dut_drops(before, after) + again.generator_drops, (s, after)


def test_reset_drops_are_counted(engine: Engine) -> None:
    with build("dpdk-testpmd", transport="memif") as built, open_ports(engine, built) as ports:
        for port in ports.values():
            wait_link_up(port, 10.0)
        stream = engine.load(ports["p0"], Stream(T4, size=64, name="reset"))
        try:
            before = built.dut.trial_counters()
            reset = threading.Timer(0.5, built.dut.reset, kwargs={"outage_s": 0.5})
            reset.start()
            run = engine.run([Tx(stream, 0, paced(20_000))], [ports["p1"]], duration_s=2.0,
                             drain_s=0.3)
            reset.join()
            after = built.dut.trial_counters()
        finally:
            stream.free()
    s = run.streams[0]
    dropped = dut_grown(before, after, "reset_dropped", "testpmd port 0")
    assert 5_000 <= dropped <= 20_000, (dropped, s)  # about 0.5 s of 20 kpps
    assert s.lost == dut_drops(before, after), (s, after)


def test_nothing_is_left_after_the_with_block() -> None:
    with build("dpdk-testpmd", transport="vhost") as built:
        proc = built.dut.proc.proc
        folder = os.path.dirname(built.topology.ports[0].device.split("path=")[1].split(",")[0])
        prefix = built.dut.proc.prefix
        assert os.path.isdir(folder)
    assert proc.poll() is not None
    assert not os.path.exists(folder)
    assert not os.path.exists(f"/var/run/dpdk/{prefix}")


_OWNER = """
import sys, time
from pytest_netload.topology.builtin import build
with build("dpdk-testpmd", transport="vhost") as built:
    print(built.dut.proc.proc.pid, built.dut.proc.prefix, flush=True)
    time.sleep(600)
"""


def test_a_killed_owner_takes_testpmd_with_it_and_the_sweep_takes_the_rest() -> None:
    owner = subprocess.Popen([sys.executable, "-c", _OWNER], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None
        pid_text, prefix = owner.stdout.readline().split()
        testpmd = int(pid_text)
        owner.send_signal(signal.SIGKILL)
        owner.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and Path(f"/proc/{testpmd}").exists():
            time.sleep(0.05)
        gone = not Path(f"/proc/{testpmd}").exists() or \
            Path(f"/proc/{testpmd}/stat").read_text().split()[2] == "Z"
        assert gone, "testpmd outlived its owner"
        left = [n for n in os.listdir(SOCKET_ROOT) if n.endswith(f"-{owner.pid}." +
                                                                  n.rsplit(".", 1)[-1])]
        assert left, "the owner's socket dir should still be there before the sweep"
        removed = sweep_stale()
        assert any(str(owner.pid) in r for r in removed), removed
        sweep_runtime_dirs()
        assert not os.path.exists(f"/var/run/dpdk/{prefix}")
    finally:
        if owner.poll() is None:
            owner.kill()

