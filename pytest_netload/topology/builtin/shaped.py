"""The ``netns-shaped`` topology: netns-router with a rate shaper towards p1.

A TBF, or an HTB class over a ``bfifo``, on the egress of the DUT's ``d1``, so
only p0 -> p1 is shaped; the default bucket holds 4 ms of tokens at the rate
(at least two full-size frames) and the queue 20 ms more. The shaper's known
answer is :func:`shaper_capacity_pps`, which counts frames the way the kernel's
qdiscs do (Ethernet header + IP packet, no FCS); the parameter checks run
before anything is built.
"""

from __future__ import annotations

import contextlib
import math
import shutil
from collections.abc import Sequence
from functools import partial

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.topology.builtin.cleanup import _managed
from pytest_netload.topology.builtin.dut import BuiltTopology, Dut
from pytest_netload.topology.builtin.names import (
    _SHAPED_CODE,
    PREFIX,
    _check_backend,
    _check_prefix,
)
from pytest_netload.topology.builtin.router import NEIGHBOURS, _build_routed, _check_choice
from pytest_netload.topology.facts import MTU
from pytest_netload.units import FCS_BYTES, MIN_FRAME_BYTES

__all__ = ["add_tbf", "check_rate_bps", "default_bucket", "netns_shaped",
           "shaper_capacity_pps"]

# netns-shaped: the shaper on the DUT's egress towards p1
SHAPER_QDISCS = ("tbf", "htb")
SHAPER_RATE_BPS = 50_000_000  # default
SHAPER_RATE_RANGE_BPS = (8_000, 10_000_000_000)
SHAPER_BURST_S = 0.004  # default bucket: 4 ms of tokens (one tick at HZ=250) ...
SHAPER_MIN_BURST_BYTES = 2 * (MTU + 14)  # ... but at least two full-size frames
SHAPER_QUEUE_S = 0.020  # default queue: 20 ms at the rate on top of the bucket (tc's latency)
SHAPER_MAX_LIMIT_BYTES = 1 << 30
SHAPER_ACCOUNTING = "l2-nofcs"  # the skb at the qdisc: Ethernet header + IP packet, no FCS


def _tc(dut: Dut, args: Sequence[str], needed_by: str = "netns-shaped") -> None:
    if shutil.which("tc") is None:
        raise NetloadEnvironmentError(
            f"`tc` (iproute2) is not installed; {needed_by} needs it "
            "(Debian/Ubuntu: apt-get install iproute2)"
        )
    proc = dut.run(["tc", *args], check=False)
    if proc.returncode != 0:
        raise NetloadEnvironmentError(
            f"`tc {' '.join(args)}` in DUT namespace {dut.namespace} failed "
            f"(exit status {proc.returncode}): {(proc.stderr or proc.stdout).strip()}; "
            "the kernel needs sch_tbf / sch_htb and sch_fifo (CONFIG_NET_SCH_TBF, ...)"
        )


def _shape(
    dut: Dut, *, qdisc: str, rate_bps: int, burst_bytes: int, limit_bytes: int
) -> None:
    """The shaper on the egress of ``d1`` (towards p1): only p0 -> p1 is shaped."""
    iface = dut.interfaces[1]
    rate = f"{rate_bps}bit"
    if qdisc == "tbf":
        add_tbf(dut, iface, rate_bps=rate_bps, burst_bytes=burst_bytes, limit_bytes=limit_bytes)
    else:
        # one class holding everything; its quantum only matters between classes
        _tc(dut, ["qdisc", "add", "dev", iface, "root", "handle", "1:", "htb", "default", "1"])
        _tc(dut, ["class", "add", "dev", iface, "parent", "1:", "classid", "1:1", "htb",
                  "rate", rate, "ceil", rate, "burst", str(burst_bytes),
                  "cburst", str(burst_bytes), "quantum", str(MTU + 14)])
        _tc(dut, ["qdisc", "add", "dev", iface, "parent", "1:1", "handle", "10:", "bfifo",
                  "limit", str(limit_bytes)])
    dut.info.update(
        model=f"Linux kernel IPv4 router (network namespace), {qdisc.upper()} shaper on "
        f"{iface} egress",
        shaper=qdisc,
        rate_bps=str(rate_bps),
        burst_bytes=str(burst_bytes),
        limit_bytes=str(limit_bytes),
        shaped_wire="p0->p1",
        shaped_interface=iface,
        accounting=SHAPER_ACCOUNTING,
    )


def add_tbf(dut: Dut, iface: str, *, rate_bps: int, burst_bytes: int, limit_bytes: int,
            needed_by: str = "netns-shaped") -> None:
    """A root TBF of ``rate_bps`` on the egress of the DUT's ``iface``."""
    _tc(dut, ["qdisc", "add", "dev", iface, "root", "handle", "1:", "tbf", "rate",
              f"{rate_bps}bit", "burst", str(burst_bytes), "limit", str(limit_bytes)],
        needed_by)


