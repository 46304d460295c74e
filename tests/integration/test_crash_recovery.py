"""Hardening on the real engine: a crash costs one test, engines never share a worker CPU,
and a generator that stalled or lost its link makes its trial invalid.

Each test builds what it needs (veth pairs, engine hosts) and removes it, also on failure.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from calm import judged_unless_the_machine_was_busy

from pytest_netload.bench.validity import generator_failure
from pytest_netload.engine.client import Engine, Tx
from pytest_netload.locks import LOCK_DIR_ENV, cpu_lock_path, try_claim
from pytest_netload.errors import NetloadWarning, ResourceBusy
from pytest_netload.topology.builtin import build
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.patterns import CBR
from pytest_netload.traffic.streams import Stream
from pytest_netload.units import Rate

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0,
                       reason="the engine runs DPDK and loopback builds veths: needs root"),
]

CRASH_SUITE = """
from pytest_netload import udp

PIDS = []


def _send(engine, rate_controller):
    PIDS.append(engine.hello["pid"])
    result = rate_controller(rate="5kpps").run(udp(size=64), count=500)
    assert result.run.streams[0].tx_packets == 500 and result.run.lost == 0


def test_first(netload_engine, netload_ports, rate_controller):
    _send(netload_engine, rate_controller)


def test_crash(netload_engine, netload_ports):
    netload_engine.crash_for_test()


def test_third(netload_engine, netload_ports, rate_controller):
    _send(netload_engine, rate_controller)
    assert PIDS[0] != PIDS[1], "the third test runs on a fresh engine host"
    assert all(p.alive for p in netload_ports.ports.values())
"""


def test_an_engine_crash_costs_one_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_crashing=CRASH_SUITE)
    result = pytester.runpytest_subprocess("--netload-topology=loopback", "-p", "no:cacheprovider",
                                           "-rA", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR at call of test_crash*",
        "*EngineCrashed: engine host died or hung during 'crash'*",
        "*--- last engine log lines ---*",
        "netload: the engine host died in test_crashing.py::test_crash (ERROR, not a DUT "
        "verdict)*later tests ran on a fresh engine host",
        "netload: overall verdict ERROR: 1 of 3 tests errored (the engine crashed in 1 test)",
    ])
    doc = json.loads((pytester.path / "netload-results" / "results.json").read_text())
    assert [t["outcome"] for t in doc["tests"]] == ["passed", "error", "passed"]
    assert "Segmentation fault" in doc["tests"][1]["error"]
    assert doc["session"]["engine_crashes"] == ["test_crashing.py::test_crash"]
    page = (pytester.path / "netload-results" / "report.html").read_text()
    assert '<div class="word">ERROR</div>' in page


CRASH_AT_OPEN_CONFTEST = """
from pytest_netload.engine import client

_port = client.Engine.port
CRASHED = []


def _crash_once(self, *args, **kwargs):
    if not CRASHED:  # the first port the session opens: the host dies while opening it
        CRASHED.append(self.hello["pid"])
        self.crash_for_test()
    return _port(self, *args, **kwargs)


client.Engine.port = _crash_once
"""

CRASH_AT_OPEN_SUITE = """
def test_first(netload_ports):
    pass


def test_second(netload_engine, netload_ports, rate_controller):
    from pytest_netload import udp

    from conftest import CRASHED

    assert netload_engine.hello["pid"] != CRASHED[0], "a fresh engine host"
    result = rate_controller(rate="5kpps").run(udp(size=64), count=500)
    assert result.run.streams[0].tx_packets == 500 and result.run.lost == 0


def test_third(netload_ports):
    assert all(p.alive for p in netload_ports.ports.values())
"""


def test_a_crash_while_the_session_opens_its_ports_costs_one_test(
        pytester: pytest.Pytester) -> None:
    """The ports are a session fixture: a crash while opening them errors the test being
    set up, not every later one (pytest would cache a session fixture's error)."""
    pytester.makeconftest(CRASH_AT_OPEN_CONFTEST)
    pytester.makepyfile(test_crash_at_open=CRASH_AT_OPEN_SUITE)
    result = pytester.runpytest_subprocess("--netload-topology=loopback", "-p",
                                           "no:cacheprovider", "-rA", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at setup of test_first*",
                                 "*EngineCrashed: engine host died or hung during 'crash'*"])
    doc = json.loads((pytester.path / "netload-results" / "results.json").read_text())
    assert [t["outcome"] for t in doc["tests"]] == ["error", "passed", "passed"]
    assert doc["session"]["engine_crashes"] == ["test_crash_at_open.py::test_first"]


# ---- worker CPUs -----------------------------------------------------------------------------


