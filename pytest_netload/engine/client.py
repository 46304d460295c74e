"""The engine as the pytest process sees it: a host process behind execnet.

`Engine` starts `engine/host.py` in its own interpreter (a local popen
gateway by default, any execnet spec such as `ssh=gen-host//python=python3`
for a remote generator), so DPDK's EAL never lives in pytest. If the host
dies, the call raises `EngineCrashed` with the host's last log lines, and the
next call starts a fresh host (handles from the dead one are refused).
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Self

import numpy as np

from .. import errors
from . import MAX_MEMORY_MB, MIN_MEMORY_MB, remote  # the bounds: engine/__init__.py
from .._native_facts import ABI_VERSION
from ..measure.results import RunResult, build_run_result, merge_queue_results
from ..units import run_seconds
from .leftovers import mark_crashed, new_log_dir, remove_host_leftovers, remove_runtime_dir
from .link import PCI_ADDRESS as PCI_ADDRESS  # noqa: PLC0414 - re-exported for the fixtures
from ..locks import cmdline
from .wire import TERMINATED_NOTE, unpack_array

PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
POLL_SLICE_MS = 100
HOST_EXIT_WAIT_S = 10.0  # a killed engine host's threads may take this long to end
CPU_WAIT_S = 5.0  # a start waits this long for worker CPUs another engine holds
# Each thread's CPUs before any engine of this process moved it (thread id -> CPUs).
_FIRST_AFFINITY: dict[int, set[int]] = {}
LOG_TAIL_LINES = 40
_BOOT = (
    "import sys; sys.path.insert(0, {path!r}); "
    "from pytest_netload.engine.host import serve; serve(channel)"
)
# The fake engine host (engine/fake.py): the same protocol over a modelled DUT, no DPDK.
# A remote host imports the package installed there (remote.probe checked it).
_REMOTE_BOOT = "from pytest_netload.engine.host import serve; serve(channel)"
_FAKE_BOOT = (
    "import sys; sys.path.insert(0, {path!r}); "
    "from pytest_netload.engine.fake import serve; serve(channel, {dut!r})"
)


LINK_TIMEOUT_S = 10.0  # a port's link may take this long to come up (--netload-link-timeout)


def cpu_ranges(cpus: Iterable[int]) -> str:
    """'0-3,6' for CPUs 0, 1, 2, 3 and 6."""
    runs: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if runs and runs[-1][1] == cpu - 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def check_cpus(cpus: object, what: str, *, local: bool = True) -> list[int]:
    """`cpus` as a list of CPU numbers; with `local`, each one this process may run on
    (its affinity), else NetloadConfigError naming `what` and the CPUs there are."""
    if isinstance(cpus, (str, bytes)) or not isinstance(cpus, Iterable):
        raise errors.NetloadConfigError(f"{what}={cpus!r}: give a list of CPU numbers, "
                                        "e.g. [2, 3]")
    out = list(cpus)
    for cpu in out:
        if isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0:
            raise errors.NetloadConfigError(f"{what}: {cpu!r} is not a CPU number; give "
                                            "non-negative integers, e.g. [2, 3]")
    if local:
        # (with the CPUs an engine of this process moved its threads off, which stay usable)
        allowed = os.sched_getaffinity(0).union(*_FIRST_AFFINITY.values())
        missing = [cpu for cpu in out if cpu not in allowed]
        if missing:
            raise errors.NetloadConfigError(
                f"{what}={out!r}: CPU {missing[0]} is not one this machine lets the engine "
                f"use; its CPUs are {cpu_ranges(allowed)}: give some of those (or leave "
                f"{what} out)")
    return out


def _log_tail(path: str, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


@contextlib.contextmanager
def _unless_terminated() -> Iterator[None]:
    """Closing something of a host that SIGTERM ended: it went with the host."""
    try:
        yield
    except errors.EngineCrashed as exc:
        if TERMINATED_NOTE not in exc.log_tail:
            raise


@dataclass(frozen=True)
class Port:
    """An open port of an engine: device string, capabilities, link."""

    engine: Engine
    port_id: int
    device: str
    info: dict[str, Any]
    generation: int
    name: str = ""
    """The port's name in its topology ("p1"), when it was opened under one: what link
    events and invalid-trial reasons call it."""

    @property
    def label(self) -> str:
        """The topology name when there is one, else the device string."""
        return self.name or self.device

    @property
    def alive(self) -> bool:
        """Whether the engine host this port was opened on still runs (False after a
        crash or close: open the device again on the engine)."""
        return self.engine._generation == self.generation and self.engine.alive

    @property
    def mac(self) -> str:
        return str(self.info["mac"])

    @property
    def driver(self) -> str:
        return str(self.info["driver"])

    @property
    def rx_queues(self) -> int:
        """The RX queues it was opened with: a run that receives on it polls each one."""
        return int(self.info.get("rx_queues", 1))

    @property
    def tx_queues(self) -> int:
        """The TX queues it was opened with: a stream loaded on it sends on each one."""
        return int(self.info.get("tx_queues", 1))

    def stats(self) -> dict[str, int]:
        return dict(self.engine._call("port_stats", port_id=self._id()))

    def set_queue_rate(self, mbps: int, queue: int = 0) -> None:
        """Hardware rate limit of a TX queue in Mbit/s (0: none), where the PMD has one."""
        self.engine._call("port_set_queue_rate", port_id=self._id(), queue=queue, mbps=int(mbps))

    # ---- neighbours: the port as a host on its subnet (engine/neighbours.py) ----

    def set_address(self, ip: str, *, mac: str | None = None, vlan: int | None = None) -> None:
        """The port answers ARP (IPv4) or neighbour solicitations (IPv6) for `ip` as `mac`
        (default: its own), in `vlan` (None: untagged), during runs and between them."""
        self.engine._call("port_set_addr", port_id=self._id(), mac=mac or self.mac, ip=ip,
                          vlan=int(vlan or 0))
        self.info["address"] = {"ip": ip, "vlan": vlan}

    def announce(self) -> None:
        """A gratuitous ARP / unsolicited neighbour advertisement of the port's address."""
        self.engine._call("port_announce", port_id=self._id())

    def resolve(self, peer_ip: str, timeout_s: float = 5.0, retry_s: float = 0.25) -> str:
        """The MAC of `peer_ip`, asked by ARP or neighbour solicitation every `retry_s`
        for at most `timeout_s`; NetloadEnvironmentError naming what was seen if none."""
        from .neighbours import resolve_failure

        try:
            return str(self.engine._call(
                "port_resolve", port_id=self._id(), peer_ip=peer_ip,
                timeout_ms=max(1, round(timeout_s * 1000)),
                retry_ms=max(1, round(retry_s * 1000)), timeout_s=timeout_s + 30))
        except errors.NetloadEnvironmentError as exc:
            if "no answer" not in str(exc):
                raise
            raise errors.NetloadEnvironmentError(
                resolve_failure(self.label, peer_ip, timeout_s, self.nd_stats(),
                                self.info.get("address", {}).get("vlan"))) from None

    def nd_stats(self) -> dict[str, Any]:
        """ARP/ND counters of the port (requests answered, rate-limited, ...)."""
        return dict(self.engine._call("port_nd_stats", port_id=self._id()))

    def refresh(self) -> dict[str, Any]:
        return dict(self.engine._call("port_info", port_id=self._id()))

    def link(self) -> dict[str, Any]:
        """The link now: `up`, `speed_mbps` (None where the port reports no real speed,
        `speed_note` says why), `operstate`, `source` (the kernel interface or DPDK)."""
        return dict(self.engine._call("port_link", port_id=self._id()))

    def close(self) -> None:
        if self.engine._generation == self.generation and self.engine.alive:
            with _unless_terminated():
                self.engine._call("port_close", port_id=self.port_id)

    def _id(self) -> int:
        self.engine._check_generation(self.generation, f"port {self.device!r}")
        return self.port_id


