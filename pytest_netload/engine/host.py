"""The engine host: owns DPDK's EAL in its own process, driven over execnet.

`serve(channel)` answers one request at a time. A request is
`{"op": name, **arguments}`; the answer is `{"ok": value}` or
`{"error": class name, "message": text}`. Results cross as plain types:
numpy arrays travel as `{"descr", "data"}` and are rebuilt by the client.
"""

from __future__ import annotations

import faulthandler
import itertools
import os
import shutil
import traceback
from typing import Any

import numpy as np

from .. import errors


class Host:
    """Handles and state of one engine host process."""

    def __init__(self) -> None:
        from . import facade  # loads the extension: only ever in the host process

        self.facade = facade
        self.ports: dict[int, str] = {}
        self.streams: dict[int, Any] = {}
        self.runs: dict[int, tuple[Any, list[int], dict[int, dict[str, int]]]] = {}
        self._ids = itertools.count(1)
        self.eal_args: list[str] = []

    # ---- lifecycle ------------------------------------------------------------

    def op_hello(self, eal_args: list[str] | None = None, log_path: str | None = None,
                 **eal_options: Any) -> dict[str, Any]:
        f = self.facade
        if log_path:
            # A segfault in C then leaves the Python stack in the engine log.
            self._fault_log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
            faulthandler.enable(file=self._fault_log)
            # libbpf/libxdp and some PMDs print to stderr: into the engine log with them.
            os.dup2(self._fault_log.fileno(), 2)
        args = list(eal_args) if eal_args else f.default_eal_args(**eal_options)
        f.Eal.start(args, log_path)
        self.eal_args = args
        cpus = f.Eal.lcore_cpus()
        f.keep_off_workers(cpus[0], cpus[1:])
        return {"constants": f.constants(), "workers": f.Eal.workers(), "eal_args": args,
                "main_cpu": cpus[0], "worker_cpus": cpus[1:],
                "tsc_hz": f.tsc_hz(), "hist_lower_ns": f.hist_lower_bounds_ns().tolist(),
                "pid": os.getpid(), "dpdk_version": f.dpdk_version()}

    def op_close(self) -> None:
        for run_id in list(self.runs):
            self.runs.pop(run_id)[0].free()
        for stream in self.streams.values():
            stream.free()
        self.streams.clear()
        for port_id in list(self.ports):
            self.facade.port_close(port_id)
        self.ports.clear()
        self.facade.Eal.stop()

    def op_hist_bench(self, n: int) -> int:
        return self.facade.hist_bench_cycles(n)

    def op_crash(self) -> None:
        """Test hook: dereference NULL in native code, as a real bug would."""
        self.facade.crash()

    # ---- ports ----------------------------------------------------------------

    def op_port_open(self, device: str, **options: Any) -> dict[str, Any]:
        port_id = self.facade.port_open(device, **options)
        self.ports[port_id] = device
        return self.facade.port_info(port_id)

    def op_port_info(self, port_id: int) -> dict[str, Any]:
        return dict(self.facade.port_info(port_id))

    def op_port_stats(self, port_id: int) -> dict[str, int]:
        return self.facade.port_stats(port_id)

    def op_port_set_queue_rate(self, port_id: int, queue: int, mbps: int) -> None:
        self.facade.port_set_queue_rate(port_id, queue, mbps)

    def op_port_close(self, port_id: int) -> None:
        if any(s.port_id == port_id for s in self.streams.values()):
            for handle in [h for h, s in self.streams.items() if s.port_id == port_id]:
                self.streams.pop(handle).free()
        self.facade.port_close(port_id)
        self.ports.pop(port_id, None)

    def stats(self, port_id: int) -> dict[str, int]:
        """DPDK's port counters, plus the kernel's drop counters of the interface
        under an AF_XDP/AF_PACKET/pcap port: frames the kernel dropped on the
        generator's own receive path (a full XSK ring, say) show there only."""
        stats = self.facade.port_stats(port_id)
        iface = interface_of(self.ports[port_id])
        for what in ("rx_dropped", "tx_dropped"):
            stats[f"iface_{what}"] = read_iface_counter(iface, what) if iface else 0
        return stats

    # ---- streams --------------------------------------------------------------

    def op_stream_load(self, port_id: int, spec: dict[str, Any],
                       pool_mbufs: int = 0) -> dict[str, Any]:
        stream = self.facade.stream_create(port_id, spec, pool_mbufs)
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
                     **timing: Any) -> int:
        try:
            natives = [{**e, "stream": self.streams[e["handle"]]} for e in tx]
        except KeyError as exc:
            raise errors.NetloadConfigError(
                f"stream handle {exc} is not loaded in this engine; load it again"
            ) from None
        fwd_ports = {int(p) for fw in timing.get("forwarders", ()) for p in
                     (fw["rx_port"], fw["tx_port"])}
        ports = sorted({e["stream"].port_id for e in natives} | {p for p, _ in rx} | fwd_ports)
        for p in ports:
            if p not in self.ports:
                raise errors.NetloadConfigError(
                    f"port {p} was closed; open it again before using it in a run")
        before = {p: self.stats(p) for p in ports}
        run = self.facade.Run(natives, rx, **timing)
        run_id = next(self._ids)
        self.runs[run_id] = (run, ports, before)
        return run_id

    def op_run_poll(self, run_id: int, wait_ms: int = 100) -> dict[str, Any]:
        return dict(self.runs[run_id][0].poll(wait_ms))

    def op_run_stop(self, run_id: int) -> None:
        self.runs[run_id][0].stop()

    def op_run_results(self, run_id: int) -> dict[str, Any]:
        run, ports, before = self.runs.pop(run_id)
        try:
            arrays = run.results()
        finally:
            run.free()
        after = {p: self.stats(p) for p in ports}
        deltas = {p: {k: after[p][k] - before[p][k] for k in after[p]} for p in ports}
        return {"arrays": {k: pack_array(v) for k, v in arrays.items()}, "ports": deltas}


