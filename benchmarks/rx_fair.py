"""Fair RX: our RX against dpdk-testpmd rxonly, same feeder, same feed, same core.

pytest-netload's RX and testpmd's are fed the same way, on the same core, by the same
feeder.

The feeder is one of our engines, its one worker and its main lcore on CPU 1. It sends
signed 64-byte UDP frames (`udp_stream(64, fields=N)`, default 0: the cheapest feed;
sequence numbers that increase and never repeat, every frame stamped) as fast as its
port takes them, into one of two ports, one a receiver. Transports (--transport):
  vhost (default): the feeder's ports are the virtio-user side, servers
     (`net_virtio_user0,path=A,server=1,queue_size=1024`, `...1,path=B,...`); the
     receivers are the vhost-user backends, `net_vhost0,iface=SOCK,client=1`, which copy
     each frame out of the feeder's buffers into mbufs of their own: both receivers pay
     the same copy, in the same PMD.
  memif: the feeder's ports are memif servers; the receivers are the clients, which
     copy each frame out of the ring's buffers.
The receivers, both on CPU 0, both alive for the whole benchmark, one receiving at a time:
  A: dpdk-testpmd --forward-mode=rxonly, main and forwarding lcore on CPU 0
     (`--lcores=0@0,1@0`; --no-huge memfd memory, --record-core-cycles); it frees each
     burst. Forwarding is on only for its measurements.
  B: our engine, `Engine(lcores=[0], main_cpu=0)` (memfd memory too), in an RX-only run
     that classifies every frame on its trailer, checks its sequence number and takes
     its latency. Each run must be exact: every frame sent received, latency_samples ==
     rx_packets, duplicates and reordered 0.
A measurement: the receiver starts receiving, the feeder sends a WARMUP_S burst, then
for `seconds`. The rate taken is worked out the same way for both: the frames the feeder
sent (checked equal to the receiver's own count) over the feeder's send span.

The headline `rx_fair` is the median per-round ratio of the rates taken, ours over
testpmd's, fed by the same feeder at full speed. On this 2-CPU VM one feeder core
cannot outrun testpmd: testpmd finds most of its polls empty (it was never the limit),
while ours leaves the ring full (it was: at least half of RING frames ahead of the
median frame, its median latency x the rate, Little's law). The ratio of rates taken is
then an upper bound of the ratio of the receivers' capacities, and the last line says
so beside a second figure, `capacity_ratio_estimate`:
  testpmd's capacity: its clock over its busy cycles a packet (--record-core-cycles
    counts the cycles of the polls that returned frames: the vring copy, the mbuf alloc
    and free). It is taken from short bursts, which cost more a packet than full ones,
    and it moves with the feed (a slower feed, smaller bursts, more cycles a packet);
  ours: its rate taken where it was the limit (where it was not, a lower bound).
On a machine with a feeder faster than both receivers, both are the limit and the
headline is their capacity ratio.
A measurement in which the receiver's busiest thread waited more than DISTURBED_PCT % of
the time for its CPU (or the feeder was off its CPU twice that) is taken again, up to
TRIES times.

Rounds alternate the order (A then B, B then A, ...); the last line gives the headline,
the median capacity estimate, testpmd's capacity and rate, ours, the share of rounds in
which ours was the limit, and our median latency.
Usage: python benchmarks/rx_fair.py [seconds] [rounds] [--transport vhost|memif]
                                    [--fields N] [--feeder-queues N]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import print_table, udp_stream

from pytest_netload.bench.link import wait_link_up
from pytest_netload.engine.client import Engine, Port, Tx
from pytest_netload.locks import HostLock
from pytest_netload.topology.builtin.testpmd_proc import Testpmd, parse_fwd_stats

RECEIVER_CPU, FEEDER_CPU = 0, 1
RING = 1024                    # a queue's descriptors: net_memif's default (rsize=10), and
                               # the virtio-user queue_size set here (its default: 256)
VHOST_SOCK = "nl.sock"         # our net_vhost port's socket, relative to the working
                               # directory: the engine's device-string check takes iface=
                               # for a kernel interface name (at most 15 characters, no /)
EMPTY_POLLS_MAX = 50.0         # testpmd's empty polls (%) below which it was the limit
WARMUP_S = 0.3
RX_MARGIN_S = 1.0              # our RX-only run: this much longer than the feeder's
BURST = 32                     # both receivers' RX burst and the feeder's TX burst
DISTURBED_PCT = 10.0           # receiver CPU wait above this (feeder: twice): measure again
TRIES = 3                      # measurements of one receiver in one round at most
CPU_WAIT_S = 600.0             # another session's engine or DUT on a CPU: wait for it


@dataclass
class Measurement:
    receiver: str
    pps: float                 # the feeder's frames / its send span (what the receiver took)
    tx_packets: int
    rx_packets: int            # the receiver's own count
    refusals: float            # the feeder's refused TX calls per burst it sent
    feeder_off_cpu_pct: float
    receiver_wait_pct: float   # its busiest thread runnable, its CPU taken by another task
    own_pps: float = 0.0       # the receiver's own figure (testpmd Rx-pps; ours first..last)
    empty_polls_pct: float = -1.0  # testpmd's polls that found nothing (-1: not known)
    capacity_pps: float = 0.0  # testpmd: its clock / its busy cycles a packet; ours: the
                               # rate where it was the limit (0: not known)
    latency_samples: int = 0
    duplicates: int = 0
    reordered: int = 0
    latency_median_us: float = 0.0
    latency_mean_us: float = 0.0
    latency_max_us: float = 0.0

    @property
    def disturbed(self) -> bool:
        """Another task took the receiver's or the feeder's CPU for a while."""
        return self.receiver_wait_pct > DISTURBED_PCT or \
            self.feeder_off_cpu_pct > 2 * DISTURBED_PCT

    @property
    def queued(self) -> float:
        """Ours: the frames ahead of the median frame in the ring (its latency x the rate,
        Little's law)."""
        return self.latency_median_us * 1e-6 * self.pps

    @property
    def receiver_bound(self) -> bool:
        """The receiver, not the feeder, set the rate: testpmd found frames waiting at
        most of its polls; ours left the ring at least half full at the median frame."""
        if self.receiver == "testpmd":
            return 0 <= self.empty_polls_pct < EMPTY_POLLS_MAX
        return self.queued >= RING / 2

    @property
    def state(self) -> str:
        if self.receiver == "testpmd":
            return f"{self.empty_polls_pct:.0f} % of polls empty" \
                if self.empty_polls_pct >= 0 else "?"
        return f"{self.queued:.0f} of {RING} full"


def thread_times(pid: int) -> dict[int, tuple[int, int]]:
    """{thread: (ns on a CPU, ns runnable but waiting for one)} from /proc schedstat."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as f:
                ran, waited = f.read().split()[:2]
            out[int(tid)] = (int(ran), int(waited))
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
    return out


class Bench:
    """The feeder, both receivers and their ports, for the whole benchmark, in `tmp`
    (this process's working directory meanwhile: see VHOST_SOCK)."""

    def __init__(self, tmp: str, transport: str, fields: int, queues: int) -> None:
        self.fields, self.queues, self.transport = fields, queues, transport
        sock_tp, sock_nl = os.path.join(tmp, "tp.sock"), os.path.join(tmp, VHOST_SOCK)
        self.tp: Testpmd | None = None
        self.feeder = self.receiver = None
        os.chdir(tmp)  # the engines' hosts start here
        # ours first: its lock on CPU 0 keeps other sessions' engines off CPU 0 for the
        # whole benchmark, testpmd's measurements included
        self.receiver = Engine(lcores=[RECEIVER_CPU], main_cpu=RECEIVER_CPU,
                               hugepages=False, memory_mb=512, cpu_wait_s=CPU_WAIT_S).start()
        self.feeder = Engine(lcores=[FEEDER_CPU], main_cpu=FEEDER_CPU, hugepages=False,
                             memory_mb=512, cpu_wait_s=CPU_WAIT_S).start()
        # this process (its polling, testpmd's prompt) on the feeder's CPU
        for tid in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(tid), {FEEDER_CPU})
            except OSError:
                continue
        q = {"rx_queues": queues, "tx_queues": queues}
        if transport == "memif":  # the feeder's ports are the servers: they listen first
            self.feed_nl = self.feeder.port(
                f"net_memif0,role=server,socket={sock_nl},id=0", **q)
            self.feed_tp = self.feeder.port(
                f"net_memif1,role=server,socket={sock_tp},id=0", **q)
            self.rx_nl = self.receiver.port(
                f"net_memif0,role=client,socket={sock_nl},id=0", **q)
            self.start_testpmd(f"net_memif0,role=client,socket={sock_tp},id=0", queues)
        else:  # the feeder's virtio-user ports are servers: each open waits for its peer
            virtio = f"server=1,queues={queues},queue_size={RING}"
            vhost = f"client=1,queues={queues}"

            def ours() -> None:
                self.rx_nl = self.receiver.port(  # type: ignore[union-attr]
                    f"net_vhost0,iface={VHOST_SOCK},{vhost}", **q)

            self.feed_nl = self.listen(f"net_virtio_user0,path={sock_nl},{virtio}", q, ours)
            self.feed_tp = self.listen(
                f"net_virtio_user1,path={sock_tp},{virtio}", q,
                lambda: self.start_testpmd(f"net_vhost0,iface={sock_tp},{vhost}", queues))
        # (the engine reads net_vhost's iface= as a kernel interface: it reports our
        # vhost port's link down; the feeder's side tells whether the peers are connected)
        for port in (self.feed_nl, self.feed_tp) + ((self.rx_nl,) if transport == "memif"
                                                     else ()):
            wait_link_up(port, 10.0)
        # the first stream of each engine: id 0 on both sides, so our RX expects it
        self.stream_nl = self.feeder.load(self.feed_nl, self.fed())
        self.expected = self.receiver.load(self.rx_nl, self.fed())
        assert self.stream_nl.stream_id == self.expected.stream_id == 0
        self.stream_tp = self.feeder.load(self.feed_tp, self.fed())

    def start_testpmd(self, device: str, queues: int) -> None:
        """testpmd as a whole on CPU 0, its control threads too (they start on the CPUs
        of the thread that starts it), as our receiver's host threads are there. CPU 0
        is locked by our receiver engine, which lives as long as testpmd."""
        os.sched_setaffinity(0, {RECEIVER_CPU})
        try:
            self.tp = Testpmd([device], cpu=RECEIVER_CPU,
                              lock=HostLock(Path(os.devnull), None), forward_mode="rxonly",
                              queues=queues, extra=("--record-burst-stats",
                                                        "--record-core-cycles"))
        finally:
            os.sched_setaffinity(0, {FEEDER_CPU})
        self.tp.command("stop")

    def listen(self, device: str, options: dict[str, Any], peer: Callable[[], None]) -> Port:
        """The feeder's vhost-user server port `device`, opened while `peer()` connects
        to it (the open returns once a peer is there)."""
        opened: list[Any] = []

        def go() -> None:
            try:
                opened.append(self.feeder.port(device, **options))  # type: ignore[union-attr]
            except BaseException as exc:  # noqa: BLE001 - raised below
                opened.append(exc)

        thread = threading.Thread(target=go, daemon=True)
        thread.start()
        sock = device.split("path=")[1].split(",")[0]
        deadline = time.monotonic() + 30
        while not os.path.exists(sock) and not opened and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)  # bound: listening now, or within a moment
        try:
            peer()
        finally:
            thread.join(60)
        if not opened or not isinstance(opened[0], Port):
            raise SystemExit(f"the feeder's port {device} did not open: {opened}")
        return opened[0]

    def fed(self) -> Any:
        return udp_stream(64, fields=self.fields, name="fed")

    def close(self) -> None:
        if self.tp is not None:
            self.tp.stop()
        for engine in (self.receiver, self.feeder):
            if engine is not None:
                engine.close()

    def feed(self, stream: Any, seconds: float, receiver_pid: int) -> tuple[Any, float]:
        """The feeder's run of `seconds`; the share of it the receiver's busiest thread
        waited for its CPU."""
        before, t0 = thread_times(receiver_pid), time.monotonic()
        (s,) = self.feeder.run([Tx(stream, 0)], [], duration_s=seconds, drain_s=0.0,
                               burst=BURST).streams
        took = time.monotonic() - t0
        after = thread_times(receiver_pid)
        busiest = max(after, key=lambda t: after[t][0] - before.get(t, (0, 0))[0])
        waited = after[busiest][1] - before.get(busiest, (0, 0))[1]
        return s, 100.0 * waited / (took * 1e9)

    def measurement(self, receiver: str, s: Any, rx_packets: int, waited: float,
                    **more: Any) -> Measurement:
        if rx_packets != s.tx_packets:
            raise SystemExit(f"{receiver} received {rx_packets} frames of the {s.tx_packets} "
                             "the feeder sent")
        span_ns = max(1, s.tx_last_ns - s.tx_first_ns)
        return Measurement(receiver, s.tx_packets / (span_ns / 1e9), s.tx_packets, rx_packets,
                           s.tx_refused_bursts / max(1.0, s.tx_packets / BURST),
                           100.0 * s.tx_off_cpu_ns / span_ns, waited, **more)

    # ---- A: testpmd rxonly --------------------------------------------------------------

    def tp_stats(self) -> tuple[int, int]:
        """(RX-packets, Rx-pps) of testpmd's port 0; Rx-pps is its rate since the previous
        `show port stats`, on its own clock."""
        assert self.tp is not None
        text = self.tp.command("show port stats 0")
        packets = re.search(r"RX-packets:\s*(\d+)", text)
        pps = re.search(r"Rx-pps:\s*(\d+)", text)
        if packets is None or pps is None:
            raise SystemExit(f"testpmd's port stats unread:\n{text}")
        return int(packets.group(1)), int(pps.group(1))

    def testpmd(self, seconds: float) -> Measurement:
        tp = self.tp
        assert tp is not None
        tp.command("start")
        try:
            self.feed(self.stream_tp, WARMUP_S, tp.proc.pid)
            time.sleep(0.05)
        finally:
            tp.command("stop")
        tp.command("start")  # its forward stats from 0
        try:
            mid: list[int] = []

            def middle() -> None:  # testpmd's own rate over the run's middle half
                time.sleep(seconds / 4)
                self.tp_stats()
                time.sleep(seconds / 2)
                mid.append(self.tp_stats()[1])

            sampler = threading.Thread(target=middle, daemon=True)
            sampler.start()
            s, waited = self.feed(self.stream_tp, seconds, tp.proc.pid)
            sampler.join()
            time.sleep(0.05)  # the last frames in the ring: taken within microseconds
        finally:
            out = tp.command("stop")
        got = parse_fwd_stats(out).get(0, {}).get("RX-packets")
        if got is None:
            raise SystemExit(f"testpmd's forward stats unread:\n{out}")
        # its polls, and the share that found nothing: one line a forwarding stream
        polls = [(int(n), int(pct)) for n, pct in
                 re.findall(r"RX-bursts\s*:\s*(\d+)\s*\[(\d+)% of 0 pkts", out)]
        total = sum(n for n, _ in polls)
        empty = sum(n * pct for n, pct in polls) / total if total else -1.0
        # its cycles in the polls that found frames (copy out of the vring, mbuf alloc,
        # free), a packet: what it could take were it fed without end
        cycles = re.search(r"CPU cycles/packet=([0-9.]+) .* at (\d+) MHz", out)
        capacity = (float(cycles.group(2)) * 1e6 / float(cycles.group(1))
                    if cycles and float(cycles.group(1)) > 0 else 0.0)
        return self.measurement("testpmd", s, got, waited,
                                own_pps=float(mid[0]) if mid else 0.0, empty_polls_pct=empty,
                                capacity_pps=capacity)

    # ---- B: ours --------------------------------------------------------------------------

    def ours_run(self, seconds: float) -> tuple[Any, float, Any]:
        """Our RX-only run around one feeder run: (the feeder's stream, our wait, our
        stream). The RX run lasts RX_MARGIN_S longer than the feeder's, which starts as
        soon as ours polls: an RX-only run ends at its duration only (the engine's
        run_stop ends TX; a run without TX ignores it)."""
        engine = self.receiver
        started = threading.Event()
        result: list[Any] = []
        errors: list[BaseException] = []

        def progress(status: dict[str, Any]) -> None:
            if status.get("elapsed_ns", 0) > 0:
                started.set()

        def go() -> None:
            try:
                result.append(engine.run([], [self.rx_nl], expect=[self.expected],
                                         duration_s=seconds + RX_MARGIN_S, drain_s=0.0,
                                         progress=progress))
            except BaseException as exc:  # noqa: BLE001 - raised below, in this thread
                errors.append(exc)
            finally:
                started.set()

        thread = threading.Thread(target=go, daemon=True)
        thread.start()
        if not started.wait(30) or errors or result:
            thread.join(5)
            raise SystemExit(f"our receiver's run did not start: {errors}")
        s, waited = self.feed(self.stream_nl, seconds, engine.hello["pid"])
        thread.join(seconds + RX_MARGIN_S + 60)
        if errors:
            raise errors[0]
        if not result:
            raise SystemExit("our receiver's run did not end")
        return s, waited, result[0].streams[0]

    def ours(self, seconds: float) -> Measurement:
        self.ours_run(WARMUP_S)
        s, waited, r = self.ours_run(seconds)
        if (r.duplicates, r.reordered, r.latency_samples) != (0, 0, r.rx_packets):
            raise SystemExit(f"our RX run was not exact: received {r.rx_packets} of "
                             f"{s.tx_packets}, duplicates {r.duplicates}, reordered "
                             f"{r.reordered}, latency samples {r.latency_samples}")
        span = max(1, r.rx_last_ns - r.rx_first_ns)
        m = self.measurement(
            "ours", s, r.rx_packets, waited, own_pps=r.rx_packets / (span / 1e9),
            latency_samples=r.latency_samples, duplicates=r.duplicates,
            reordered=r.reordered,
            latency_median_us=r.latency.quantile_ns(0.5) / 1e3 if r.latency else 0.0,
            latency_mean_us=r.latency_sum_ns / max(1, r.latency_samples) / 1e3,
            latency_max_us=r.latency_max_ns / 1e3)
        m.capacity_pps = m.pps if m.receiver_bound else 0.0
        return m


