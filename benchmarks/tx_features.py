"""TX cycles per packet, feature by feature, on net_null.

One 64-byte UDP/IPv4 stream, sent as fast as one worker sends it to `net_null`
(which frees what it is given: the floor of any DPDK sender). Each row adds one
piece of per-packet work to the row above:

1. base: pre-filled frames and the signature trailer (stream id, sequence number),
   no TX timestamp, no checksum to keep, no field modified;
2. the TX timestamp in every packet (a TSC read);
3. the IPv4 header checksum kept right;
4. the UDP checksum kept right;
5. one field modifier (IPv4 source, incrementing);
6. a second one (UDP source port, random);
7. software pacing (a CBR phase above what the worker can send, so every packet
   goes through the pacer's deadline arithmetic but never waits).

Cycles per packet are the TSC rate over the packet rate, each feature's best of
ROUNDS runs of `seconds / ROUNDS`, the features taken in turn in every round (noise
only slows a run down, and the VM's drift then falls on every row alike). The increments are what each
feature costs; the last row is what tx_vs_testpmd measures (2 fields + signature +
checksums).
Usage: python benchmarks/tx_features.py [seconds per feature]
"""

from __future__ import annotations

import sys
from typing import Any

from _common import print_table, udp_stream

from pytest_netload.engine.client import Engine, Tx
from pytest_netload.traffic.patterns import CBR
from pytest_netload.units import Rate

PACED_PPS = 500e6  # far above what one worker sends: the pacer computes, never waits

ROUNDS = 6
NO_STAMP = (1 << 31) - 1  # stamp_every: the first packet only


def spec(engine: Engine, fields: int, *, stamp: bool, ipv4_csum: bool,
         udp_csum: bool) -> dict[str, Any]:
    stream = udp_stream(64, fields=fields, name=f"f{fields}")
    if not stamp:
        stream = type(stream)(stream.template, size=64, fields=stream.fields,
                              name=stream.name, stamp_every=NO_STAMP)
    out = stream.compile(engine.constants["signature_bytes"])
    if not udp_csum:  # no L4 checksum to keep (the engine keeps one only with an offset)
        out["l4_offset"], out["l4_proto"] = -1, 0
    if not ipv4_csum:
        out["l3_offset"], out["l3_proto"] = -1, 0
    return out


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    rows: list[tuple[str, dict[str, Any], bool]] = []
    with Engine() as engine:
        port = engine.port("net_null0")
        steps = [
            ("base (signature, pre-filled frames)", dict(fields=0, stamp=False,
                                                         ipv4_csum=False, udp_csum=False), False),
            ("+ TX timestamp in every packet", dict(fields=0, stamp=True, ipv4_csum=False,
                                                    udp_csum=False), False),
            ("+ IPv4 checksum", dict(fields=0, stamp=True, ipv4_csum=True, udp_csum=False),
             False),
            ("+ UDP checksum", dict(fields=0, stamp=True, ipv4_csum=True, udp_csum=True), False),
            ("+ 1 field (ip.src inc)", dict(fields=1, stamp=True, ipv4_csum=True,
                                            udp_csum=True), False),
            ("+ 2nd field (udp.sport random)", dict(fields=2, stamp=True, ipv4_csum=True,
                                                    udp_csum=True), False),
            ("+ software pacing (CBR above the maximum)", dict(fields=2, stamp=True,
                                                               ipv4_csum=True,
                                                               udp_csum=True), True),
        ]
        hz = engine.hello["tsc_hz"]
        loaded = []
        for label, options, paced in steps:
            phases = tuple(CBR().phases(lambda _r: PACED_PPS, Rate(PACED_PPS, "pps"),
                                        seed=1)) if paced else ()
            loaded.append((label, Tx(engine.load(port, spec(engine, **options)), 0, phases)))
        for _, tx in loaded:
            engine.run([tx], duration_s=0.2)  # warm caches and pools
        # Rounds over all features, each feature's best kept: the VM's speed drifts over
        # seconds, and measuring one feature after another would put that drift into
        # the differences between rows.
        best = [0.0] * len(loaded)
        per_run = seconds / ROUNDS
        for _ in range(ROUNDS):
            for i, (_, tx) in enumerate(loaded):
                (s,) = engine.run([tx], duration_s=per_run).streams
                best[i] = max(best[i], s.tx_packets / per_run)
        results = [(label, pps, hz / pps) for (label, _), pps in zip(loaded, best)]
    previous = None
    table = []
    for label, pps, cycles in results:
        step = "" if previous is None else f"{cycles - previous:+.1f}"
        table.append((label, f"{pps / 1e6:.2f}", f"{cycles:.1f}", step))
        previous = cycles
    print_table(table, ("net_null, 64 B, 1 worker", "Mpps", "cycles/pkt", "added"))
    base, full = results[0][2], results[-2][2]
    print(f"tx_cycles_per_packet_base: {base:.1f} tx_cycles_per_packet_full: {full:.1f}")


if __name__ == "__main__":
    main()