DPDK_RUNTIME_DIR = "/var/run/dpdk"


def remove_runtime_dir(args: list[str]) -> None:
    """Remove /var/run/dpdk/<file-prefix> that an engine's EAL left behind."""
    if "--file-prefix" in args:
        prefix = args[args.index("--file-prefix") + 1]
        shutil.rmtree(os.path.join(DPDK_RUNTIME_DIR, prefix), ignore_errors=True)


def interface_of(device: str) -> str | None:
    """The kernel interface a vdev sits on (`...,iface=NAME,...`), if any."""
    for arg in device.split(",")[1:]:
        key, _, value = arg.partition("=")
        if key.strip() == "iface" and value:
            return value.strip()
    return None


def read_iface_counter(iface: str, name: str) -> int:
    try:
        with open(f"/sys/class/net/{iface}/statistics/{name}", encoding="ascii") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return 0


def pack_array(arr: np.ndarray) -> dict[str, Any]:
    descr: Any = arr.dtype.str if arr.dtype.names is None else [list(d) for d in arr.dtype.descr]
    return {"descr": descr, "shape": list(arr.shape), "data": arr.tobytes()}


def unpack_array(packed: dict[str, Any]) -> np.ndarray:
    descr = packed["descr"]
    dtype = np.dtype(descr if isinstance(descr, str) else [tuple(d) for d in descr])
    return np.frombuffer(packed["data"], dtype=dtype).reshape(packed["shape"]).copy()


def serve(channel: Any) -> None:
    """Answer requests until `close` or until the channel goes away."""
    host: Host | None = None
    while True:
        try:
            msg = channel.receive()
        except EOFError:
            msg = {"op": "close"}
        op = msg.pop("op")
        try:
            if host is None:
                host = Host()
            result = getattr(host, f"op_{op}")(**msg)
            reply: dict[str, Any] = {"ok": result}
        except errors.NetloadError as exc:
            reply = {"error": type(exc).__name__, "message": str(exc)}
        except AttributeError:
            if not hasattr(host, f"op_{op}"):
                reply = {"error": "NetloadConfigError", "message": f"unknown engine op {op!r}"}
            else:
                reply = {"error": "NativeError", "message": traceback.format_exc()}
        except Exception:  # noqa: BLE001 - anything else is an engine bug: ship its traceback
            reply = {"error": "NativeError", "message": traceback.format_exc()}
        if op == "close":
            if not channel.isclosed():
                channel.send(reply)
            return
        channel.send(reply)


if __name__ == "__channelexec__":
    serve(channel)  # type: ignore[name-defined]  # noqa: F821