def _check_int(key: str, value: object, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise NetloadConfigError(
            f"{key} = {value!r} must be an integer from {low} to {high} ({what})"
        )
    return value


def check_rate_bps(rate_bps: object, key: str = "rate_bps") -> int:
    """A shaper rate: an integer in SHAPER_RATE_RANGE_BPS (bit/s); ``key`` names it."""
    low, high = SHAPER_RATE_RANGE_BPS
    return _check_int(key, rate_bps, low, high, "bit/s, e.g. 20_000_000 for 20 Mbit/s")


def default_bucket(rate_bps: int, queue_s: float = SHAPER_QUEUE_S) -> tuple[int, int]:
    """The default (bucket, queue limit) in bytes of a shaper of ``rate_bps``: the bucket
    SHAPER_BURST_S of tokens (at least SHAPER_MIN_BURST_BYTES), the queue ``queue_s`` at
    the rate on top of the bucket."""
    bytes_per_s = rate_bps // 8
    burst = max(math.ceil(bytes_per_s * SHAPER_BURST_S), SHAPER_MIN_BURST_BYTES)
    return burst, math.ceil(bytes_per_s * queue_s) + burst


def shaper_capacity_pps(rate_bps: int, frame_size_with_fcs: int) -> float:
    """Frames per second a ``netns-shaped`` shaper of ``rate_bps`` lets through.

    The kernel's TBF and HTB count ``qdisc_pkt_len(skb)`` = ``skb->len`` at
    the qdisc, which on a veth is the Ethernet frame without FCS (14-byte
    header + IP packet): a 64-byte frame counts 60 bytes, no preamble, no
    inter-frame gap, no FCS (no ``overhead`` or size table is configured).
    ``tc`` turns ``rate_bps`` into whole bytes per second, rounding down. So
    the capacity is ``(rate_bps // 8) / (frame_size_with_fcs - 4)``; e.g.
    20 Mbit/s at 64 B: 41,666.7 pps, at 512 B: 4,921.3 pps.
    """
    rate_bps = check_rate_bps(rate_bps)
    size = _check_int(
        "frame_size_with_fcs", frame_size_with_fcs, MIN_FRAME_BYTES + FCS_BYTES,
        MTU + 14 + FCS_BYTES, f"bytes with the FCS; frames cross a {MTU}-byte MTU",
    )
    return (rate_bps // 8) / (size - FCS_BYTES)


def _check_shaper(
    rate_bps: object, qdisc: object, burst_bytes: object, limit_bytes: object
) -> tuple[int, str, int, int]:
    rate = check_rate_bps(rate_bps)
    if qdisc not in SHAPER_QDISCS:
        raise NetloadConfigError(
            f"qdisc = {qdisc!r} is not a shaper netns-shaped offers; use one of "
            f"{list(SHAPER_QDISCS)}"
        )
    bytes_per_s = rate // 8
    default_burst, _limit = default_bucket(rate)
    if burst_bytes is None:
        burst = default_burst
    else:
        burst = _check_int(
            "burst_bytes", burst_bytes, MTU + 14, max(bytes_per_s, SHAPER_MIN_BURST_BYTES),
            "from one full-size frame to one second of tokens at rate_bps; default "
            f"max({SHAPER_BURST_S * 1e3:g} ms at the rate, {SHAPER_MIN_BURST_BYTES})",
        )
    if limit_bytes is None:
        limit = math.ceil(bytes_per_s * SHAPER_QUEUE_S) + burst
    else:
        limit = _check_int(
            "limit_bytes", limit_bytes, MTU + 14, SHAPER_MAX_LIMIT_BYTES,
            "bytes queued before the shaper drops; default "
            f"{SHAPER_QUEUE_S * 1e3:g} ms at the rate + burst_bytes",
        )
    return rate, str(qdisc), burst, limit


def netns_shaped(
    backend: str = "af_packet",
    *,
    rate_bps: int = SHAPER_RATE_BPS,
    qdisc: str = "tbf",
    burst_bytes: int | None = None,
    limit_bytes: int | None = None,
    prefix: str = PREFIX,
    neighbours: str = "arp",
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """netns-router with a shaper of ``rate_bps`` on its egress towards p1 (d1).

    Only p0 -> p1 is shaped; its capacity is :func:`shaper_capacity_pps`.
    ``qdisc``: ``"tbf"`` (root TBF) or ``"htb"`` (root HTB, one class with
    rate = ceil, a ``bfifo`` leaf). ``burst_bytes`` (default: 4 ms of tokens
    at the rate, at least 3028) is the bucket; ``limit_bytes`` (default: 20 ms
    at the rate + the bucket) the queue, beyond which frames are dropped.
    """
    _check_backend(backend)
    _check_prefix(prefix)
    rate, kind, burst, limit = _check_shaper(rate_bps, qdisc, burst_bytes, limit_bytes)
    configure = partial(_shape, qdisc=kind, rate_bps=rate, burst_bytes=burst, limit_bytes=limit)
    builder = partial(_build_routed, name="netns-shaped", code=_SHAPED_CODE, configure=configure,
                      neighbours=_check_choice("neighbours", neighbours, NEIGHBOURS))
    return _managed(builder, backend, prefix)
