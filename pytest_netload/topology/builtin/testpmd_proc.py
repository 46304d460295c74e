"""A ``dpdk-testpmd`` process as a DUT: started on a CPU of its own, driven through its
interactive prompt, its counters parsed, and stopped, whatever happens to its owner.

:class:`Testpmd` starts testpmd in interactive mode with forwarding already on
(``--auto-start``) and a pipe on its prompt: :meth:`Testpmd.command` writes one
command and returns what testpmd printed before its next ``testpmd>`` prompt. The CPU
it busy-polls is claimed with the same machine-wide lock an engine claims its worker
CPUs with (locks.py), held by this process and inherited by testpmd, so no engine puts
a worker there while it lives. testpmd ends when its prompt's pipe closes, which its
owner's end does however the owner ends (and, started from the main thread, also by
Linux's parent-death signal), so a SIGKILLed pytest leaves no forwarding process; its
DPDK runtime dir (``netload-<owner pid>-<hex>``) is then the engine sweep's
(engine/leftovers.py), its socket dir the topology sweep's (cleanup.py).

The parsers (:func:`parse_port_stats`, :func:`parse_fwd_stats`) are pure.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import secrets
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.locks import HostLock, cpu_lock_path, describe, holder_info, read_holder, \
    try_claim

__all__ = ["PROMPT", "Testpmd", "claim_dut_cpu", "die_with_parent", "end_after",
           "parse_fwd_stats",
           "parse_port_stats"]

PROMPT = b"testpmd> "
START_TIMEOUT_S = 30.0    # from exec to its first prompt: EAL start, ports, forwarding on
COMMAND_TIMEOUT_S = 10.0  # a command's output up to the next prompt
STOP_TIMEOUT_S = 10.0     # `quit` to exit, before SIGTERM and then SIGKILL
_PR_SET_PDEATHSIG = 1
DPDK_RUNTIME_DIR = "/var/run/dpdk"

_PORT_HEADER = re.compile(r"NIC statistics for port (\d+)")
_FWD_HEADER = re.compile(r"Forward statistics for port (\d+)")
_COUNT = re.compile(r"([A-Za-z]+-[A-Za-z]+):\s*(\d+)")


def _blocks(text: str, header: re.Pattern[str]) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for line in text.splitlines():
        found = header.search(line)
        if found:
            current = out.setdefault(int(found.group(1)), {})
            continue
        if current is not None:
            for key, value in _COUNT.findall(line):
                current.setdefault(key, int(value))
    return out


def parse_port_stats(text: str) -> dict[int, dict[str, int]]:
    """``show port stats all`` as {port: {"RX-packets": n, "RX-missed": n, "RX-errors": n,
    "RX-nombuf": n, "TX-packets": n, "TX-errors": n, ...}}; rates (``Rx-pps``) are left out."""
    return {port: {k: v for k, v in counts.items() if not k.endswith("-pps") and
                   not k.endswith("-bps")}
            for port, counts in _blocks(text, _PORT_HEADER).items()}


def parse_fwd_stats(text: str) -> dict[int, dict[str, int]]:
    """``show fwd stats all`` as {port: {"RX-packets", "RX-dropped", "RX-total",
    "TX-packets", "TX-dropped", "TX-total"}}: what the forwarding engine did since
    forwarding started (TX-dropped: frames the port's TX ring refused, which testpmd
    freed)."""
    return _blocks(text, _FWD_HEADER)


def claim_dut_cpu(cpu: int | None, what: str) -> tuple[int, HostLock]:
    """The CPU the DUT busy-polls, locked as an engine's worker CPU is: `cpu`, or by
    default the highest CPU this process may use whose lock is free (an engine started
    before keeps its workers' CPUs; one started after skips this one)."""
    allowed = sorted(os.sched_getaffinity(0), reverse=True)
    if cpu is not None:
        if isinstance(cpu, bool) or not isinstance(cpu, int) or cpu not in allowed:
            raise NetloadConfigError(
                f"cpu = {cpu!r}: give one of the CPUs this process may use "
                f"({sorted(allowed)}), or leave it out to take the highest free one")
        allowed = [cpu]
    holder = holder_info(what, dut=what)
    for candidate in allowed:
        lock = try_claim(cpu_lock_path(candidate), {**holder, "what": f"{what} on CPU {candidate}"})
        if lock is not None:
            return candidate, lock
    busy = "; ".join(f"CPU {c} by {describe(read_holder(cpu_lock_path(c)))}" for c in allowed)
    raise NetloadEnvironmentError(
        f"{what} needs a CPU of its own, and every CPU it may use is busy-polled: {busy}; "
        "close the other engine or DUT, or give cpu= a CPU that is free")


def end_after(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    """Wait `grace_s` for `proc`, asked to stop, to exit; then SIGTERM it and wait 5 s;
    then SIGKILL it. Returns once it has exited."""
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(sig)
        try:
            proc.wait(grace_s if sig is None else 5.0)
            return
        except subprocess.TimeoutExpired:
            continue


def die_with_parent() -> None:
    """Linux's parent-death signal (SIGKILL) for the child; runs between fork and exec."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class Testpmd:
    """One testpmd process: `vdevs` its ports, `forward_mode` ("io", "mac", "macswap"),
    on `cpu` (its main lcore, which waits on the prompt, and its one forwarding lcore);
    `extra` are more testpmd arguments (after ``--``). Memory in hugepages only when
    `hugepages`, else memfd memory (``--no-huge``), which vhost-user and memif share."""

    def __init__(self, vdevs: Sequence[str], *, cpu: int, lock: HostLock, forward_mode: str,
                 queues: int = 1, memory_mb: int = 512, hugepages: bool = False,
                 extra: Sequence[str] = (), log_path: str | None = None) -> None:
        binary = shutil.which("dpdk-testpmd")
        if binary is None:
            raise NetloadEnvironmentError(
                "dpdk-testpmd is not installed: the dpdk-testpmd DUT runs it (Debian: "
                "apt-get install dpdk, which scripts/setup.sh installs)")
        self.prefix = f"netload-{os.getpid()}-{secrets.token_hex(3)}"
        self.cpu = cpu
        self._lock = lock
        # testpmd prints through stdio, fully buffered into a pipe, but its prompt
        # straight to the descriptor: unbuffered, a command's output comes before it
        stdbuf = shutil.which("stdbuf")
        self.argv = [*([stdbuf, "-o0", "-e0"] if stdbuf else []), binary,
                     f"--lcores=0@{cpu},1@{cpu}", "--no-pci", "-v",
                     "--file-prefix", self.prefix, "--no-telemetry", "-m", str(memory_mb),
                     "--single-file-segments" if hugepages else "--no-huge"]
        for vdev in vdevs:
            self.argv += ["--vdev", vdev]
        # --no-flush-rx: a `start` would free what the RX queues hold, uncounted
        self.argv += ["--", "-i", f"--forward-mode={forward_mode}", "--auto-start",
                      "--no-mlockall", "--no-flush-rx", "--nb-cores=1", f"--rxq={queues}",
                      f"--txq={queues}", "--total-num-mbufs=32768", *extra]
        self._cond = threading.Condition()
        self._log = open(log_path, "ab") if log_path else None  # noqa: SIM115 - closed in stop()
        self.version = ""
        self._spawn()

    def _spawn(self) -> None:
        self._out = bytearray()
        self.proc = subprocess.Popen(  # noqa: S603 - our own argv
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(self._lock.fd,) if self._lock.fd is not None else (),
            # the parent-death signal follows the thread that forks, not the process: only
            # from the main thread (a hook's worker thread ends long before its DUT). From
            # any thread testpmd also ends when its prompt's pipe closes, as it does
            # with the process that holds it, however that ends
            preexec_fn=die_with_parent if threading.current_thread() is
            threading.main_thread() else None, start_new_session=True)
        self._reader = threading.Thread(target=self._read, args=(self.proc,),
                                        name="testpmd-reader", daemon=True)
        self._reader.start()
        try:
            banner = self._until_prompt(0, START_TIMEOUT_S, "start")
        except BaseException:
            self.stop()
            raise
        found = re.search(r"RTE Version: '([^']+)'", banner)
        self.version = found.group(1) if found else "DPDK (version not printed)"

    def restart(self) -> None:
        """Quit testpmd and start it again with the same arguments, on the same CPU (its
        lock is kept): a DUT that goes away and comes back. Its counters start at 0."""
        self._end_process()
        self._spawn()

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            with self._cond:
                if chunk:
                    self._out += chunk
                    if self._log is not None:
                        self._log.write(chunk)
                        self._log.flush()
                self._cond.notify_all()
            if not chunk:
                return

    def tail(self, lines: int = 15) -> str:
        """The last lines testpmd printed (for errors)."""
        with self._cond:
            text = self._out.decode("utf-8", "replace")
        return "\n".join(text.replace(PROMPT.decode(), "").splitlines()[-lines:])

    def _until_prompt(self, start: int, timeout_s: float, what: str) -> str:
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                at = self._out.find(PROMPT, start)
                if at >= 0:
                    text = bytes(self._out[start:at]).decode("utf-8", "replace")
                    del self._out[:at + len(PROMPT)]
                    return text
                if self.proc.poll() is not None:
                    raise NetloadEnvironmentError(
                        f"dpdk-testpmd (the DUT) exited with status {self.proc.returncode} "
                        f"during {what}; it printed:\n{self.tail()}\ncommand: "
                        f"{' '.join(self.argv)}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise NetloadEnvironmentError(
                        f"dpdk-testpmd (the DUT) gave no prompt within {timeout_s:g} s of "
                        f"{what}; it printed:\n{self.tail()}")
                self._cond.wait(min(left, 0.1))

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def command(self, text: str, timeout_s: float = COMMAND_TIMEOUT_S) -> str:
        """Send one testpmd command (e.g. "show port stats all", "stop", "start"); what
        it printed before the next prompt."""
        if not isinstance(text, str) or not text.strip() or "\n" in text:
            raise NetloadConfigError(f"testpmd command {text!r}: give one line, e.g. "
                                     "'show port stats all'")
        if not self.alive:
            raise NetloadEnvironmentError(
                f"dpdk-testpmd (the DUT) is not running (exit status {self.proc.returncode}); "
                f"it printed:\n{self.tail()}")
        assert self.proc.stdin is not None
        with self._cond:
            start = len(self._out)
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()
        return self._until_prompt(start, timeout_s, f"command {text!r}")

    def commands(self, lines: Sequence[str], timeout_s: float = COMMAND_TIMEOUT_S) -> list[str]:
        """Several commands written at once (no round trip between them, as for a quick
        `stop`, `set fwd ...`, `start`); what each printed."""
        if not self.alive:
            raise NetloadEnvironmentError(
                f"dpdk-testpmd (the DUT) is not running (exit status {self.proc.returncode}); "
                f"it printed:\n{self.tail()}")
        for text in lines:
            if not isinstance(text, str) or not text.strip() or "\n" in text:
                raise NetloadConfigError(f"testpmd command {text!r}: give one line each")
        assert self.proc.stdin is not None
        with self._cond:
            start = len(self._out)
        self.proc.stdin.write("".join(f"{t}\n" for t in lines).encode())
        self.proc.stdin.flush()
        out = []
        for text in lines:
            out.append(self._until_prompt(start, timeout_s, f"command {text!r}"))
            start = 0
        return out

    def port_stats(self) -> dict[int, dict[str, int]]:
        return parse_port_stats(self.command("show port stats all"))

    def fwd_stats(self) -> dict[int, dict[str, int]]:
        return parse_fwd_stats(self.command("show fwd stats all"))

    def _end_process(self) -> None:
        proc = self.proc if hasattr(self, "proc") else None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                assert proc.stdin is not None
                proc.stdin.write(b"quit\n")
                proc.stdin.flush()
            end_after(proc, STOP_TIMEOUT_S)
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()
        shutil.rmtree(os.path.join(DPDK_RUNTIME_DIR, self.prefix), ignore_errors=True)

    def stop(self) -> None:
        """Quit testpmd (``quit``, then SIGTERM, then SIGKILL), release its CPU and remove
        its runtime dir. Idempotent."""
        self._end_process()
        self._lock.release()
        if self._log is not None:
            self._log.close()
            self._log = None
