"""Typed facade over the cffi module: with its run half (facade_run.py: `Run`), the
ONLY user of `lib`.

Runs inside the engine host process (never in pytest's). Every native call
goes through `_check`, which turns a negative status into the matching
exception with the native core's own text. TSC values never leave this
module: the C side already reports nanoseconds. What needs no extension (the
sockets of listening ports) is listening.py's, re-exported here.
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import NativeError, NetloadConfigError, NetloadEnvironmentError
from ..hugepages import check_hugepages, hugepages_available
from .leftovers import remove_runtime_dir, runtime_dir_exists
from .listening import interrupt_after as _interrupt_after
from .listening import listening_socket as listening_socket  # noqa: PLC0414 - re-exported
from .listening import remove_stale_socket as remove_stale_socket  # noqa: PLC0414
from .protocol import PortSpec, StreamSpec

ENGINE_INSTALL = "pip install 'pytest-netload[engine]'"
"""What installs the native engine (the pytest-netload-engine distribution)."""


def no_engine_message(exc: ImportError) -> str:
    """Why this host cannot run an engine, and what to install: the native engine's
    distribution is missing (a client-only install), or its extension does not load."""
    host = f"the engine host {socket.gethostname()} ({sys.executable})"
    # the package did not import (not installed), rather than its extension (not built)
    if isinstance(exc, ModuleNotFoundError) and sys.modules.get("pytest_netload_engine") is None:
        return (f"{host} has no native engine: pytest-netload is installed without it (a "
                f"client-only install). On the host that runs the engine: {ENGINE_INSTALL} "
                "(it builds against DPDK 22.11: apt-get install libdpdk-dev pkg-config "
                "build-essential python3-dev first; in a checkout, scripts/setup.sh "
                "--generator does it all); or drive an engine on another host "
                "(--netload-engine=ssh=...)")
    return (f"{host} has a native engine that does not load: "
            f"pytest_netload_engine._netload_native: {exc}. Reinstall it against this host's "
            f"DPDK 22.11 (pip install --force-reinstall --no-deps --no-cache-dir "
            "pytest-netload-engine, or in a checkout: .venv/bin/python native/setup.py "
            "build_ext --inplace)")


try:
    from pytest_netload_engine._netload_native import ffi, lib  # type: ignore[import-not-found]
except ImportError as exc:  # a client-only install, a failed build, DPDK's libraries gone
    raise NetloadEnvironmentError(no_engine_message(exc)) from exc

FIELD_OPS = {
    "set": lib.NETLOAD_FIELD_SET,
    "inc": lib.NETLOAD_FIELD_INC,
    "dec": lib.NETLOAD_FIELD_DEC,
    "random": lib.NETLOAD_FIELD_RANDOM,
}
RUN_STATES = {
    lib.NETLOAD_RUN_WAITING: "waiting",
    lib.NETLOAD_RUN_SENDING: "sending",
    lib.NETLOAD_RUN_DRAINING: "draining",
    lib.NETLOAD_RUN_DONE: "done",
}
TX_END_REASONS = {
    lib.NETLOAD_TX_END_NONE: "none",
    lib.NETLOAD_TX_END_COUNT: "count",
    lib.NETLOAD_TX_END_DURATION: "duration",
    lib.NETLOAD_TX_END_PHASES: "phases",
    lib.NETLOAD_TX_END_STOPPED: "stopped",
}
_CONFIG_STATUSES = {lib.NETLOAD_EINVAL, lib.NETLOAD_EBUSY}
_ENVIRONMENT_STATUSES = {
    lib.NETLOAD_ENODEV,
    lib.NETLOAD_EPORT,
    lib.NETLOAD_ENOMEM,
    lib.NETLOAD_ENOLCORE,
    lib.NETLOAD_EEAL,
    lib.NETLOAD_ENOTSUP,
    lib.NETLOAD_ETIMEDOUT,
}


def constants() -> dict[str, int]:
    """The C constants Python needs, read from the extension (never retyped)."""
    return {
        "abi_version": int(lib.netload_abi_version()),
        "signature_bytes": int(lib.NETLOAD_SIGNATURE_BYTES),
        "min_frame_bytes": int(lib.NETLOAD_MIN_FRAME_BYTES),
        "max_frame_bytes": int(lib.NETLOAD_MAX_FRAME_BYTES),
        "max_fields": int(lib.NETLOAD_MAX_FIELDS),
        "max_frames": int(lib.NETLOAD_MAX_FRAMES),
        "max_run_s": int(lib.NETLOAD_MAX_RUN_S),
    }


def time_scale(value: int, mul: int, div: int) -> int:
    """value * mul // div as the native core computes every time conversion (128-bit
    product); NetloadConfigError when the result does not fit 64 bits."""
    out = ffi.new("uint64_t *")
    _check(lib.netload_time_scale(value, mul, div, out), "time scale")
    return int(out[0])


def dpdk_version() -> str:
    """The DPDK the extension runs on, e.g. 'DPDK 22.11.11'."""
    return _text(lib.netload_dpdk_version())


def crash() -> None:
    """Write through a wild pointer, as a native bug would (crash tests)."""
    ffi.cast("int *", 64)[0] = 1


def tsc_hz() -> int:
    """The TSC frequency: only for reports of cycles per packet."""
    return int(lib.netload_tsc_hz())


def _text(ptr: Any) -> str:
    return ffi.string(ptr).decode("utf-8", "replace") if ptr != ffi.NULL else ""


def _check(status: int, what: str) -> int:
    if status >= 0:
        return status
    detail = _text(lib.netload_last_error())
    message = what if detail else f"{what}: {_text(lib.netload_strerror(status))}"
    if status in _CONFIG_STATUSES:
        raise NetloadConfigError(f"{message}: {detail}" if detail else message)
    if status in _ENVIRONMENT_STATUSES:
        raise NetloadEnvironmentError(f"{message}: {detail}" if detail else message)
    raise NativeError(message, status, detail)


def struct_dtype(ctype: str) -> np.dtype:
    """A numpy dtype laid out exactly like a C struct of integer fields."""
    t = ffi.typeof(ctype)
    names, formats, offsets = [], [], []
    for name, field in t.fields:
        kind = field.type.cname
        if field.type.kind != "primitive" or not kind.startswith(("uint", "int")):
            continue
        size = ffi.sizeof(field.type)
        names.append(name)
        formats.append(np.dtype(f"{'u' if kind.startswith('u') else 'i'}{size}"))
        offsets.append(field.offset)
    return np.dtype(
        {"names": names, "formats": formats, "offsets": offsets, "itemsize": ffi.sizeof(t)}
    )


def _records(ctype: str, cdata: Any, n: int) -> np.ndarray:
    dtype = struct_dtype(ctype)
    raw = np.frombuffer(ffi.buffer(cdata, ffi.sizeof(ctype) * n), dtype=dtype)
    fields: Mapping[str, Any] = dtype.fields or {}
    return np.array(raw, dtype=[(name, fields[name][0]) for name in fields])


# ---- EAL -----------------------------------------------------------------------


def default_eal_args(
    *,
    memory_mb: int = 1024,
    lcores: Sequence[int] | None = None,
    hugepages: bool | None = None,
    pci: Sequence[str] = (),
    file_prefix: str | None = None,
    main_cpu: int | None = None,
) -> list[str]:
    """EAL arguments that work on a laptop or a CI VM.

    Lcores come from the process's CPU affinity (the first one is the main
    lcore, which only waits); on a single CPU two lcores share it. With
    `main_cpu`, every CPU of `lcores` runs a worker lcore and the main lcore
    runs on `main_cpu`, which may be one of them (`--lcores=0@0,1@0,2@1`).
    """
    cpus = sorted(lcores if lcores is not None else os.sched_getaffinity(0))
    if not cpus:
        raise NetloadConfigError("lcores: the list is empty; give at least one CPU")
    if main_cpu is not None:
        args = ["--lcores=" + ",".join(f"{i}@{c}" for i, c in enumerate([main_cpu, *cpus]))]
    elif len(cpus) == 1:
        args = [f"--lcores=0@{cpus[0]},1@{cpus[0]}"]
    else:
        args = ["-l", ",".join(str(c) for c in cpus)]
    prefix = file_prefix or f"netload-{os.getpid()}-{secrets.token_hex(3)}"
    args += ["--file-prefix", prefix, "--no-telemetry", "-m", str(memory_mb)]
    # By default hugepages only where all of the memory is free in them (else memfd
    # memory, --no-huge, which vhost-user and memif ports share as well); asked for,
    # they must be there. In hugepages, one file per memory segment list: a vhost-user
    # peer maps at most 8 memory regions, and page-per-file memory has hundreds.
    if hugepages is None:
        use_huge = hugepages_available(memory_mb)
    else:
        use_huge = bool(hugepages)
        if use_huge:
            check_hugepages(memory_mb)
    args.append("--single-file-segments" if use_huge else "--no-huge")
    if pci:
        for addr in pci:
            args += ["-a", addr]
    else:
        args.append("--no-pci")
    return ["netload", *args]


class Eal:
    """The process's one EAL. Start once; stop removes the runtime directory."""

    _args: list[str] | None = None

    @classmethod
    def start(cls, args: Sequence[str], log_path: str | None = None) -> None:
        if cls._args is not None:
            raise NativeError("EAL already started in this engine host", lib.NETLOAD_ESTATE)
        if log_path:
            _check(lib.netload_log_open(log_path.encode()), f"log file {log_path}")
        keep = [ffi.new("char[]", a.encode()) for a in args]
        argv = ffi.new("char *[]", keep)
        # A failed start leaves the runtime dir it made: remove it, unless it was there
        # before (a --file-prefix of a running process: never ours to remove).
        existed = runtime_dir_exists(args)
        try:
            _check(lib.netload_eal_init(len(keep), argv), "EAL start (" + " ".join(args) + ")")
        except BaseException:
            if not existed:
                remove_runtime_dir(list(args))
            raise
        cls._args = list(args)

    @classmethod
    def stop(cls) -> None:
        if cls._args is None:
            return
        args, cls._args = cls._args, None
        try:
            _check(lib.netload_eal_cleanup(), "EAL cleanup")
        finally:
            remove_runtime_dir(args)

    @classmethod
    def workers(cls) -> int:
        return int(lib.netload_worker_count())

    @classmethod
    def lcore_cpus(cls) -> list[int]:
        """CPU of the main lcore first, then of each worker lcore."""
        n = int(lib.netload_worker_count()) + 1
        cpus = ffi.new("int32_t[]", n)
        got = _check(lib.netload_lcore_cpus(cpus, n), "lcore CPUs")
        return [int(cpus[i]) for i in range(got)]


