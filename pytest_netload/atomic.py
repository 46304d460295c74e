"""Atomic file writes, and the sweep of the partial files a killed writer left.

Every file pytest-netload writes for a reader (results.json, report.html,
baselines, captures, `netload demo --json`) goes through :func:`write_atomic`:
the bytes go to a temporary file in the target's directory, are fsync'ed and
then renamed over the target. A reader sees the old file or the new one,
never half of one; a failed write (a full disk) removes its temporary file
and leaves the old file as it was.

The temporary file is named ``.<target name>.<pid>.<random>.tmp``. Only a
process that dies between the open and the rename (SIGKILL, power loss)
leaves one; :func:`sweep_partial_files` removes those whose writer pid is no
longer running, and nothing else.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

__all__ = ["PARTIAL_RE", "pid_alive", "sweep_partial_files", "write_atomic"]

# .<name>.<pid>.<8 characters of mkstemp>.tmp
PARTIAL_RE = re.compile(r"^\..+\.(\d+)\.[A-Za-z0-9_]{8}\.tmp$")
# What writers before write_atomic left: `<name>.tmp` next to these targets.
LEGACY_PARTIALS = ("results.json.tmp", "report.html.tmp", "baseline-comparison.json.tmp")
LEGACY_AGE_S = 3600.0  # a legacy partial file this old has no writer any more


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *,
                 encoding: str = "utf-8") -> Path:
    """Write `data` to `path` atomically (temp file in the same directory, fsync,
    rename), creating the directory; returns the path. On any failure the
    temporary file is removed, the old file (if any) stays, and the error is raised."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode(encoding) if isinstance(data, str) else bytes(data)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.{os.getpid()}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` exists (of any user)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, as another user's process
    return True


def sweep_partial_files(*directories: str | os.PathLike[str]) -> list[str]:
    """Remove the partial files of writers that died in `directories` (not recursive):
    `.<name>.<pid>.<random>.tmp` whose pid is gone, and the older writers'
    `results.json.tmp`-style files once an hour old. Returns the paths removed."""
    removed: list[str] = []
    now = time.time()
    for directory in directories:
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            match = PARTIAL_RE.match(entry.name)
            if match is not None:
                stale = not pid_alive(int(match.group(1)))
            elif entry.name in LEGACY_PARTIALS:
                stale = now - entry.stat(follow_symlinks=False).st_mtime > LEGACY_AGE_S
            else:
                continue
            if stale and entry.is_file(follow_symlinks=False):
                try:
                    os.unlink(entry.path)
                except FileNotFoundError:
                    continue
                removed.append(entry.path)
    return removed
