"""A private Open vSwitch with its DPDK datapath as a DUT: its own ovsdb-server and
ovs-vswitchd, started, driven, read and stopped, whatever happens to their owner.

:class:`PrivateOvs` starts an OVS of its own under one instance dir: its database,
its sockets, its pid files and its logs there (``OVS_RUNDIR``, ``OVS_DBDIR``,
``OVS_LOGDIR`` and ``OVS_SYSCONFDIR`` point at it), and every command names that
database (``ovs-vsctl --db=unix:...``), that daemon (``ovs-appctl -t ...``) and that
bridge (``ovs-ofctl ... unix:...mgmt``) explicitly, so the system's OVS (its default
database, sockets and service) is never read nor touched. ovs-vswitchd runs Debian's
DPDK build by path (``/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk``; the
``ovs-vswitchd`` alternative is left as it is) inside a network namespace of its own:
a netdev datapath makes persistent tap devices (``ovs-netdev``, one per bridge) that
outlive the daemon, and they go with the namespace.

Both daemons run in the foreground as our children, pinned to the DUT's CPU (the one
its poll-mode thread busy-polls, claimed with the engine's CPU lock, which they
inherit). They die with their owner: from the main thread through Linux's
parent-death signal, and from any thread through a watchdog (a small ``sh`` holding
a pipe from us) that, when the pipe closes without a "done", kills them and removes
the namespace and the dirs. What a killed owner may still leave (the socket dir,
DPDK's runtime dir ``netload-<owner pid>-<hex>``) is the sweeps' (cleanup.py,
engine/leftovers.py).

The parsers (:func:`parse_port_stats`, :func:`parse_pmd_stats`, :func:`parse_version`)
are pure.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO

from pytest_netload.errors import NetloadEnvironmentError
from pytest_netload.locks import HostLock
from pytest_netload.topology.builtin.testpmd_proc import die_with_parent, end_after

__all__ = ["OVS_VSWITCHD_DPDK", "PrivateOvs", "machine_took_the_pmd", "parse_pmd_stats",
           "parse_port_stats", "parse_version"]

OVS_VSWITCHD_DPDK = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
OVS_SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
START_TIMEOUT_S = 30.0    # a daemon's start: its socket, DPDK initialised
COMMAND_TIMEOUT_S = 15.0  # one ovs-vsctl / ovs-appctl / ovs-ofctl call
STOP_TIMEOUT_S = 10.0     # `exit` to gone, before SIGTERM and then SIGKILL
DPDK_RUNTIME_DIR = "/var/run/dpdk"
# A trial is the machine's when another task took the PMD's CPU: in long slices (a mean
# wait of STALL_NS a preemption, CPU_WAIT_SHARE of the trial in all), or for
# BUSY_WAIT_SHARE of it however sliced. A quiet PMD waits too: here 5 to 7 % of a trial
# in thousands of 15-us waits (kernel threads, short commands), harmless
CPU_WAIT_SHARE = 0.01
STALL_NS = 1_000_000
BUSY_WAIT_SHARE = 0.15
_INSTALL_HINT = ("Debian: apt-get install openvswitch-switch-dpdk, which scripts/setup.sh "
                 "installs")

# The watchdog: reads pids, one a line, from our pipe; "done" disarms it. When the pipe
# closes without "done" (its owner died), it stops every pid that is still an OVS
# daemon, then removes the namespace and the dirs. $1 namespace, $2.. dirs.
_WATCHDOG = r"""
ns=$1; shift
pids=
while IFS= read -r line; do
  case $line in
    done) exit 0 ;;
    *[!0-9]*|'') ;;
    *) pids="$pids $line" ;;
  esac
done
ours() { case $(readlink "/proc/$1/exe" 2>/dev/null) in *ovs*) return 0 ;; esac; return 1; }
for p in $pids; do ours "$p" && kill -TERM "$p" 2>/dev/null; done
n=0
while [ $n -lt 30 ]; do
  left=
  for p in $pids; do ours "$p" && left=1; done
  [ -z "$left" ] && break
  sleep 0.1; n=$((n + 1))