def keep_off_workers(main_cpu: int, worker_cpus: Sequence[int]) -> None:
    """Pin every thread of this process but the lcore workers to the main
    lcore's CPU, so no Python or EAL control thread preempts a busy-polling
    worker (that costs pacing its precision)."""
    if set(worker_cpus) <= {main_cpu}:
        return  # one CPU for all: nothing to move
    # (a worker that shares the main lcore's CPU, `main_cpu`, shares it with these too)
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm", encoding="utf-8") as f:
                if f.read().startswith("rte-worker"):
                    continue
            os.sched_setaffinity(int(tid), {main_cpu})
        except OSError:
            continue  # the thread ended meanwhile


# ---- ports -----------------------------------------------------------------------


def port_open(device: str, spec: PortSpec = PortSpec()) -> int:
    """Open `device` as a port with `spec`'s options; its id. A port that listens for its
    peer (a vhost-user server, `listening_socket`) waits up to `spec.peer_wait_s` for it
    to connect."""
    if not isinstance(device, str) or not device.strip():
        raise NetloadConfigError(
            f"port device {device!r}: give a DPDK device string such as "
            "'net_null0', 'net_af_xdp0,iface=veth0' or a PCI address"
        )
    dev = ffi.new("char[]", device.encode())
    conf = ffi.new(
        "struct netload_port_conf *",
        {
            "device": dev,
            "rx_queues": spec.rx_queues,
            "tx_queues": spec.tx_queues,
            "rx_desc": spec.rx_desc,
            "tx_desc": spec.tx_desc,
            "mtu": spec.mtu,
            "rx_mbufs": spec.rx_mbufs,
            "promiscuous": int(spec.promiscuous),
            "hw_timestamps": hw_timestamps_mode(spec.hw_timestamps),
        },
    )
    out = ffi.new("uint16_t *")
    peer_wait_s = spec.peer_wait_s
    server = listening_socket(device)
    if server is not None:
        remove_stale_socket(server)
    with _interrupt_after(peer_wait_s if server is not None else 0.0) as fired:
        try:
            _check(lib.netload_port_open(conf, out), f"port '{device}'")
        except NetloadEnvironmentError as exc:
            if server is not None:
                remove_stale_socket(server)
            if fired:
                raise NetloadEnvironmentError(
                    f"port '{device}': no peer connected to its socket {server} within "
                    f"{peer_wait_s:g} s: start the DUT's side first (a vhost-user client "
                    "such as an OVS dpdkvhostuserclient port with vhost-server-path="
                    f"{server}, or testpmd's net_vhost with client=1), or give it longer "
                    f"(--netload-link-timeout); DPDK: {exc}") from None
            raise
    return int(out[0])


