"""The engine as the pytest process sees it: a host process behind execnet.

`Engine` starts `engine/host.py` in its own interpreter (a local popen
gateway by default, any execnet spec such as `ssh=gen-host//python=python3`
for a remote generator), so DPDK's EAL never lives in pytest. If the host
dies, the call raises `EngineCrashed` with the host's last log lines, and the
next call starts a fresh host (handles from the dead one are refused).

What it hands out lives beside it: `Port`, `LoadedStream` and `Tx` (handles.py), a
run's life (runs.py: `Engine.run` takes a `protocol.RunSpec`, or keywords that make
one), the CPU checks (cpus.py). Their names are importable from here as before.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields, replace
from typing import Any, Self

from .. import errors
from . import MAX_MEMORY_MB, MIN_MEMORY_MB, remote  # the bounds: engine/__init__.py
from .._native_facts import ABI_VERSION
from ..locks import cmdline
from ..measure.results import RunResult
from .cpus import FIRST_AFFINITY as _FIRST_AFFINITY
from .cpus import check_cpus, cpu_ranges
from .handles import (
    CLOCKS,
    LoadedStream,
    Port,
    Tx,
    check_clock,
    check_frames_fit,
    hardware_clock,
    link_events,
)
from .intervals import Interval
from .leftovers import mark_crashed, new_log_dir, remove_host_leftovers, remove_runtime_dir
from .link import PCI_ADDRESS as PCI_ADDRESS  # noqa: PLC0414 - re-exported for the fixtures
from .protocol import Hello, PortInfo, RunSpec, StreamSpec, latency_sub_bits
from .runs import POLL_SLICE_MS, execute
from .wire import TERMINATED_NOTE

__all__ = ["CLOCKS", "CPU_WAIT_S", "LINK_TIMEOUT_S", "POLL_SLICE_MS", "Engine", "LoadedStream",
           "PCI_ADDRESS", "Port", "RunSpec", "Tx", "check_abi", "check_clock", "check_cpus",
           "check_frames_fit", "cpu_ranges", "hardware_clock", "latency_sub_bits",
           "link_events"]

PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST_EXIT_WAIT_S = 10.0  # a killed engine host's threads may take this long to end
CPU_WAIT_S = 5.0  # a start waits this long for worker CPUs another engine holds
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
# Engine.run's settings when none is given beside a RunSpec
_RUN_DEFAULTS = {f.name: f.default for f in fields(RunSpec) if f.name not in ("tx", "rx")}


def _log_tail(path: str, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


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
            from .fake_dut import as_fake_dut

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
        # The host's hello, typed (None before the first); `hello` is it as a dict.
        self.host_hello: Hello | None = None
        # The EAL arguments of the last host that answered hello (its runtime dir), also
        # when its hello was then refused
        self._host_eal_args: list[str] = []
        self.last_result: RunResult | None = None

    # ---- lifecycle ----------------------------------------------------------------

    @property
    def hello(self) -> dict[str, Any]:
        """The host's answer to hello: `protocol.Hello`'s fields as a dict ({} before it)."""
        return {} if self.host_hello is None else self.host_hello.as_dict()

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
            reply = self._call(
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
        # What a refused host still tells: its runtime dir and (remote) its log. Its core's
        # ABI is checked before the codec's own version stamp, since check_abi names the fix.
        self._host_eal_args = list(reply.get("eal_args") or [])
        if self.remote:
            self.log_path = str(reply.get("log_path") or "")
        try:
            check_abi(reply.get("constants", {}).get("abi_version"),
                      remote.target(spec) if self.remote else "")
            self.host_hello = hello = Hello.decode(reply)
        except errors.NetloadEnvironmentError:
            self.close()
            raise
        if hello.cpu_note:
            warnings.warn(errors.NetloadWarning(hello.cpu_note), stacklevel=2)
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
        h = self.host_hello
        own = set(h.worker_cpus if h else ())
        workers = own | set(h.busy_cpus if h else ())
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
            remove_runtime_dir(list(self._host_eal_args))
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
                                         list(self._host_eal_args))
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

    def _hello(self) -> Hello:
        """The running host's hello (starting it first when none runs)."""
        if not self.alive:
            self.start()
        assert self.host_hello is not None  # start() decoded it, or raised
        return self.host_hello

    @property
    def constants(self) -> dict[str, int]:
        return dict(self._hello().constants)

    def environment(self) -> dict[str, Any]:
        """What results record about the generator: DPDK version, EAL lcores, TSC rate."""
        h = self._hello()
        return {"dpdk_version": h.dpdk_version, "gateway": self.gateway_spec,
                "host": h.hostname, "workers": h.workers, "worker_cpus": list(h.worker_cpus),
                "tsc_hz": h.tsc_hz, "abi_version": h.constants["abi_version"]}

    @property
    def workers(self) -> int:
        return self._hello().workers

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
        opened = PortInfo.decode(info)
        return Port(self, opened.port_id, device, opened.as_dict(), self._generation, name)

    def load(self, port: Port, stream: Any, *, pool_mbufs: int = 0,
             clock: str = "auto", queues: int | None = None) -> LoadedStream:
        """Compile a `traffic.Stream` (or its compiled dict, or a `protocol.StreamSpec`)
        onto a port.

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
        spec = StreamSpec.of(stream, self.constants["signature_bytes"])
        check_frames_fit(spec, port)
        limit = self.constants["max_fields"]
        if len(spec.fields) > limit:
            raise errors.NetloadConfigError(
                f"stream {spec.name!r} has {len(spec.fields)} field modifiers; "
                f"the engine takes at most {limit} per stream: split it into several streams"
            )
        if name is not None:
            spec = replace(spec, name=name)
        reply = self._call("stream_load", port_id=port._id(), spec=spec.encode(),
                           pool_mbufs=pool_mbufs)
        return LoadedStream(self, port, int(reply["handle"]), int(reply["stream_id"]),
                            str(spec.name or f"stream{reply['stream_id']}"),
                            bool(reply["csum_offloaded"]), self._generation,
                            spec.mean_frame_size, clock,
                            source=stream if hasattr(stream, "template") else None)

    # ---- runs ---------------------------------------------------------------------

    def run(
        self,
        tx: RunSpec | Iterable[LoadedStream | tuple[LoadedStream, int] | Tx],
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
        interval_s: float = 0.0,
        on_interval: Callable[[Interval], None] | None = None,
        expect_frames: Mapping[str, Sequence[Any]] | None = None,
    ) -> RunResult:
        """Run `tx`, a `RunSpec` (`protocol.py`), or the spec its keywords make: send
        until every stream sent `count` packets or `duration_s` passed.

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
        interrupted) and re-raises; `progress` sees each poll's status (`RunStatus`'s
        fields, a dict). `interval_s` (with `duration_s` a whole number of them) counts
        the run in intervals too, while traffic flows: `on_interval` gets each
        `intervals.Interval` (what each stream sent and received in it, its latency
        histogram) as the poll after its end brings it, the last one once the run is
        done; errors it raises stop the run as `progress`'s do. `expect_frames`: stream
        name -> its expected frames (`traffic.expect.expect(...).rule(stream)` each), compared
        in the RX path; the result's ``frames`` holds each stream's `FrameCheck`.
        """
        settings: dict[str, Any] = {
            "expect": tuple(expect), "count": count, "duration_s": duration_s,
            "drain_s": drain_s, "start_delay_s": start_delay_s, "burst": burst,
            "timing_samples": timing_samples, "forward": tuple(forward),
            "latency_digits": latency_digits, "capture": capture,
            "capture_snaplen": capture_snaplen, "hist_pages": hist_pages,
            "interval_s": interval_s, "expect_frames": expect_frames}
        if isinstance(tx, RunSpec):
            if tuple(rx) or settings != _RUN_DEFAULTS:
                raise errors.NetloadConfigError(
                    "Engine.run(spec): give the run's ports and settings in the RunSpec, not "
                    "as arguments beside it (only progress= and on_interval= go there)")
            spec = tx
        else:
            spec = RunSpec(tuple(tx), tuple(rx), **settings)
        return execute(self, spec, progress, on_interval)

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
