"""Why a stream sent less than it was offered, or lagged its schedule, told from what
the engine measured of its worker and port (StreamResult's TX counters): the text that
validity rules and the rate controller put in their reasons, never a guess."""

from __future__ import annotations

from .. import format as fmt
from .results import StreamResult

__all__ = ["lag_cause", "shortfall_cause"]


def _refusals(s: StreamResult) -> str:
    return (f"the port took only part of {fmt.count(s.tx_refused_bursts)} TX calls (its TX "
            "ring was full: the device below it, or what that feeds, took frames slower "
            "than they were offered)")


def lag_cause(s: StreamResult) -> str:
    """What the engine measured of the worker that sent `s`: the time it waited for its
    CPU while another task ran there (the proof for blaming the machine) and how much of
    the worst lag that covers; TX calls the port took only part of (back-pressure from
    the device); sleeps inside calls. With none of these the lag is the generator's own."""
    causes = []
    wait, lag = s.tx_wait_cpu_ns, s.tx_max_lag_ns
    if s.tx_preemptions and wait:
        text = (f"its worker waited {fmt.time_ns(wait)} for its CPU in "
                f"{fmt.count(s.tx_preemptions)} preemptions (another task took the core")
        if wait >= lag:
            text += "): run it on a quieter CPU"
        else:  # a worker that waited 0.1 s cannot have lagged 0.4 s by waiting
            text += f"), which covers {fmt.share(wait / lag)} of the worst lag"
        causes.append(text)
    if s.tx_refused_bursts:
        causes.append(_refusals(s))
    blocked = s.tx_off_cpu_ns - wait
    if s.tx_sleeps and blocked > 0:
        causes.append(f"its worker slept {fmt.time_ns(blocked)} in {fmt.count(s.tx_sleeps)} "
                      "blocking calls (the port's driver waits inside its calls)")
    if not causes:
        return ("its worker kept its CPU (no wait for it measured), so the generator itself "
                "is too slow for this rate: lower the rate or add TX cores")
    if wait < lag and not s.tx_refused_bursts and not s.tx_sleeps:
        causes.append("the rest it spent on its CPU, in its own work: on a kernel port (veth, "
                      "AF_PACKET) the kernel's processing of each frame runs inside the TX "
                      "call, a DUT's on this kernel (a netns DUT) included")
    return "; ".join(causes)


def shortfall_cause(s: StreamResult, offered_pps: float, duration_s: float) -> str:
    """Why stream `s` sent fewer frames than `offered_pps` for `duration_s` would have,
    told from what the engine measured, never guessed: a stop, an early end, the
    generator's own measured lag, frames the port refused, an empty pool; otherwise it
    says that no cause was measured."""
    missing = offered_pps * duration_s - s.tx_packets
    end_s = s.tx_end_ns / 1e9
    if s.tx_end_reason == "stopped":
        return (f"the run was stopped (Ctrl-C or a stop call) at {fmt.time_s(end_s)} of the "
                f"{fmt.time_s_exact(duration_s)} scheduled")
    if s.tx_end_reason in ("duration", "phases") and duration_s and \
            end_s < duration_s * 0.99 - 0.01:
        return (f"TX ended at {fmt.time_s(end_s)} of the {fmt.time_s_exact(duration_s)} "
                f"scheduled, on the schedule's end ({s.tx_end_reason}): the engine's schedule "
                "itself was short, a bug in pytest-netload to report")
    causes = []
    lag_frames = s.tx_max_lag_ns * offered_pps / 1e9
    if s.tx_lagged_bursts and lag_frames >= 0.5 * missing:
        causes.append(
            f"the generator fell behind its schedule (measured: worst lag "
            f"{fmt.time_ns(s.tx_max_lag_ns)}, {fmt.count(s.tx_lagged_bursts)} bursts more "
            f"than 1us late): {lag_cause(s)}")
    if s.tx_refused_bursts and not causes:  # no lag is measured while frames wait
        causes.append(_refusals(s))
    if s.tx_unsent:
        causes.append(f"the port refused {fmt.count(s.tx_unsent)} frames until the run ended "
                      "(its TX ring stayed full: the link or the device below it is slower)")
    if s.tx_alloc_failures:
        causes.append(f"the stream's mbuf pool ran empty {fmt.count(s.tx_alloc_failures)} times "
                      "(frames not yet freed by the port)")
    if causes:
        return "; ".join(causes)
    return (f"no cause was measured: the generator's worst lag was "
            f"{fmt.time_ns(s.tx_max_lag_ns)} ({fmt.count(lag_frames)} frames' worth), the port "
            "refused nothing and the pool never ran empty")