@dataclass(frozen=True)
class Tx:
    """One stream's part in a run: how many packets, and how they are paced.

    `phases` are `patterns.Phase` objects (or their `as_spec()` dicts); none
    means as fast as the port takes them.
    """

    stream: LoadedStream
    count: int = 0
    phases: tuple[Any, ...] = ()
    queue: int = 0

    def spec(self) -> dict[str, Any]:
        phases = [p if isinstance(p, dict) else p.as_spec() for p in self.phases]
        return {"handle": self.stream.handle, "queue": self.queue, "count": int(self.count),
                "expect_only": False, "phases": phases}

    def per_queue(self) -> list[Tx]:
        """The native entries of this one: a stream loaded over N TX queues
        (`LoadedStream.queues`) sends on each, queue q its own copy of the stream, its
        share of the count (the first `count % N` one more) and the pacing with every gap
        N times longer, so the N queues together offer exactly the load asked for."""
        parts = self.stream.queue_streams
        if len(parts) == 1:
            return [self]
        if self.queue != 0:
            raise errors.NetloadConfigError(
                f"Tx(queue={self.queue}): stream {self.stream.name!r} is loaded over "
                f"{len(parts)} TX queues and sends on all of them; load it with queues=1 "
                "to send it on one queue of your choice")
        n = len(parts)
        phases = [p if isinstance(p, dict) else p.as_spec() for p in self.phases]
        slower = [{**p, "gaps_ps": (np.frombuffer(p["gaps_ps"], dtype="<u8") * n)
                   .astype("<u8").tobytes()} for p in phases]
        counts = [self.count // n + (1 if q < self.count % n else 0) for q in range(n)]
        # a count below N leaves some queues nothing to send: they sit the run out
        return [Tx(part, c, tuple(slower), q) for q, (part, c) in enumerate(zip(parts, counts))
                if c or not self.count]


@dataclass(frozen=True)
class LoadedStream:
    """A stream compiled into pre-filled pools on one port of an engine."""

    engine: Engine
    port: Port
    handle: int
    stream_id: int
    name: str
    csum_offloaded: bool
    generation: int
    mean_frame_size: float = 64.0  # bytes with FCS, over the packet sequence
    clock: str = "auto"  # "tsc", "hardware" or "auto" (see Engine.load)
    more_queues: tuple[LoadedStream, ...] = ()
    """The copies of this stream that send on TX queues 1, 2, ... of its port (this one
    sends on queue 0); empty for a stream on one queue."""

    @property
    def queues(self) -> int:
        """The TX queues it is sent on."""
        return 1 + len(self.more_queues)

    @property
    def queue_streams(self) -> tuple[LoadedStream, ...]:
        """The native stream of each of its TX queues, queue 0 first."""
        return (self, *self.more_queues)

    def free(self) -> None:
        if self.engine._generation == self.generation and self.engine.alive:
            with _unless_terminated():
                for part in self.queue_streams:
                    self.engine._call("stream_free", handle=part.handle)



def check_abi(reported: Any, where: str = "") -> None:
    """Refuses an engine host whose native core has another ABI version than the one this
    client was built against (`_native_facts`, generated from the header): their structs
    would be read with the wrong layout."""
    if reported != ABI_VERSION:
        on = f" on {where}" if where else ""
        raise errors.NetloadEnvironmentError(
            f"the engine host's{on} native core has ABI version {reported}, this client expects "
            f"{ABI_VERSION}: install the same version of pytest-netload and its engine on both "
            "(pip install 'pytest-netload[engine]==<version>' on the engine host; in a "
            "checkout, scripts/setup.sh rebuilds it)")


def _hist_pages(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise errors.NetloadConfigError(
            f"hist_pages={value!r}: give a number of histogram pages >= 0 (0: as many as fit)")
    return value

class Engine:
    """A traffic engine host. Use as a context manager, or call close()."""

    def __init__(
        self,
        gateway: str = "popen",
        *,
        python: str | None = None,
        eal_args: Sequence[str] | None = None,
        memory_mb: int = 1024,
        lcores: Sequence[int] | None = None,
        hugepages: bool | None = None,
        pci: Sequence[str] = (),
        log_dir: str | None = None,
        call_timeout_s: float = 120.0,
        isolate_workers: bool = True,
        cpu_wait_s: float = CPU_WAIT_S,
        port_wait_s: float = 0.0,
        fake: Any = None,
        auto_main: bool = False,
        main_cpu: int | None = None,
    ) -> None:
        """`fake` boots the fake engine host (engine/fake.py) instead of the DPDK one: a
        `FakeDut`, its parameters as a mapping, or a spec such as
        "capacity_pps=50000,delay_s=100us". Everything else works as with the real host
        (the EAL options are ignored); see docs/architecture.md, "The fake engine".

        `lcores` names the CPUs: the lowest runs the main lcore (it only waits), each
        other one a worker. `main_cpu` instead puts a worker on every CPU of `lcores`
        (default: every CPU this process may use) and the main lcore on `main_cpu`, even
        where that CPU runs a worker: on a 2-CPU machine `Engine(lcores=[0, 1],
        main_cpu=0)` runs two workers. The main lcore sleeps between short polls, but its
        control work (run start, results) then takes a little of that worker's CPU."""
        if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or \
                not MIN_MEMORY_MB <= memory_mb <= MAX_MEMORY_MB:
            raise errors.NetloadConfigError(
                f"memory_mb={memory_mb!r}: give the EAL's memory as a whole number of MiB "
                f"from {MIN_MEMORY_MB} to {MAX_MEMORY_MB}")
        if lcores is not None:
            lcores = check_cpus(lcores, "lcores", local=gateway.startswith("popen"))
        if main_cpu is not None:
            (main_cpu,) = check_cpus([main_cpu], "main_cpu", local=gateway.startswith("popen"))
        self.fake = None
        if fake is not None:
            from .fake import as_fake_dut

            self.fake = as_fake_dut(fake)
        self.gateway_spec = gateway
        self.python = python or sys.executable
        self._pci = list(pci)
        # `auto_main`: `lcores` are the workers' CPUs only; the host adds a main lcore
        # from its own CPUs (a remote host's, which this machine does not know)
        self._eal_options = {"memory_mb": memory_mb, "lcores": lcores,
                             "hugepages": hugepages, "pci": list(pci),
                             "auto_main": True if auto_main else None, "main_cpu": main_cpu}
        self._eal_args = list(eal_args) if eal_args else None
        self._log_dir = log_dir
        self.call_timeout_s = call_timeout_s
        self.isolate_workers = isolate_workers
        # How long a start waits for worker CPUs another engine busy-polls (locks.py).
        self.cpu_wait_s = float(cpu_wait_s)
        # How long opening a port waits for another engine that holds it (locks.py;
        # the plugin sets --netload-port-wait).
        self.port_wait_s = float(port_wait_s)
        self._saved_affinity: dict[int, set[int]] = {}
        # Called with every RunResult (the plugin's latency meters listen here).
        self.observers: list[Callable[[RunResult], None]] = []
        # Frames each RX port keeps of every run (run(capture=...) overrides it).
        self.capture_default = 0
        # How long a link that went down in a trial may take to come back before the
        # procedure stops (bench/link.py; the plugin sets --netload-link-timeout).
        self.link_timeout_s = LINK_TIMEOUT_S
        self._group: Any = None
        self._host_popen: Any = None  # the local engine host's process, before its hello
        self._channel: Any = None
        # Set by start: whether the host runs on another machine (engine/remote.py), what
        # its probe found there, and the gateway spec as started (ssh options added).
        self.remote = False
        self.remote_info: dict[str, Any] = {}
        self._spec = gateway
        self._unanswered = 0
        self._own_log_dir = ""
        self._crashed = False
        self._generation = 0
        self.log_path = ""
        self.hello: dict[str, Any] = {}
        self.last_result: RunResult | None = None

    # ---- lifecycle ----------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self._channel is not None and not self._channel.isclosed()

    def start(self) -> Self:
        if self.alive:
            return self
        import execnet

        spec = self.gateway_spec
        if spec == "popen" or spec.startswith("popen") and "python=" not in spec:
            spec = f"{spec}//python={self.python}"
        self.remote = self.fake is None and remote.is_remote(spec)
        spec = remote.ssh_options(spec)
        self._generation += 1
        if self.remote:  # the host makes its log dir there, and names the file in hello
            self.log_path = ""
        else:
            if self._log_dir:
                log_dir = self._log_dir
            else:
                log_dir = self._own_log_dir = self._own_log_dir or new_log_dir()
            os.makedirs(log_dir, exist_ok=True)
            self.log_path = os.path.join(log_dir,
                                         f"engine-{os.getpid()}-{self._generation}.log")
        self._spec = spec
        self._group = execnet.Group()
        try:
            gw = self._group.makegateway(spec)
            if not self.remote and self.fake is None:
                self._host_popen = getattr(getattr(gw, "_io", None), "popen", None)
            if self.remote:  # its package, version and native core, before it is trusted
                self.remote_info = remote.probe(gw, spec)
                boot = _REMOTE_BOOT
            elif self.fake is None:
                boot = _BOOT.format(path=PACKAGE_PARENT)
            else:
                boot = _FAKE_BOOT.format(path=PACKAGE_PARENT, dut=self.fake.params())
            self._channel = gw.remote_exec(boot)
        except errors.NetloadEnvironmentError:
            self._terminate()
            raise
        except Exception as exc:
            self._terminate()
            if self.remote:
                raise remote.start_error(spec, exc) from exc
            raise errors.NetloadEnvironmentError(
                f"engine host could not start with gateway {spec!r}: {exc}"
            ) from exc
        opts: dict[str, Any] = {k: v for k, v in self._eal_options.items() if v is not None}
        try:
            self.hello = self._call(
                "hello", eal_args=self._eal_args, log_path=self.log_path or None,
                cpu_wait_s=self.cpu_wait_s, client={"pid": os.getpid(), "cmdline": cmdline(),
                                                    "host": socket.gethostname()},
                timeout_s=self.call_timeout_s + self.cpu_wait_s,
                **({"remote": True} if self.remote else {}),
                **({} if self._eal_args else opts),
            )
        except BaseException:
            # no engine (its CPUs busy, its EAL refused): end its host now, since
            # `with Engine() as e:` never calls __exit__ when __enter__ raises
            self._terminate()
            raise
        if self.remote:
            self.log_path = str(self.hello.get("log_path") or "")
        try:
            check_abi(self.hello.get("constants", {}).get("abi_version"),
                      remote.target(spec) if self.remote else "")
        except errors.NetloadEnvironmentError:
            self.close()
            raise
        if self.hello.get("cpu_note"):
            warnings.warn(errors.NetloadWarning(self.hello["cpu_note"]), stacklevel=2)
        if self.isolate_workers and not self.remote:
            self._keep_off_workers()
        return self

    def close(self) -> None:
        if self.alive:
            try:
                # a remote host removes its own log dir (a crashed one's stays, marked)
                self._call("close", timeout_s=30, **({"drop_log": True} if self.remote else {}))
            except errors.NetloadError:
                pass
        self._terminate()
        # Logs of a host that crashed stay for the bug report the exception pointed at
        # (marked, so the sweep of later sessions keeps them a while); a host ended
        # by SIGTERM did not crash.
        if self._own_log_dir:
            if self._crashed and TERMINATED_NOTE not in _log_tail(self.log_path):
                mark_crashed(self._own_log_dir)
            else:
                shutil.rmtree(self._own_log_dir, ignore_errors=True)
            self._own_log_dir = ""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _keep_off_workers(self) -> None:
        """Move this process's threads off the engine's worker CPUs while it runs.

        A busy-polling worker shares its CPU with nobody, or software pacing
        loses its precision to whatever the scheduler puts there.
        """
        # ... and off the CPUs other engines' workers busy-poll (their locks said so)
        own = set(self.hello.get("worker_cpus", ()))
        workers = own | set(self.hello.get("busy_cpus", ()))
        for tid in os.listdir("/proc/self/task"):
            try:
                mask = os.sched_getaffinity(int(tid))
                first = _FIRST_AFFINITY.setdefault(int(tid), mask)
                rest = mask - workers
                if not rest:
                    # every CPU it may use now is some engine's worker (another engine of
                    # this process moved it here): at least off this engine's own workers
                    rest = first - own
                if rest and rest != mask:
                    self._saved_affinity.setdefault(int(tid), mask)
                    os.sched_setaffinity(int(tid), rest)
            except OSError:
                continue

    def _restore_affinity(self) -> None:
        for tid, mask in self._saved_affinity.items():
            try:
                os.sched_setaffinity(tid, mask)
            except OSError:
                continue
        self._saved_affinity.clear()

    def _terminate(self) -> None:
        self._restore_affinity()
        if self._group is not None:
            self._group.terminate(timeout=5.0)
        self._group = None
        self._channel = None
        self._unanswered = 0
        # A host that died skipped its EAL cleanup: remove its runtime files here (a
        # remote one's go with remote.fetch_tail, or with the next host's sweep there).
        if not self.remote and self.fake is None:
            remove_runtime_dir(list(self.hello.get("eal_args") or []))
            # ... also those of a host whose hello never answered (its EAL started, then
            # the start failed, timed out or was cut short, and the host was killed after
            # group.terminate's 5 s: under CPU load its own cleanup takes longer), which
            # `hello` cannot name: `hello` is then a previous host's, or empty
            popen, self._host_popen = self._host_popen, None
            if popen is not None:
                try:  # reaped by group.terminate, unless its kill is still under way
                    popen.wait(timeout=HOST_EXIT_WAIT_S)
                except subprocess.TimeoutExpired:
                    pass  # still there: the next session's sweep removes what it leaves
                remove_host_leftovers(popen.pid)

    def _check_generation(self, generation: int, what: str) -> None:
        if generation != self._generation or not self.alive:
            raise errors.NetloadConfigError(
                f"{what} belongs to an engine host that has ended (crashed or closed); "
                "open it again on the running engine"
            )

    def _call(self, op: str, timeout_s: float | None = None, **args: Any) -> Any:
        if not self.alive:
            if op == "close":
                return None
            self.start()
        timeout = timeout_s or self.call_timeout_s
        try:
            # A Ctrl-C between a request and its answer leaves the answer in
            # the channel: read it first, or every later answer is off by one.
            while self._unanswered:
                self._channel.receive(timeout=timeout)
                self._unanswered -= 1
            self._channel.send({"op": op, **args})
            self._unanswered += 1
            reply = self._channel.receive(timeout=timeout)
            self._unanswered -= 1
        except Exception as exc:  # noqa: BLE001 - EOFError, RemoteError, TimeoutError, IOError
            self._crashed = True
            self._terminate()
            if self.remote:
                where = remote.target(self._spec)
                tail = remote.fetch_tail(self._spec, self.log_path, LOG_TAIL_LINES,
                                         list(self.hello.get("eal_args") or []))
                log = f"its log is {self.log_path} on {where}" if self.log_path else \
                    f"it ended before it made its log on {where}"
            else:
                tail = _log_tail(self.log_path)
                log = f"its log is {self.log_path}"
            raise errors.EngineCrashed(
                f"engine host died or hung during {op!r} ({type(exc).__name__}: {exc}); {log}",
                tail,
            ) from None
        if "error" in reply:
            cls = getattr(errors, reply["error"], errors.NativeError)
            if cls is errors.NativeError:
                raise errors.NativeError(reply["message"])
            raise cls(reply["message"])
        return reply["ok"]

    # ---- ports and streams --------------------------------------------------------

    @property
    def constants(self) -> dict[str, int]:
        if not self.alive:
            self.start()
        return dict(self.hello["constants"])

    def environment(self) -> dict[str, Any]:
        """What results record about the generator: DPDK version, EAL lcores, TSC rate."""
        if not self.alive:
            self.start()
        h = self.hello
        return {"dpdk_version": h.get("dpdk_version"), "gateway": self.gateway_spec,
                "host": h.get("hostname"),
                "workers": h.get("workers"), "worker_cpus": h.get("worker_cpus"),
                "tsc_hz": h.get("tsc_hz"), "abi_version": h["constants"]["abi_version"]}

    @property
    def workers(self) -> int:
        if not self.alive:
            self.start()
        return int(self.hello["workers"])

    def port(self, device: str, *, name: str = "", **options: Any) -> Port:
        """Open a DPDK device (vdev string or PCI address) as a port; `name` is what link
        events and invalid-trial reasons call it (its topology name, e.g. "p1")."""
        from ..topology.model import check_device

        check_device(device, "port device")  # before any engine starts
        address = device.split(",", 1)[0]
        if PCI_ADDRESS.fullmatch(address) and address not in self._pci:
            raise errors.NetloadConfigError(
                f"port {device!r} is a PCI device, but the engine was started without it: "
                f"create the Engine with pci=[{address!r}] (the EAL probes only the PCI "
                "devices it is given, so the machine's other NICs stay untouched)"
            )
        # a port that listens for its peer (vhost-user server) waits for it as a link does
        options.setdefault("peer_wait_s", self.link_timeout_s)
        info = self._call("port_open", device=device, lock_wait_s=self.port_wait_s,
                          timeout_s=self.call_timeout_s + self.port_wait_s +
                          float(options["peer_wait_s"]), **options)
        return Port(self, int(info["port_id"]), device, info, self._generation, name)

    def load(self, port: Port, stream: Any, *, pool_mbufs: int = 0,
             clock: str = "auto", queues: int | None = None) -> LoadedStream:
        """Compile a `traffic.Stream` (or an engine spec dict) onto a port.

        `clock` is the timestamp source the stream's latency is measured
        with: "tsc" (software TSC reads, every port), "hardware" (the NICs'
        clocks: RX timestamp offload on the RX port, the TX port's clock read
        as the burst is built; both ports opened with hardware timestamps) or
        "auto": hardware where every port of the run has it, else TSC.

        `queues` (default: every TX queue the port was opened with) spreads the stream
        over that many TX queues, each its own copy with its own sequence numbers, which
        the engine's workers send in parallel (queues round-robin over the workers): a
        port can send more than one core can. A run sends each queue its share of the
        count and the load (`Tx.per_queue`), and reports the stream as one
        (`measure.results.merge_queue_results`).
        """
        n = port.tx_queues if queues is None else queues
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= port.tx_queues:
            raise errors.NetloadConfigError(
                f"queues={queues!r}: port {port.label!r} was opened with {port.tx_queues} TX "
                f"queue(s); give 1 to {port.tx_queues}, or open it with more (tx_queues=, "
                "a topology port's `queues`)")
        first = self._load_one(port, stream, pool_mbufs=pool_mbufs, clock=clock)
        if n == 1:
            return first
        more: list[LoadedStream] = []
        try:
            for q in range(1, n):
                more.append(self._load_one(port, stream, pool_mbufs=pool_mbufs, clock=clock,
                                           name=f"{first.name} [q{q}]"))
        except BaseException:
            for part in (first, *more):
                part.free()
            raise
        return replace(first, more_queues=tuple(more))

    def _load_one(self, port: Port, stream: Any, *, pool_mbufs: int, clock: str,
                  name: str | None = None) -> LoadedStream:
        check_clock(clock, port)
        spec = stream if isinstance(stream, dict) else stream.compile(
            self.constants["signature_bytes"]
        )
        check_frames_fit(spec, port)
        limit = self.constants["max_fields"]
        if len(spec.get("fields", ())) > limit:
            raise errors.NetloadConfigError(
                f"stream {spec.get('name')!r} has {len(spec['fields'])} field modifiers; "
                f"the engine takes at most {limit} per stream: split it into several streams"
            )
        if name is not None:
            spec = {**spec, "name": name}
        reply = self._call("stream_load", port_id=port._id(), spec=spec, pool_mbufs=pool_mbufs)
        sizes = spec.get("sizes") or [len(f) + 4 for f in spec["frames"]]
        sequence = spec.get("sequence") or [0]
        return LoadedStream(self, port, int(reply["handle"]), int(reply["stream_id"]),
                            str(spec.get("name") or f"stream{reply['stream_id']}"),
                            bool(reply["csum_offloaded"]), self._generation,
                            sum(sizes[i] for i in sequence) / len(sequence), clock)

    # ---- runs ---------------------------------------------------------------------

    def run(
        self,
        tx: Iterable[LoadedStream | tuple[LoadedStream, int] | Tx],
        rx: Iterable[Port] = (),
        *,
        expect: Iterable[LoadedStream] = (),
        count: int = 0,
        duration_s: float = 0.0,
        drain_s: float = 0.1,
        start_delay_s: float = 0.01,
        burst: int = 0,
        timing_samples: int = 0,
        forward: Iterable[Any] = (),
        latency_digits: int = 2,
        progress: Callable[[dict[str, Any]], None] | None = None,
        capture: int | None = None,
        capture_snaplen: int = 128,
        hist_pages: int = 0,
    ) -> RunResult:
        """Send until every stream sent `count` packets or `duration_s` passed.

        `tx` entries are loaded streams (sending `count` each) or
        `(stream, count)` pairs or `Tx` entries (with pacing phases).
        `latency_digits` (1 to 3) sets the latency histograms' precision in
        significant digits, as HdrHistogram does: 2 keeps every bucket
        within 0.8 % of its value, 3 within 0.1 %. `forward` holds delay lines run in the same worker loop (the
        reference DUT, see `reference.ReferenceDut`). `timing_samples` keeps the TX and RX times of the first N frames of
        each stream (`StreamResult.sample_tx_ns`, `sample_rx_ns`). `expect` streams are not sent but counted
        on RX (another generator sends them). RX ports are polled until
        `drain_s` after the last frame left. `hist_pages` sets the run's histogram pages of 64
        buckets (0, the default: as many as fit; see docs/latency.md). Ctrl-C (or SIGTERM, or an error raised by
        `progress`) stops TX, keeps what was measured (as `engine.last_result`, marked
        interrupted) and re-raises.
        """
        entries = [
            e if isinstance(e, Tx) else Tx(e, count) if isinstance(e, LoadedStream) else Tx(*e)
            for e in tx
        ]
        expected = list(expect)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise errors.NetloadConfigError(f"count={count!r}: give a number of packets >= 0")
        duration_s, drain_s, start_delay_s = (
            run_seconds(value, what=name, zero_ok=True) for name, value in
            (("duration_s", duration_s), ("drain_s", drain_s), ("start_delay_s", start_delay_s)))
        for stream in expected:
            self._check_generation(stream.generation, f"stream {stream.name!r}")
        for entry in entries:
            stream, n = entry.stream, entry.count
            self._check_generation(stream.generation, f"stream {stream.name!r}")
            bounded = bool(entry.phases) and entry.spec()["phases"][-1]["duration_ns"] > 0
            if n == 0 and duration_s == 0 and not bounded:
                raise errors.NetloadConfigError(
                    f"stream {stream.name!r} has no packet count and the run no duration; "
                    "give count=N or duration_s=T"
                )
        rx_ports = list(rx)
        for p in rx_ports:
            self._check_generation(p.generation, f"port {p.device!r}")
        # a stream loaded over several TX queues runs as one native entry a queue
        per_entry = [e.per_queue() for e in entries]
        native = [part for parts in per_entry for part in parts]
        native_expected = [part for s in expected for part in s.queue_streams]
        streams = [e.stream for e in native] + native_expected
        hw = [hardware_clock(s, rx_ports) for s in streams]
        run_id = self._call(
            "run_start",
            tx=[dict(e.spec(), hw_clock=h) for e, h in zip(native, hw)]
            + [{"handle": s.handle, "queue": 0, "count": 0, "expect_only": True,
                "hw_clock": h} for s, h in zip(native_expected, hw[len(native):])],
            rx=[(p.port_id, q) for p in rx_ports for q in range(p.rx_queues)],
            duration_ns=int(duration_s * 1e9),
            drain_ns=int(drain_s * 1e9),
            start_delay_ns=int(start_delay_s * 1e9),
            burst=burst,
            timing_samples=int(timing_samples),
            forwarders=[f if isinstance(f, dict) else f.spec() for f in forward],
            latency_sub_bits=latency_sub_bits(latency_digits),
            capture_frames=int(self.capture_default if capture is None else capture),
            capture_snaplen=int(capture_snaplen),
            hist_pages=_hist_pages(hist_pages),
        )
        stopped_by: BaseException | None = None
        started_at = time.time()
        in_callback = False
        try:
            while True:
                status = self._call("run_poll", run_id=run_id, wait_ms=POLL_SLICE_MS)
                if progress is not None:
                    in_callback = True
                    progress(status)
                    in_callback = False
                if status["state"] == "done":
                    break
        except BaseException as exc:
            # Ctrl-C, SIGTERM (cleanup.Terminated) or the progress callback's own error:
            # stop the run, keep what it measured (last_result), then raise it again.
            # Anything else came from the host itself (a crash): nothing to stop.
            if not (isinstance(exc, KeyboardInterrupt) or in_callback):
                raise
            stopped_by = exc
            self._call("run_stop", run_id=run_id)
            while self._call("run_poll", run_id=run_id, wait_ms=POLL_SLICE_MS)["state"] != "done":
                pass
        interrupted = stopped_by is not None
        raw = self._call("run_results", run_id=run_id)
        run_ports = {p.port_id: p for p in [s.port for s in streams] + rx_ports}
        by_id = {i: p.device for i, p in run_ports.items()}
        result = build_run_result(
            [s.name for s in streams],
            [s.stream_id for s in streams],
            {k: unpack_array(v) for k, v in raw["arrays"].items()},
            {by_id.get(int(k), str(k)): v for k, v in raw["ports"].items()},
            interrupted,
            hist_lower_ns=self.hello.get("hist_lower_ns"),
            expected_only=len(native_expected),
            tsc_hz=self.hello.get("tsc_hz"),
            started_at=started_at + start_delay_s,
            clocks=[("nic-hardware", 1e9 / min(p.info["nic_clock_hz"] for p in [s.port, *rx_ports]))
                    if h else None for s, h in zip(streams, hw)],
            link_events=link_events(raw.get("link_events") or (), run_ports),
        )
        if len(native) + len(native_expected) > len(entries) + len(expected):
            result = merge_queue_results(
                result, [len(parts) for parts in per_entry] + [s.queues for s in expected])
        self.last_result = result
        for observer in list(self.observers):
            observer(result)
        if stopped_by is not None:
            raise stopped_by
        return result

    def memory(self) -> dict[str, int]:
        """The engine's memory: its DPDK heap (`heap_bytes`, `heap_used_bytes`,
        `heap_largest_free_bytes`, every socket; `memory_mb` sets it) and the TX frame
        pools in it (`shared_pools`, `shared_pool_mbufs`, `shared_pool_bytes`,
        `private_pools`)."""
        return {k: int(v) for k, v in self._call("mem_stats").items()}

    def histogram_record_cycles(self, n: int) -> int:
        """TSC cycles the native histogram takes to record n values (benchmarks)."""
        return int(self._call("hist_bench", n=int(n)))

    def crash_for_test(self) -> None:
        """Make the native core dereference NULL (tests of crash handling)."""
        self._call("crash", timeout_s=30)


def link_events(events: Iterable[dict[str, Any]],
                ports: dict[int, Port]) -> tuple[dict[str, Any], ...]:
    """The host's link events of a run, each naming its port as the topology does
    (`port`: "p1", or the device string of a port opened without a name) and by device."""
    out = []
    for e in events:
        port = ports.get(int(e["port_id"]))
        out.append({"event": e["event"],
                    "port": port.label if port is not None else str(e["port_id"]),
                    "device": port.device if port is not None else None,
                    **{k: v for k, v in e.items() if k not in ("event", "port_id")}})
    return tuple(out)


CLOCKS = ("auto", "tsc", "hardware")


def latency_sub_bits(digits: int) -> int:
    """Sub-bucket bits for `digits` significant digits: 2^ceil(log2(2 * 10^digits))
    sub-buckets (HdrHistogram's rule), so a bucket is at most 10^-digits of its value."""
    if not isinstance(digits, int) or isinstance(digits, bool) or not 1 <= digits <= 3:
        raise errors.NetloadConfigError(
            f"latency_digits={digits!r}: give 1, 2 or 3 significant digits")
    return math.ceil(math.log2(2 * 10**digits))


def check_clock(clock: str, port: Port) -> None:
    """Refuse a timestamp source the port cannot give, naming what it can."""
    if clock not in CLOCKS:
        raise errors.NetloadConfigError(f"clock {clock!r}: use one of {list(CLOCKS)}")
    if clock == "hardware" and not port.info.get("hw_timestamps"):
        has = [name for name, key in (("IEEE 1588 timesync", "has_timesync"),
                                      ("RX timestamp offload", "has_rx_timestamp"),
                                      ("a readable NIC clock", "has_read_clock"))
               if port.info.get(key)]
        raise errors.NetloadEnvironmentError(
            f"clock 'hardware' on port {port.device!r} (driver {port.driver}): hardware "
            "latency needs RX timestamp offload and a readable NIC clock (mlx5 has both); "
            + (f"this port has only {' and '.join(has)}" if has else
               "this port has no hardware timestamping")
            + (", and it was opened without hw_timestamps" if port.info.get("has_rx_timestamp")
               else "")
            + "; use clock='tsc' (software TSC timestamps) or 'auto'"
        )


def hardware_clock(stream: LoadedStream, rx_ports: list[Port]) -> bool:
    """Whether a stream is timed on NIC clocks in a run with these RX ports."""
    ports = [stream.port, *rx_ports]
    if stream.clock == "hardware":
        lacking = [p.device for p in ports if not p.info.get("hw_timestamps")]
        if lacking:
            raise errors.NetloadEnvironmentError(
                f"stream {stream.name!r} is timed on hardware clocks, but port(s) "
                f"{lacking} have no hardware timestamps; RX on ports opened with "
                "hw_timestamps, or load the stream with clock='tsc' or 'auto'")
        return True
    return stream.clock == "auto" and bool(rx_ports) and all(
        p.info.get("hw_timestamps") for p in ports)


def check_frames_fit(spec: dict[str, Any], port: Port) -> None:
    """Refuse frames the port cannot carry before any traffic starts."""
    mtu = int(port.info.get("mtu") or 0)
    if not mtu:
        return
    l3 = int(spec.get("l3_offset", 14))
    l3 = l3 if l3 >= 0 else 14
    for frame in spec["frames"]:
        if len(frame) - l3 > mtu:
            raise errors.NetloadConfigError(
                f"stream {spec.get('name')!r}: a {len(frame) + 4}-byte frame carries "
                f"{len(frame) - l3} bytes above L2, more than port {port.device!r}'s MTU "
                f"{mtu}; use smaller frames or open the port with mtu={len(frame) - l3}"
            )
