"""A single-rate token-bucket policer as a tc eBPF program (netns-policed's policer).

The kernels this project runs on (its CI's included) have no ``act_police`` and no
``cls_matchall`` (CONFIG_NET_ACT_POLICE / CONFIG_NET_CLS_MATCHALL are off), but
they have ``cls_bpf`` and the ``clsact`` qdisc. So the policer is ``act_police``'s
algorithm written as a small eBPF program, assembled here (no compiler needed),
loaded with the bpf() syscall and attached in direct-action mode to a clsact hook:

- the bucket holds ``cbs_bytes`` and fills at ``rate_bytes_ps`` (= cir_bps // 8, the
  whole bytes per second tc would also configure); it starts full;
- each IPv4 frame costs ``skb->len + overhead_bytes``; it conforms (TC_ACT_OK) when
  the bucket holds that much, which is then taken out; else it is dropped
  (TC_ACT_SHOT) and the bucket is left as it was (act_police's exceed path);
- tokens are kept in byte-nanoseconds (one byte = 10^9), so the arithmetic is exact:
  no per-frame rounding, the long-run rate is exactly ``rate_bytes_ps``;
- non-IPv4 frames (the DUT's ARP) pass uncounted, so policing cannot starve the
  neighbour cache.

The program counts conforming and dropped frames and bytes in its one-entry array
map; :meth:`BpfPolicer.counters` reads them. The state is updated without a lock:
two CPUs policing at the same instant could both spend the same tokens, which the
built-in topologies' single-queue ports never cause (one softirq at a time forwards
towards p1).
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
from collections.abc import Sequence

from pytest_netload.errors import NetloadEnvironmentError

__all__ = ["BpfPolicer", "POLICER_COUNTERS"]

_NSEC = 1_000_000_000
_SYS_BPF = {"x86_64": 321, "aarch64": 280, "ppc64le": 361, "s390x": 351, "riscv64": 280}
_BPF_MAP_CREATE, _BPF_MAP_LOOKUP_ELEM, _BPF_PROG_LOAD = 0, 1, 5
_BPF_MAP_TYPE_ARRAY = 2
_BPF_PROG_TYPE_SCHED_CLS = 3
_BPF_PSEUDO_MAP_FD = 1
_FN_MAP_LOOKUP_ELEM, _FN_KTIME_GET_NS = 1, 5
_TC_ACT_OK, _TC_ACT_SHOT = 0, 2
_ETH_P_IP_AS_SKB_PROTOCOL = 0x0008  # __sk_buff.protocol is htons(0x0800), read as a u32
_SKB_LEN, _SKB_PROTOCOL = 0, 16  # offsets in struct __sk_buff

#: The map value: (offset, name) of each u64; the first two are the bucket's state.
_VALUE = ((0, "tokens"), (8, "last_conform_ns"), (16, "conform_packets"),
          (24, "conform_bytes"), (32, "exceed_packets"), (40, "exceed_bytes"))
_VALUE_SIZE = 8 * len(_VALUE)
#: What counters() returns: frames and bytes (each frame counted with the overhead).
POLICER_COUNTERS = tuple(name for _, name in _VALUE[2:])

# opcodes (linux/bpf_common.h, linux/bpf.h)
_LDX_W, _LDX_DW, _ST_W, _STX_DW, _XADD_DW, _LD_IMM64 = 0x61, 0x79, 0x62, 0x7B, 0xDB, 0x18
_ADD_K, _ADD_X, _SUB_X, _MUL_K, _MOV_K, _MOV_X = 0x07, 0x0F, 0x1F, 0x27, 0xB7, 0xBF
_JNE_K, _JEQ_K, _JSGE_K, _JLE_X, _JLT_X, _CALL, _EXIT = 0x55, 0x15, 0x75, 0xBD, 0xAD, 0x85, 0x95


def _insn(code: int, dst: int = 0, src: int = 0, off: int = 0, imm: int = 0) -> bytes:
    return struct.pack("<BBhi", code, (src << 4) | dst, off, imm)


def _ld_imm64(dst: int, value: int, src: int = 0) -> bytes:
    return _insn(_LD_IMM64, dst, src, 0, _s32(value)) + _insn(0, imm=_s32(value >> 32))


def _s32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def program(map_fd: int, rate_bytes_ps: int, cbs_bytes: int, overhead_bytes: int) -> bytes:
    """The policer's instructions (see the module docstring); registers r6 = skb,
    r7 = frame bytes, r8 = map value, r9 = now."""
    burst = cbs_bytes * _NSEC  # the bucket in byte-ns
    cap_ns = -(-burst // rate_bytes_ps)  # time to fill an empty bucket: bounds the refill
    head = [
        _insn(_MOV_X, 6, 1),
        _insn(_LDX_W, 0, 6, _SKB_PROTOCOL),
        None,  # if r0 != IPv4 goto pass
        _insn(_LDX_W, 7, 6, _SKB_LEN),
        _insn(_ADD_K, 7, imm=overhead_bytes),
        _insn(_ST_W, 10, off=-4, imm=0),
        _ld_imm64(1, map_fd, _BPF_PSEUDO_MAP_FD),
        _insn(_MOV_X, 2, 10),
        _insn(_ADD_K, 2, imm=-4),
        _insn(_CALL, imm=_FN_MAP_LOOKUP_ELEM),
        None,  # if r0 == 0 goto pass
        _insn(_MOV_X, 8, 0),
        _insn(_CALL, imm=_FN_KTIME_GET_NS),
        _insn(_MOV_X, 9, 0),
        _insn(_MOV_X, 2, 9),
        _insn(_LDX_DW, 1, 8, 8),             # r1 = last conform time
        _insn(_SUB_X, 2, 1),                 # r2 = elapsed ns
        _insn(_JSGE_K, 2, off=1, imm=0),
        _insn(_MOV_K, 2, imm=0),             # (another CPU's clock a hair behind)
        _ld_imm64(3, cap_ns),
        _insn(_JLE_X, 2, 3, off=1),
        _insn(_MOV_X, 2, 3),                 # elapsed = min(elapsed, cap_ns)
        _insn(_MUL_K, 2, imm=rate_bytes_ps),  # refill in byte-ns
        _insn(_LDX_DW, 3, 8, 0),
        _insn(_ADD_X, 3, 2),
        _ld_imm64(4, burst),
        _insn(_JLE_X, 3, 4, off=1),
        _insn(_MOV_X, 3, 4),                 # tokens = min(tokens + refill, burst)
        _insn(_MOV_X, 5, 7),
        _insn(_MUL_K, 5, imm=_NSEC),         # the frame's cost in byte-ns
        None,  # if tokens < cost goto drop
        _insn(_SUB_X, 3, 5),                # tokens -= cost
        _insn(_STX_DW, 8, 3, 0),
        _insn(_STX_DW, 8, 9, 8),
        _insn(_MOV_K, 1, imm=1),
        _insn(_XADD_DW, 8, 1, 16),
        _insn(_XADD_DW, 8, 7, 24),
    ]
    passing = [_insn(_MOV_K, 0, imm=_TC_ACT_OK), _insn(_EXIT)]
    drop = [_insn(_MOV_K, 1, imm=1), _insn(_XADD_DW, 8, 1, 32), _insn(_XADD_DW, 8, 7, 40),
            _insn(_MOV_K, 0, imm=_TC_ACT_SHOT), _insn(_EXIT)]
    slots = [len(i or b"x" * 8) // 8 for i in head]
    at = [sum(slots[:k]) for k in range(len(head))]  # instruction index of each entry
    pass_at, drop_at = sum(slots), sum(slots) + len(passing)

    def jump(k: int, code: int, dst: int, src: int, imm: int, target: int) -> bytes:
        return _insn(code, dst, src, target - at[k] - 1, imm)

    head[2] = jump(2, _JNE_K, 0, 0, _ETH_P_IP_AS_SKB_PROTOCOL, pass_at)
    head[10] = jump(10, _JEQ_K, 0, 0, 0, pass_at)
    head[30] = jump(30, _JLT_X, 3, 5, 0, drop_at)
    return b"".join(i for i in head if i is not None) + b"".join(passing + drop)


def _bpf(cmd: int, attr: ctypes.Array[ctypes.c_char]) -> int:
    number = _SYS_BPF.get(platform.machine())
    if number is None:
        raise NetloadEnvironmentError(
            f"netns-policed does not know the bpf() syscall number on {platform.machine()}; "
            f"use one of {sorted(_SYS_BPF)}")
    libc = ctypes.CDLL(None, use_errno=True)
    ret = int(libc.syscall(ctypes.c_long(number), ctypes.c_int(cmd), attr,
                           ctypes.c_uint(len(attr))))
    if ret < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return ret


class BpfPolicer:
    """The policer's map and program; :meth:`load`, then attach :attr:`prog_fd` to a
    clsact hook, then :meth:`release_program`; :meth:`close` (idempotent) at the end."""

    def __init__(self, rate_bytes_ps: int, cbs_bytes: int, overhead_bytes: int) -> None:
        self.rate_bytes_ps = rate_bytes_ps
        self.cbs_bytes = cbs_bytes
        self.overhead_bytes = overhead_bytes
        self.map_fd: int | None = None
        self.prog_fd: int | None = None

    def load(self) -> None:
        """Create the map and load the program (the kernel's verifier checks it)."""
        attr = ctypes.create_string_buffer(128)
        struct.pack_into("<IIII", attr, 0, _BPF_MAP_TYPE_ARRAY, 4, _VALUE_SIZE, 1)
        try:
            self.map_fd = _bpf(_BPF_MAP_CREATE, attr)
        except OSError as exc:
            raise NetloadEnvironmentError(
                f"netns-policed could not create its BPF map: {exc}; the kernel needs "
                "CONFIG_BPF_SYSCALL and the process CAP_BPF (run as root)") from exc
        code = program(self.map_fd, self.rate_bytes_ps, self.cbs_bytes, self.overhead_bytes)
        insns = ctypes.create_string_buffer(code, len(code))
        license_ = ctypes.create_string_buffer(b"MIT")
        log = ctypes.create_string_buffer(1 << 16)
        attr = ctypes.create_string_buffer(128)
        struct.pack_into("<IIQQIIQ", attr, 0, _BPF_PROG_TYPE_SCHED_CLS, len(code) // 8,
                         ctypes.addressof(insns), ctypes.addressof(license_), 1, len(log),
                         ctypes.addressof(log))
        struct.pack_into("16s", attr, 48, b"netload_police")
        try:
            self.prog_fd = _bpf(_BPF_PROG_LOAD, attr)
        except OSError as exc:
            text = log.value.decode(errors="replace").strip()[-800:]
            raise NetloadEnvironmentError(
                f"netns-policed could not load its tc BPF policer: {exc}"
                + (f"; verifier: {text}" if text else "")
                + "; the kernel needs CONFIG_BPF_SYSCALL, CONFIG_NET_CLS_BPF and "
                "CONFIG_NET_CLS_ACT") from exc

    def release_program(self) -> None:
        """Close the program's fd once the tc filter holds it."""
        fd, self.prog_fd = self.prog_fd, None
        if fd is not None:
            os.close(fd)

    def close(self) -> None:
        self.release_program()
        fd, self.map_fd = self.map_fd, None
        if fd is not None:
            os.close(fd)

    def counters(self) -> dict[str, int]:
        """Frames and bytes that conformed and that were dropped (POLICER_COUNTERS)."""
        if self.map_fd is None:
            raise NetloadEnvironmentError(
                "the netns-policed policer was already removed; read its counters inside "
                "the topology's `with` block")
        key = ctypes.create_string_buffer(struct.pack("<I", 0), 4)
        value = ctypes.create_string_buffer(_VALUE_SIZE)
        attr = ctypes.create_string_buffer(128)
        struct.pack_into("<IIQQQ", attr, 0, self.map_fd, 0, ctypes.addressof(key),
                         ctypes.addressof(value), 0)
        try:
            _bpf(_BPF_MAP_LOOKUP_ELEM, attr)
        except OSError as exc:
            raise NetloadEnvironmentError(
                f"reading the netns-policed policer's counters failed: {exc}") from exc
        fields: Sequence[int] = struct.unpack_from(f"<{len(_VALUE)}Q", value.raw)
        return {name: fields[k] for k, (_, name) in enumerate(_VALUE) if name in
                POLICER_COUNTERS}

