"""Cleanup of the built-in topologies: the teardown book, the exit hooks and the sweep.

Each topology instance keeps an undo list (:class:`_Resources`), registered in
a process-wide book while it lives; :func:`_managed` is the context manager
every topology function returns, which builds into such a list and releases it
on exit, also on an exception or Ctrl-C inside the ``with`` block. A process
that leaves without unwinding is covered too: live topologies are torn down
from an ``atexit`` hook and from a SIGTERM handler (each installed once, the
first time a topology is built), and a forked child forgets the parent's book.
Whatever a killed process (SIGKILL, ``os._exit``, a crash) left behind is found
and removed by :func:`sweep_stale`, which keys on the creator's pid recorded in
the interface alias and in the namespace name (names.py).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import shutil
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from pyroute2 import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
    IPRoute,
    NetlinkError,
)
from pyroute2 import netns as _netns  # type: ignore[import-untyped,import-not-found,unused-ignore]

from pytest_netload.errors import NetloadEnvironmentError, NetloadWarning
from pytest_netload.topology.builtin.dut import BuiltTopology
from pytest_netload.topology.builtin.kernel import _remove_netns, _require_root
from pytest_netload.topology.builtin.names import (
    _ALIAS_RE,
    PREFIX,
    SOCKET_ROOT,
    _alive,
    _check_prefix,
    _netns_re,
    _socket_dir_re,
    new_tag,
)

__all__ = ["sweep_stale"]

_LOCK = threading.RLock()
_LIVE: dict[str, _Resources] = {}
_ATEXIT_SET = False
_SIGTERM_SET = False
_PREVIOUS_SIGTERM: Any = None


class _Resources:
    """The undo list of one topology instance, registered for exit-time cleanup."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.owner_pid = os.getpid()
        self._undo: list[tuple[str, Callable[[], None]]] = []
        self._closed = False
        with _LOCK:
            _LIVE[tag] = self
        _install_exit_hooks()

    def add(self, what: str, undo: Callable[[], None]) -> None:
        """Record how to undo ``what``; call it *before* creating the object."""
        if self._closed:
            undo()
            raise NetloadEnvironmentError(
                f"topology {self.tag} was torn down (SIGTERM) while it was being set up"
            )
        self._undo.append((what, undo))

    def release(self) -> list[str]:
        """Undo everything in reverse order; returns the steps that failed.

        Every step is idempotent. A KeyboardInterrupt during a step retries it
        once and is re-raised after the last step, so Ctrl-C cannot leave half
        a topology behind.
        """
        problems: list[str] = []
        interrupted: BaseException | None = None
        while self._undo:
            item = self._undo[-1]
            what, undo = item
            for _attempt in range(2):
                try:
                    undo()
                    break
                except KeyboardInterrupt as exc:
                    interrupted = exc
                except (OSError, NetlinkError, subprocess.SubprocessError) as exc:
                    problems.append(f"{what}: {exc}")
                    break
            # a re-entrant release (SIGTERM handler) may have popped it already
            if self._undo and self._undo[-1] is item:
                self._undo.pop()
        self._closed = True
        with _LOCK:
            _LIVE.pop(self.tag, None)
        if interrupted is not None:
            raise interrupted
        return problems


def _forget_in_child() -> None:
    # A forked child (pyroute2 forks for netns work, so may the user's code)
    # inherits the registry and the SIGTERM handler; the topologies are the
    # parent's to remove, so the child must never tear them down.
    global _LOCK
    _LOCK = threading.RLock()
    _LIVE.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def _release_all() -> None:
    with _LOCK:
        live = [res for res in _LIVE.values() if res.owner_pid == os.getpid()]
    for resources in live:
        for problem in resources.release():
            print(
                f"pytest-netload: could not remove {problem}; "
                "run pytest_netload.topology.sweep_stale() as root to clean up",
                file=sys.stderr,
            )


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    _release_all()
    previous = _PREVIOUS_SIGTERM
    if callable(previous):
        previous(signum, frame)
        return
    # default action: die of SIGTERM, as if we had never been here
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _install_exit_hooks() -> None:
    global _ATEXIT_SET, _SIGTERM_SET, _PREVIOUS_SIGTERM
    with _LOCK:
        if not _ATEXIT_SET:
            atexit.register(_release_all)
            _ATEXIT_SET = True
        if _SIGTERM_SET or threading.current_thread() is not threading.main_thread():
            return  # signal handlers can only be set from the main thread: next time
        _SIGTERM_SET = True
        previous = signal.getsignal(signal.SIGTERM)
        if previous is signal.SIG_IGN or previous is None:
            return  # ignored, or owned by non-Python code: leave it alone
        _PREVIOUS_SIGTERM = previous
        signal.signal(signal.SIGTERM, _on_sigterm)


