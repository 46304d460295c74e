"""Nothing left behind: SIGTERM unwinds a session, and a session's start sweeps
what sessions that died left.

SIGTERM: while a session runs, the plugin's handler raises :class:`Terminated`
(a KeyboardInterrupt) in the main thread, once. The session then ends the way
Ctrl-C ends it: every fixture's finalizer and every context manager runs
(topology, ports, engine host), and pytest exits with status 2
(interrupted). A second SIGTERM during that cleanup is ignored; SIGKILL
remains the way to stop a cleanup that hangs. The handler that was there
before is restored at unconfigure.

Sweep (:func:`sweep`): at session start, what processes that no longer run
left behind, each recognised by its name and keyed on the owner pid it
carries, never anything of a live process or not made by pytest-netload:

- namespaces and veths of built-in topologies (`topology.builtin.sweep_stale`;
  as root only);
- DPDK runtime dirs and engine log dirs (`engine.leftovers`);
- partial report files (`atomic.sweep_partial_files`) in the report dir, its
  captures/ and baselines/.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = ["SigtermHandler", "Terminated", "sweep"]

TERMINATED_TEXT = ("SIGTERM: pytest-netload stopped the session; fixtures, topologies and "
                   "the engine host were cleaned up")


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: the session unwinds as on Ctrl-C."""


class SigtermHandler:
    """The session's SIGTERM handler: raises Terminated once while active; once
    uninstalled it acts as the handler it replaced (another handler installed
    later may still call it). So it does in a forked child (pyroute2 forks for
    namespace work and ends its children with SIGTERM): a copy of the session
    must never unwind it (it would close the parent's engine host)."""

    def __init__(self) -> None:
        self.previous: Any = None
        self.pid = os.getpid()
        self.active = False
        self.fired = False
        self.finishing = False

    def install(self) -> bool:
        """Install in the main thread; not where SIGTERM is ignored or owned by C code."""
        if threading.current_thread() is not threading.main_thread():
            return False
        previous = signal.getsignal(signal.SIGTERM)
        if previous is signal.SIG_IGN or previous is None:
            return False
        self.previous = previous
        self.active = True
        signal.signal(signal.SIGTERM, self)
        return True

    def uninstall(self) -> None:
        self.active = False
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGTERM) is self):
            signal.signal(signal.SIGTERM, self.previous)

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if not self.active or os.getpid() != self.pid:
            _delegate(self.previous, signum, frame)
            return
        if self.fired or self.finishing:
            return  # the session is cleaning up already: let it finish
        self.fired = True
        raise Terminated(TERMINATED_TEXT)


def _delegate(previous: Any, signum: int, frame: FrameType | None) -> None:
    if callable(previous):
        previous(signum, frame)
    elif previous != signal.SIG_IGN:
        # the default action: die of SIGTERM, as if we had never been here
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)


def sweep(report_dir: Path) -> tuple[list[str], list[str]]:
    """Remove what dead sessions left; returns (what was removed, what could not be
    looked at and why). Cheap: a few directory listings, one netlink dump as root."""
    from ..atomic import sweep_partial_files
    from ..engine.leftovers import sweep_engine_logs, sweep_runtime_dirs
    from ..errors import NetloadError

    removed: list[str] = []
    problems: list[str] = []
    steps: list[tuple[str, Callable[[], list[str]]]] = [
        ("DPDK runtime dirs", sweep_runtime_dirs),
        ("engine logs", sweep_engine_logs),
        ("partial report files", lambda: sweep_partial_files(
            report_dir, report_dir / "captures", report_dir / "baselines")),
    ]
    failures: tuple[type[Exception], ...] = (OSError, NetloadError)
    if os.geteuid() == 0:
        from pyroute2 import NetlinkError  # type: ignore[import-untyped,unused-ignore]

        from ..topology.builtin import sweep_stale

        steps.insert(0, ("namespaces and veths", sweep_stale))
        failures += (NetlinkError,)
    for what, step in steps:
        try:
            removed += step()
        except failures as exc:
            problems.append(f"{what}: {exc}")
    return removed, problems
