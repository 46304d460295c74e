"""The ``netns-policed`` topology: netns-router with a token-bucket policer towards p1.

A single-rate, two-colour token-bucket policer (ITU-T Y.1564 / MEF 10: CIR and
CBS, green frames pass, the rest are dropped; no EIR) on the egress of the DUT's
``d1``, so only p0 -> p1 is policed, and a Y.1564 service configuration test's
policing step has a known answer: :func:`policer_conforming_pps`.

Where it sits and what it counts: a ``clsact`` qdisc on ``d1`` with a tc eBPF
filter in direct-action mode (bpfpolice.py; this kernel has no ``act_police`` or
``cls_matchall``) that runs ``act_police``'s algorithm. At the clsact *egress*
hook the skb is the whole Ethernet frame without its FCS (the router has pushed
the 14-byte header; at an *ingress* hook that header is already pulled, so
``skb->len`` would be 18 bytes short), and the policer adds 4 bytes: each frame
costs its size *with* FCS, from the first bit of the destination MAC to the last
of the FCS, as Y.1564 and MEF count CIR and CBS ("l2" accounting). Preamble and
inter-frame gap are not counted. Only IPv4 frames are policed (the DUT's ARP to
p1 passes uncounted). The bucket starts full; the parameter checks run before
anything is built.
"""

from __future__ import annotations

import contextlib
import math
from functools import partial

from pyroute2 import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
    IPRoute,
    NetlinkError,
)

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.topology.builtin.bpfpolice import BpfPolicer
from pytest_netload.topology.builtin.cleanup import _managed, _Resources
from pytest_netload.topology.builtin.dut import BuiltTopology, Dut
from pytest_netload.topology.builtin.kernel import _call_in_netns
from pytest_netload.topology.builtin.names import (
    _POLICED_CODE,
    PREFIX,
    _check_backend,
    _check_prefix,
)
from pytest_netload.topology.builtin.router import NEIGHBOURS, _build_routed, _check_choice
from pytest_netload.topology.facts import MTU
from pytest_netload.units import FCS_BYTES, MIN_FRAME_BYTES

__all__ = ["netns_policed", "policer_burst_frames", "policer_conforming_pps"]

POLICER_CIR_BPS = 10_000_000  # default
POLICER_CIR_RANGE_BPS = (8_000, 10_000_000_000)
POLICER_CBS_S = 0.010  # default bucket: 10 ms of bytes at the CIR ...
FULL_FRAME_BYTES = MTU + 14 + FCS_BYTES  # 1518: a full-size frame with its FCS
POLICER_MIN_CBS_BYTES = 2 * FULL_FRAME_BYTES  # ... but at least two full-size frames
POLICER_OVERHEAD_BYTES = FCS_BYTES  # added to skb->len at the clsact egress hook
POLICER_ACCOUNTING = "l2"  # the Ethernet frame with FCS, no preamble or gap
_TC_H_CLSACT = 0xFFFFFFF1
_TC_H_EGRESS = 0xFFFFFFF3  # TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)
_ETH_P_ALL = 0x0003


