"""The bridge's FDB learning limit, its learned count and its flush, over raw rtnetlink.

Linux 6.7 added two attributes to a bridge's ``IFLA_INFO_DATA``:
``IFLA_BR_FDB_N_LEARNED`` (read only: the entries the bridge learned) and
``IFLA_BR_FDB_MAX_LEARNED`` (the most it may learn; 0, the default, is no
limit). Neither pyroute2 0.9.7 nor iproute2 6.1 knows them, so the messages are
written and read here, a few dozen bytes each: ``RTM_NEWLINK`` with
``IFLA_LINKINFO`` > ``IFLA_INFO_KIND`` "bridge" + ``IFLA_INFO_DATA`` > the
attribute, and ``RTM_GETLINK`` to read the bridge's data back. An older kernel
ignores attribute numbers it does not know instead of refusing them, which is
why :func:`set_max_learned` reads the value back. Everything here works in the
calling thread's network namespace; the DUT calls it through
``kernel._call_in_netns``.
"""

from __future__ import annotations

import errno
import os
import socket
import struct

from pytest_netload.errors import NetloadEnvironmentError

# include/uapi/linux/rtnetlink.h, netlink.h and if_link.h (the IFLA_BR_* enum counted from
# IFLA_BR_UNSPEC = 0: ... 47 IFLA_BR_MCAST_QUERIER_STATE, 48 IFLA_BR_FDB_N_LEARNED,
# 49 IFLA_BR_FDB_MAX_LEARNED, both new in Linux 6.7)
RTM_NEWLINK, RTM_GETLINK = 16, 18
NLMSG_ERROR = 2
NLM_F_REQUEST, NLM_F_ACK = 0x1, 0x4
NLA_F_NESTED = 0x8000
NLA_TYPE_MASK = 0x3FFF  # without NLA_F_NESTED / NLA_F_NET_BYTEORDER
IFLA_LINKINFO = 18
IFLA_INFO_KIND, IFLA_INFO_DATA = 1, 2
IFLA_BR_FDB_FLUSH = 21
IFLA_BR_FDB_N_LEARNED = 48
IFLA_BR_FDB_MAX_LEARNED = 49
MAX_LEARNED_KERNEL = (6, 7)
_NLMSGHDR = struct.Struct("=IHHII")  # length, type, flags, seq, pid
_IFINFOMSG = struct.Struct("=BxHiII")  # family, pad, type, index, flags, change
_NLATTR = struct.Struct("=HH")  # length, type

__all__ = ["bridge_data", "flush_fdb", "learned", "set_max_learned"]


def _attr(kind: int, payload: bytes) -> bytes:
    body = _NLATTR.pack(_NLATTR.size + len(payload), kind) + payload
    return body + b"\0" * (-len(body) % 4)


def _attrs(data: bytes) -> dict[int, bytes]:
    """The attributes of a netlink attribute stream, by type (flags masked off)."""
    out: dict[int, bytes] = {}
    offset = 0
    while offset + _NLATTR.size <= len(data):
        length, kind = _NLATTR.unpack_from(data, offset)
        if length < _NLATTR.size:
            break
        out[kind & NLA_TYPE_MASK] = data[offset + _NLATTR.size:offset + length]
        offset += (length + 3) & ~3
    return out


def _request(msg_type: int, flags: int, index: int, attrs: bytes) -> bytes:
    """Send one rtnetlink request about link ``index``; the answer's body (b"" for an ack).

    A negative error in the answer raises OSError with its errno."""
    body = _IFINFOMSG.pack(socket.AF_UNSPEC, 0, index, 0, 0) + attrs
    seq = 1
    message = _NLMSGHDR.pack(_NLMSGHDR.size + len(body), msg_type, NLM_F_REQUEST | flags,
                             seq, 0) + body
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as sock:
        sock.settimeout(5.0)
        sock.bind((0, 0))
        sock.sendall(message)
        while True:
            data = sock.recv(65536)
            offset = 0
            while offset + _NLMSGHDR.size <= len(data):
                length, kind, _flags, got_seq, _pid = _NLMSGHDR.unpack_from(data, offset)
                payload = data[offset + _NLMSGHDR.size:offset + length]
                offset += (length + 3) & ~3
                if got_seq != seq:
                    continue
                if kind == NLMSG_ERROR:
                    (code,) = struct.unpack_from("=i", payload)
                    if code:
                        raise OSError(-code, os.strerror(-code))
                    return b""
                return payload