HW_TIMESTAMPS = {False: "NETLOAD_HW_TS_OFF", True: "NETLOAD_HW_TS_ON", "auto": "NETLOAD_HW_TS_AUTO"}


def hw_timestamps_mode(value: bool | str) -> int:
    """The C mode of a port's `hw_timestamps` option: False, True (required) or "auto"."""
    for key, name in HW_TIMESTAMPS.items():
        if value is key or (isinstance(key, str) and value == key):
            return int(getattr(lib, name))
    raise NetloadConfigError(
        f"hw_timestamps={value!r}: give False (TSC only), True (required: the port "
        "must have RX timestamp offload) or 'auto' (where the port has it)")


def port_info(port_id: int) -> dict[str, Any]:
    info = ffi.new("struct netload_port_info *")
    _check(lib.netload_port_info(port_id, info), f"port {port_id} info")
    return {
        "port_id": info.port_id,
        "name": _text(info.name),
        "driver": _text(info.driver),
        "socket_id": info.socket_id,
        "mac": ":".join(f"{b:02x}" for b in bytes(info.mac)),
        "mtu": info.mtu,
        "min_mtu": info.min_mtu,
        "max_mtu": info.max_mtu,
        "max_rx_pktlen": info.max_rx_pktlen,
        "max_rx_queues": info.max_rx_queues,
        "max_tx_queues": info.max_tx_queues,
        "rx_offload_capa": info.rx_offload_capa,
        "tx_offload_capa": info.tx_offload_capa,
        "tx_offloads_enabled": info.tx_offloads_enabled,
        "tx_csum_offload": {
            "ipv4": bool(info.tx_csum_offload & lib.NETLOAD_CSUM_IPV4),
            "udp": bool(info.tx_csum_offload & lib.NETLOAD_CSUM_UDP),
            "tcp": bool(info.tx_csum_offload & lib.NETLOAD_CSUM_TCP),
        },
        "has_timesync": bool(info.has_timesync),
        "has_rx_timestamp": bool(info.has_rx_timestamp),
        "has_read_clock": bool(info.has_read_clock),
        "hw_timestamps": bool(info.hw_timestamps),
        "nic_clock_hz": int(info.nic_clock_hz),
        "has_queue_rate_limit": bool(info.has_queue_rate_limit),
        "link_up": bool(info.link_up),
        "link_speed_mbps": info.link_speed_mbps,
        "link_full_duplex": bool(info.link_full_duplex),
    }