done
for p in $pids; do ours "$p" && kill -KILL "$p" 2>/dev/null; done
ip netns delete "$ns" 2>/dev/null
rm -rf "$@"
"""

_PORT_HEAD = re.compile(r"^\s*port\s+(\S+?):\s*(rx|tx)\s+(pkts=.*)$")
_DIRECTION = re.compile(r"^\s*(rx|tx)\s+(pkts=.*)$")
_PAIR = re.compile(r"([A-Za-z0-9_]+)=(\d+|\?)")
_PORT_KEYS = {"pkts": "packets", "bytes": "bytes", "drop": "dropped", "errs": "errors",
              "frame": "frame_errors", "over": "over_errors", "crc": "crc_errors",
              "coll": "collisions"}


def _direction_counts(direction: str, text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, value in _PAIR.findall(text):
        if value == "?":  # the device does not count it
            continue
        name = _PORT_KEYS.get(key)
        if name is None:
            continue
        out["collisions" if name == "collisions" else f"{direction}_{name}"] = int(value)
    return out


def parse_port_stats(text: str) -> dict[str, dict[str, int]]:
    """``ovs-ofctl -O OpenFlow14 dump-ports BRIDGE`` as {OpenFlow port ("1", "LOCAL"):
    {"rx_packets", "rx_bytes", "rx_dropped", "tx_packets", "tx_bytes", "tx_dropped", ...,
    and its custom statistics ("ovs_tx_failure_drops", "ovs_rx_qos_drops", ...)}}.

    A counter the device does not keep ("errs=?") is left out; so are the RFC 2819 size
    histograms."""
    out: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    custom = False
    for line in text.splitlines():
        head = _PORT_HEAD.match(line)
        if head:
            current = out.setdefault(head.group(1), {})
            custom = False
            current.update(_direction_counts(head.group(2), head.group(3)))
            continue
        if current is None:
            continue
        stripped = line.strip()
        direction = _DIRECTION.match(line)
        if direction and not custom:
            current.update(_direction_counts(direction.group(1), direction.group(2)))
        elif stripped.startswith("CUSTOM Statistics"):
            custom = True
        elif custom:
            for key, value in _PAIR.findall(stripped):
                if value != "?":
                    current[key] = int(value)
    return out


_PMD_HEAD = re.compile(r"^(pmd thread .*|main thread):\s*$")
_PMD_LINE = re.compile(r"^\s+([a-z][a-z .\-]*[a-z]):\s+(\d+)")


def parse_pmd_stats(text: str) -> dict[str, dict[str, int]]:
    """``ovs-appctl dpif-netdev/pmd-stats-show`` as {"pmd thread numa_id 0 core_id 1":
    {"packets received": n, "miss with failed upcall": n, "idle cycles": n, ...}}: each
    line's first integer (averages and percentages are left out)."""
    out: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for line in text.splitlines():
        head = _PMD_HEAD.match(line)
        if head:
            current = out.setdefault(head.group(1), {})
            continue
        found = _PMD_LINE.match(line)
        if current is not None and found and not found.group(1).startswith("avg"):
            current[found.group(1)] = int(found.group(2))
    return out


def parse_version(text: str) -> tuple[str, str]:
    """``ovs-vswitchd --version`` as (OVS version, DPDK version): ("3.1.0", "DPDK 22.11.11");
    "" for what it does not print."""
    ovs = re.search(r"\(Open vSwitch\)\s+(\S+)", text)
    dpdk = re.search(r"^(DPDK\s+\S+)", text, re.MULTILINE)
    return (ovs.group(1) if ovs else "", dpdk.group(1) if dpdk else "")