@contextlib.contextmanager
def _managed(
    builder: Callable[[_Resources, str], BuiltTopology], backend: str, prefix: str
) -> Iterator[BuiltTopology]:
    _require_root()
    res = _Resources(new_tag(prefix))
    finished = False
    try:
        yield builder(res, backend)
        finished = True
    finally:
        problems = res.release()
        if problems:
            text = (
                "could not remove all of topology "
                + res.tag
                + ": "
                + "; ".join(problems)
                + "; run pytest_netload.topology.sweep_stale() as root to clean up"
            )
            if finished:
                raise NetloadEnvironmentError(text)
            # an exception is already on its way: do not mask it
            warnings.warn(text, NetloadWarning, stacklevel=3)


def sweep_stale(prefix: str = PREFIX) -> list[str]:
    """Remove what earlier runs that died without cleaning up left behind.

    Only interfaces named ``<prefix>...`` that carry this project's alias,
    namespaces named ``<prefix>XXXXXX-dut-<pid>.<start>`` and DPDK DUTs' socket dirs
    ``/run/netload/dut-<prefix>XXXXXX-<pid>.<start>`` are looked at; of those, only the
    ones whose creating process no longer exists are removed, and the OVS daemons of
    such a socket dir (ovs-dpdk's pid files) that still run are killed first. Returns
    the names removed.
    """
    _check_prefix(prefix)
    _require_root()
    removed: list[str] = []
    with IPRoute() as ipr:
        for link in ipr.get_links():
            name = link.get("IFLA_IFNAME") or ""
            match = _ALIAS_RE.match(link.get("IFLA_IFALIAS") or "")
            if not name.startswith(prefix) or match is None:
                continue
            if _alive(int(match.group(1)), int(match.group(2))):
                continue
            try:
                ipr.link("del", index=link["index"])
            except NetlinkError as exc:
                if exc.code != errno.ENODEV:  # ENODEV: gone with its veth peer
                    raise
            removed.append(name)
    # a DPDK DUT's socket dir (its process died with its owner: parent-death signal, or
    # ovs-dpdk's watchdog; an OVS daemon that outlived both is stopped by its pid file)
    pattern = _socket_dir_re(prefix)
    with contextlib.suppress(FileNotFoundError):
        for name in sorted(os.listdir(SOCKET_ROOT)):
            match = pattern.match(name)
            if match is None or _alive(int(match.group(1)), int(match.group(2))):
                continue
            folder = os.path.join(SOCKET_ROOT, name)
            removed.extend(_stop_ovs_daemons(folder))
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    pattern = _netns_re(prefix)
    for ns in _netns.listnetns():
        match = pattern.match(ns)
        if match is None or _alive(int(match.group(1)), int(match.group(2))):
            continue
        _remove_netns(ns)
        removed.append(ns)
    return removed


def _stop_ovs_daemons(folder: str) -> list[str]:
    """SIGKILL the OVS daemons whose pid files are in ``folder/ovs`` (ovs-dpdk's run dir)
    and that still run an OVS binary; their descriptions."""
    stopped: list[str] = []
    for pidfile in ("ovs-vswitchd.pid", "ovsdb-server.pid"):
        try:
            with open(os.path.join(folder, "ovs", pidfile), encoding="ascii") as f:
                pid = int(f.read().strip())
            if "ovs" not in os.readlink(f"/proc/{pid}/exe"):
                continue  # the pid is someone else's now
            os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            continue  # no pid file, or the process is gone
        stopped.append(f"{pidfile.removesuffix('.pid')} (pid {pid})")
    return stopped
