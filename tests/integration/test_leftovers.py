"""Nothing left behind: a pytest session killed while a test runs on the built-in netns-router.

Each test starts a session in a subprocess (its own process group) whose one test holds
`netload_ports` and sleeps, checks that the namespace, both generator veths, the engine host's
DPDK runtime dir and the engine log dir exist, then:
- SIGTERM (to pytest alone, or to its process group with the engine host): the session unwinds
  like Ctrl-C and, once it has exited, none of them is left;
- SIGKILL to the process group: all of them are left, and the next session's start removes them
  (and a partial report file of a dead writer), naming what it removed.
A failed EAL start removes the runtime dir it made.
Whatever a test leaves on failure is removed by the same sweep the sessions use.
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_netload import errors
from pytest_netload.engine.client import Engine
from pytest_netload.plugin.cleanup import sweep

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces and runs DPDK: needs root"),
]

REPO = Path(__file__).resolve().parents[2]
HOLD_TEST = '''
import os, time

def test_hold(netload_ports):
    with open(os.environ["NETLOAD_TEST_READY"], "w") as f:
        f.write("ready")
    time.sleep(300)
'''
PR_SET_CHILD_SUBREAPER = 36
START_TIMEOUT_S = 120.0
EXIT_TIMEOUT_S = 60.0


@dataclass
class Session:
    proc: subprocess.Popen[str]
    report_dir: Path
    host_pid: int = 0
    started: float = 0.0  # time.time() before it started

    def wait(self, timeout_s: float = EXIT_TIMEOUT_S) -> tuple[int, str]:
        out, _ = self.proc.communicate(timeout=timeout_s)
        return self.proc.returncode, out


def _env(ready: Path | None = None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    if ready is not None:
        env["NETLOAD_TEST_READY"] = str(ready)
    return env


def _pytest(where: Path, *args: str, ready: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
         f"--rootdir={where}", f"--netload-report-dir={where / 'reports'}", *args],
        cwd=where, env=_env(ready), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            found += [int(c) for c in Path(path).read_text().split()]
        except OSError:
            continue
    return found


def leftovers(session_pid: int, host_pid: int, since: float = 0.0) -> dict[str, list[str]]:
    """What of a session (pytest pid) and its engine host exists now. Log dirs are named
    after the client's pid: one made before `since` (the session's start) belongs to an
    earlier process that had the same pid (a crash log is kept for a day), not to this one."""
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                           check=True).stdout
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                           check=True).stdout
    return {
        "netns": [line.split()[0] for line in netns.splitlines()
                  if re.search(rf"-dut-{session_pid}\.\d+", line)],
        "veths": [line.split(":")[1].strip().split("@")[0] for line in links.splitlines()
                  if f"alias pytest-netload pid={session_pid} " in line],
        "runtime dirs": glob.glob(f"/var/run/dpdk/netload-{host_pid}-*"),
        "log dirs": [d for d in glob.glob(os.path.join(tempfile.gettempdir(),
                                                       f"netload-engine-{session_pid}-*"))
                     if _made_since(d, since)],
    }


def _made_since(path: str, since: float) -> bool:
    try:
        return os.stat(path).st_ctime >= since - 1.0
    except OSError:
        return False


def _nothing(found: dict[str, list[str]]) -> dict[str, list[str]]:
    return {k: v for k, v in found.items() if v}


def _state(pid: int) -> str:
    """The process's state letter ("Z": a zombie, not reaped yet), "" when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def _reap(pid: int, timeout_s: float = 10.0) -> None:
    """Reap our zombie `pid`. A killed multi-threaded process (the engine host, with its
    lcore threads) shows "Z" while its other threads still exit, and cannot be reaped
    until they have: one WNOHANG try then left it a zombie, whose pid counts as alive, so
    the next session did not sweep its runtime dir (CI failed on that, now and then)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return  # reaped, or not our child
        if done == pid or time.monotonic() > deadline:
            return
        time.sleep(0.02)


def _set_subreaper(on: bool) -> None:
    """Orphaned descendants (the engine host of a killed session) become our children.
    Until we reap them they are zombies, whose pids still count as alive: so no other
    session on the machine sweeps their leftovers before this test has looked."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


