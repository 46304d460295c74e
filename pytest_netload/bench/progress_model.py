"""The progress model: progress events (bench/progress.py) in, `Status` snapshots out.

Pure: time comes from the clock it is given, so elapsed time, ETA and the cadence of
lines are tested with a simulated clock. `Tracker` follows the running procedure:

- a search (RFC 2544 throughput, RFC 2889 forwarding): trial n of at most N, the
  bracket [lo, hi] its trials made (the highest load that passed, the lowest that
  failed) and its width against the resolution; the ETA is the trials the bracket
  still needs to reach the resolution (at most N - n) times the trial duration plus
  the overhead measured between trials (drain, DUT hooks, learning);
- counted procedures (latency's 20 trials, Y.1564's steps): k of n, exactly;
- Y.1564's performance test: interval k of n and each service's availability so far;
- long engine runs (traffic, soak): frames sent and not (yet) received, from the
  engine's poll, with the run's own end as the ETA.

`status_line` words a Status; `Cadence` says which Statuses a display shows: every one
on a live terminal line (polls at most every second), one line per trial and every
30 s otherwise (CI logs), none when off (``-q``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from .. import format as fmt
from ..search.resolution import Resolution

__all__ = ["LINE_EVERY_S", "LIVE_TICK_S", "Cadence", "Status", "Tracker", "remaining_trials",
           "status_line"]

LINE_EVERY_S = 30.0  # off a terminal: a line at least this far apart between trials
LIVE_TICK_S = 1.0    # on a terminal: the engine's polls redraw the line at most this often


@dataclass(frozen=True)
class Status:
    """What a display shows at one moment (JSON-able: xdist sends it as a dict)."""

    kind: str
    """"start", "trial_start", "trial", "interval", "tick", "note" or "end"."""
    test: str = ""
    procedure: str = ""
    frame_size: Any = None
    what: str = "trial"
    n: int = 0
    """Trials (steps, intervals) done."""
    total: int | None = None
    exact: bool = False
    lo: float | None = None
    hi: float | None = None
    resolution: dict[str, float | None] | None = None
    offered_pps: float | None = None
    offered_bps: float | None = None
    loss_ratio: float | None = None
    valid: bool | None = None
    passed: bool | None = None
    name: str | None = None
    note: str | None = None
    elapsed_s: float = 0.0
    eta_s: float | None = None
    tx_frames: int | None = None
    unreceived: int | None = None
    availability: dict[str, float | None] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Status:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def remaining_trials(lo: float, hi: float | None, resolution: Resolution | None, n: int,
                     total: int) -> int:
    """Trials a bisection still runs after `n` of at most `total`: the halvings of
    [lo, hi] down to the resolution (a relative one taken at lo, or at hi / 2 while
    nothing passed), never more than the budget left. Without a failure yet
    (hi None) the whole budget left, at most what the resolution needs from the top."""
    left = max(total - n, 0)
    if resolution is None or left == 0:
        return left
    if hi is None:
        return left if n else min(left, resolution.trials_needed())
    width = hi - lo
    lower = lo if lo > 0 else hi / 2
    goal = max(resolution.pps or 0.0, (resolution.ratio or 0.0) * lower)
    if width <= 0 or resolution.reached(lo, hi) or goal <= 0:
        return 0 if width <= 0 or resolution.reached(lo, hi) else left
    return min(left, max(0, math.ceil(math.log2(width / goal))))


@dataclass
class _Procedure:
    test: str
    procedure: str
    frame_size: Any
    what: str
    total: int | None
    exact: bool
    trial_s: float | None
    resolution: dict[str, float | None] | None
    max_pps: float | None
    budget_s: float | None
    t0: float
    last_end: float
    done: int = 0
    n: int = 0
    lo: float = 0.0
    hi: float | None = None
    gaps: list[float] = field(default_factory=list)
    """Seconds from one trial's end to the next's: a trial and its overhead."""
    eta_s: float | None = None
    eta_at: float = 0.0
    last: Status | None = None


class Tracker:
    """Follows one test's procedures through their events; `feed` gives the Statuses
    an event makes (a new procedure ends the one before: its "end" first)."""

    def __init__(self, clock: Callable[[], float], test: str = "") -> None:
        self.clock = clock
        self.test = test
        self.current: _Procedure | None = None
        self.context: dict[str, Any] = {"test": test, "procedure": "", "frame_size": None}

    def feed(self, event: Mapping[str, Any]) -> list[Status]:
        kind = event.get("event")
        now = self.clock()
        if kind == "start":
            out = self.finish()
            self._start(event, now)
            return out + [self._status("start", now)]
        if kind == "trial_start":
            p = self.current
            if p is None or p.what == "interval":
                return []
            return [replace(self._status("trial_start", now), n=p.n + 1,
                            offered_pps=event.get("offered_pps"),
                            offered_bps=event.get("offered_bps"))]
        if kind == "trial":
            return [self._trial(event, now)]
        if kind == "interval":
            return [self._interval(event, now)]
        if kind == "run":
            return [self._tick(event, now)]
        out = []
        if self.current is not None and event.get("procedure") not in (
                None, "", self.current.procedure):
            out = self.finish()  # another procedure (a traffic run) took over
        return out + [self._note(event, now)]

    def finish(self) -> list[Status]:
        """The running procedure's "end" (none running: nothing)."""
        if self.current is None:
            return []
        now = self.clock()
        status = replace(self._status("end", now), eta_s=0.0)
        self.current = None
        return [status]

    # ---- the events ----------------------------------------------------------------

    def _start(self, e: Mapping[str, Any], now: float) -> None:
        self.context = {"test": self.test or e.get("test") or "",
                        "procedure": e.get("procedure", ""),
                        "frame_size": e.get("frame_size")}
        done = int(e.get("done") or 0)
        p = _Procedure(self.context["test"], self.context["procedure"],
                       self.context["frame_size"], str(e.get("what") or "trial"),
                       e.get("total"), bool(e.get("exact")), e.get("trial_s"),
                       e.get("resolution"), e.get("max_pps"), e.get("budget_s"), now, now,
                       done=done, n=done)
        self.current = p
        self._eta(p, now)

    def _trial(self, e: Mapping[str, Any], now: float) -> Status:
        p = self.current
        if p is None:  # a procedure that said nothing first: counted from here
            self._start({**self.context, **{k: e[k] for k in ("test", "procedure", "frame_size")
                                             if e.get(k) is not None}}, now)
            p = self.current
            assert p is not None
        p.n = int(e["trial"]) if e.get("trial") is not None else p.n + 1
        p.gaps.append(now - p.last_end)
        p.last_end = now
        offered = e.get("offered_pps")
        passed = e.get("passed")
        if offered is not None and e.get("valid", True) and passed is not None:
            if passed:
                p.lo = max(p.lo, float(offered))
            else:
                p.hi = float(offered) if p.hi is None else min(p.hi, float(offered))
        if p.resolution is not None and p.max_pps and passed and p.n == 1 \
                and offered is not None and float(offered) >= p.max_pps:
            p.total = p.n  # the maximum passed: the search ends here
        self._eta(p, now)
        return replace(self._status("trial", now), offered_pps=offered,
                       offered_bps=e.get("offered_bps"), loss_ratio=e.get("loss_ratio"),
                       valid=e.get("valid"), passed=passed, name=e.get("name"),
                       note=e.get("note"))

    def _interval(self, e: Mapping[str, Any], now: float) -> Status:
        p = self.current
        if p is None:
            self._start({**self.context, "what": "interval", "total": e.get("total"),
                         "exact": True}, now)
            p = self.current
            assert p is not None
        n = int(e.get("interval", p.n + 1))
        if p.n == p.done and n - 1 > p.done:  # a resumed run: its checkpoint's intervals
            p.done = p.n = n - 1
        p.n = n
        p.last_end = now
        measured = p.n - p.done
        per = (now - p.t0) / measured if measured > 0 else None
        p.eta_s = None if per is None or p.total is None else max(p.total - p.n, 0) * per
        p.eta_at = now
        return replace(self._status("interval", now), loss_ratio=e.get("loss_ratio"),
                       availability=dict(e.get("availability") or {}))

    def _tick(self, e: Mapping[str, Any], now: float) -> Status:
        tx, rx = int(e.get("tx_packets") or 0), int(e.get("rx_packets") or 0)
        p = self.current
        if p is None:  # a run of its own (traffic, soak): the run's end is the ETA
            end, elapsed = e.get("end_s"), float(e.get("elapsed_s") or 0.0)
            return Status("tick", self.context["test"], self.context["procedure"],
                          self.context["frame_size"], what="run", elapsed_s=elapsed,
                          eta_s=max(end - elapsed, 0.0) if end else None,
                          tx_frames=tx, unreceived=max(tx - rx, 0), note=e.get("state"))
        return replace(self._status("tick", now), tx_frames=tx, unreceived=max(tx - rx, 0))

    def _note(self, e: Mapping[str, Any], now: float) -> Status:
        for key in ("procedure", "frame_size") if self.test else ("test", "procedure",
                                                                   "frame_size"):
            if e.get(key) not in (None, ""):
                self.context[key] = e[key]
        p = self.current
        if p is not None and (e.get("procedure") or p.procedure) == p.procedure:
            base = self._status("note", now)
        else:
            base = Status("note", self.context["test"], self.context["procedure"],
                          self.context["frame_size"])
        return replace(base, n=e.get("trial") or base.n, offered_pps=e.get("offered_pps"),
                       loss_ratio=e.get("loss_ratio"), note=e.get("note"))

    # ---- time ----------------------------------------------------------------------

    def _eta(self, p: _Procedure, now: float) -> None:
        """ETA from the trials left times a trial's time: its duration plus the measured
        overhead, else the measured time of a trial; a time budget caps it."""
        p.eta_at = now
        left = self._left(p)
        per: float | None = None
        if p.trial_s:
            measured = [g for g in p.gaps if g > 0]
            overhead = sum(max(g - p.trial_s, 0.0) for g in measured) / len(measured) \
                if measured else 0.0
            per = p.trial_s + overhead
        elif p.gaps:
            per = sum(p.gaps) / len(p.gaps)
        p.eta_s = None if left is None or per is None else left * per
        if p.budget_s is not None:
            budget_left = max(p.budget_s - (now - p.t0), 0.0)
            p.eta_s = budget_left if p.eta_s is None else min(p.eta_s, budget_left)

    def _left(self, p: _Procedure) -> int | None:
        if p.total is None:
            return None
        if p.resolution is None or p.exact:
            return max(p.total - p.n, 0)
        res = Resolution(p.resolution.get("ratio"), p.resolution.get("pps"))
        return remaining_trials(p.lo, p.hi, res, p.n, p.total)

    def _status(self, kind: str, now: float) -> Status:
        p = self.current
        if p is None:
            return Status(kind, self.context["test"], self.context["procedure"],
                          self.context["frame_size"])
        eta = None if p.eta_s is None else max(p.eta_s - (now - p.eta_at), 0.0)
        searching = p.resolution is not None
        return Status(kind, p.test, p.procedure, p.frame_size, p.what, p.n, p.total, p.exact,
                      p.lo if searching else None, p.hi if searching else None,
                      p.resolution, elapsed_s=now - p.t0, eta_s=eta)