def _bridge_attrs(data: dict[int, bytes]) -> bytes:
    return _attr(IFLA_LINKINFO | NLA_F_NESTED,
                 _attr(IFLA_INFO_KIND, b"bridge\0")
                 + _attr(IFLA_INFO_DATA | NLA_F_NESTED,
                         b"".join(_attr(k, v) for k, v in data.items())))


def _index(bridge: str) -> int:
    try:
        return socket.if_nametoindex(bridge)
    except OSError:
        raise NetloadEnvironmentError(
            f"bridge {bridge} does not exist (any more) in this namespace; use the DUT "
            "inside the topology's `with` block") from None


def bridge_data(bridge: str) -> dict[int, bytes]:
    """The bridge's ``IFLA_INFO_DATA`` attributes (``RTM_GETLINK``), by ``IFLA_BR_*`` number."""
    answer = _request(RTM_GETLINK, 0, _index(bridge), b"")
    linkinfo = _attrs(answer[_IFINFOMSG.size:]).get(IFLA_LINKINFO, b"")
    return _attrs(_attrs(linkinfo).get(IFLA_INFO_DATA, b""))


def _u32(data: dict[int, bytes], kind: int) -> int | None:
    value = data.get(kind)
    return None if value is None or len(value) < 4 else int(struct.unpack_from("=I", value)[0])


def _kernel_text() -> str:
    return f"Linux {os.uname().release}"


def set_max_learned(bridge: str, limit: int) -> None:
    """Set the bridge's FDB learning limit and check that the kernel holds it."""
    need = (f"max_learned = {limit} needs a kernel that limits a bridge's learned "
            f"addresses (IFLA_BR_FDB_MAX_LEARNED, Linux >= "
            f"{'.'.join(map(str, MAX_LEARNED_KERNEL))}), but this is {_kernel_text()}")
    try:
        _request(RTM_NEWLINK, NLM_F_ACK, _index(bridge),
                 _bridge_attrs({IFLA_BR_FDB_MAX_LEARNED: struct.pack("=I", limit)}))
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.EOPNOTSUPP, errno.ERANGE):
            raise NetloadEnvironmentError(
                f"{need}, which refused it ({exc.strerror}); run on a newer kernel or "
                "leave max_learned out (no limit)") from None
        raise
    held = _u32(bridge_data(bridge), IFLA_BR_FDB_MAX_LEARNED)
    if held != limit:
        raise NetloadEnvironmentError(
            f"{need}, which " + ("ignored it (reads no limit back)" if held is None
                                 else f"reads {held} back") +
            "; run on a newer kernel or leave max_learned out (no limit)")


def learned(bridge: str) -> int:
    """How many FDB entries the bridge learned: IFLA_BR_FDB_N_LEARNED (Linux >= 6.7), else
    the dynamic entries of a dump of the bridge's forwarding table."""
    count = _u32(bridge_data(bridge), IFLA_BR_FDB_N_LEARNED)
    return _dump_learned(bridge) if count is None else count


def _dump_learned(bridge: str) -> int:
    """The bridge's learned entries, counted in a dump of the forwarding table (any kernel)."""
    from pyroute2 import IPRoute  # type: ignore[import-untyped,import-not-found,unused-ignore]

    index = _index(bridge)
    static = 0x40 | 0x80  # NUD_NOARP (a static entry), NUD_PERMANENT (the ports' own)
    with IPRoute() as ipr:
        return sum(1 for entry in ipr.fdb("dump")
                   if entry.get("NDA_MASTER") == index and not entry["state"] & static)


def flush_fdb(bridge: str) -> None:
    """Remove every learned entry of the bridge (IFLA_BR_FDB_FLUSH); static ones stay."""
    _request(RTM_NEWLINK, NLM_F_ACK, _index(bridge), _bridge_attrs({IFLA_BR_FDB_FLUSH: b""}))
