"""Port locks: two engines, or two pytest sessions (two CI jobs), never share a port.

Each engine host locks every port it opens (locks.py: a flock on a file named
after the PCI address or kernel interface) for as long as it is open. A second one
fails at once naming the holder, or waits up to --netload-port-wait; a holder that
died left no lock.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_netload.engine.client import Engine
from pytest_netload.errors import ResourceBusy
from netutil import sh

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="veths and DPDK need root"),
]


def vdev(iface: str) -> str:
    return f"net_af_packet{secrets.randbelow(10**6)},iface={iface}"


def test_a_second_engine_fails_naming_the_first_or_waits_for_it(veth: tuple[str, str]) -> None:
    a, _ = veth
    with Engine() as first, Engine() as second:
        held = first.port(vdev(a))
        started = time.monotonic()
        with pytest.raises(ResourceBusy) as err:
            second.port(vdev(a))
        assert time.monotonic() - started < 5
        text = str(err.value)
        assert f"port {a} (" in text and f"is held by pid {first.hello['pid']} " in text
        assert f"for pid {os.getpid()} " in text and "--netload-port-wait" in text
        second.port_wait_s = 20.0
        threading.Timer(1.0, held.close).start()
        started = time.monotonic()
        port = second.port(vdev(a))
        assert 0.8 < time.monotonic() - started < 10
        port.close()


def test_the_port_of_a_killed_engine_host_is_taken_over(veth: tuple[str, str]) -> None:
    a, _ = veth
    with Engine() as first, Engine() as second:
        first.port(vdev(a))
        os.kill(first.hello["pid"], signal.SIGKILL)  # no close: the kernel drops its flock
        deadline = time.monotonic() + 10
        while True:
            try:
                second.port(vdev(a)).close()
                break
            except ResourceBusy:
                assert time.monotonic() < deadline, "the dead host's lock was never dropped"
                time.sleep(0.1)


def test_an_af_xdp_port_reopens_at_once_after_its_close(veth: tuple[str, str]) -> None:
    """DPDK 22.11's af_xdp close leaves its socket bound to the queue until the process
    ends: the engine closes it, and waits the kernel's deferred release at the next open,
    here and in the engine that waited for the lock while the first one lives on."""
    a, _ = veth
    device = f"net_af_xdp_p{secrets.randbelow(10**6)},iface={a},start_queue=0,queue_count=1"
    with Engine() as first, Engine() as second:
        for _ in range(3):
            first.port(device).close()
        second.port_wait_s = 20.0
        held = first.port(device)
        threading.Timer(0.5, held.close).start()
        started = time.monotonic()
        port = second.port(device)
        assert port.info["driver"] == "net_af_xdp"
        assert time.monotonic() - started < 5
        port.close()
        first.port(device).close()


HOLDING = """
import time

def test_holds_the_ports(netload_ports):
    time.sleep({seconds})
"""


def _topology(path: Path, a: str, b: str) -> Path:
    macs = [sh("cat", f"/sys/class/net/{i}/address").strip() for i in (a, b)]
    path.write_text(f"""
[topology]
name = "locks"

[[ports]]
name = "p0"
iface = "{a}"
mac = "{macs[0]}"

[[ports]]
name = "p1"
iface = "{b}"
mac = "{macs[1]}"

[[wires]]
tx = "p0"
rx = "p1"
""")
    return path


def test_two_sessions_on_one_port_one_fails_naming_the_other_or_waits(
        pytester: pytest.Pytester, veth: tuple[str, str]) -> None:
    """Two CI jobs on one generator: the second fails at set-up naming the first session
    (pid, command line), or with --netload-port-wait runs once the first ended."""
    topo = _topology(pytester.path / "lab.toml", *veth)
    holder_dir = pytester.mkdir("holder")
    (holder_dir / "test_hold.py").write_text(HOLDING.format(seconds=20))
    first = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
         f"--netload-topology={topo}", str(holder_dir / "test_hold.py")],
        cwd=holder_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lock = Path("/var/run/netload") / f"port-iface-{veth[0]}.lock"
        deadline = time.monotonic() + 60
        while not (lock.exists() and "for_pid" in lock.read_text()):
            assert first.poll() is None and time.monotonic() < deadline, "no first session"
            time.sleep(0.1)
        pytester.makepyfile(test_second=HOLDING.format(seconds=0))
        failed = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rE",
                                               "--ignore=holder", f"--netload-topology={topo}",
                                               timeout=120)
        failed.assert_outcomes(errors=1)
        failed.stdout.fnmatch_lines([
            f"*opening port 'p0' of topology 'locks'*port {veth[0]} (*) is held by pid *"
            f"for pid {first.pid} (*-m pytest*) on host *--netload-port-wait=SECONDS*"])
        started = time.monotonic()
        assert first.poll() is None, "the first session ended before the second tried"
        waited = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--ignore=holder",
                                               f"--netload-topology={topo}",
                                               "--netload-port-wait=60s", timeout=180)
        # it got the port only once the first session's engine let go of it (a flock
        # has one holder), while that session was still running or ending
        waited.assert_outcomes(passed=1)
        waited.stdout.fnmatch_lines(["netload: *port wait 1m*"])
        assert time.monotonic() - started < 60
    finally:
        # the first session ends on its own once its engine host has exited (which may
        # take seconds after its ports, and their locks, were let go); killed only if not
        try:
            out, _ = first.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            first.kill()
            out, _ = first.communicate()
    assert first.returncode == 0 and "1 passed" in out, out
