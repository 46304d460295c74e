"""The engine host: owns DPDK's EAL in its own process, driven over execnet.

`serve(channel)` answers one request at a time. A request is
`{"op": name, **arguments}`; the answer is `{"ok": value}` or
`{"error": class name, "message": text}`. The operations, and the typed messages they
carry, are `protocol.py`'s (`HostOps`; `Hello`, `PortSpec`, `PortStats`, `StreamSpec`,
`RunStart`, `RunStatus`, `RunResults`). A run's result arrays travel inside `RunResults` as
`wire.pack_array` packs them and are rebuilt by the client (both sides use `wire.py`).
Only this module loads the facade, and only in the host process.
"""

from __future__ import annotations

import contextlib
import faulthandler
import itertools
import os
import shutil
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import replace
from types import FrameType
from typing import TYPE_CHECKING, Any

from .. import errors
from .. import locks
from .leftovers import new_log_dir, remove_runtime_dir, sweep_engine_logs, sweep_runtime_dirs
from .link import LinkWatch, dpdk_link, interface_of, kernel_link, read_iface_counter
from .protocol import Hello, PortInfo, PortSpec, PortStats, RunResults, RunStart, StreamSpec
from .ringdrops import RingDrops
from .wire import TERMINATED_NOTE, pack_array

IDLE_S = 0.02  # between requests, ARP/ND is answered this often