# ---- words -------------------------------------------------------------------------


def _clock_text(seconds: float) -> str:
    """h:mm:ss, or m:ss under an hour."""
    s = max(int(round(seconds)), 0)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _bracket(s: Status) -> str | None:
    if s.resolution is None or s.hi is None:
        return None
    lo, hi = s.lo or 0.0, s.hi
    res = Resolution(s.resolution.get("ratio"), s.resolution.get("pps"))
    if s.resolution.get("ratio") is not None and lo > 0:
        width = f"width {fmt.share((hi - lo) / lo)} of lo, to {fmt.percent(res.ratio)}"
    else:
        width = f"width {fmt.rate_pps(hi - lo)}, to {res.describe()}"
    return f"[{fmt.rate_pps(lo)}, {fmt.rate_pps(hi)}] {width}"


def _count(s: Status) -> str | None:
    if s.kind in ("start", "note", "trial_start") and not s.n:
        if s.total is None:
            return None
        return f"{'' if s.exact else 'at most '}{s.total} {s.what}s"
    if not s.n:
        return None
    if s.total is None:
        return f"{s.what} {s.n}"
    return f"{s.what} {s.n} of {'' if s.exact else 'at most '}{s.total}"


def _timing(s: Status) -> str | None:
    """"ETA ~6:12, elapsed 12:24" ("~": an estimate; none for a note)."""
    if s.kind == "note":
        return None
    timing = []
    if s.eta_s is not None and s.kind != "end":
        approx = "" if s.exact or s.what == "run" else "~"
        timing.append(f"ETA {approx}{_clock_text(s.eta_s)}")
    timing.append(f"elapsed {_clock_text(s.elapsed_s)}")
    return ", ".join(timing)


