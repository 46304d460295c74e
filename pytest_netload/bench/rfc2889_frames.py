"""The frames RFC 2889's runner (bench/rfc2889.py) sends that are not a plain UDP
flow, and what this generator cannot send: the address trials' learning and test
streams (§5.7, §5.8), the errored-frame cases (§5.9) and why forward pressure (§5.6)
cannot be offered.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.client import Port
from ..rfc2889 import MIN_GAP_BITS, PRESSURE_GAP_BITS, ErroredCase
from ..traffic.packets import UDP, Eth, IPv4, field
from ..traffic.streams import Stream
from ..units import FCS_BYTES, MAX_FRAME_BYTES, MIN_FRAME_BYTES
from .harness import WiredPorts

__all__ = ["ADDRESS_BASE_MAC", "BROADCAST_MAC", "address_streams", "errored_cases", "mac_of",
           "pressure_unsupported"]

ADDRESS_BASE_MAC = 0x0A4E4C000000  # locally administered, unlike any generator port's
BROADCAST_MAC = "ff:ff:ff:ff:ff:ff"


def mac_of(value: int) -> str:
    """A 48-bit number as a MAC address."""
    return ":".join(f"{(value >> s) & 0xFF:02x}" for s in range(40, -1, -8))


def pressure_unsupported(wired: WiredPorts) -> str:
    """Why this generator cannot offer forward pressure (an 88-bit gap): its ports
    pace frames in time and leave the gap to the MAC, which keeps the 96-bit
    minimum; a software port has no gap at all."""
    if not wired.topology.line_rate_bps:
        return ("the ports have no line rate (software ports such as veth): there is no "
                "inter-frame gap to shorten, so forward pressure cannot be offered")
    return (f"the generator's ports leave the inter-frame gap to their MAC, which keeps "
            f"IEEE 802.3's minimum of {MIN_GAP_BITS} bit times: no port here can send "
            f"at {PRESSURE_GAP_BITS}")


def address_streams(wired: WiredPorts, count: int, learn: Port, test: Port,
                    size: int) -> tuple[Stream, Stream]:
    """The learning stream (broadcast frames from `count` source MACs, sent by `learn`)
    and the test stream (one frame to each of those MACs, sent by `test`)."""
    first, last = mac_of(ADDRESS_BASE_MAC), mac_of(ADDRESS_BASE_MAC + count - 1)
    flow = wired.flow(learn, test)
    learning = (Eth(dst=BROADCAST_MAC, src=first) / IPv4(src=flow.src_ip or "198.18.0.2",
                                                        dst="255.255.255.255")
                / UDP()).build()
    mods = [field(learning, "eth.src", "inc", min=first, max=last)] if count > 1 else []
    back = wired.flow(test, learn)
    probe = (Eth(dst=first, src=back.src_mac) / IPv4(src=back.src_ip or "198.18.0.3",
                                                     dst=back.dst_ip or "198.18.0.2")
             / UDP()).build()
    tmods = [field(probe, "eth.dst", "inc", min=first, max=last)] if count > 1 else []
    return (Stream(learning, size=size, fields=mods, name="rfc2889-learning"),
            Stream(probe, size=size, fields=tmods, name="rfc2889-test"))


def errored_cases(wired: WiredPorts, ports: Sequence[Port],
                  max_frame: int) -> tuple[ErroredCase, ...]:
    """What this generator can send of each kind of errored frame between the first
    two of `ports` (`max_frame`: the switch's maximum): the frame size, or why not."""
    undersized = ErroredCase("undersized", skipped_reason=(
        f"the engine sends frames of at least {MIN_FRAME_BYTES + FCS_BYTES} bytes (FCS "
        "included): a port pads a shorter frame as an Ethernet MAC does, so an undersized "
        "frame cannot be sent"))
    bad_fcs = ErroredCase("bad_fcs", skipped_reason=(
        "the engine cannot corrupt the frame check sequence: the sending port's MAC "
        "computes it (a software port such as veth carries none)"))
    size = max_frame + 1
    mtus = [int(p.info.get("mtu") or 0) for p in ports[:2]]
    short = [(wired.name_of(p), m) for p, m in zip(ports[:2], mtus) if m and size - 18 > m]
    if size > MAX_FRAME_BYTES + FCS_BYTES:
        oversized = ErroredCase("oversized", skipped_reason=(
            f"max_frame={max_frame}: the engine sends frames of at most "
            f"{MAX_FRAME_BYTES + FCS_BYTES} bytes, so none above the switch's maximum"))
    elif short:
        name, mtu = short[0]
        oversized = ErroredCase("oversized", skipped_reason=(
            f"port {name}'s MTU {mtu} carries frames of at most {mtu + 18} bytes (untagged, "
            f"FCS included): it cannot carry a {size}-byte frame, one above max_frame="
            f"{max_frame}; give the generator's ports an MTU of at least {size - 18}"))
    else:
        oversized = ErroredCase("oversized", frame_size=size)
    return undersized, oversized, bad_fcs
