"""What engine hosts that died leave on the machine, and its removal.

An engine host removes its DPDK runtime dir when it closes, when its channel
goes away and on SIGTERM; its client removes the log dir it made when it
closes. A SIGKILL, or a machine that went down, skips both. The sweep here
removes what such hosts left, recognised by name and keyed on the pid the
name carries, and never anything of a live process:

- ``/var/run/dpdk/netload-<host pid>-<6 hex>``, the runtime dir of the EAL
  (`facade.default_eal_args`), and ``netload-<host pid>-<6 hex>map_*`` files
  in mounted hugetlbfs, when the host pid no longer runs;
- ``$TMPDIR/netload-engine-<client pid>-*``, the log dir an `Engine` made for
  itself (``engine-<client pid>-<n>.log`` inside), when the client pid no
  longer runs. The log dir of a host that crashed is kept by its client as
  the crash's evidence (the error names it), marked with a ``crashed`` file:
  the sweep leaves it for `CRASH_LOG_KEEP_S`.

The runtime dir of one EAL (:func:`runtime_dir`, :func:`remove_runtime_dir`) is
here too: the facade removes it when its EAL stops, the host on SIGTERM and when
its channel goes away, the client after its host died. A host that ended before
its client learnt its EAL arguments (its `hello` failed, timed out, or was cut
short when the client ended it: a start under CPU load) left a runtime dir the
client could not name by its arguments; :func:`remove_host_leftovers` removes
what a given host pid left, once that pid no longer runs.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence

from ..atomic import pid_alive

__all__ = ["CRASH_LOG_KEEP_S", "mark_crashed", "new_log_dir", "remove_host_leftovers",
           "remove_runtime_dir", "runtime_dir", "runtime_dir_exists", "sweep_engine_logs",
           "sweep_runtime_dirs"]

RUNTIME_PREFIX_RE = re.compile(r"^netload-(\d+)-[0-9a-f]{6}$")
HUGEPAGE_FILE_RE = re.compile(r"^(netload-\d+-[0-9a-f]{6})map_\d+$")
LOG_DIR_PREFIX = "netload-engine-"
LOG_DIR_RE = re.compile(r"^netload-engine-(?:(\d+)-)?[A-Za-z0-9_]{8}$")
LOG_FILE_RE = re.compile(r"^engine-(\d+)-\d+\.log$")
CRASH_MARK = "crashed"
CRASH_LOG_KEEP_S = 24 * 3600.0
UNOWNED_AGE_S = 3600.0  # an older client's log dir with no log in it yet, this old: dead
DPDK_RUNTIME_DIR = "/var/run/dpdk"


def runtime_dir(args: Sequence[str]) -> str | None:
    """/var/run/dpdk/<file-prefix> of an EAL started with `args`; None without a
    --file-prefix, or with one that is not a plain name."""
    prefix = None
    for i, arg in enumerate(args):
        if arg == "--file-prefix" and i + 1 < len(args):
            prefix = args[i + 1]
        elif arg.startswith("--file-prefix="):
            prefix = arg.partition("=")[2]
    if not prefix or "/" in prefix or prefix in (".", ".."):
        return None
    return os.path.join(DPDK_RUNTIME_DIR, prefix)


def runtime_dir_exists(args: Sequence[str]) -> bool:
    path = runtime_dir(args)
    return path is not None and os.path.lexists(path)


def remove_runtime_dir(args: Sequence[str]) -> None:
    """Remove /var/run/dpdk/<file-prefix> that an engine's EAL left behind, and its
    hugepage files (<hugetlbfs>/<file-prefix>map_<n>): rte_eal_cleanup unmaps them but
    leaves the files, 1 GiB of hugepages each with --single-file-segments, until the
    next session's sweep. Called where the EAL ends (its stop, its host's SIGTERM or
    end, its client after the host died): the prefix is that EAL's alone."""
    path = runtime_dir(args)
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
        prefix = os.path.basename(path)
        for mount in _hugetlbfs_mounts():
            for page in glob.glob(os.path.join(glob.escape(mount),
                                               glob.escape(prefix) + "map_*")):
                try:
                    os.unlink(page)
                except OSError:
                    continue