def machine_took_the_pmd(waited_ns: int, preemptions: int, duration_s: float,
                         cpu: int | str = "?") -> str | None:
    """Why a trial with OVS's PMD thread preempted `preemptions` times, waiting
    `waited_ns` in all, measured the machine rather than OVS; None when it did not.

    It did when another task took the PMD's CPU in long slices (a mean wait per
    preemption of at least STALL_NS, and CPU_WAIT_SHARE of the trial in all), or for
    BUSY_WAIT_SHARE of the trial however sliced. A stall lets the vhost rings fill, then
    hands OVS, and its policer, a burst: frames lost that a DUT on a CPU of its own
    passes. A quiet PMD waits too, when a kernel thread or a short command runs on its
    CPU: thousands of waits of microseconds, a few % of a trial, harmless."""
    stall_ns = waited_ns / max(preemptions, 1)
    share = waited_ns / 1e9 / duration_s if duration_s > 0 else 0.0
    if share < BUSY_WAIT_SHARE and (share < CPU_WAIT_SHARE or stall_ns < STALL_NS):
        return None
    return (f"OVS's PMD thread waited {waited_ns / 1e6:.1f} ms for its CPU {cpu} during "
            f"the {duration_s:g} s trial ({share:.1%}), {stall_ns / 1e6:.2f} ms at a time "
            f"({preemptions} preemptions): another task ran on the DUT's CPU, so the trial "
            "measured the machine, not OVS")


def _tail(path: str, lines: int = 15) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "\n".join(f.read().splitlines()[-lines:])
    except OSError:
        return f"(no {os.path.basename(path)})"


def installed() -> str | None:
    """What is missing to run a private OVS-DPDK, in words; None when nothing is."""
    missing = [tool for tool in ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-appctl",
                                 "ovs-ofctl", "ip", "taskset") if shutil.which(tool) is None]
    if not os.access(OVS_VSWITCHD_DPDK, os.X_OK):
        missing.append(OVS_VSWITCHD_DPDK)
    if not os.path.exists(OVS_SCHEMA):
        missing.append(OVS_SCHEMA)
    return ", ".join(missing) or None


