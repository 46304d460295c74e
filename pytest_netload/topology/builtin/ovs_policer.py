"""The ``ovs-dpdk`` topology's policer: what OVS's DPDK policers count, and the rate they
pass.

OVS polices with DPDK's rte_meter srTCM, color-blind, in both of its policers: the
ingress policer of an interface (``ingress_policing_rate`` in kbit/s and
``ingress_policing_burst`` in kbit, turned into bytes as ``rate * 1000 / 8``) and the
``egress-policer`` QoS of a port (``other_config:cir`` in bytes/s, ``cbs`` in bytes).
Each frame costs ``rte_pktmbuf_pkt_len(pkt) - sizeof(struct rte_ether_hdr)`` bytes
(lib/netdev-dpdk.c, OVS 3.1): the frame without its FCS *and* without its 14-byte
Ethernet header, the IP packet. A frame of ``size`` bytes with FCS costs ``size - 18``
(46 at 64 B, 1500 at 1518 B; a VLAN tag counts), so the policer passes
``cir_bytes_per_s / (size - 18)`` frames a second (:func:`ovs_policer_capacity_pps`),
plus the bucket it starts with. The meter's own clock is the TSC: it adds a byte every
``floor(tsc_hz / cir)`` cycles (:func:`meter_rate_bytes_per_s`). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology.facts import MTU
from pytest_netload.units import FCS_BYTES

__all__ = ["POLICERS", "POLICER_UNCOUNTED_BYTES", "check_policer", "cir_bytes", "default_cbs",
           "meter_rate_bytes_per_s", "ovs_policer_capacity_pps", "pmd_wait_share"]

POLICERS = ("ingress", "egress")
POLICER_CIR_RANGE_BPS = (8_000, 100_000_000_000)
POLICER_CBS_S = 0.005     # default bucket: 5 ms of bytes at the CIR ...
POLICER_MIN_CBS_BYTES = 3_000  # ... but at least two full frames (1500 counted bytes each)
ETH_HEADER_BYTES = 14
POLICER_UNCOUNTED_BYTES = ETH_HEADER_BYTES + FCS_BYTES  # 18: rte_meter gets pkt_len - 14
POLICER_ACCOUNTING = "l3"  # the IP packet: no Ethernet header, no FCS
METER_TB_PERIOD_MIN = 100  # rte_meter.h RTE_METER_TB_PERIOD_MIN (DPDK 22.11)


def meter_rate_bytes_per_s(cir_bytes_per_s: int, tsc_hz: int) -> float:
    """The rate DPDK's rte_meter really fills its bucket at, for a CIR in bytes/s and the
    TSC frequency it was configured with (rte_meter_get_tb_params, DPDK 22.11): one byte
    every ``floor(hz / cir)`` cycles when that is at least 100 cycles, else
    ``ceil(100 / (hz / cir))`` bytes every ``floor(hz * bytes / cir)`` cycles. The
    truncation makes it up to 1 % faster than the CIR (at a period of 100 cycles)."""
    if cir_bytes_per_s <= 0 or tsc_hz <= 0:
        raise NetloadConfigError(f"cir_bytes_per_s = {cir_bytes_per_s!r}, tsc_hz = "
                                 f"{tsc_hz!r}: give positive integers")
    period = tsc_hz / cir_bytes_per_s
    if period >= METER_TB_PERIOD_MIN:
        return tsc_hz / int(period)
    per_period = -(-METER_TB_PERIOD_MIN // period)  # ceil
    return tsc_hz * per_period / ((tsc_hz * int(per_period)) // cir_bytes_per_s)


def cir_bytes(cir_bps: int, policer: str) -> int:
    if policer == "ingress":  # ingress_policing_rate is kbit/s: OVS takes rate * 1000 / 8
        return (cir_bps // 1000) * 125
    return cir_bps // 8


def ovs_policer_capacity_pps(cir_bps: int, frame_size: int, *, policer: str = "ingress",
                             tsc_hz: int | None = None) -> float:
    """Frames a second the ``ovs-dpdk`` policer passes at ``cir_bps`` for frames of
    ``frame_size`` bytes (with FCS): ``(cir_bps / 8) / (frame_size - 18)``, as rte_meter
    charges each frame its length without FCS and without Ethernet header. With
    ``tsc_hz`` (the DUT's ``info["tsc_hz"]``) the rate is rte_meter's own
    (:func:`meter_rate_bytes_per_s`), in that clock's seconds."""
    if isinstance(frame_size, bool) or not isinstance(frame_size, int) or \
            frame_size <= POLICER_UNCOUNTED_BYTES:
        raise NetloadConfigError(f"frame_size = {frame_size!r}: give a frame size in bytes "
                                 "with FCS, e.g. 64")
    check_policer(cir_bps, None, policer)
    cir = cir_bytes(cir_bps, policer)
    rate = meter_rate_bytes_per_s(cir, tsc_hz) if tsc_hz else float(cir)
    return rate / (frame_size - POLICER_UNCOUNTED_BYTES)


def pmd_wait_share(trial: Any) -> float:
    """The share of `trial` (a TrialResult, or its record in results.json) that OVS's
    PMD threads waited, runnable, for their CPU: the growth of the DUT counter
    "cpu_wait_ns" over the trial's duration; 0.0 where it was not read.

    A policer near its CIR loses that share: while the PMD is off its CPU the bucket
    stands full and the tokens of that time are lost, so a trial offered more than
    ``capacity x (1 - share)`` can lose frames to the policer with no fault of the
    generator's or of OVS's (measured on a 2-CPU VM: 2.1 % of each 1 s trial in ~60
    waits of 0.35 ms, and the CIR found 2.1 % low)."""
    duration = trial.get("duration_s") if isinstance(trial, dict) else \
        getattr(trial, "duration_s", 0.0)
    if not duration:
        return 0.0
    if isinstance(trial, dict):
        counters = (trial.get("loss_attribution") or {}).get("counters") or {}
        waited = sum(v for k, v in counters.items() if k.startswith("cpu_wait_ns"))
    else:
        attribution = getattr(trial, "attribution", None)
        waited = sum(c.value for c in getattr(attribution, "counters", ())
                     if c.name == "cpu_wait_ns")
    return waited / 1e9 / duration


def default_cbs(cir_bps: int) -> int:
    cbs = max(int(cir_bps / 8 * POLICER_CBS_S), POLICER_MIN_CBS_BYTES)
    return -(-cbs // 125) * 125  # whole kbit: what the ingress policer can be given


def check_policer(cir_bps: int | None, cbs_bytes: int | None, policer: str) -> None:
    if policer not in POLICERS:
        raise NetloadConfigError(f"policer = {policer!r}: use one of {list(POLICERS)}")
    if cir_bps is None:
        if cbs_bytes is not None:
            raise NetloadConfigError("policer_cbs_bytes needs policer_cir_bps: give the "
                                     "CIR too, or leave both out (no policer)")
        return
    low, high = POLICER_CIR_RANGE_BPS
    if isinstance(cir_bps, bool) or not isinstance(cir_bps, int) or not low <= cir_bps <= high:
        raise NetloadConfigError(f"policer_cir_bps = {cir_bps!r}: give an integer bit/s from "
                                 f"{low:_} to {high:_}")
    step = 1000 if policer == "ingress" else 8
    if cir_bps % step:
        raise NetloadConfigError(
            f"policer_cir_bps = {cir_bps!r}: the {policer} policer takes "
            f"{'whole kbit/s' if step == 1000 else 'whole bytes/s'}: give a multiple of "
            f"{step}")
    if cbs_bytes is None:
        return
    top = max(cir_bps // 8, POLICER_MIN_CBS_BYTES)
    if isinstance(cbs_bytes, bool) or not isinstance(cbs_bytes, int) or \
            not MTU <= cbs_bytes <= top:
        raise NetloadConfigError(
            f"policer_cbs_bytes = {cbs_bytes!r}: give an integer from {MTU} (one full frame "
            f"as the policer counts it) to {top} (one second at the CIR)")
    if policer == "ingress" and cbs_bytes % 125:
        raise NetloadConfigError(
            f"policer_cbs_bytes = {cbs_bytes!r}: the ingress policer's burst is whole kbit: "
            "give a multiple of 125 bytes, or use policer='egress'")