def new_log_dir() -> str:
    """A fresh log dir for an Engine, named after this (the client's) pid."""
    return tempfile.mkdtemp(prefix=f"{LOG_DIR_PREFIX}{os.getpid()}-")


def mark_crashed(log_dir: str) -> None:
    """Keep `log_dir` from the sweep for a while: it holds a crashed host's log."""
    try:
        with open(os.path.join(log_dir, CRASH_MARK), "w", encoding="ascii") as f:
            f.write(f"{time.time():.0f}\n")
    except OSError:
        pass


def remove_host_leftovers(pid: int, runtime_root: str = DPDK_RUNTIME_DIR) -> list[str]:
    """Remove the DPDK runtime dirs and hugepage files of the engine host `pid`, which
    has ended (nothing while a process `pid` runs); returns the paths removed."""
    if pid_alive(pid):
        return []
    return sweep_runtime_dirs(runtime_root, pids={pid})


def sweep_runtime_dirs(runtime_root: str = DPDK_RUNTIME_DIR,
                       pids: set[int] | None = None) -> list[str]:
    """Remove the DPDK runtime dirs (and hugepage files) of engine hosts that are
    gone (only those of `pids`, when given); returns the paths removed."""
    removed: list[str] = []
    try:
        names = os.listdir(runtime_root)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        names = []
    for name in names:
        match = RUNTIME_PREFIX_RE.match(name)
        if match is None or (pids is not None and int(match.group(1)) not in pids) or \
                pid_alive(int(match.group(1))):
            continue
        path = os.path.join(runtime_root, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
            if not os.path.lexists(path):
                removed.append(path)
    for mount in _hugetlbfs_mounts():
        for path in glob.glob(os.path.join(glob.escape(mount), "netload-*map_*")):
            match = HUGEPAGE_FILE_RE.match(os.path.basename(path))
            prefix = RUNTIME_PREFIX_RE.match(match.group(1)) if match else None
            if prefix is None or (pids is not None and int(prefix.group(1)) not in pids) or \
                    pid_alive(int(prefix.group(1))):
                continue
            try:
                os.unlink(path)
            except OSError:
                continue
            removed.append(path)
    return removed


def _hugetlbfs_mounts() -> list[str]:
    try:
        with open("/proc/mounts", encoding="ascii", errors="replace") as f:
            return [parts[1] for parts in (line.split() for line in f)
                    if len(parts) > 2 and parts[2] == "hugetlbfs"]
    except OSError:
        return []


def _log_dir_stale(path: str, owner: int | None, now: float) -> bool:
    try:
        names = os.listdir(path)
        age_s = now - os.stat(path).st_mtime
    except OSError:
        return False
    owners = {int(m.group(1)) for m in map(LOG_FILE_RE.match, names) if m}
    if owner is not None:
        owners.add(owner)
    if not owners:
        return age_s > UNOWNED_AGE_S
    if any(pid_alive(pid) for pid in owners):
        return False
    if CRASH_MARK in names:
        try:
            return now - os.stat(os.path.join(path, CRASH_MARK)).st_mtime > CRASH_LOG_KEEP_S
        except OSError:
            return False
    return True


def sweep_engine_logs(temp_root: str | None = None) -> list[str]:
    """Remove the log dirs Engines made for themselves whose clients are gone
    (crash logs after `CRASH_LOG_KEEP_S`); returns the paths removed."""
    root = temp_root or tempfile.gettempdir()
    removed: list[str] = []
    now = time.time()
    try:
        entries = [e for e in os.scandir(root) if e.name.startswith(LOG_DIR_PREFIX)]
    except OSError:
        return removed
    for entry in entries:
        match = LOG_DIR_RE.match(entry.name)
        if match is None or not entry.is_dir(follow_symlinks=False):
            continue
        owner = int(match.group(1)) if match.group(1) else None
        if _log_dir_stale(entry.path, owner, now):
            shutil.rmtree(entry.path, ignore_errors=True)
            if not os.path.lexists(entry.path):
                removed.append(entry.path)
    return removed
