"""Machine-wide locks on what one engine host must own alone: its worker CPUs and its
ports (a PCI address or a kernel interface).

A lock is an exclusive `flock` on a file, e.g. /var/run/netload/cpu-3.lock, held
through an open descriptor for as long as its holder lives. The kernel drops it
when the holding process ends, however it ends (close, crash, SIGKILL), so a lock
is never stale; the file itself stays and is reused. The holder writes who it is
into the file (one JSON line: pid, command line, the process it works for, host,
since when), so whoever finds the lock busy can name it.

Which process must hold a lock: the one that uses the resource. For worker CPUs
that is the engine host, whose lcore threads busy-poll them; the lock then dies
with the engine, and an engine host that outlives its pytest process keeps it.

Usage (any resource):

    with claim(lock_dir() / "port-0000:01:00.0.lock", holder_info("port 0000:01:00.0"),
               wait_s=5) as lock:
        ...   # ResourceBusy, naming the holder, when another process keeps it
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import json
import os
import re
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from .errors import ResourceBusy

LOCK_DIR_ENV = "NETLOAD_LOCK_DIR"
ROOT_LOCK_DIR = "/var/run/netload"
POLL_S = 0.1  # how often a waiting claim tries again


def lock_dir() -> Path:
    """Where the lock files live: $NETLOAD_LOCK_DIR, else /var/run/netload for root
    (every session of the machine sees the same locks), else a per-user directory
    ($XDG_RUNTIME_DIR/netload or /tmp/netload-<uid>): sessions of one user see each other."""
    env = os.environ.get(LOCK_DIR_ENV)
    if env:
        return Path(env)
    if os.geteuid() == 0:
        return Path(ROOT_LOCK_DIR)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return Path(runtime) / "netload" if runtime else Path(f"/tmp/netload-{os.geteuid()}")


def cpu_lock_path(cpu: int, directory: Path | None = None) -> Path:
    return (directory or lock_dir()) / f"cpu-{int(cpu)}.lock"


def cmdline(pid: int | None = None) -> str:
    """A process's command line as one string ('' when it cannot be read)."""
    try:
        with open(f"/proc/{pid or os.getpid()}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def holder_info(what: str, **extra: Any) -> dict[str, Any]:
    """Who holds a lock: this process (pid, command line), the host, since when, what
    for; `extra` adds keys such as `for_pid`/`for_cmdline` (the process it works for)."""
    return {"what": what, "pid": os.getpid(), "cmdline": cmdline(), "host": socket.gethostname(),
            "since": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"), **extra}


def describe(holder: Mapping[str, Any] | None) -> str:
    """A holder in words: 'pid 4242 (python3 ...) for pid 4200 (python3 -m pytest ...) on
    host gen1 since 2026-12-01T05:31:02+00:00'."""
    if not holder:
        return "a process that has not written its name into the lock file yet"
    text = f"pid {holder.get('pid', '?')}"
    if holder.get("cmdline"):
        text += f" ({_short(str(holder['cmdline']))})"
    if holder.get("for_pid"):
        text += f" for pid {holder['for_pid']}"
        if holder.get("for_cmdline"):
            text += f" ({_short(str(holder['for_cmdline']))})"
    if holder.get("host"):
        text += f" on host {holder['host']}"
    if holder.get("since"):
        text += f" since {holder['since']}"
    if holder.get("dut"):  # a DPDK DUT busy-polls the CPU (topology/builtin/testpmd.py)
        text = f"the DUT {holder['dut']}, {text}"
    return text


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_holder(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """What the holder of `path` wrote into it; None when empty or unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            data = json.loads(f.read(65536) or "null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class HostLock:
    """A held lock: its file, its open descriptor, and who holds it."""

    path: Path
    fd: int | None
    holder: dict[str, Any] = field(default_factory=dict)

    @property
    def held(self) -> bool:
        return self.fd is not None

    def release(self) -> None:
        """Give the lock up (idempotent); the file stays for the next holder."""
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)  # closing the last descriptor drops the flock

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def try_claim(path: str | os.PathLike[str], holder: Mapping[str, Any]) -> HostLock | None:
    """The lock on `path` if no other open file holds it now, else None (never waits).
    The directory is made when missing. The holder is written into the file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(dict(holder)) + "\n").encode(), 0)
    return HostLock(target, fd, dict(holder))


def claim(path: str | os.PathLike[str], holder: Mapping[str, Any], *, wait_s: float = 0.0,
          what: str | None = None, fix: str = "") -> HostLock:
    """The lock on `path`, waiting up to `wait_s` seconds for its holder to let go;
    ResourceBusy naming `what` (default: the path) and the holder when it does not."""
    deadline = time.monotonic() + max(wait_s, 0.0)
    while True:
        lock = try_claim(path, holder)
        if lock is not None:
            return lock
        if time.monotonic() >= deadline:
            raise ResourceBusy(
                f"{what or path} is held by {describe(read_holder(path))} (lock {path}"
                + (f", waited {wait_s:g} s" if wait_s > 0 else "") + ")"
                + (f"; {fix}" if fix else ""))
        time.sleep(POLL_S)


# ---- ports ------------------------------------------------------------------------------

PORT_FIX = ("wait for that session to end, give this one --netload-port-wait=SECONDS to wait "
            "for it, or use another port: two engines on one port each count what the other "
            "sends and receives")
_PCI = re.compile(r"([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")


def port_lock_name(device: str) -> str | None:
    """What a DPDK device string opens that another process could open too: 'pci-<address>'
    for a PCI port, 'iface-<name>' for a vdev on a kernel interface (AF_PACKET, AF_XDP,
    pcap); None for devices of the process alone (net_null, net_ring, a pcap file)."""
    name, _, args = device.partition(",")
    if _PCI.fullmatch(name):
        return f"pci-{name.lower() if name.count(':') == 2 else '0000:' + name.lower()}"
    for arg in args.split(","):
        key, _, value = arg.partition("=")
        if key.strip() == "iface" and value.strip():
            return f"iface-{value.strip()}"
    return None


def claim_port(device: str, holder: Mapping[str, Any], *, wait_s: float = 0.0,
               directory: Path | None = None) -> HostLock | None:
    """The lock on the port `device` opens, held until released (the engine host holds it
    for as long as the port is open); None for a device no other process can open.
    ResourceBusy naming the port and its holder when another process keeps it past
    `wait_s`. A holder that died left nothing: the kernel dropped its flock."""
    name = port_lock_name(device)
    if name is None:
        return None
    return claim((directory or lock_dir()) / f"port-{name}.lock", holder, wait_s=wait_s,
                 what=f"port {name[name.index('-') + 1:]} ({device})", fix=PORT_FIX)


# ---- worker CPUs ----------------------------------------------------------------------

CPU_FIX = ("wait for it to end, or give this session other CPUs (taskset -c LIST python3 -m "
           "pytest ..., or Engine(lcores=[...])): two busy-polling workers on one CPU each "
           "measure half their rate")


@dataclass
class CpuPlan:
    """The CPUs an engine runs on: a main lcore (it only waits, and may share its CPU)
    and worker CPUs, each held by a lock. `skipped` names the CPUs of the candidates
    that another engine's worker holds (CPU -> holder in words)."""

    main: int
    workers: list[int]
    locks: list[HostLock]
    skipped: dict[int, str] = field(default_factory=dict)

    @property
    def lcores(self) -> list[int]:
        """The CPU list for the EAL: main first; one CPU when the worker shares it."""
        return [self.main] if self.workers == [self.main] else [self.main, *self.workers]

    def note(self) -> str | None:
        """A warning when the plan had to avoid another engine's CPUs; None otherwise."""
        if not self.skipped:
            return None
        held = "; ".join(f"CPU {c} by {who}" for c, who in sorted(self.skipped.items()))
        where = (f"runs its worker on CPU {self.main}, beside its own main lcore (pacing "
                 "may be less precise)" if self.workers == [self.main]
                 else f"runs its workers on CPU(s) {', '.join(map(str, self.workers))}")
        return (f"netload engine: worker CPUs held by another engine or a DPDK DUT were "
                f"skipped ({held}); "
                f"this engine {where}; to measure at full precision, give concurrent sessions "
                "separate CPUs (taskset -c LIST python3 -m pytest ...)")

    def release(self) -> None:
        for lock in self.locks:
            lock.release()


def _plan(cpus: Sequence[int], explicit: bool, take: Callable[[int], HostLock | None],
          who: Callable[[int], str]) -> CpuPlan | dict[int, str]:
    """One try: a plan with every lock it needs, or the busy CPUs (CPU -> holder)."""
    if len(cpus) == 1:
        lock = take(cpus[0])
        return CpuPlan(cpus[0], [cpus[0]], [lock]) if lock else {cpus[0]: who(cpus[0])}
    main, rest = cpus[0], cpus[1:]
    locks: list[HostLock] = []
    busy: dict[int, str] = {}
    for cpu in rest:
        lock = take(cpu)
        if lock is not None:
            locks.append(lock)
        else:
            busy[cpu] = who(cpu)
    if explicit and busy:  # the CPUs asked for, or none
        for lock in locks:
            lock.release()
        return busy
    if locks:
        return CpuPlan(main, [c for c in rest if c not in busy], locks, busy)
    # every other CPU busy-polled by another engine: worker and main share the main's CPU
    lock = take(main)
    if lock is not None:
        return CpuPlan(main, [main], [lock], busy)
    busy[main] = who(main)
    return busy


def _plan_shared(workers: Sequence[int], main: int, take: Callable[[int], HostLock | None],
                 who: Callable[[int], str]) -> CpuPlan | dict[int, str]:
    """One try of a plan whose workers run on every CPU of `workers`, the main lcore on
    `main` (one of them, or not): every worker CPU locked, or the busy ones."""
    locks: list[HostLock] = []
    busy: dict[int, str] = {}
    for cpu in workers:
        lock = take(cpu)
        if lock is not None:
            locks.append(lock)
        else:
            busy[cpu] = who(cpu)
    if busy:
        for lock in locks:
            lock.release()
        return busy
    return CpuPlan(main, list(workers), locks)


def claim_worker_cpus(cpus: Sequence[int], holder: Mapping[str, Any], *, explicit: bool,
                      wait_s: float = 0.0, directory: Path | None = None,
                      main: int | None = None, main_shares: bool = False) -> CpuPlan:
    """Lock the worker CPUs of an engine that may run on `cpus` (the lowest, or `main`
    when given, is its main lcore's; the others are workers).

    `explicit` (the caller named the CPUs): every worker CPU must be free. Otherwise
    the CPUs another engine's worker holds are skipped; when that leaves none, the worker
    waits up to `wait_s` for one to be released (an engine that just closed may still be
    exiting) and then runs on the main lcore's CPU, if no engine's worker holds that one.
    Waits up to `wait_s` for busy CPUs, then raises ResourceBusy naming each holder.

    `main_shares` (with `main`; `explicit` is implied): every CPU of `cpus` is a worker's,
    and the main lcore runs on `main` even where that is one of them. The main lcore
    only waits (it sleeps between short polls), so on two CPUs two workers run.
    """
    chosen = sorted(set(int(c) for c in cpus))
    if not chosen:
        raise ValueError("claim_worker_cpus: no CPU given")
    if main_shares and main is None:
        raise ValueError("claim_worker_cpus: main_shares needs main")
    workers = list(chosen)
    if main is not None:
        chosen = [int(main), *(c for c in chosen if c != main)]
    explicit = explicit or main_shares
    deadline = time.monotonic() + max(wait_s, 0.0)

    def take(cpu: int) -> HostLock | None:
        return try_claim(cpu_lock_path(cpu, directory), {**holder, "what": f"worker CPU {cpu}"})

    def who(cpu: int) -> str:
        return describe(read_holder(cpu_lock_path(cpu, directory)))

    while True:
        result = (_plan_shared(workers, chosen[0], take, who) if main_shares
                  else _plan(chosen, explicit, take, who))
        if isinstance(result, CpuPlan):
            shared = result.skipped and result.workers == [result.main] and len(chosen) > 1
            if not shared or time.monotonic() >= deadline:
                return result
            # A worker on the main lcore's CPU lags by milliseconds: wait for a worker CPU
            # first (an engine that just closed may still be exiting), share only after.
            result.release()
            time.sleep(POLL_S)
            continue
        if time.monotonic() >= deadline:
            held = "; ".join(f"CPU {c} by {who}" for c, who in sorted(result.items()))
            if main_shares:
                asked = f"worker CPU(s) {', '.join(map(str, workers))} asked for"
            elif explicit:
                asked = f"worker CPU(s) {', '.join(map(str, chosen[1:] or chosen))} asked for"
            else:
                asked = f"every CPU this process may use ({', '.join(map(str, chosen))})"
            raise ResourceBusy(
                f"netload engine: {asked}: busy-polled by another engine: {held}"
                + (f" (waited {wait_s:g} s)" if wait_s > 0 else "") + f"; {CPU_FIX}")
        time.sleep(POLL_S)
