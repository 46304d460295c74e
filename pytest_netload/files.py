"""Reading an input file the user named: regular files only, and only so many bytes.

A path given as a topology file, a results file or a baseline could be anything: a
FIFO (a plain ``open`` blocks until a writer comes), ``/dev/zero`` (a plain ``read``
never ends and exhausts the memory), a directory, or a file far larger than any such
input. :func:`read_input_file` opens without blocking, refuses what is not a regular
file and reads at most ``limit_bytes`` (plus one byte, to see that there is more).
"""

from __future__ import annotations

import errno
import os
import stat

from .errors import NetloadConfigError

__all__ = ["MIB", "read_input_file"]

MIB = 1 << 20

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def _limit_text(limit_bytes: int) -> str:
    return f"{limit_bytes // MIB} MiB" if limit_bytes % MIB == 0 else f"{limit_bytes:,} bytes"


def read_input_file(path: str | os.PathLike[str], limit_bytes: int, *, what: str,
                    fix: str) -> bytes:
    """The bytes of the regular file at `path`, at most `limit_bytes` of them.

    OSError (no such file, no permission, IsADirectoryError for a directory) propagates
    for the caller to word. Any other path that is not a regular file (a FIFO, a device,
    a socket), or a file larger than `limit_bytes`, raises
    NetloadConfigError "<path>: is <kind>, not a regular file; <fix>" (or "... is more
    than <limit>, the most a <what> may have; <fix>").
    """
    source = os.fspath(path)
    # O_NONBLOCK: opening a FIFO does not wait for a writer; a regular file ignores it
    fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), source)
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a file")
            raise NetloadConfigError(f"{source}: is {kind}, not a regular file; {fix}")
        chunks: list[bytes] = []
        size = 0
        while size <= limit_bytes:
            chunk = os.read(fd, min(MIB, limit_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit_bytes:
            raise NetloadConfigError(
                f"{source}: is more than {_limit_text(limit_bytes)}, the most a {what} may "
                f"have; {fix}")
        return b"".join(chunks)
    finally:
        os.close(fd)
