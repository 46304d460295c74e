"""Clean when done: a session that ends normally, its netload test failing, with a busy
loop on one CPU, leaves nothing on the machine.

Nothing of it stays: no namespace or veth of its built-in DUT, no DPDK runtime dir or
hugepage file of its engine host, no engine log dir, no lock still held. Two paths left
an engine's files until the next session's sweep:
- every normal end where hugepages are mounted left the host's hugepage file
  (`/dev/hugepages/netload-<pid>-<hex>map_0`, 1 GiB with --single-file-segments):
  rte_eal_cleanup unmaps it, and removing the runtime dir left it; now
  `leftovers.remove_runtime_dir` removes the EAL's own hugepage files with its dir;
- a host whose `hello` had not answered when its client ended it (a start that failed,
  timed out or was cut short, as under CPU load) was killed after execnet's 5 s before
  its own cleanup, and the client, which knew the runtime dir only from that answer's
  EAL arguments, removed nothing (a 12.6 MB runtime dir was seen); now the client also
  removes what its host's pid left once the pid is gone (`remove_host_leftovers`).
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_netload import errors
from pytest_netload.engine.client import Engine
from pytest_netload.locks import try_claim

from test_leftovers import _env, _reap, _set_subreaper, _state, leftovers

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces and runs DPDK: needs root"),
]

FAILING_SUITE = '''
import os
import pytest

@pytest.mark.netload(rate="2kpps", duration="0.5s")
def test_fails(netload_engine, netload_ports, traffic, rate_controller):
    with open(os.environ["NETLOAD_TEST_READY"], "a") as f:
        f.write(f"{netload_engine.hello['pid']}\\n")
    rate_controller().run(traffic.udp(size=64))
    assert False, "a DUT verdict"

@pytest.mark.netload
def test_passes(netload_ports):
    pass
'''


@pytest.fixture
def busy_cpu() -> Iterator[int]:
    """A busy loop on one CPU pytest may use (the last), for the whole test."""
    cpu = max(os.sched_getaffinity(0))
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        os.sched_setaffinity(proc.pid, {cpu})
        yield cpu
    finally:
        proc.kill()
        proc.wait()


def hugepage_files(host_pid: int) -> list[str]:
    """The hugepage files an engine host's EAL made (netload-<pid>-<hex>map_<n>)."""
    with open("/proc/mounts", encoding="ascii", errors="replace") as f:
        mounts = [p[1] for p in (line.split() for line in f)
                  if len(p) > 2 and p[2] == "hugetlbfs"]
    return [path for mount in mounts
            for path in glob.glob(os.path.join(glob.escape(mount), f"netload-{host_pid}-*map_*"))]


def held_locks(lock_dir: Path) -> list[str]:
    """Lock files someone still holds (a lock lives as long as its holder: locks.py)."""
    held = []
    for path in sorted(lock_dir.glob("*.lock")):
        lock = try_claim(path, {"pid": os.getpid(), "what": "test_normal_end"})
        if lock is None:
            held.append(str(path))
        else:
            lock.release()
    return held


def _ended(pid: int, timeout_s: float = 10.0) -> None:
    """`pid` ended (reaped here when it was orphaned to us: the subreaper)."""
    deadline = time.monotonic() + timeout_s
    while _state(pid) not in ("", "Z") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _state(pid) in ("", "Z"), f"engine host {pid} outlived its session"
    _reap(pid)


def test_a_failing_session_on_a_busy_cpu_leaves_nothing(tmp_path: Path, busy_cpu: int) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nnetload_backend = af_packet\n")
    (tmp_path / "test_fails.py").write_text(FAILING_SUITE)
    hosts_file = tmp_path / "host-pids"
    lock_dir = tmp_path / "locks"
    env = dict(_env(hosts_file), NETLOAD_LOCK_DIR=str(lock_dir))
    env.pop("CI", None)
    _set_subreaper(True)  # an engine host that outlived its session is ours to look at
    started = time.time()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
             f"--rootdir={tmp_path}", f"--netload-report-dir={tmp_path / 'reports'}"],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, start_new_session=True)
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == pytest.ExitCode.TESTS_FAILED, out
        assert "1 failed, 1 passed" in out, out
        hosts = sorted({int(p) for p in hosts_file.read_text().split()})
        assert hosts, out
        for host in hosts:
            _ended(host)
        left: dict[str, Any] = {}
        for host in hosts:
            found = {k: v for k, v in leftovers(proc.pid, host, started).items() if v}
            if hugepage_files(host):
                found["hugepage files"] = hugepage_files(host)
            if found:
                left[f"engine host {host}"] = found
        assert left == {}, out
        assert held_locks(lock_dir) == [], out
    finally:
        _set_subreaper(False)


class _Recorded(Engine):
    """An Engine that notes its host's pid when it ends the host."""

    host_pids: list[int]

    def _terminate(self) -> None:
        popen = self._host_popen
        if popen is not None:
            self.host_pids.append(popen.pid)
        super()._terminate()


def test_an_engine_start_cut_short_leaves_no_runtime_dir(tmp_path: Path, busy_cpu: int) -> None:
    """The second path: the host's EAL starts, its `hello` does not answer in time, and
    the client ends the host without knowing its EAL arguments."""
    engine = _Recorded(log_dir=str(tmp_path), call_timeout_s=0.05, cpu_wait_s=0.0)
    engine.host_pids = []
    _set_subreaper(True)
    try:
        with pytest.raises(errors.EngineCrashed):
            engine.start()
        engine.close()
        assert engine.host_pids, "the engine host never started"
        for host in engine.host_pids:
            _ended(host)
            assert glob.glob(f"/var/run/dpdk/netload-{host}-*") == []
            assert hugepage_files(host) == []
    finally:
        engine.close()
        _set_subreaper(False)