@pytest.fixture
def held_session(tmp_path: Path) -> Iterator[Session]:
    """A pytest session whose test holds the netns-router's ports and sleeps; killed and
    swept after the test, whatever happened."""
    _set_subreaper(True)
    # AF_PACKET ports: an engine host with AF_XDP sockets stayed runnable for more than
    # the 10 s this test gives a SIGKILLed one to die (the kernel tearing its sockets down)
    (tmp_path / "pytest.ini").write_text("[pytest]\nnetload_backend = af_packet\n")
    (tmp_path / "test_hold.py").write_text(HOLD_TEST)
    ready = tmp_path / "ready"
    started = time.time()
    session = Session(_pytest(tmp_path, "-q", "test_hold.py", ready=ready),
                      tmp_path / "reports", started=started)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready.exists():
            if session.proc.poll() is not None or time.monotonic() > deadline:
                out = session.proc.communicate(timeout=10)[0] if session.proc.poll() is not None \
                    else "(still running)"
                pytest.fail(f"the held session did not reach its test:\n{out}")
            time.sleep(0.1)
        hosts = [pid for pid in _children(session.proc.pid)
                 if glob.glob(f"/var/run/dpdk/netload-{pid}-*")]
        assert len(hosts) == 1, f"engine hosts among the session's children: {hosts}"
        session.host_pid = hosts[0]
        found = leftovers(session.proc.pid, session.host_pid, session.started)
        assert (len(found["netns"]), len(found["veths"]), len(found["runtime dirs"]),
                len(found["log dirs"])) == (1, 2, 1, 1), found
        yield session
    finally:
        if session.proc.poll() is None:
            os.killpg(session.proc.pid, signal.SIGKILL)
            session.proc.communicate(timeout=30)
        deadline = time.monotonic() + 10
        while session.host_pid and _state(session.host_pid) not in ("", "Z") \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        _reap(session.host_pid)
        _set_subreaper(False)
        sweep(session.report_dir)


def _gone(session: Session, timeout_s: float = 10.0) -> None:
    """The engine host ended (reaped, or a zombie of ours: then reaped here)."""
    deadline = time.monotonic() + timeout_s
    while _state(session.host_pid) not in ("", "Z") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _state(session.host_pid) in ("", "Z"), "the engine host outlived its session"
    _reap(session.host_pid)


@pytest.mark.parametrize("to_group", [False, True], ids=["pytest", "process-group"])
def test_sigterm_leaves_nothing_behind(held_session: Session, to_group: bool) -> None:
    if to_group:
        os.killpg(held_session.proc.pid, signal.SIGTERM)
    else:
        os.kill(held_session.proc.pid, signal.SIGTERM)
    rc, out = held_session.wait()
    assert rc == pytest.ExitCode.INTERRUPTED, out
    assert "SIGTERM" in out, out
    _gone(held_session)
    assert _nothing(leftovers(held_session.proc.pid, held_session.host_pid,
                              held_session.started)) == {}, out


def test_sigkill_leftovers_go_with_the_next_session(held_session: Session,
                                                   tmp_path: Path) -> None:
    session, host = held_session.proc.pid, held_session.host_pid
    os.killpg(session, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while {_state(session), _state(host)} != {"Z"} and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (_state(session), _state(host)) == ("Z", "Z")  # dead, not reaped: not swept yet
    left = leftovers(session, host, held_session.started)
    assert {k: len(v) for k, v in left.items()} == \
        {"netns": 1, "veths": 2, "runtime dirs": 1, "log dirs": 1}, left
    held_session.wait()
    _gone(held_session)
    # a report writer killed between its write and its rename (the host pid is dead too)
    partial = held_session.report_dir / f".results.json.{held_session.host_pid}.abcd1234.tmp"
    partial.parent.mkdir(parents=True, exist_ok=True)
    partial.write_text("{")

    # a netload session (one without a netload test sweeps nothing: plugin/selection.py)
    (tmp_path / "test_next.py").write_text(
        "import pytest\n\n@pytest.mark.netload\ndef test_next():\n    pass\n")
    rc, out = Session(_pytest(tmp_path, "test_next.py"), held_session.report_dir).wait()
    assert rc == 0, out
    assert _nothing(leftovers(held_session.proc.pid, held_session.host_pid,
                              held_session.started)) == {}, out
    assert not partial.exists(), out
    # Other sessions on the machine sweep too: only the partial file is surely this one's.
    removed = re.search(r"netload: removed \d+ leftovers of sessions that ended without "
                        r"cleaning up: (.*)", out)
    # the line names the first six (a hugepage file is a seventh where hugepages are used)
    assert removed is not None, out
    assert partial.name in removed.group(1) or re.search(r" and \d+ more$", removed.group(1)), out


def test_failed_eal_start_removes_its_runtime_dir(tmp_path: Path) -> None:
    """A secondary process without a primary fails after its EAL made the runtime dir."""
    prefix = f"nltest-{secrets.token_hex(4)}"
    args = ["netload", "-l", str(min(os.sched_getaffinity(0))), "--file-prefix", prefix,
            "--no-telemetry", "--no-pci", "--no-huge", "-m", "64", "--proc-type=secondary"]
    engine = Engine(eal_args=args, log_dir=str(tmp_path))
    try:
        with pytest.raises(errors.NetloadError, match="EAL start") as failed:
            engine.start()
        assert not os.path.exists(f"/var/run/dpdk/{prefix}"), failed.value
    finally:
        engine.close()
        shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)
