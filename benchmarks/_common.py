"""Shared pieces of the side-by-side benchmarks: run dpdk-testpmd, build streams.

Every benchmark runs the peer and pytest-netload on the same device, one
after the other, with the same number of forwarding lcores, and prints its
headline ratio as the last line (`name: value`).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pytest_netload.bench.runner import EngineMeasurer
from pytest_netload.engine.client import Engine
from pytest_netload.topology.builtin import build, shaper_capacity_pps
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.streams import Stream, flow_stream

TESTPMD = shutil.which("dpdk-testpmd") or "/usr/bin/dpdk-testpmd"


def lcores() -> str:
    cpus = sorted(os.sched_getaffinity(0))
    return ",".join(str(c) for c in cpus[:2])


FIRST_SAMPLE_TIMEOUT_S = 60.0  # testpmd's EAL start and first stats line take this at most


def testpmd_pps(vdevs: list[str], mode: str, seconds: float = 6.0,
                extra: tuple[str, ...] = (), warmup_samples: int = 1) -> tuple[float, str]:
    """Best of testpmd's per-second Tx-pps (txonly) or Rx-pps (rxonly).

    testpmd runs until it has printed its first non-zero sample (at most
    FIRST_SAMPLE_TIMEOUT_S: its start on a loaded VM varies by seconds, and a
    fixed sleep once ended before it), then `warmup_samples` more that are left
    out, then one sample per second of `seconds`. The best sample is taken, as
    for our side (see `best_of`): on a shared VM noise only ever slows a run
    down, so the fastest sample is the least disturbed.
    """
    import queue
    import threading

    key = "Tx-pps" if mode == "txonly" else "Rx-pps"
    prefix = f"nlbench-{secrets.token_hex(3)}"
    cmd = [TESTPMD, "-l", lcores(), "--no-huge", "-m", "1024", "--no-pci",
           "--file-prefix", prefix, "--no-telemetry"]
    for v in vdevs:
        cmd += ["--vdev", v]
    cmd += ["--", f"--forward-mode={mode}", "--stats-period", "1",
            "--total-num-mbufs=16384", *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    out: list[str] = []
    samples: list[int] = []
    wanted = warmup_samples + max(1, round(seconds))
    started = time.monotonic()
    why = ""
    try:
        while len(samples) < wanted:
            deadline = started + FIRST_SAMPLE_TIMEOUT_S if not samples else \
                time.monotonic() + 5.0  # one a second once it runs
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                why = (f"no non-zero {key} sample in {FIRST_SAMPLE_TIMEOUT_S:.0f} s of "
                       "testpmd's start" if not samples else
                       f"testpmd stopped printing {key} after {len(samples)} samples")
                break
            if line is None:
                why = f"testpmd exited (status {proc.wait()}) after {len(samples)} samples"
                break
            out.append(line)
            found = re.search(rf"{key}:\s+(\d+)", line)
            if found and (samples or int(found.group(1)) > 0):
                samples.append(int(found.group(1)))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)
    text = "".join(out)
    kept = [v for v in samples[warmup_samples:] if v > 0]
    if why or not kept:
        raise SystemExit(f"testpmd ({' '.join(cmd)}): {why or 'only zero samples'}:\n"
                         f"{text[-3000:]}")
    return float(max(kept)), text


def proc_status_kib(pid: int, field: str = "VmRSS") -> int:
    """A memory figure of process `pid` from /proc/PID/status (VmRSS, VmHWM: KiB)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    return 0


def best_of(runs: int, measure: Callable[[], float]) -> float:
    """The fastest of `runs` measurements (noise only slows a run down)."""
    return max(measure() for _ in range(runs))


def alternate(rounds: int, peer: Callable[[], float],
              ours: Callable[[], float]) -> tuple[float, float, list[float]]:
    """Measure peer and ours in alternating order; medians and per-round ratios.

    The VM's noise drifts over seconds, so each round runs both back to back
    and the order flips every round.
    """
    peers, mine, ratios = [], [], []
    for r in range(rounds):
        if r % 2:
            b = ours()
            a = peer()
        else:
            a = peer()
            b = ours()
        peers.append(a)
        mine.append(b)
        ratios.append(b / a)
    return statistics.median(peers), statistics.median(mine), ratios


def udp_stream(size: int = 64, fields: int = 2, name: str = "bench",
               stamp_every: int = 1) -> Stream:
    """64-byte UDP frames with `fields` modified fields (IPv4 src, UDP sport), a TX
    timestamp in every `stamp_every`-th."""
    tmpl = (Eth() / IPv4(src="198.18.0.1", dst="198.19.0.1") / UDP(sport=1024, dport=9)).build()
    from pytest_netload.traffic.packets import field

    mods = [field(tmpl, "ip.src", "inc", min="198.18.0.1", max="198.18.0.254"),
            field(tmpl, "udp.sport", "random", min=1024, max=65535)][:fields]
    return Stream(tmpl, size=size, fields=mods, name=name, stamp_every=stamp_every)


def print_table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(str(c).rjust(w) for c, w in zip(r, widths)))


@contextmanager
def shaped_measurer(engine: Engine, rate_bps: int, size: int, queue_s: float,
                    drain_s: float, **measurer_kw: Any) -> Iterator[tuple[EngineMeasurer, float]]:
    """A netns-shaped DUT of `rate_bps` whose queue holds `queue_s` at its rate, and a
    measurer of `size`-byte frames through it, after learning traffic (RFC 2544 §23).
    Yields (measurer, the shaper's capacity in pps); removes the DUT after.

    Frames a queue absorbs in a finite trial are not lost, so a queue of q seconds lets
    a search pass loads up to q / trial above the rate; too short a queue, and the
    generator's own jitter (VM stalls) overflows it below the rate."""
    burst = max(3028, rate_bps // 8 // 250)
    limit = int(rate_bps / 8 * queue_s) + burst
    with build("netns-shaped", neighbours="static", rate_bps=rate_bps, burst_bytes=burst,
               limit_bytes=limit) as built:
        flow = built.topology.flows()[0]
        tx = engine.port(flow.tx.device)
        rx = engine.port(flow.rx.device)
        try:
            stream = engine.load(tx, flow_stream(flow, size=size, name=f"s{size}"))
            measurer = EngineMeasurer(engine, stream, [rx], size, drain_s, **measurer_kw)
            capacity = shaper_capacity_pps(rate_bps, size)
            measurer.measure(capacity * 0.5, 0.5)  # learning traffic (§23), not counted
            yield measurer, capacity
            stream.free()
        finally:
            tx.close()
            rx.close()
