"""The generator's links: up before traffic, at the speed the topology says, and back
after a trial that lost one.

- `wait_link_up` polls a port's link (the kernel carrier of its interface, or DPDK's
  link: `engine/link.py`) every 100 ms until it is up, for at most `timeout_s`; a
  link that stays down is a `NetloadEnvironmentError` naming the port, the time
  waited and what to check. Never a hang.
- `speed_mismatch` compares the negotiated speed with the topology's line rate;
  `check_port_link` warns (`LinkSpeedWarning`) or, with `strict`, errors when they
  differ. A port that reports no real speed (veth, a vdev) is said to have none,
  never warned about.
- `recover_links` runs after a trial that a lost link made invalid: it waits for the
  links to come back (the same bounded time), so that the search's retry measures
  again, or stops the procedure with `InvalidTrial` when a link stays down.

Engine-facing but pytest-free; the pure parts take plain mappings.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import format as fmt
from ..errors import InvalidTrial, LinkSpeedWarning, NetloadConfigError, NetloadEnvironmentError
from ..units import as_duration, run_seconds

__all__ = ["LINK_POLL_S", "LINK_TIMEOUT_MAX_S", "LINK_TIMEOUT_S", "LinkPolicy",
           "check_port_link", "link_down_message", "link_timeout_seconds", "recover_links",
           "speed_mismatch", "wait_link_up"]

LINK_TIMEOUT_S = 10.0      # how long a port's link may take to come up
LINK_TIMEOUT_MAX_S = 600.0  # a longer wait is a misconfiguration, not a slow link
LINK_POLL_S = 0.1          # the link is read this often while waiting


def link_timeout_seconds(value: Any, *, what: str = "link timeout") -> float:
    """A link timeout in seconds: a duration ('10s', '500ms', 10), from 0 (look once,
    wait not at all) to LINK_TIMEOUT_MAX_S; the error names `what` and the value."""
    seconds = as_duration(value, what=what).seconds
    if seconds > LINK_TIMEOUT_MAX_S:
        raise NetloadConfigError(
            f"{what} {value!r} is {fmt.time_s_exact(seconds)}, more than the "
            f"{fmt.time_s_exact(LINK_TIMEOUT_MAX_S)} a link may take to come up; give e.g. "
            "'10s' (the default) or '60s' for a slow autonegotiation")
    return run_seconds(value, what=what, zero_ok=True)


@dataclass(frozen=True)
class LinkPolicy:
    """What the session asks of its ports' links (--netload-link-timeout, -strict)."""

    timeout_s: float = LINK_TIMEOUT_S
    strict: bool = False
    line_rate_bps: int | None = None  # the topology's; None: nothing to compare with


def _port_text(name: str, device: str) -> str:
    return f"port {name} ({device})" if name and name != device else f"port {device!r}"


def link_down_message(name: str, device: str, state: Mapping[str, Any],
                      waited_s: float) -> str:
    """Why a port cannot be used: its link stayed down; what was read, and what to check."""
    source = str(state.get("source") or "its link")
    operstate = state.get("operstate")
    seen = f"{source}: operstate {operstate}" if operstate else source
    if state.get("carrier") is False:
        seen += ", no carrier"
    iface = source.removeprefix("kernel interface ") if source.startswith("kernel") else None
    here = f"`ip link show {iface}` here" if iface else "the port's link LED and `ethtool`"
    return (f"{_port_text(name, device)}: link still down after waiting "
            f"{fmt.time_s_exact(waited_s)} ({seen}); check the cable, that the DUT's "
            f"interface on this wire is up (admin state: `ip link set <if> up` on the DUT), "
            f"and {here}; a slow link may need a longer --netload-link-timeout")