def test_two_engines_never_share_a_worker_cpu(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    locks = tmp_path / "locks"
    monkeypatch.setenv(LOCK_DIR_ENV, str(locks))  # the engine hosts inherit it
    cpus = sorted(os.sched_getaffinity(0))
    # isolate_workers=False: this process keeps every CPU in its affinity, so the second
    # engine may ask for the first one's worker CPU, as another session would
    with Engine(log_dir=str(tmp_path), cpu_wait_s=0.3, isolate_workers=False) as first:
        workers = first.hello["worker_cpus"]
        pid = first.hello["pid"]
        held = json.loads(cpu_lock_path(workers[-1], locks).read_text())
        assert held["pid"] == pid and held["for_pid"] == os.getpid()
        assert "pytest" in held["for_cmdline"]

        asked = Engine(lcores=[workers[-1]], log_dir=str(tmp_path), cpu_wait_s=0.3)
        try:
            with pytest.raises(ResourceBusy, match=rf"CPU {workers[-1]} by pid {pid} \("):
                asked.start()
        finally:
            asked.close()

        other = Engine(log_dir=str(tmp_path), cpu_wait_s=0.3)
        try:
            if len(cpus) == 1:  # nothing else to run on
                with pytest.raises(ResourceBusy, match=f"by pid {pid}"):
                    other.start()
                return
            with pytest.warns(NetloadWarning, match=f"CPU {workers[-1]} by pid {pid}"):
                other.start()
            assert not set(other.hello["worker_cpus"]) & set(workers)
            port = other.port("net_null0")
            r = other.run([other.load(port, Stream(_template(), size=64, name="n"))], [],
                          count=1000)
            assert r.streams[0].tx_packets == 1000
        finally:
            other.close()
    lock = try_claim(cpu_lock_path(workers[-1], locks), {})  # closed: free again
    assert lock is not None
    lock.release()


def _template() -> bytes:
    return (Eth(dst="02:00:00:00:00:02", src="02:00:00:00:00:01") / IPv4() / UDP()).build()


# ---- invalid trials ---------------------------------------------------------------------------

LOAD_PPS = 20_000.0
TRIAL_S = 2.0


def _trial(engine: Engine, tx: Any, rx: Any, stream: Any,
           during: Any = None) -> tuple[Any, str | None]:
    """A CBR trial as the RFC 2544 measurer runs it; `during` runs once, 0.5 s in."""
    phases = tuple(CBR().phases(lambda _r: LOAD_PPS, Rate(LOAD_PPS, "pps"), seed=1))
    started = time.monotonic()
    done: list[bool] = []

    def poll(status: dict[str, Any]) -> None:
        if during is not None and not done and time.monotonic() - started > 0.5:
            done.append(True)
            during()

    run = engine.run([Tx(stream, 0, phases)], [rx], duration_s=TRIAL_S, drain_s=0.2,
                     progress=poll)
    s = run.streams[0]
    return run, generator_failure(run, s, LOAD_PPS * TRIAL_S, LOAD_PPS, TRIAL_S)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


def test_a_stalled_or_unlinked_generator_makes_the_trial_invalid(tmp_path: Path) -> None:
    with build("loopback", backend="af_packet") as built, \
            Engine(log_dir=str(tmp_path)) as engine:
        flow = built.topology.flows()[0]
        assert flow.tx.device is not None and flow.rx.device is not None
        tx, rx = engine.port(flow.tx.device), engine.port(flow.rx.device)
        stream = engine.load(tx, Stream((Eth(dst=flow.dst_mac, src=flow.src_mac) / IPv4() /
                                         UDP()).build(), size=64, name="probe"))
        # a calm generator: valid
        run, reason = _trial(engine, tx, rx, stream)
        assert reason is None, reason
        assert run.ports[tx.device]["link_up_before"] == 1
        assert run.ports[tx.device]["iface_carrier_down"] == 0

        # the generator's process stopped 0.4 s mid-trial: it catches up, loses nothing,
        # and the lag it measured makes the trial invalid
        host = engine.hello["pid"]

        def stall() -> None:
            os.kill(host, signal.SIGSTOP)
            try:
                time.sleep(0.4)
            finally:
                os.kill(host, signal.SIGCONT)

        run, reason = _trial(engine, tx, rx, stream, stall)
        s = run.streams[0]
        assert s.tx_max_lag_ns > 0.3e9
        assert reason is not None and "the generator lagged" in reason, reason

        # the generator's link went down for 0.2 s mid-trial
        iface = flow.rx.iface
        assert iface is not None

        def flap() -> None:
            _ip("link", "set", "dev", iface, "down")
            try:
                time.sleep(0.2)
            finally:
                _ip("link", "set", "dev", iface, "up")

        try:
            run, reason = _trial(engine, tx, rx, stream, flap)
        finally:
            _ip("link", "set", "dev", iface, "up")
        # the veth peer's carrier went with it (DPDK's own link state of an af_packet port
        # stays up: the host reads the interface's). The flap came and went inside one
        # poll slice (the callback held the poll loop), so the carrier counter placed it.
        assert run.ports[tx.device]["iface_carrier_down"] >= 1
        assert reason is not None and reason.startswith(
            (f"link down on {tx.device} at t=", f"link down on {rx.device} at t=")), reason
        assert "(a flap: down and up again since t=" in reason, reason
        down = next(e for e in run.link_events if e["event"] == "link_down")
        assert 0.4 < down["t_s"] < 1.5 and down["since_s"] < down["t_s"], run.link_events