def port_stats(port_id: int) -> dict[str, int]:
    st = ffi.new("struct netload_port_stats *")
    _check(lib.netload_port_stats(port_id, st), f"port {port_id} stats")
    return {name: int(getattr(st, name)) for name, _ in ffi.typeof(st[0]).fields}


def mem_stats() -> dict[str, int]:
    """The engine's DPDK heap (bytes, all sockets) and the TX frame pools in it."""
    st = ffi.new("struct netload_mem_stats *")
    _check(lib.netload_mem_stats(st), "memory stats")
    return {name: int(getattr(st, name)) for name, _ in ffi.typeof(st[0]).fields}


def port_stats_reset(port_id: int) -> None:
    _check(lib.netload_port_stats_reset(port_id), f"port {port_id} stats reset")


def port_close(port_id: int) -> None:
    _check(lib.netload_port_close(port_id), f"port {port_id} close")


def port_set_addr(port_id: int, mac: str, ip: str, vlan: int = 0, reply_pps: int = 0) -> None:
    """The port answers ARP (IPv4 `ip`) or neighbour solicitations (IPv6) as `mac`."""
    import ipaddress

    addr = ffi.new("struct netload_port_addr *")
    addr.mac = list(bytes.fromhex(mac.replace(":", "")))
    packed = ipaddress.ip_address(ip).packed
    if len(packed) == 4:
        addr.has_ip4, addr.ip4 = 1, list(packed)
    else:
        addr.has_ip6, addr.ip6 = 1, list(packed)
    addr.vlan, addr.reply_pps = vlan, reply_pps
    _check(lib.netload_port_set_addr(port_id, addr), f"port {port_id} address {ip}")