def busy_note(seconds: float = 1.0) -> str:
    """How busy each CPU was over `seconds` before the run (other sessions share this
    VM: a noisy one slows either receiver down); empty when both were under 10 %."""
    def times() -> list[tuple[int, int]]:
        with open("/proc/stat", encoding="ascii") as f:
            rows = [ln.split() for ln in f if ln.startswith("cpu") and ln[3].isdigit()]
        return [(sum(map(int, r[1:9])), int(r[4]) + int(r[5])) for r in rows]

    before = times()
    time.sleep(seconds)
    busy = [100.0 * (1 - (i1 - i0) / max(1, t1 - t0))
            for (t0, i0), (t1, i1) in zip(before, times())]
    return ", ".join(f"CPU {c} {b:.0f} %" for c, b in enumerate(busy)) \
        if max(busy) >= 10.0 else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seconds", nargs="?", type=float, default=2.0,
                        help="the feeder's run a measurement (default: %(default)s)")
    parser.add_argument("rounds", nargs="?", type=int, default=5,
                        help="rounds of one measurement each (default: %(default)s)")
    parser.add_argument("--transport", choices=("vhost", "memif"), default="vhost",
                        help="default: %(default)s")
    parser.add_argument("--fields", type=int, default=0, choices=(0, 1, 2),
                        help="modified fields of the feeder's frames (default 0: the "
                        "cheapest feed, the fastest the feeder can push)")
    parser.add_argument("--feeder-queues", type=int, default=1,
                        help="queues of each port: the feeder's one worker sends on all, "
                        "each receiver polls all")
    args = parser.parse_args()
    tmp, cwd = tempfile.mkdtemp(prefix="netload-rxfair-"), os.getcwd()
    note = busy_note()
    rows, ratios, capacities, both_bound, retried = [], [], [], 0, 0
    a_all: list[Measurement] = []
    b_all: list[Measurement] = []
    bench = None
    began = time.monotonic()
    try:
        bench = Bench(tmp, args.transport, args.fields, args.feeder_queues)
        print(f"started in {time.monotonic() - began:.0f} s (waits for CPUs other sessions "
              "busy-poll)", flush=True)
        for r in range(args.rounds):
            got = {}
            for who in (("testpmd", "ours") if r % 2 == 0 else ("ours", "testpmd")):
                for _ in range(TRIES):
                    got[who] = m = getattr(bench, who)(args.seconds)
                    print(f"round {r + 1}: {who} {m.pps / 1e6:.2f} Mpps, {m.state}, "
                          f"{m.refusals:.2f} refused calls a burst, receiver CPU wait "
                          f"{m.receiver_wait_pct:.1f} %, feeder off-CPU "
                          f"{m.feeder_off_cpu_pct:.1f} %"
                          + (" (disturbed)" if m.disturbed else ""), flush=True)
                    if not m.disturbed:
                        break
                    retried += 1
            a, b = got["testpmd"], got["ours"]
            a_all.append(a)
            b_all.append(b)
            ratios.append(b.pps / a.pps)
            if a.capacity_pps > 0:  # ours at its limit: its rate; else a lower bound
                capacities.append((b.capacity_pps or b.pps) / a.capacity_pps)
            both_bound += a.receiver_bound and b.receiver_bound
            for m in (a, b):
                ours = m.receiver == "ours"
                rows.append((str(r + 1), m.receiver, f"{m.pps / 1e6:.2f}",
                             f"{m.own_pps / 1e6:.2f}", m.state, f"{m.refusals:.2f}",
                             "receiver" if m.receiver_bound else "feeder",
                             f"{m.feeder_off_cpu_pct:.1f}", f"{m.receiver_wait_pct:.2f}",
                             f"{m.latency_samples}/{m.rx_packets}" if ours else "-",
                             f"{m.duplicates}/{m.reordered}" if ours else "-",
                             f"{m.latency_median_us:.1f}/{m.latency_mean_us:.1f}/"
                             f"{m.latency_max_us:.0f}" if ours else "-"))
    finally:
        if bench is not None:
            bench.close()
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.transport}, {args.feeder_queues} queue(s), feeder frames with {args.fields} modified "
          f"field(s), {args.seconds:g} s a measurement; feeder on CPU {FEEDER_CPU}, receivers "
          f"on CPU {RECEIVER_CPU}. Mpps: frames sent (all received) / the feeder's send span")
    print_table(rows, ("round", "receiver", "Mpps", "own Mpps", "receiver's ring",
                       "refused/burst", "limit",
                       "feeder off-CPU %", "rx CPU wait %", "latency samples/rx",
                       "dup/reord", "lat p50/mean/max us"))
    print("per-round ratios of the rates taken (ours / testpmd):",
          " ".join(f"{x:.3f}" for x in ratios))
    print("per-round capacity ratios (ours at its limit / testpmd's clock over its busy "
          "cycles a packet):", " ".join(f"{x:.3f}" for x in capacities) or "none")
    a_bound = sum(m.receiver_bound for m in a_all)
    b_bound = sum(m.receiver_bound for m in b_all)
    if not a_bound and not b_bound:
        print("the FEEDER was the limit in every measurement: the ratio compares feeds, "
              "not receivers (ours kept up wherever testpmd did)")
    else:
        print(f"the receiver was the limit in {a_bound} of testpmd's and {b_bound} of our "
              f"{len(ratios)} measurements, both in {both_bound} rounds"
              + ("; where only ours was, the ratio is an upper bound of ours / testpmd's "
                 "capacity" if b_bound > both_bound else ""))
    if retried:
        print(f"{retried} disturbed measurement(s) taken again (another task had the "
              "receiver's or the feeder's CPU)")
    if note:
        print(f"note: busy in the second before it began: {note}")
    if b_bound < len(b_all):
        print("where ours was not the limit, its capacity is at least its rate: that "
              "round's capacity ratio is a lower bound")
    a_mpps = statistics.median(m.pps for m in a_all) / 1e6
    b_mpps = statistics.median(m.pps for m in b_all) / 1e6
    a_cap = statistics.median(m.capacity_pps for m in a_all) / 1e6
    lat = statistics.median(m.latency_median_us for m in b_all)
    capacity = statistics.median(capacities) if capacities else float("nan")
    print(f"rx_fair: {statistics.median(ratios):.3f} capacity_ratio_estimate: {capacity:.3f} "
          f"testpmd_capacity_mpps: {a_cap:.2f} testpmd_mpps: {a_mpps:.2f} "
          f"ours_mpps: {b_mpps:.2f} ours_bound_rounds: {b_bound / len(ratios):.2f} "
          f"ours_latency_p50_us: {lat:.1f}")


if __name__ == "__main__":
    main()