def wait_link_up(port: Any, timeout_s: float, *, name: str = "",
                 poll_s: float = LINK_POLL_S, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """The port's link once it is up (`port.link()`, read every `poll_s`); after
    `timeout_s` of a link down, NetloadEnvironmentError (`link_down_message`)."""
    start = clock()
    while True:
        state = port.link()
        if state.get("up"):
            return dict(state)
        waited = clock() - start
        if waited >= timeout_s:
            raise NetloadEnvironmentError(link_down_message(
                name or getattr(port, "name", ""), port.device, state, timeout_s))
        sleep(min(poll_s, max(timeout_s - waited, 0.0)))


def speed_mismatch(name: str, device: str, state: Mapping[str, Any],
                   line_rate_bps: int | None) -> str | None:
    """The message when the port's negotiated speed differs from the topology's line rate
    (compared in whole Mbit/s, as links report it); None when they agree, when the
    topology gives no line rate, or when the port reports no real speed."""
    speed = state.get("speed_mbps")
    if not line_rate_bps or not speed:
        return None
    if int(speed) == round(line_rate_bps / 1e6):
        return None
    return (f"{_port_text(name, device)} negotiated {fmt.bitrate(int(speed) * 1e6)}, but the "
            f"topology's line_rate is {fmt.bitrate(line_rate_bps)}: rates given as a share of "
            "the line rate, and line-rate ratios, are worked out from the topology's figure; "
            "check the cable and both ends' autonegotiation (`ethtool <if>`), or give the "
            "topology the real line_rate")


def speed_note(name: str, device: str, state: Mapping[str, Any],
               line_rate_bps: int | None) -> str | None:
    """What a port that reports no real speed says about it (no warning: there is nothing
    to compare); None where it reports one."""
    if state.get("speed_mbps"):
        return None
    why = state.get("speed_note") or "it reports none"
    given = (f"; the topology's line_rate {fmt.bitrate(line_rate_bps)} is taken as given"
             if line_rate_bps else "")
    return f"{_port_text(name, device)} has no link speed to compare ({why}){given}"


def check_port_link(port: Any, name: str, policy: LinkPolicy) -> dict[str, Any]:
    """At open: wait for the port's link (policy.timeout_s), then compare its speed with
    the line rate: LinkSpeedWarning when they differ, NetloadEnvironmentError with
    `strict`. Returns the link, with `speed_note` set to what was found."""
    state = wait_link_up(port, policy.timeout_s, name=name)
    mismatch = speed_mismatch(name, port.device, state, policy.line_rate_bps)
    if mismatch is not None:
        if policy.strict:
            raise NetloadEnvironmentError(mismatch + " (--netload-link-strict is set)")
        warnings.warn(LinkSpeedWarning(mismatch + "; --netload-link-strict makes this an "
                                       "error"), stacklevel=2)
    else:
        state["speed_note"] = speed_note(name, port.device, state, policy.line_rate_bps)
    return state


def _lost_a_link(run: Any) -> bool:
    if any(e.get("event") == "link_down" for e in getattr(run, "link_events", ()) or ()):
        return True
    return any(c.get("link_up_before", 1) == 0 or c.get("link_up_after", 1) == 0
               or c.get("iface_carrier_down", 0) > 0
               for c in (getattr(run, "ports", {}) or {}).values())


def recover_links(run: Any, ports: Iterable[Any], reason: str | None, engine: Any) -> None:
    """After a trial: when a lost link made it invalid (`reason`), wait up to the engine's
    `link_timeout_s` for every port of the run to have its link again, so that a retry
    measures the DUT; InvalidTrial (which stops the procedure) naming the trial's reason
    and the port whose link stayed down. Nothing to do after a valid trial or another
    reason."""
    if reason is None or not _lost_a_link(run):
        return
    timeout_s = float(getattr(engine, "link_timeout_s", LINK_TIMEOUT_S))
    for port in ports:
        try:
            wait_link_up(port, timeout_s)
        except NetloadEnvironmentError as exc:
            raise InvalidTrial(
                f"the trial was invalid ({reason}), and the link did not come back: {exc}; "
                "the procedure stops (a search cannot measure the DUT without its link)"
            ) from None