class Host:
    """Handles and state of one engine host process."""

    def __init__(self) -> None:
        from . import facade, facade_run  # load the extension: only ever in the host process

        self.facade = facade
        self.native_run = facade_run.Run
        self.ports: dict[int, str] = {}
        self.port_queues: dict[int, dict[str, int]] = {}  # the RX and TX queues it opened
        self.nd_ports: set[int] = set()  # ports with an address: ARP/ND answered when idle
        self.port_locks: dict[int, locks.HostLock] = {}  # held while the port is open
        self.client: dict[str, Any] = {}  # the process this host works for (pid, cmdline)
        self.streams: dict[int, Any] = {}
        self.runs: dict[int, tuple[Any, list[int], dict[int, dict[str, int]]]] = {}
        self.watches: dict[int, LinkWatch] = {}  # per run: its ports' link events
        self.ring_drops = RingDrops()  # the AF_PACKET PMD's ring drops, counted nowhere else
        self._ids = itertools.count(1)
        self.eal_args: list[str] = []
        self.cpu_plan: locks.CpuPlan | None = None
        self.own_log_dir = ""  # a remote host's log dir, made here (op_hello)

    # ---- lifecycle ------------------------------------------------------------

    def op_hello(self, eal_args: list[str] | None = None, log_path: str | None = None,
                 cpu_wait_s: float = 0.0, client: dict[str, Any] | None = None,
                 remote: bool = False, **eal_options: Any) -> dict[str, Any]:
        """Start the EAL. A `remote` host (the client is on another machine) first sweeps
        what dead hosts left here, then makes its own log dir when `log_path` is None."""
        f = self.facade
        self.client = dict(client or {})
        if remote:
            sweep_runtime_dirs()
            sweep_engine_logs()
            if not log_path:
                self.own_log_dir = new_log_dir()
                log_path = os.path.join(self.own_log_dir, f"engine-{os.getpid()}-1.log")
        if log_path:
            # A segfault in C then leaves the Python stack in the engine log.
            self._fault_log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
            faulthandler.enable(file=self._fault_log)
            # libbpf/libxdp and some PMDs print to stderr: into the engine log with them.
            os.dup2(self._fault_log.fileno(), 2)
        # Worker CPUs are this process's alone: locked here, so the locks end with it.
        holder = locks.holder_info("worker CPU", **{f"for_{k}": v for k, v in
                                                    (client or {}).items()})
        plan = None
        main_cpu = eal_options.pop("main_cpu", None)
        if main_cpu is not None and not eal_args:
            # asked for: a worker on every CPU of `lcores` (default: every CPU this process
            # may use), the main lcore on `main_cpu`, which may be one of them
            eal_options.pop("auto_main", None)
            lcores = eal_options.get("lcores")
            plan = locks.claim_worker_cpus(
                lcores if lcores is not None else sorted(os.sched_getaffinity(0)), holder,
                explicit=True, wait_s=cpu_wait_s, main=int(main_cpu), main_shares=True)
            eal_options.update(lcores=plan.workers, main_cpu=plan.main)
        elif eal_options.pop("auto_main", False) and eal_options.get("lcores"):
            # the client (on another machine) named the workers' CPUs: the main lcore,
            # which only waits, goes on one of this machine's other CPUs
            workers = list(eal_options["lcores"])
            others = sorted(os.sched_getaffinity(0) - set(workers))
            eal_options["lcores"] = [others[0] if others else workers[0], *workers]
        if not eal_args and plan is None:
            lcores = eal_options.get("lcores")
            plan = locks.claim_worker_cpus(
                lcores if lcores is not None else sorted(os.sched_getaffinity(0)), holder,
                explicit=lcores is not None, wait_s=cpu_wait_s)
            eal_options["lcores"] = plan.lcores
        try:
            args = list(eal_args) if eal_args else f.default_eal_args(**eal_options)
            f.Eal.start(args, log_path)
        except BaseException:
            if plan is not None:
                plan.release()
            raise
        self.eal_args = args
        if plan is None:  # EAL arguments of the caller's: their workers must be free
            # where the threads run: the EAL pinned this one (it called rte_eal_init) to
            # the main lcore's CPUs (rte_lcore_to_cpu_id() answers core ids, not CPUs)
            cpus = f.Eal.lcore_cpus()
            cpus = [min(os.sched_getaffinity(0)), *(worker_thread_cpus() or cpus[1:])]
            try:
                plan = locks.claim_worker_cpus(cpus, holder, explicit=True, wait_s=cpu_wait_s,
                                               main=cpus[0])
            except BaseException:
                f.Eal.stop()
                raise
        else:
            # our own plan says where the lcores run: under --lcores=0@c,1@c DPDK's
            # rte_lcore_to_cpu_id() answers the lcore id (1), not the CPU (c)
            cpus = [plan.main, *plan.workers]
        self.cpu_plan = plan
        f.keep_off_workers(cpus[0], cpus[1:])
        return Hello(constants=f.constants(), workers=f.Eal.workers(), eal_args=tuple(args),
                     main_cpu=cpus[0], worker_cpus=tuple(cpus[1:]), tsc_hz=f.tsc_hz(),
                     hist_lower_ns=tuple(f.hist_lower_bounds_ns().tolist()), pid=os.getpid(),
                     dpdk_version=f.dpdk_version(), cpu_note=plan.note(),
                     busy_cpus=tuple(sorted(plan.skipped)), hostname=socket.gethostname(),
                     log_path=log_path or "").encode()

    def op_close(self, drop_log: bool = False) -> None:
        """Free everything; with `drop_log`, also the log dir this host made (remote)."""
        if drop_log and self.own_log_dir:
            shutil.rmtree(self.own_log_dir, ignore_errors=True)
        self.nd_ports.clear()
        try:
            for run_id in list(self.runs):
                self.runs.pop(run_id)[0].free()
            for stream in self.streams.values():
                stream.free()
            self.streams.clear()
            for port_id in list(self.ports):
                self.facade.port_close(port_id)
            self.ports.clear()
            self.port_queues.clear()
            for lock in self.port_locks.values():
                lock.release()
            self.port_locks.clear()
        finally:
            try:
                self.facade.Eal.stop()  # removes the runtime dir, whatever failed before
            finally:
                if self.cpu_plan is not None:  # the workers stopped: their CPUs are free
                    self.cpu_plan.release()

    def op_mem_stats(self) -> dict[str, int]:
        return self.facade.mem_stats()

    def op_hist_bench(self, n: int) -> int:
        return self.facade.hist_bench_cycles(n)

    def op_crash(self) -> None:
        """Test hook: dereference NULL in native code, as a real bug would."""
        self.facade.crash()

    # ---- ports ----------------------------------------------------------------

    def op_port_open(self, device: str, lock_wait_s: float = 0.0,
                     **options: Any) -> dict[str, Any]:
        # the port is this process's alone while it is open: locked here, so the lock
        # ends with the port, or with this process however it ends
        holder = locks.holder_info(f"port {device}", **{f"for_{k}": v for k, v in
                                                        self.client.items()})
        lock = locks.claim_port(device, holder, wait_s=lock_wait_s)
        try:
            spec = PortSpec.decode(options)
            port_id = self.facade.port_open(device, spec)
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        self.ports[port_id] = device
        self.port_queues[port_id] = {"rx_queues": spec.rx_queues, "tx_queues": spec.tx_queues}
        if lock is not None:
            self.port_locks[port_id] = lock
        return self.op_port_info(port_id)

    def op_port_info(self, port_id: int) -> dict[str, Any]:
        """DPDK's port info, its link fields the real link's (`link_state`)."""
        info = {**self.facade.port_info(port_id), **self.port_queues.get(port_id, {})}
        link = self.link_state(port_id, info)
        info.update(link_up=link["up"], link_speed_mbps=link["speed_mbps"] or 0,
                    link_source=link["source"], link_speed_note=link["speed_note"])
        return PortInfo.decode(info).encode()

    def link_state(self, port_id: int, info: dict[str, Any] | None = None) -> dict[str, Any]:
        """The port's link: its kernel interface's carrier and speed when it sits on one
        (DPDK's af_packet/af_xdp report theirs up at 10G, whatever the wire does),
        else DPDK's (engine/link.py)."""
        device = self.ports[port_id]
        iface = interface_of(device)
        if iface is not None:
            return kernel_link(iface)
        return dpdk_link(device, info if info is not None else self.facade.port_info(port_id))

    def op_port_link(self, port_id: int) -> dict[str, Any]:
        """The port's link now (cheap: a few sysfs reads or one DPDK link query)."""
        if port_id not in self.ports:
            raise errors.NetloadConfigError(
                f"port {port_id} is not open in this engine; open it again")
        return self.link_state(port_id)

    def op_port_stats(self, port_id: int) -> dict[str, int]:
        return PortStats(**self.facade.port_stats(port_id)).encode()

    def op_port_set_queue_rate(self, port_id: int, queue: int, mbps: int) -> None:
        self.facade.port_set_queue_rate(port_id, queue, mbps)

    # ---- neighbours (ARP/ND) ------------------------------------------------------

    def op_port_set_addr(self, port_id: int, mac: str, ip: str, vlan: int = 0,
                         reply_pps: int = 0) -> None:
        self.facade.port_set_addr(port_id, mac, ip, vlan, reply_pps)
        self.nd_ports.add(port_id)

    def op_port_announce(self, port_id: int) -> None:
        self.facade.port_announce(port_id)

    def op_port_resolve(self, port_id: int, peer_ip: str, timeout_ms: int,
                        retry_ms: int) -> str:
        return self.facade.port_resolve(port_id, peer_ip, timeout_ms, retry_ms)

    def op_port_nd_stats(self, port_id: int) -> dict[str, Any]:
        return self.facade.port_nd_stats(port_id)

    def idle(self) -> bool:
        """Between requests: answer ARP/ND on the ports that have an address (a run
        answers itself, and the call does nothing then). False: nothing to do."""
        for port_id in list(self.nd_ports):
            try:
                self.facade.port_nd_service(port_id, 0)
            except errors.NetloadError:  # the port went away: nothing left to answer
                self.nd_ports.discard(port_id)
        return bool(self.nd_ports)

    def op_port_close(self, port_id: int) -> None:
        self.nd_ports.discard(port_id)
        if any(s.port_id == port_id for s in self.streams.values()):
            for handle in [h for h, s in self.streams.items() if s.port_id == port_id]:
                self.streams.pop(handle).free()
        self.facade.port_close(port_id)
        self.ports.pop(port_id, None)
        self.port_queues.pop(port_id, None)
        lock = self.port_locks.pop(port_id, None)
        if lock is not None:
            lock.release()

    def stats(self, port_id: int) -> dict[str, int]:
        """DPDK's port counters, plus the kernel's drop counters of the interface
        under an AF_XDP/AF_PACKET/pcap port: frames the kernel dropped on the
        generator's own receive path (a full XSK ring, say) show there only; and the
        drops of an AF_PACKET port's packet sockets (its full RX ring), which no
        counter of DPDK's or the interface's shows."""
        stats = self.facade.port_stats(port_id)
        iface = interface_of(self.ports[port_id])
        for what in ("rx_dropped", "tx_dropped"):
            stats[f"iface_{what}"] = read_iface_counter(iface, what) if iface else 0
        # a full AF_PACKET RX ring: the packet socket's drops (ringdrops.py)
        stats["iface_ring_drops"] = (self.ring_drops.total(iface) if iface and
                                     self.ports[port_id].startswith("net_af_packet") else 0)
        # The generator's own link: its state, and how often the kernel interface under
        # the port lost its carrier (a flap between two reads shows only there).
        stats["link_up"] = int(bool(self.link_state(port_id)["up"]))
        stats["iface_carrier_down"] = read_iface_counter(
            iface, "carrier_down_count", "") if iface else 0
        return stats

    # ---- streams --------------------------------------------------------------

    def op_stream_load(self, port_id: int, spec: dict[str, Any],
                       pool_mbufs: int = 0) -> dict[str, Any]:
        stream = self.facade.stream_create(port_id, StreamSpec.decode(spec), pool_mbufs)
        handle = next(self._ids)
        self.streams[handle] = stream
        return {"handle": handle, "stream_id": stream.stream_id,
                "csum_offloaded": stream.csum_offloaded}

    def op_stream_free(self, handle: int) -> None:
        stream = self.streams.pop(handle, None)
        if stream is not None:
            stream.free()

    # ---- runs -----------------------------------------------------------------

    def op_run_start(self, tx: list[dict[str, Any]], rx: list[tuple[int, int]],
                     **settings: Any) -> int:
        spec = RunStart.decode({"tx": tx, "rx": rx, **settings})
        try:
            streams = [self.streams[e.handle] for e in spec.tx]
        except KeyError as exc:
            raise errors.NetloadConfigError(
                f"stream handle {exc} is not loaded in this engine; load it again"
            ) from None
        ports = sorted({s.port_id for s in streams} | spec.ports)
        for p in ports:
            if p not in self.ports:
                raise errors.NetloadConfigError(
                    f"port {p} was closed; open it again before using it in a run")
        before = {p: self.stats(p) for p in ports}
        run = self.native_run(spec, streams)
        # t = 0 of the run's link events: when its first frame was due
        start = time.monotonic() + spec.start_delay_ns / 1e9
        run_id = next(self._ids)
        self.runs[run_id] = (run, ports, before)
        self.watches[run_id] = LinkWatch(ports, self.link_state, start)
        return run_id

    def op_run_poll(self, run_id: int, wait_ms: int = 100) -> dict[str, Any]:
        self.watches[run_id].sample()  # each poll (~100 ms): where a link drop is placed
        run = self.runs[run_id][0]
        status = run.poll(wait_ms)
        # after the poll: the last interval is readable once it says done
        return replace(status, intervals=tuple(run.intervals())).encode()

    def op_run_stop(self, run_id: int) -> None:
        self.runs[run_id][0].stop()

    def op_run_results(self, run_id: int) -> dict[str, Any]:
        run, ports, before = self.runs.pop(run_id)
        watch = self.watches.pop(run_id)
        try:
            arrays = run.results()
        finally:
            run.free()
        watch.sample()
        after = {p: self.stats(p) for p in ports}
        deltas = {p: {k: after[p][k] - before[p][k] for k in after[p] if k != "link_up"}
                  for p in ports}
        for p in ports:  # a state, not a counter: both ends of the run
            deltas[p]["link_up_before"] = before[p]["link_up"]
            deltas[p]["link_up_after"] = after[p]["link_up"]
        return RunResults({k: pack_array(v) for k, v in arrays.items()}, deltas,
                          tuple(watch.events)).encode()