def port_announce(port_id: int) -> None:
    _check(lib.netload_port_announce(port_id), f"port {port_id} announce")


def port_resolve(port_id: int, peer_ip: str, timeout_ms: int, retry_ms: int) -> str:
    """The MAC of `peer_ip` as the port's ARP/ND learnt it (NetloadEnvironmentError
    when nothing answered within timeout_ms)."""
    import ipaddress

    packed = ipaddress.ip_address(peer_ip).packed
    mac = ffi.new("uint8_t[6]")
    _check(lib.netload_port_resolve(port_id, 4 if len(packed) == 4 else 6, packed,
                                    timeout_ms, retry_ms, mac), f"port {port_id} resolve {peer_ip}")
    return ":".join(f"{b:02x}" for b in bytes(mac))


def port_nd_service(port_id: int, wait_us: int = 0) -> None:
    _check(lib.netload_port_nd_service(port_id, wait_us), f"port {port_id} ARP/ND")


def port_nd_stats(port_id: int) -> dict[str, Any]:
    """The port's ARP/ND counters, and the latest request for another address seen."""
    import ipaddress

    st = ffi.new("struct netload_nd_stats *")
    _check(lib.netload_port_nd_stats(port_id, st), f"port {port_id} ARP/ND stats")
    out: dict[str, Any] = {name: int(getattr(st, name)) for name, _ in ffi.typeof(st[0]).fields
                           if not name.startswith("other_")}
    if st.other_family:
        n = 4 if st.other_family == 4 else 16
        out["other_request"] = {
            "sender": str(ipaddress.ip_address(bytes(st.other_sender)[:n])),
            "target": str(ipaddress.ip_address(bytes(st.other_target)[:n])),
            "vlan": int(st.other_vlan)}
    return out


def port_set_queue_rate(port_id: int, queue: int, mbps: int) -> None:
    """Hardware queue rate limit (0: none); ENOTSUP where the PMD has none."""
    _check(lib.netload_port_set_queue_rate(port_id, queue, mbps),
           f"port {port_id} queue {queue} rate limit {mbps} Mbit/s")


def hist_bench_cycles(n: int) -> int:
    """TSC cycles the C histogram takes to record n values (a benchmark)."""
    return int(lib.netload_hist_bench(n, 12345))