def _check_int(key: str, value: object, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise NetloadConfigError(
            f"{key} = {value!r} must be an integer from {low} to {high} ({what})")
    return value


def _check_cir_bps(cir_bps: object) -> int:
    low, high = POLICER_CIR_RANGE_BPS
    return _check_int("cir_bps", cir_bps, low, high,
                      "the CIR in bit/s, e.g. 10_000_000 for 10 Mbit/s")


def _check_frame_size(frame_size_with_fcs: object) -> int:
    return _check_int("frame_size_with_fcs", frame_size_with_fcs, MIN_FRAME_BYTES + FCS_BYTES,
                      FULL_FRAME_BYTES, f"bytes with the FCS; frames cross a {MTU}-byte MTU")


def _check_cbs(cir: int, cbs_bytes: object) -> int:
    bytes_per_s = cir // 8
    if cbs_bytes is None:
        return max(math.ceil(bytes_per_s * POLICER_CBS_S), POLICER_MIN_CBS_BYTES)
    return _check_int(
        "cbs_bytes", cbs_bytes, FULL_FRAME_BYTES, max(bytes_per_s, POLICER_MIN_CBS_BYTES),
        "from one full-size frame to one second of bytes at cir_bps; default "
        f"max({POLICER_CBS_S * 1e3:g} ms at the CIR, {POLICER_MIN_CBS_BYTES})")


def policer_conforming_pps(cir_bps: int, frame_size_with_fcs: int) -> float:
    """Frames per second a ``netns-policed`` policer of ``cir_bps`` passes in steady
    state, offered more than that.

    Each frame costs its size with the FCS (``skb->len`` + 4 at the clsact egress
    hook; no preamble, no inter-frame gap). The bucket fills at whole bytes per
    second, ``cir_bps // 8`` (as ``tc`` would configure a rate), with exact
    arithmetic after that, so the answer is ``(cir_bps // 8) / frame_size_with_fcs``:
    e.g. 10 Mbit/s at 512 B: 2,441.4 pps, at 1518 B: 823.5 pps. Over a trial of T
    seconds that starts with a full bucket, add :func:`policer_burst_frames`.
    """
    cir = _check_cir_bps(cir_bps)
    return (cir // 8) / _check_frame_size(frame_size_with_fcs)


def policer_burst_frames(cbs_bytes: int, frame_size_with_fcs: int) -> int:
    """Back-to-back frames of ``frame_size_with_fcs`` a full bucket of ``cbs_bytes``
    passes before the CIR limits them: ``cbs_bytes // frame_size_with_fcs``."""
    cbs = _check_int("cbs_bytes", cbs_bytes, FULL_FRAME_BYTES, POLICER_CIR_RANGE_BPS[1] // 8,
                     "the policer's CBS (dut.info['cbs_bytes'])")
    return cbs // _check_frame_size(frame_size_with_fcs)


def _attach(policer: BpfPolicer, iface: str) -> None:
    """In the DUT's namespace: a clsact qdisc on ``iface``, the policer on its egress."""
    with IPRoute() as ipr:
        (index,) = ipr.link_lookup(ifname=iface)
        ipr.tc("add", "clsact", index)
        ipr.tc("add-filter", "bpf", index, ":1", fd=policer.prog_fd, name="netload_police",
               parent=_TC_H_EGRESS, classid=1, direct_action=True, prio=1,
               protocol=_ETH_P_ALL)


def _police(dut: Dut, *, policer: BpfPolicer, cir_bps: int) -> None:
    iface = dut.interfaces[1]
    policer.load()
    try:
        _call_in_netns(dut.namespace, partial(_attach, policer, iface))
    except (OSError, NetlinkError) as exc:
        raise NetloadEnvironmentError(
            f"attaching the netns-policed policer to {iface} egress in {dut.namespace} "
            f"failed: {exc}; the kernel needs CONFIG_NET_SCH_INGRESS (clsact), "
            "CONFIG_NET_CLS_BPF and CONFIG_NET_CLS_ACT") from exc
    finally:
        policer.release_program()  # the filter holds the program now
    dut.policer = policer
    dut.info.update(
        model="Linux kernel IPv4 router (network namespace), token-bucket policer on "
        f"{iface} egress",
        policer="police",
        policer_impl="tc clsact egress, eBPF direct-action (act_police's algorithm)",
        cir_bps=str(cir_bps),
        cbs_bytes=str(policer.cbs_bytes),
        policed_wire="p0->p1",
        policed_interface=iface,
        accounting=POLICER_ACCOUNTING,
    )


def _build_policed(res: _Resources, backend: str, *, cir_bps: int, cbs_bytes: int,
                   neighbours: str) -> BuiltTopology:
    policer = BpfPolicer(cir_bps // 8, cbs_bytes, POLICER_OVERHEAD_BYTES)
    res.add("the policer's BPF map and program", policer.close)
    return _build_routed(res, backend, name="netns-policed", code=_POLICED_CODE,
                         configure=partial(_police, policer=policer, cir_bps=cir_bps),
                         neighbours=neighbours)


def netns_policed(
    backend: str = "af_packet",
    *,
    cir_bps: int = POLICER_CIR_BPS,
    cbs_bytes: int | None = None,
    prefix: str = PREFIX,
    neighbours: str = "arp",
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """netns-router with a token-bucket policer of ``cir_bps`` / ``cbs_bytes`` on its
    egress towards p1 (d1): frames beyond the bucket are dropped, never queued.

    Only p0 -> p1 is policed; in steady state it passes
    :func:`policer_conforming_pps`. ``cbs_bytes`` (default: 10 ms of bytes at the
    CIR, at least two full-size frames, 3036) is the bucket, counted in frame bytes
    with the FCS; ``dut.info`` records ``cir_bps``, ``cbs_bytes`` and the rest.
    """
    _check_backend(backend)
    _check_prefix(prefix)
    cir = _check_cir_bps(cir_bps)
    builder = partial(_build_policed, cir_bps=cir, cbs_bytes=_check_cbs(cir, cbs_bytes),
                      neighbours=_check_choice("neighbours", neighbours, NEIGHBOURS))
    return _managed(builder, backend, prefix)