def status_line(s: Status) -> str:
    """One line, what matters most first (a terminal's width clips the end): test |
    frame size | procedure | trial n of N | ETA, elapsed | bracket | offered, loss |
    availability | frames | note."""
    parts = [s.test]
    if s.frame_size is not None:
        parts.append(fmt.frame_size(s.frame_size))
    parts.append(s.procedure)
    count = _count(s)
    if count:
        parts.append(count + (f" {s.name}" if s.name else ""))
    parts.append(_timing(s) or "")
    bracket = _bracket(s) if s.kind in ("trial", "tick", "trial_start") else None
    if bracket:
        parts.append(bracket)
    if s.offered_pps:
        parts.append(f"offered {fmt.rate_pps(float(s.offered_pps))}")
    elif s.offered_bps:
        parts.append(f"offered {fmt.bitrate(float(s.offered_bps))}")
    if s.loss_ratio is not None:
        parts.append(f"loss {fmt.loss_ratio(float(s.loss_ratio))}")
    if s.availability:
        parts.append("availability " + ", ".join(
            f"{name} {'-' if a is None else fmt.share(a)}" for name, a in s.availability.items()))
    if s.tx_frames is not None:
        parts.append(f"sent {fmt.count(s.tx_frames)}, not received {fmt.count(s.unreceived)}"
                     + (" (in flight or lost)" if s.note in ("sending", "waiting") else ""))
    if s.note and s.kind != "tick":
        parts.append(s.note)
    if s.kind == "trial" and s.valid is False and not s.note:
        parts.append("invalid")
    return "netload: " + " | ".join(p for p in parts if p)


class Cadence:
    """Which Statuses a display shows: `mode` "live" (a terminal's line: each one, the
    engine's polls and intervals at most every `tick_s`), "lines" (a log: starts, trials
    and notes, the last interval; other intervals and polls at most every `every_s`) or
    "off"."""

    def __init__(self, mode: str, clock: Callable[[], float], *,
                 every_s: float = LINE_EVERY_S, tick_s: float = LIVE_TICK_S) -> None:
        if mode not in ("live", "lines", "off"):
            raise ValueError(f"progress mode {mode!r}: give 'live', 'lines' or 'off'")
        self.mode, self.clock = mode, clock
        self.every_s, self.tick_s = every_s, tick_s
        self.last: float | None = None

    def due(self, status: Status) -> bool:
        if self.mode == "off" or status.kind in ("trial_start", "end"):
            return False
        now = self.clock()
        last_interval = status.kind == "interval" and bool(status.total) \
            and status.n >= (status.total or 0)
        if status.kind in ("start", "trial", "note") or last_interval:
            self.last = now
            return True
        gap = self.tick_s if self.mode == "live" else self.every_s
        if self.last is None or now - self.last >= gap:
            self.last = now
            return True
        return False
