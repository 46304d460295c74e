"""Names of the built-in topologies: instance tags, interfaces, namespaces, MACs and vdevs.

Every instance gets a tag ``nl`` + 6 random hex digits; interfaces are
``<tag><role>`` (``g0``/``g1`` generator side, ``d0``/``d1`` DUT side, 10
characters), the DUT namespace ``<tag>-dut-<pid>.<start>``, and every interface
carries the alias ``pytest-netload pid=<pid> start=<start> tag=<tag>``. The
creator's pid and start time in those names are what the sweep
(``cleanup.sweep_stale``) checks to tell a dead session's leftovers from a live
one's; only objects with these names are ever touched. MACs are fixed per kind
(one topology code per DUT kind, listed here so that no two kinds share one).
Pure: nothing here talks to the kernel beyond reading ``/proc/<pid>/stat``.
"""

from __future__ import annotations

import os
import re
import secrets

from pytest_netload.errors import NetloadConfigError

__all__ = ["ALIAS_MARK", "BACKENDS", "PREFIX", "mac_for", "new_tag", "vdev_string"]

PREFIX = "nl"
ALIAS_MARK = "pytest-netload"
BACKENDS = ("af_packet", "af_xdp")

# the topology code in each kind's MACs (mac_for): one per DUT kind
_LOOPBACK_CODE = 1
_ROUTER_CODE = 2
_SHAPED_CODE = 3
_LOSSY_CODE = 4
_BRIDGE_CODE = 5
_POLICED_CODE = 6
_TESTPMD_CODE = 7
_OVS_CODE = 8
_ECMP_CODE = 9
_GEN_SIDE, _DUT_SIDE = 0, 1

_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,6}$")
_ALIAS_RE = re.compile(rf"^{ALIAS_MARK} pid=(\d+) start=(\d+) tag=([a-z0-9]+)$")


def _check_prefix(prefix: str) -> str:
    if not isinstance(prefix, str) or not _PREFIX_RE.match(prefix):
        raise NetloadConfigError(
            f"prefix = {prefix!r} must be 1-7 lower-case letters or digits starting with a "
            f"letter (default {PREFIX!r}), so that names stay within 15 characters"
        )
    return prefix


def _check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise NetloadConfigError(
            f"backend = {backend!r} is not supported by the built-in topologies; "
            f"use one of {list(BACKENDS)}"
        )


def new_tag(prefix: str = PREFIX) -> str:
    """A fresh instance tag: ``prefix`` + 6 random hex digits (e.g. ``nl3fa09c``)."""
    return _check_prefix(prefix) + secrets.token_hex(3)


def mac_for(topology_code: int, side: int, index: int) -> str:
    """The fixed, locally administered MAC ``02:6e:6c:<code>:<side>:<index>``.

    ``6e:6c`` is "nl"; ``side`` is 0 for generator ends, 1 for DUT ends. The
    same topology always gets the same MACs, so captures and results repeat.
    """
    for key, value in (("topology_code", topology_code), ("side", side), ("index", index)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFF:
            raise NetloadConfigError(f"{key} = {value!r} must be an integer in 0..255")
    return f"02:6e:6c:{topology_code:02x}:{side:02x}:{index:02x}"


def vdev_string(backend: str, vdev_id: str, iface: str) -> str:
    """The DPDK ``--vdev`` string that opens kernel interface ``iface``.

    ``af_packet``: ``net_af_packet_<id>,iface=<if>,qpairs=1``;
    ``af_xdp``: ``net_af_xdp_<id>,iface=<if>,start_queue=0,queue_count=1``.
    """
    if backend == "af_packet":
        return f"net_af_packet_{vdev_id},iface={iface},qpairs=1"
    if backend == "af_xdp":
        return f"net_af_xdp_{vdev_id},iface={iface},start_queue=0,queue_count=1"
    raise NetloadConfigError(
        f"backend = {backend!r} is not supported by the built-in topologies; "
        f"use one of {list(BACKENDS)}"
    )


def _process_start(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot, or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # fields after the ")" closing the command name; starttime is field 22
    return int(stat.rsplit(")", 1)[1].split()[19])


def _alive(pid: int, start: int) -> bool:
    return _process_start(pid) == start


def _owner() -> tuple[int, int]:
    pid = os.getpid()
    start = _process_start(pid)
    assert start is not None  # our own /proc entry exists
    return pid, start


def _alias(tag: str) -> str:
    pid, start = _owner()
    return f"{ALIAS_MARK} pid={pid} start={start} tag={tag}"


def _netns_name(tag: str) -> str:
    pid, start = _owner()
    return f"{tag}-dut-{pid}.{start}"


SOCKET_ROOT = "/run/netload"


def socket_dir(tag: str) -> str:
    """The folder of a DPDK DUT's vhost-user or memif sockets:
    ``/run/netload/dut-<tag>-<pid>.<start>`` (the owner's pid and start time, as in a
    namespace's name, for the sweep)."""
    pid, start = _owner()
    return os.path.join(SOCKET_ROOT, f"dut-{tag}-{pid}.{start}")


def _socket_dir_re(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"^dut-{re.escape(prefix)}[0-9a-f]{{6}}-(\d+)\.(\d+)$")


def _netns_re(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(prefix)}[0-9a-f]{{6}}-dut-(\d+)\.(\d+)$")