class PrivateOvs:
    """One private OVS: `folder` its instance dir (made here, removed by :meth:`stop`),
    `namespace` the network namespace ovs-vswitchd runs in (made by the caller), `cpu`
    the CPU both daemons run on and the PMD thread busy-polls (`lock` its claim, held
    while they live). `dpdk_extra` are DPDK's EAL arguments
    (``other_config:dpdk-extra``); `config` more ``other_config`` keys. `leftovers` are
    more dirs the watchdog removes when the owner dies (the caller's socket dir)."""

    def __init__(self, folder: str, *, namespace: str, cpu: int, lock: HostLock,
                 dpdk_extra: Sequence[str], config: Mapping[str, str] | None = None,
                 leftovers: Sequence[str] = ()) -> None:
        missing = installed()
        if missing:
            raise NetloadEnvironmentError(
                f"Open vSwitch with DPDK is not installed ({missing} missing): the ovs-dpdk "
                f"DUT runs a private one ({_INSTALL_HINT})")
        self.folder = folder
        self.namespace = namespace
        self.cpu = cpu
        self._lock = lock
        self.file_prefix = f"netload-{os.getpid()}-{secrets.token_hex(3)}"
        self.dpdk_extra = [*dpdk_extra, f"--file-prefix={self.file_prefix}"]
        self.config = {"dpdk-init": "true", "pmd-cpu-mask": f"0x{1 << cpu:x}",
                       "dpdk-extra": " ".join(self.dpdk_extra), **dict(config or {})}
        self.leftovers = tuple(leftovers)
        self.db_sock = os.path.join(folder, "db.sock")
        self.vswitchd_ctl = os.path.join(folder, "ovs-vswitchd.ctl")
        self.env = {**os.environ, "OVS_RUNDIR": folder, "OVS_DBDIR": folder,
                    "OVS_LOGDIR": folder, "OVS_SYSCONFDIR": folder}
        self.ovsdb: subprocess.Popen[bytes] | None = None
        self.vswitchd: subprocess.Popen[bytes] | None = None
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._outputs: list[IO[bytes]] = []
        self.ovs_version, self.dpdk_version = parse_version(self._run(
            [OVS_VSWITCHD_DPDK, "--version"]).stdout)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        self._start_watchdog()
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    # ---- processes ----------------------------------------------------------------

    def _runtime_dir(self) -> str:
        return os.path.join(DPDK_RUNTIME_DIR, self.file_prefix)

    def _start_watchdog(self) -> None:
        self._watchdog = subprocess.Popen(  # noqa: S603 - our own script
            ["/bin/sh", "-c", _WATCHDOG, "ovs-watchdog", self.namespace, self.folder,
             self._runtime_dir(), *self.leftovers], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def _watch(self, proc: subprocess.Popen[bytes]) -> None:
        if self._watchdog is not None and self._watchdog.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                self._watchdog.stdin.write(f"{proc.pid}\n".encode())
                self._watchdog.stdin.flush()

    def _spawn(self, argv: Sequence[str], name: str) -> subprocess.Popen[bytes]:
        out = open(os.path.join(self.folder, f"{name}.out"), "ab")  # noqa: SIM115 - stop() closes
        self._outputs.append(out)
        proc = subprocess.Popen(  # noqa: S603 - our own argv
            list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            env=self.env, cwd=self.folder,
            pass_fds=(self._lock.fd,) if self._lock.fd is not None else (),
            # the parent-death signal follows the thread that forks: only from the main
            # thread; from any thread the watchdog stops it when its owner is gone
            preexec_fn=die_with_parent if threading.current_thread() is
            threading.main_thread() else None, start_new_session=True)
        self._watch(proc)
        return proc

    def _start(self) -> None:
        db = os.path.join(self.folder, "ovsdb-server.db")
        self._run(["ovsdb-tool", "create", db, OVS_SCHEMA])
        self.ovsdb = self._spawn(
            [*self._taskset(), "ovsdb-server", db, f"--remote=punix:{self.db_sock}",
             f"--pidfile={self.folder}/ovsdb-server.pid",
             f"--unixctl={self.folder}/ovsdb-server.ctl",
             f"--log-file={self.folder}/ovsdb-server.log", "--no-chdir"], "ovsdb-server")
        self._wait_for(self.db_sock, self.ovsdb, "ovsdb-server")
        self.vsctl("--no-wait", "init")
        self.vsctl("--no-wait", "set", "Open_vSwitch", ".",
                   *[f'other_config:{k}="{v}"' for k, v in self.config.items()])
        self._start_vswitchd()

    def _taskset(self) -> list[str]:
        """Every thread but the PMD off the PMD's CPU (where other CPUs are allowed): a
        handler, revalidator or the main loop woken on it would stall the busy-polling
        thread for a scheduler slice, milliseconds in which its rings fill and a policer
        sees a burst. The PMD thread pins itself to `cpu` (pmd-cpu-mask)."""
        others = sorted(os.sched_getaffinity(0) - {self.cpu}) or [self.cpu]
        return ["taskset", "-c", ",".join(map(str, others))]

    def _start_vswitchd(self) -> None:
        # -vdpdk:file:dbg: DPDK's EAL debug line with its TSC frequency reaches the log
        self.vswitchd = self._spawn(
            ["ip", "netns", "exec", self.namespace, *self._taskset(),
             OVS_VSWITCHD_DPDK, f"unix:{self.db_sock}",
             f"--pidfile={self.folder}/ovs-vswitchd.pid", f"--unixctl={self.vswitchd_ctl}",
             f"--log-file={self.log_path}", "--no-chdir", "-vdpdk:file:dbg"],
            "ovs-vswitchd")
        self._wait_for(self.vswitchd_ctl, self.vswitchd, "ovs-vswitchd")
        deadline = time.monotonic() + START_TIMEOUT_S
        while self.vsctl("get", "Open_vSwitch", ".", "dpdk_initialized").strip() != "true":
            self._check_alive(self.vswitchd, "ovs-vswitchd", "DPDK's initialisation")
            if time.monotonic() > deadline:
                raise NetloadEnvironmentError(
                    f"ovs-vswitchd (the DUT) did not initialise DPDK within "
                    f"{START_TIMEOUT_S:g} s; its log ends:\n{_tail(self.log_path)}")
            time.sleep(0.05)

    @property
    def log_path(self) -> str:
        return os.path.join(self.folder, "ovs-vswitchd.log")

    def _check_alive(self, proc: subprocess.Popen[bytes] | None, name: str, what: str) -> None:
        if proc is not None and proc.poll() is not None:
            log = os.path.join(self.folder, f"{name}.log")
            raise NetloadEnvironmentError(
                f"{name} (the DUT's OVS) exited with status {proc.returncode} during {what}; "
                f"its log ends:\n{_tail(log)}\nand it printed:\n"
                f"{_tail(os.path.join(self.folder, f'{name}.out'), 8)}")

    def _wait_for(self, path: str, proc: subprocess.Popen[bytes], name: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not os.path.exists(path):
            self._check_alive(proc, name, "its start")
            if time.monotonic() > deadline:
                raise NetloadEnvironmentError(
                    f"{name} (the DUT's OVS) made no {path} within {START_TIMEOUT_S:g} s; "
                    f"its log ends:\n{_tail(os.path.join(self.folder, f'{name}.log'))}")
            time.sleep(0.02)

    def tsc_hz(self) -> int | None:
        """The TSC frequency DPDK uses in ovs-vswitchd (its meters' clock), from its log;
        None when the log does not say."""
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                found = re.search(r"TSC frequency is ~(\d+) KHz", f.read())
        except OSError:
            return None
        return int(found.group(1)) * 1000 if found else None

    def pmd_schedstat(self) -> dict[str, tuple[int, int, int]]:
        """Per PMD thread of ovs-vswitchd (by its name, "pmd-c01/id:8"), since it started:
        the ns it ran, the ns it waited, runnable, for its CPU (/proc/.../schedstat), and
        how often another task preempted it (nonvoluntary_ctxt_switches)."""
        out: dict[str, tuple[int, int, int]] = {}
        proc = self.vswitchd
        if proc is None or proc.poll() is not None:
            return out
        task = f"/proc/{proc.pid}/task"
        with contextlib.suppress(FileNotFoundError):
            for tid in os.listdir(task):
                try:
                    with open(f"{task}/{tid}/comm", encoding="utf-8") as f:
                        name = f.read().strip()
                    if not name.startswith("pmd"):
                        continue
                    with open(f"{task}/{tid}/schedstat", encoding="ascii") as f:
                        ran, waited = (int(v) for v in f.read().split()[:2])
                    with open(f"{task}/{tid}/status", encoding="ascii") as f:
                        preempted = next(int(line.split()[1]) for line in f
                                         if line.startswith("nonvoluntary_ctxt_switches"))
                except (FileNotFoundError, ProcessLookupError, ValueError, StopIteration):
                    continue  # a thread that ended meanwhile
                out[name] = (ran, waited, preempted)
        return out

    @property
    def alive(self) -> bool:
        return all(p is not None and p.poll() is None for p in (self.ovsdb, self.vswitchd))

    def restart_vswitchd(self) -> None:
        """Stop ovs-vswitchd and start it again on the same database: its ports reconnect
        (the generator's vhost-user ports wait for them as servers); counters from 0."""
        self._end(self.vswitchd, self.vswitchd_ctl)
        shutil.rmtree(self._runtime_dir(), ignore_errors=True)
        self._start_vswitchd()

    def _end(self, proc: subprocess.Popen[bytes] | None, ctl: str) -> None:
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            subprocess.run(["ovs-appctl", "-t", ctl, "exit"], env=self.env,  # noqa: S603,S607
                           capture_output=True, timeout=STOP_TIMEOUT_S, check=False)
        end_after(proc, STOP_TIMEOUT_S)

    def stop(self) -> None:
        """Stop ovs-vswitchd, then ovsdb-server (``exit``, then SIGTERM, then SIGKILL),
        release the CPU, disarm the watchdog and remove the instance dir and DPDK's
        runtime dir. The namespace is the caller's. Idempotent."""
        self._end(self.vswitchd, self.vswitchd_ctl)
        self._end(self.ovsdb, os.path.join(self.folder, "ovsdb-server.ctl"))
        for out in self._outputs:
            out.close()
        self._outputs = []
        self._lock.release()
        shutil.rmtree(self._runtime_dir(), ignore_errors=True)
        shutil.rmtree(self.folder, ignore_errors=True)
        dog = self._watchdog
        if dog is not None and dog.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                assert dog.stdin is not None
                dog.stdin.write(b"done\n")
                dog.stdin.close()
            try:
                dog.wait(5.0)
            except subprocess.TimeoutExpired:
                dog.kill()
                dog.wait()
        self._watchdog = None

    # ---- commands -----------------------------------------------------------------

    def _run(self, argv: Sequence[str], timeout_s: float = COMMAND_TIMEOUT_S,
             stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        # off the PMD's CPU, as the daemons' other threads: a command read around every
        # trial that ran there would take the busy-polling thread's CPU for milliseconds
        argv = [*self._taskset(), *argv]
        try:
            done = subprocess.run(argv, env=self.env, capture_output=True, text=True,  # noqa: S603
                                  timeout=timeout_s, check=False, input=stdin)
        except subprocess.TimeoutExpired as exc:
            raise NetloadEnvironmentError(
                f"{' '.join(argv)} (the DUT's OVS) did not answer within {timeout_s:g} s; "
                f"ovs-vswitchd's log ends:\n{_tail(self.log_path)}") from exc
        if done.returncode != 0:
            raise NetloadEnvironmentError(
                f"{' '.join(argv)} (the DUT's OVS) failed with exit status {done.returncode}: "
                f"{done.stderr.strip() or done.stdout.strip()}")
        return done

    def vsctl(self, *args: str, timeout_s: float = COMMAND_TIMEOUT_S) -> str:
        """One ``ovs-vsctl`` command on this OVS's database; its output. Without
        ``--no-wait`` it returns once ovs-vswitchd applied the change."""
        return self._run(["ovs-vsctl", f"--db=unix:{self.db_sock}",
                          f"--timeout={max(1, int(timeout_s))}", *args],
                         timeout_s + 5.0).stdout

    def appctl(self, *args: str) -> str:
        """One ``ovs-appctl`` command to this ovs-vswitchd (e.g.
        "dpif-netdev/pmd-stats-show"); its output."""
        return self._run(["ovs-appctl", "-t", self.vswitchd_ctl, *args]).stdout

    def wait_for_bridge(self, bridge: str) -> None:
        """Return once ovs-vswitchd serves OpenFlow on `bridge` (after a restart it
        rebuilds its bridges from the database)."""
        self._wait_for(os.path.join(self.folder, bridge + ".mgmt"), self.vswitchd,
                       "ovs-vswitchd")

    def ofctl(self, command: str, bridge: str, *args: str, stdin: str | None = None) -> str:
        """One ``ovs-ofctl`` command on `bridge` of this OVS (OpenFlow 1.4); its output."""
        target = f"unix:{os.path.join(self.folder, bridge + '.mgmt')}"
        return self._run(["ovs-ofctl", "-O", "OpenFlow14", command, target, *args],
                         stdin=stdin).stdout
