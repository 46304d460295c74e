"""Whether the generator did its part in a trial: the rules that make a trial invalid.

Pure: the rules read a finished run's counters (`results.RunResult` and its
`StreamResult`s, or anything with the same attributes) and return why the
generator, not the DUT, failed the trial, or None. An invalid trial is
retried and never counted as the DUT's loss (docs/rfc2544.md, "Trials and
their validity").

The rules, in the order they are checked:
1. the trial scheduled fewer than one frame;
2. the generator's own link was down when the trial started, or went down
   during it ("link down on p1 at t=1.23s": a lost link explains every other
   symptom, a TX shortfall or a loss, so it is named first);
3. the generator sent no frame, or TX fell more than `tx_tolerance` (1 %)
   short of the schedule;
4. the generator lagged behind its schedule by more than `lag_bound_ns`;
   where the DUT declares what it takes of a burst before it drops (a
   `BurstLimit`: a policer's committed burst, CBS, or a shaper's queue), a
   failed trial whose catch-up burst beyond half of that may have cost all the
   frames it lost beyond the verdict's tolerance (`late_burst_reason`; all of a
   trial's streams through the DUT's one policer or shaper together:
   `shared_late_reason`);
5. its own RX ports dropped frames; foreign frames flooded them; the run was
   interrupted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..measure.causes import lag_cause, shortfall_cause
from ..units import MIN_TRIAL_S, run_seconds

TX_TOLERANCE = 0.01        # a trial whose TX fell more than 1 % short is the generator's failure
FOREIGN_FLOOD_RATIO = 0.1  # foreign frames beyond 10 % of those sent make a trial invalid
#: Frames that leave together at any rate: one TX burst. A lag shorter than the time these
#: take at the trial's load is what burst pacing always does.
LAG_SLACK_FRAMES = 32
#: The share of a trial's frames a lag may displace in any case: the same 1 % the TX
#: shortfall rule grants (a trial 1 % short is valid, so is one whose 1 % left late).
LAG_SHARE = TX_TOLERANCE


def trial_seconds(value: Any, *, what: str) -> float:
    """A trial's duration in seconds: as `units.run_seconds` (finite, at most 24 h), and at
    least MIN_TRIAL_S. The error names `what` and the value as given."""
    seconds = run_seconds(value, what=what)
    if seconds < MIN_TRIAL_S:
        raise NetloadConfigError(
            f"{what} {value!r} is {fmt.time_s_exact(seconds)}, shorter than a trial may be "
            f"({fmt.time_s_exact(MIN_TRIAL_S)}: a shorter one sends too few frames to judge); "
            "give e.g. '1s' (RFC 2544 asks for 60 s)")
    return seconds


def lag_bound_ns(offered_pps: float, duration_s: float, *, tx_packets: int = 0, lost: int = 0,
                 loss_tolerance: float = 0.0) -> float:
    """The longest lag behind its schedule the generator may have in a valid trial.

    A lag of L at a load of R means the L x R frames due in that window left late,
    bunched into catch-up bursts: the DUT saw a pause of L, then more than R. Whether
    that changed the verdict depends on the DUT's buffer, which the generator does not
    know. What it does know is how many frames moved, D = L x R, and how far the
    measured loss is from the verdict's threshold, |lost - tolerance x tx_packets|:
    frames that moved can have caused (a burst overflowing a buffer) or hidden (a
    pause draining a queue) at most D lost frames, so a lag can flip the verdict only
    when D exceeds that margin. The bound is therefore the largest of:
    - one TX burst's time, LAG_SLACK_FRAMES / R (frames of a burst leave together at
      any rate; this is pacing, not lag);
    - LAG_SHARE (1 %) of the duration (the slack the TX shortfall rule grants);
    - the verdict's margin in time, |lost - tolerance x tx_packets| / R.
    A trial that lost nothing at tolerance 0 thus tolerates 1 % of its duration (or
    one burst): a 1.5 s stall in a 10 s trial is invalid, an 8 ms one in a 1 s trial is
    not. A trial that lost half its frames tolerates any lag: no lag turns it into a pass.
    """
    if not offered_pps > 0:
        return float("inf")
    margin = abs(lost - loss_tolerance * tx_packets)
    return max(LAG_SLACK_FRAMES / offered_pps, LAG_SHARE * duration_s,
               margin / offered_pps) * 1e9


def timed_lag_bound_ns(offered_pps: float, figure_ns: float) -> float:
    """The longest lag a trial that measures a time may have: RFC 2544's reset time
    (the longest silence at the receiver, §26.6) and system recovery time (§26.5).

    Their loss is no verdict with a margin: frames are lost on purpose, so the loss rule
    of `lag_bound_ns` would tolerate any lag. A lag L instead moves the figure itself
    by up to L (a paused generator is a silence at the receiver, and shifts when the
    last loss happened). So the bound is the larger of one TX burst's time (pacing, not
    lag) and LAG_SHARE (1 %) of the figure measured: a 300 ms reset tolerates 3 ms."""
    if not offered_pps > 0:
        return float("inf")
    return max(LAG_SLACK_FRAMES / offered_pps * 1e9, LAG_SHARE * max(figure_ns, 0.0))


#: What a `BurstLimit` can be, and the part of it that takes a burst.
BURST_LIMIT_KINDS = {"policer": "CBS", "shaper": "queue"}


@dataclass(frozen=True)
class BurstLimit:
    """What a DUT takes of a burst before it drops: a policer's committed burst (CBS), or
    a shaper's queue, with the rate that refills or drains it.

    A punctual sender at up to `rate_bps` never overflows it; the generator's catch-up
    burst after a lag may, and then the DUT drops frames a punctual sender gets through
    (`late_burst_reason`). The DUT's own comes from what its topology declares
    (`declared`)."""

    rate_bps: float
    """The policer's CIR or the shaper's rate, in bit/s."""
    size_bytes: int
    """The policer's CBS or the shaper's queue limit, in bytes."""
    kind: str = "policer"
    """"policer" or "shaper"."""

    def __post_init__(self) -> None:
        if self.kind not in BURST_LIMIT_KINDS:
            raise NetloadConfigError(f"a burst limit of kind {self.kind!r}: use one of "
                                     f"{', '.join(map(repr, BURST_LIMIT_KINDS))}")
        if not (math.isfinite(self.rate_bps) and self.rate_bps > 0):
            raise NetloadConfigError(f"a {self.kind}'s rate of {self.rate_bps!r} bit/s: give "
                                     "a rate above zero")
        if isinstance(self.size_bytes, bool) or not isinstance(self.size_bytes, int) or \
                self.size_bytes <= 0:
            raise NetloadConfigError(f"a {self.kind}'s {self.part} of {self.size_bytes!r} "
                                     "bytes: give a positive whole number of bytes")

    @property
    def part(self) -> str:
        """What takes the burst, in words: "CBS" (a policer's) or "queue" (a shaper's)."""
        return BURST_LIMIT_KINDS[self.kind]

    @classmethod
    def declared(cls, caps: Any) -> BurstLimit | None:
        """The DUT's own, from its declared capabilities (topology.capabilities.Capabilities:
        a built-in DUT's info or a topology file's [capabilities]): its policer where CIR
        and CBS are declared, else its shaper where rate and queue are; None when neither
        is known whole."""
        if caps.policer_bps and caps.policer_cbs_bytes:
            return cls(caps.policer_bps, caps.policer_cbs_bytes, "policer")
        if caps.shaper_bps and caps.shaper_queue_bytes:
            return cls(caps.shaper_bps, caps.shaper_queue_bytes, "shaper")
        return None


def late_burst_reason(s: Any, rate_bps: float, limit: BurstLimit | None, *,
                      whose: str | None = None, frame_bytes: float | None = None,
                      excess_lost: float | None = None) -> str | None:
    """Why a trial is spoiled for a policer or a shaper by the generator's lag; None when
    it is not.

    After a lag L the pacer sends the late frames back to back. A policer at its CIR
    with a full bucket of CBS bytes takes such a burst only when it is smaller than the
    bucket; a shaper queues it, and drops what outgrows its queue. Beyond half of
    `limit`'s size (a bucket is not always full, a queue not always empty: another lag
    may have drawn on it), the L x `rate_bps` / 8 bytes of the burst (`rate_bps`: what
    the DUT is fed, counted at most at the limit's rate) drop frames that a punctual
    sender would have had through. Measured (the stream's worst TX lag,
    `s.tx_max_lag_ns`), never assumed; `whose` names the policer or shaper (default:
    the DUT's).

    Without `excess_lost` (Y.1564's samples) any such burst spoils the trial. With it
    (frames lost beyond the verdict's tolerance, a trial that failed), only a burst
    that may have cost at least that many frames of `frame_bytes` does: far above its
    rate a policer or a shaper drops so many that a lag's few more change nothing."""
    if limit is None or not rate_bps > 0:
        return None
    burst = s.tx_max_lag_ns / 1e9 * min(rate_bps, limit.rate_bps) / 8
    spilled = burst - limit.size_bytes / 2
    if spilled <= 0:
        return None
    cost = ""
    if excess_lost is not None and frame_bytes:
        frames = spilled / frame_bytes
        if frames < excess_lost:
            return None
        cost = (f" (up to {fmt.count(round(frames))} frames, and the trial lost "
                f"{fmt.count(round(excess_lost))} more than its verdict allows)")
    whose = whose or f"the DUT's {limit.kind}"
    return (f"the generator ran {fmt.time_ns(s.tx_max_lag_ns)} late (its worst TX lag): "
            f"its catch-up burst of {fmt.count(round(burst))} bytes is more than half the "
            f"{limit.part} of {whose} ({fmt.count(limit.size_bytes)} bytes), so the "
            f"{limit.kind} drops frames a punctual sender gets through{cost}; {lag_cause(s)}")


def shared_late_reason(parts: Sequence[tuple[Any, float, float, int]],
                       limit: BurstLimit | None, excess_lost: float) -> str | None:
    """Why the frames that the DUT's policer or shaper (`limit`) shared by several streams
    dropped, `excess_lost` of them beyond the verdict's tolerance, may all have been the
    generator's; None when they cannot (or `limit` is None: not known). `parts`: each
    stream through it as (its TX counters, the L2 bit/s it was offered, its frame's
    bytes as the DUT counts them, its frames lost).

    The streams of one worker lag together, so the catch-up burst is the worst lag of
    any of them times the rate they feed the DUT together (at most the limit's rate):
    the rule of `late_burst_reason` on that stream, its cost weighed in the bytes of the
    frames lost (a policer drops bytes, a shaper's queue holds bytes: of small and large
    frames alike by arrival)."""
    lost = sum(p[3] for p in parts)
    if limit is None or not parts or not excess_lost > 0 or not lost > 0:
        return None
    rate = sum(p[1] for p in parts)
    if not rate > 0:
        return None
    worst = max(parts, key=lambda p: p[0].tx_max_lag_ns)
    why = late_burst_reason(worst[0], rate, limit,
                            frame_bytes=sum(p[2] * p[3] for p in parts) / lost,
                            excess_lost=excess_lost)
    name = getattr(worst[0], "name", None)
    return why if why is None or len(parts) == 1 or not name else f"stream {name!r}: {why}"


def link_down_reason(events: Sequence[Mapping[str, Any]]) -> str | None:
    """The reason "link down on p1 at t=1.23s (up again by t=1.64s)" for the first port
    whose link went down in a run's link events (`RunResult.link_events`, sampled at
    every ~100 ms poll: the drop happened within the sample interval before `t_s`); None
    when no link went down."""
    for i, e in enumerate(events):
        if e.get("event") != "link_down":
            continue
        port = e.get("port") or e.get("device") or "?"
        if e.get("at_start"):
            return f"link down on {port} when the trial started ({e.get('operstate') or 'down'})"
        up = next((u for u in events[i + 1:] if u.get("event") == "link_up"
                   and u.get("port") == e.get("port")), None)
        at = f"link down on {port} at t={fmt.time_s(e['t_s'])}"
        if up is None:
            return f"{at} (still down when the trial ended)"
        if up["t_s"] == e["t_s"]:
            return f"{at} (a flap: down and up again since t={fmt.time_s(e['since_s'])})"
        return f"{at} (up again by t={fmt.time_s(up['t_s'])})"
    return None


def link_reason(ports: Mapping[str, Mapping[str, int]],
                events: Sequence[Mapping[str, Any]] = ()) -> str | None:
    """Why the generator's own links fail a trial. First its link events (when and on
    which port, `link_down_reason`); else the counters read around the run (a drop no
    sample placed, or a host that sends no events): a port whose link was down before
    or after it (`link_up_before` / `link_up_after`), or whose kernel interface lost its
    carrier during it (`iface_carrier_down`, the delta of /sys/class/net/IFACE/carrier_down_count);
    None when every link held."""
    reason = link_down_reason(events)
    if reason is not None:
        return reason
    for device, c in ports.items():
        if c.get("link_up_before", 1) == 0:
            return f"the generator's port {device!r} had its link down when the trial started"
        if c.get("link_up_after", 1) == 0:
            return f"the generator's port {device!r} had its link down when the trial ended"
        if c.get("iface_carrier_down", 0) > 0:
            return (f"the generator's port {device!r} lost its link during the trial "
                    f"({c['iface_carrier_down']} carrier loss(es) on its interface)")
    return None


def generator_failure(run: Any, s: Any, scheduled: float, offered_pps: float,
                      duration_s: float, *, loss_tolerance: float = 0.0,
                      tx_tolerance: float = TX_TOLERANCE,
                      timed_figure_ns: float | None = None) -> str | None:
    """Why the generator, not the DUT, failed the run `run` of stream `s`, which was to
    send `scheduled` frames at `offered_pps` over `duration_s`; None when it did its part.
    `loss_tolerance` is the verdict's (it sets how much lag the verdict tolerates). A
    trial that measures a time gives it as `timed_figure_ns`: its lag is then judged
    against that time (`timed_lag_bound_ns`), not against the loss verdict."""
    if scheduled < 1:
        return (f"a {fmt.time_s_exact(duration_s)} trial at {fmt.rate_pps_exact(offered_pps)} "
                f"schedules {fmt.count(scheduled)} frames, fewer than one: give a longer "
                "trial_duration")
    link = link_reason(getattr(run, "ports", {}) or {}, getattr(run, "link_events", ()) or ())
    if link is not None:
        return link
    if s.tx_packets == 0:
        return (f"the generator sent no frame of the {fmt.count(round(scheduled))} scheduled: "
                + shortfall_cause(s, offered_pps, duration_s))
    if s.tx_packets < scheduled * (1 - tx_tolerance) - 1:
        return (f"the generator sent {fmt.count(s.tx_packets)} of {fmt.count(round(scheduled))} "
                f"scheduled frames ({fmt.rate_pps_exact(s.tx_pps)} of "
                f"{fmt.rate_pps_exact(offered_pps)} offered): "
                + shortfall_cause(s, offered_pps, duration_s))
    lost = max(s.tx_packets - (s.rx_packets - s.duplicates), 0)
    if timed_figure_ns is None:
        bound = lag_bound_ns(offered_pps, duration_s, tx_packets=s.tx_packets, lost=lost,
                             loss_tolerance=loss_tolerance)
        rule = (f"1% of its {fmt.time_s_exact(duration_s)}, one burst, or its margin to the "
                "loss verdict")
    else:
        bound = timed_lag_bound_ns(offered_pps, timed_figure_ns)
        rule = (f"1% of the {fmt.time_ns(timed_figure_ns)} it measured, or one burst: "
                "a lag moves that time by as much")
    if s.tx_max_lag_ns > bound:
        return (f"the generator lagged {fmt.time_ns(s.tx_max_lag_ns)} behind its schedule "
                f"({fmt.count(round(s.tx_max_lag_ns * offered_pps / 1e9))} frames left late; "
                f"{fmt.count(s.tx_lagged_bursts)} bursts more than 1us late), more than the "
                f"{fmt.time_ns(bound)} this trial tolerates ({rule}): {lag_cause(s)}")
    # Drops that cost the stream nothing did not touch the measurement: a kernel counts
    # frames no protocol of its own takes (QinQ with no 802.1ad module) as rx_dropped,
    # even after the engine's AF_PACKET socket received them.
    if run.generator_drops and lost > 0:
        return (f"the generator's own RX ports dropped {fmt.count(run.generator_drops)} frames "
                f"and {fmt.count(lost)} of the stream's were lost (imissed / rx_nombuf / "
                "kernel drops)")
    if run.foreign > max(1000, FOREIGN_FLOOD_RATIO * s.tx_packets):
        return f"{fmt.count(run.foreign)} foreign frames flooded the RX ports"
    if run.interrupted:
        return "interrupted"
    return None


def dut_saw_generator_drops(attribution: Any) -> str | None:
    """Why a trial whose DUT reports frames it could not hand to a generator port is the
    generator's failure; None when it reports none. Over vhost-user or memif the DUT's TX
    ring is the generator port's RX ring: a DUT counter of kind "generator_drop" that
    grew (dpdk-testpmd's TX drops towards p1) means the generator did not take frames
    as fast as the DUT forwarded them, so the loss says nothing of the DUT."""
    if attribution is None or not attribution.lost:
        return None
    rows = [c for c in attribution.counters if c.kind == "generator_drop" and c.value > 0]
    if not rows:
        return None
    dropped = sum(c.value for c in rows)
    where = "; ".join(c.where or c.name for c in rows)
    return (f"the DUT could not hand {fmt.count(dropped)} frames to the generator's ports "
            f"({where}): the generator's receive path, not the DUT, was the limit")

