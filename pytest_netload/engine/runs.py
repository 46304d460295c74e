"""One run on the client's side: a `protocol.RunSpec` checked against the engine's
handles, spread over the TX queues its streams were loaded on, started as a
`protocol.RunStart`, polled (`RunStatus`) in slices of `POLL_SLICE_MS` until done
(Ctrl-C, SIGTERM or the progress callback's error stop it and keep what it measured),
and its `RunResults` (arrays and port counters) made into a `RunResult`. `Engine.run`
calls `execute`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import errors
from ..measure.frames import frame_checks
from ..measure.results import RunResult, build_run_result, merge_queue_results
from .handles import LoadedStream, Tx, hardware_clock, link_events
from .intervals import Interval, Intervals
from .protocol import RunResults, RunSpec, RunStatus
from .wire import unpack_array

if TYPE_CHECKING:
    from .client import Engine

__all__ = ["POLL_SLICE_MS", "execute"]

POLL_SLICE_MS = 100  # a poll waits at most this long: Ctrl-C and stops work between polls


def execute(engine: Engine, spec: RunSpec,
            progress: Callable[[dict[str, Any]], None] | None,
            on_interval: Callable[[Interval], None] | None = None) -> RunResult:
    """Run `spec` on `engine` (`Engine.run`'s body); with ``spec.interval_s``,
    `on_interval` gets each interval as its snapshot arrives (intervals.py)."""
    entries = [e if isinstance(e, Tx) else Tx(e, spec.count) if isinstance(e, LoadedStream)
               else Tx(*e) for e in spec.tx]
    expected = list(spec.expect)
    for stream in expected:
        engine._check_generation(stream.generation, f"stream {stream.name!r}")
    for entry in entries:
        stream, n = entry.stream, entry.count
        engine._check_generation(stream.generation, f"stream {stream.name!r}")
        bounded = bool(entry.phases) and entry.spec()["phases"][-1]["duration_ns"] > 0
        if n == 0 and spec.duration_s == 0 and not bounded:
            raise errors.NetloadConfigError(
                f"stream {stream.name!r} has no packet count and the run no duration; "
                "give count=N or duration_s=T"
            )
    rx_ports = list(spec.rx)
    for p in rx_ports:
        engine._check_generation(p.generation, f"port {p.device!r}")
    # a stream loaded over several TX queues runs as one native entry a queue
    per_entry = [e.per_queue() for e in entries]
    native = [part for parts in per_entry for part in parts]
    native_expected = [part for s in expected for part in s.queue_streams]
    streams = [e.stream for e in native] + native_expected
    hw = [hardware_clock(s, rx_ports) for s in streams]
    owners = [e.stream.name for e, parts in zip(entries, per_entry) for _ in parts] + \
        [s.name for s in expected for _ in s.queue_streams]
    start = spec.start(native, native_expected, rx_ports, hw, engine.capture_default, owners)
    decoder = Intervals([len(parts) for parts in per_entry] + [s.queues for s in expected])
    run_id = engine._call("run_start", **start.encode())
    stopped_by: BaseException | None = None
    started_at = time.time()
    in_callback = False
    try:
        while True:
            status = RunStatus.decode(engine._call("run_poll", run_id=run_id,
                                                   wait_ms=POLL_SLICE_MS))
            in_callback = True
            for payload in status.intervals:
                interval = decoder.add(payload)
                if on_interval is not None:
                    on_interval(interval)
            if progress is not None:
                progress({k: v for k, v in status.as_dict().items() if k != "intervals"})
            in_callback = False
            if status.state == "done":
                break
    except BaseException as exc:
        # Ctrl-C, SIGTERM (cleanup.Terminated) or the progress callback's own error:
        # stop the run, keep what it measured (last_result), then raise it again.
        # Anything else came from the host itself (a crash): nothing to stop.
        if not (isinstance(exc, KeyboardInterrupt) or in_callback):
            raise
        stopped_by = exc
        engine._call("run_stop", run_id=run_id)
        while RunStatus.decode(engine._call("run_poll", run_id=run_id,
                                            wait_ms=POLL_SLICE_MS)).state != "done":
            pass
    interrupted = stopped_by is not None
    raw = RunResults.decode(engine._call("run_results", run_id=run_id))
    hello = engine._hello()
    run_ports = {p.port_id: p for p in [s.port for s in streams] + rx_ports}
    by_id = {i: p.device for i, p in run_ports.items()}
    result = build_run_result(
        [s.name for s in streams],
        [s.stream_id for s in streams],
        {k: unpack_array(v) for k, v in raw.arrays.items()},
        {by_id.get(int(k), str(k)): v for k, v in raw.ports.items()},
        interrupted,
        hist_lower_ns=list(hello.hist_lower_ns),
        expected_only=len(native_expected),
        tsc_hz=hello.tsc_hz,
        started_at=started_at + spec.start_delay_s,
        clocks=[("nic-hardware", 1e9 / min(p.info["nic_clock_hz"] for p in [s.port, *rx_ports]))
                if h else None for s, h in zip(streams, hw)],
        link_events=link_events(raw.link_events, run_ports),
    )
    if spec.expect_frames:
        sizes = [len(parts) for parts in per_entry] + [s.queues for s in expected]
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        names = [e.stream.name for e in entries] + [s.name for s in expected]
        result = replace(result, frames=frame_checks(
            result.arrays, names, [range(a, a + n) for a, n in zip(starts, sizes)],
            spec.expect_frames))
    if len(native) + len(native_expected) > len(entries) + len(expected):
        result = merge_queue_results(
            result, [len(parts) for parts in per_entry] + [s.queues for s in expected])
    engine.last_result = result
    for observer in list(engine.observers):
        observer(result)
    if stopped_by is not None:
        raise stopped_by
    return result