def hist_lower_bounds_ns(sub_bits: int = 0) -> np.ndarray:
    """Lower bound of each histogram bucket, in ns (the layout lives in C)."""
    bits = sub_bits or int(lib.NETLOAD_HIST_SUB_BITS)
    n = int(lib.netload_hist_buckets(bits))
    if n == 0:
        raise NetloadConfigError(
            f"histogram sub-bucket bits {bits}: give {lib.NETLOAD_HIST_MIN_SUB_BITS} to "
            f"{lib.NETLOAD_HIST_MAX_SUB_BITS}")
    lower = np.zeros(n, dtype=np.uint64)
    _check(lib.netload_hist_lower_bounds_bits(bits, ffi.from_buffer("uint64_t[]", lower), n),
           "histogram")
    return lower


# ---- streams ---------------------------------------------------------------------

FLOW_KEY_BYTES = 39  # StreamSpec.flow_key: family, proto, has_ports, src[16], dst[16], ports


@dataclass
class NativeStream:
    """A compiled stream: its templates, built into the engine's shared pools on its
    port's socket (or pre-filled private ones when loaded with pool_mbufs)."""

    ptr: Any
    port_id: int
    name: str
    flow_key: bytes = b""  # an unsigned stream's flow: RX counts its frames by it

    @property
    def stream_id(self) -> int:
        return int(lib.netload_stream_id(self.ptr))

    @property
    def csum_offloaded(self) -> bool:
        return bool(lib.netload_stream_csum_offloaded(self.ptr))

    def free(self) -> None:
        if self.ptr is not None:
            lib.netload_stream_free(self.ptr)
            self.ptr = None


def stream_create(port_id: int, spec: StreamSpec, pool_mbufs: int = 0) -> NativeStream:
    """Create a stream from its spec (`protocol.StreamSpec`, as the host decoded it)."""
    frames = [ffi.new("uint8_t[]", f) for f in spec.frames]
    try:
        cfields = ffi.new(
            "struct netload_field_conf[]",
            [
                {
                    "offset": f.offset,
                    "width": f.width,
                    "op": FIELD_OPS[f.op],
                    "min": f.min,
                    "max": f.max,
                    "step": f.step,
                }
                for f in spec.fields
            ]
            or 1,
        )
    except KeyError as exc:
        raise NetloadConfigError(
            f"stream {spec.name!r}: field op {exc}; use one of {sorted(FIELD_OPS)}"
        ) from None
    except OverflowError as exc:
        raise NetloadConfigError(
            f"stream {spec.name!r}: a field value is out of range ({exc})"
        ) from None
    l3, l4 = spec.l3_proto, spec.l4_proto
    # The struct only points at these: they must outlive the call.
    frame_ptrs = ffi.new("uint8_t *[]", frames)
    frame_bytes = ffi.new("uint16_t[]", [len(f) for f in spec.frames])
    sequence = ffi.new("uint16_t[]", list(spec.sequence) or 1)
    conf = ffi.new(
        "struct netload_stream_conf *",
        {
            "port_id": port_id,
            "n_frames": len(frames),
            "frames": frame_ptrs,
            "frame_bytes": frame_bytes,
            "sequence_len": len(spec.sequence),
            "sequence": sequence,
            "l3_offset": spec.l3_offset,
            "l4_offset": spec.l4_offset,
            "l3_proto": l3,
            "l4_proto": l4,
            "fix_ipv4_csum": int(l3 == 4 and spec.signature),
            "fix_l4_csum": int(l4 in (6, 17) and spec.l4_offset >= 0 and spec.signature),
            "n_fields": len(spec.fields),
            "fields": cfields,
            "pool_mbufs": pool_mbufs,
            "seed": spec.seed,
            "stamp_every": spec.stamp_every or 1,
            "no_signature": int(not spec.signature),
        },
    )
    if not spec.signature and len(spec.flow_key) != FLOW_KEY_BYTES:
        raise NetloadConfigError(f"stream {spec.name!r} is sent without a signature but "
                                 f"names no flow ({len(spec.flow_key)}-byte flow_key): RX "
                                 "could not count it")
    out = ffi.new("struct netload_stream **")
    _check(lib.netload_stream_create(conf, out), f"stream {spec.name!r}")
    return NativeStream(out[0], port_id, str(spec.name or ""),
                        b"" if spec.signature else spec.flow_key)