if TYPE_CHECKING:  # mypy checks that Host has HostOps' operations, signature for signature
    from .protocol import HostOps

    _HOST_OPS: type[HostOps] = Host


def _install_sigterm(eal_args: Callable[[], Sequence[str]]) -> None:
    """SIGTERM ends the host as it always did, but first removes the runtime dir of
    its EAL (`eal_args()`) and leaves a note in the engine log."""
    if threading.current_thread() is not threading.main_thread():
        return  # handlers are the main thread's; the client removes the dir then

    pid = os.getpid()

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        if os.getpid() == pid:  # not in a forked child: the EAL is the parent's
            remove_runtime_dir(eal_args())
            with contextlib.suppress(OSError):
                os.write(2, f"{TERMINATED_NOTE}\n".encode())
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)


def worker_thread_cpus() -> list[int]:
    """The CPUs the EAL's worker threads (rte-worker-N) may run on: where they
    busy-poll, whatever the lcore-to-CPU mapping of the EAL arguments was."""
    cpus: set[int] = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm", encoding="utf-8") as f:
                if f.read().startswith("rte-worker"):
                    cpus |= os.sched_getaffinity(int(tid))
        except OSError:
            continue  # the thread ended meanwhile
    return sorted(cpus)


def serve(channel: Any, make_host: Callable[[], Any] = Host) -> None:
    """Answer requests until `close` or until the channel goes away. However the
    host ends (close, its channel gone, SIGTERM, an exception), the runtime dir of
    its EAL goes with it. `make_host` makes the object whose `op_<name>` methods
    answer (the fake engine, engine/fake.py, passes its own)."""
    hosts: list[Any] = []  # the one Host, made on the first request
    _install_sigterm(lambda: hosts[0].eal_args if hosts else [])
    timeout_error = getattr(channel, "TimeoutError", TimeoutError)
    busy = False  # the host has idle work (ARP/ND to answer between requests)
    try:
        while True:
            try:
                msg = channel.receive(IDLE_S if busy else None)
            except timeout_error:
                busy = hosts[0].idle()
                continue
            except EOFError:
                msg = {"op": "close"}
            op = msg.pop("op")
            try:
                if not hosts:
                    hosts.append(make_host())
                result = getattr(hosts[0], f"op_{op}")(**msg)
                reply: dict[str, Any] = {"ok": result}
            except errors.NetloadError as exc:
                reply = {"error": type(exc).__name__, "message": str(exc)}
            except AttributeError:
                if not hosts or not hasattr(hosts[0], f"op_{op}"):
                    reply = {"error": "NetloadConfigError",
                             "message": f"unknown engine op {op!r}"}
                else:
                    reply = {"error": "NativeError", "message": traceback.format_exc()}
            except Exception:  # noqa: BLE001 - anything else is an engine bug: ship its traceback
                reply = {"error": "NativeError", "message": traceback.format_exc()}
            if op == "close":
                if not channel.isclosed():
                    channel.send(reply)
                return
            channel.send(reply)
            # (no host when making it failed: the error went back, the next op tries again)
            busy = bool(hosts) and bool(getattr(hosts[0], "nd_ports", None))
    finally:
        if hosts:
            remove_runtime_dir(hosts[0].eal_args)


if __name__ == "__channelexec__":
    serve(channel)  # type: ignore[name-defined]  # noqa: F821
