"""The fake engine's DUT (`FakeDut`): its parameters, and the engine setting that names
it ('fake:capacity_pps=50000,delay_s=100us,...'). What the fake does with it in a run
is `fake_model.py`'s; the host that answers the client is `fake.py`'s. Pure: no numpy,
no engine, so that checking --netload-engine loads nothing heavy."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from .. import errors
from ..units import as_duration, as_rate, check_layer, frame_bits

__all__ = ["FAKE_KEYS", "FakeDut", "as_fake_dut", "ecmp_member", "hashed_flows",
           "parse_fake_engine"]

DEFAULT_CAPACITY_PPS = 100_000.0
ECMP_HASHES = ("l3", "l4")
DEFAULT_PORT_RATE_BPS = 10e9


def _number(value: Any, key: str, example: str, *, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or (integer and value != int(value)):
        kind = "a whole number" if integer else "a finite number"
        raise errors.NetloadConfigError(f"fake DUT {key}={value!r}: give {kind}, e.g. {example}")
    return float(value)


@dataclass(frozen=True)
class FakeDut:
    """The DUT the fake engine models; every trial of a fake session goes through it.

    - ``capacity_pps``: frames per second it forwards (default 100 kpps), or
      ``capacity_bps``: bits per second counted at ``capacity_layer`` ("l1", "l2",
      "l2-nofcs"; default "l2"), so that its frame rate depends on the frame size as a
      shaper's does. Give at most one of the two.
    - ``loss_ratio``: share of the frames it drops at random on ingress (seeded binomial).
    - ``delay_s``: its fixed one-way delay; ``jitter_s``: each frame's delay is drawn
      uniformly from [delay_s, delay_s + jitter_s] (the fake counts no reordering).
    - ``buffer_frames``: its FIFO in front of the capacity. Load above the capacity
      fills it, then the excess is dropped (tail drop); what it holds when TX ends
      leaves at the capacity afterwards (backlog) and arrives in the drain.
    - ``port_rate_bps``: the L1 line rate of the fake generator's ports (maximum-rate
      runs send at it; the fake topology declares it as its line rate).
    - ``seed``: the random loss and jitter draws (same seed, same runs: same results).
    - ``ecmp``: 0 (the default: one output, p1), or 2 to 8: an ECMP router whose frames
      leave on ``ecmp`` member ports ``p1`` .. ``pN`` (the fake topology then has them, as
      netns-router:ecmp=N does). A run's received frames of a stream spread over its RX
      ports flow by flow, each flow on one port by a fixed hash (:func:`ecmp_member`);
      ``ecmp_hash`` "l4" (the default) counts a stream's distinct addresses and ports as
      its flows, "l3" its distinct addresses only.
    - What it does to a frame (expected frames, fake_expect.py): ``routed=1`` routes
      as an IP router does: Ethernet source and destination become the p0->p1 wire's
      egress ones (the fake topology's p1 peer MAC and p1's MAC) and the TTL / hop
      limit drops by one (``keep_ttl=1``: a router that forgets to); ``remark_dscp``
      (0-63; -1: none) re-marks every IP frame's DSCP. By default it changes nothing.
    """

    capacity_pps: float | None = None
    capacity_bps: float | None = None
    capacity_layer: str = "l2"
    loss_ratio: float = 0.0
    delay_s: float = 10e-6
    jitter_s: float = 0.0
    buffer_frames: int = 1000
    port_rate_bps: float = DEFAULT_PORT_RATE_BPS
    seed: int = 1
    ecmp: int = 0
    ecmp_hash: str = "l4"
    routed: int = 0
    keep_ttl: int = 0
    remark_dscp: int = -1

    def __post_init__(self) -> None:
        if self.capacity_pps is not None and self.capacity_bps is not None:
            raise errors.NetloadConfigError(
                f"fake DUT: capacity_pps={self.capacity_pps!r} and capacity_bps="
                f"{self.capacity_bps!r} both given; give one of them (a frame rate, or a bit "
                "rate at capacity_layer)")
        if self.capacity_pps is None and self.capacity_bps is None:
            object.__setattr__(self, "capacity_pps", DEFAULT_CAPACITY_PPS)
        for key in ("capacity_pps", "capacity_bps", "port_rate_bps"):
            value = getattr(self, key)
            if value is not None:
                example = "50000" if key == "capacity_pps" else "'20Mbit/s'"
                if _number(value, key, example) <= 0:
                    raise errors.NetloadConfigError(
                        f"fake DUT {key}={value!r}: give a rate > 0, e.g. {example}")
                object.__setattr__(self, key, float(value))
        check_layer(self.capacity_layer, what="fake DUT capacity_layer")
        loss = _number(self.loss_ratio, "loss_ratio", "0.01")
        if not 0 <= loss < 1:
            raise errors.NetloadConfigError(
                f"fake DUT loss_ratio={self.loss_ratio!r}: give a share in [0, 1), e.g. 0.01")
        object.__setattr__(self, "loss_ratio", loss)
        for key in ("delay_s", "jitter_s"):
            value = _number(getattr(self, key), key, "100e-6 or '100us'")
            if not 0 <= value <= 60:
                raise errors.NetloadConfigError(
                    f"fake DUT {key}={getattr(self, key)!r}: give seconds from 0 to 60, "
                    "e.g. 100e-6 or '100us'")
            object.__setattr__(self, key, value)
        for key, example in (("buffer_frames", "1000"), ("seed", "1")):
            value = _number(getattr(self, key), key, example, integer=True)
            if value < 0 or value >= 1 << 63:
                raise errors.NetloadConfigError(
                    f"fake DUT {key}={getattr(self, key)!r}: give a whole number >= 0, "
                    f"e.g. {example}")
            object.__setattr__(self, key, int(value))
        ecmp = _number(self.ecmp, "ecmp", "3", integer=True)
        if ecmp != 0 and not 2 <= ecmp <= 8:
            raise errors.NetloadConfigError(
                f"fake DUT ecmp={self.ecmp!r}: give 0 (no ECMP) or 2 to 8 member ports, e.g. 3")
        object.__setattr__(self, "ecmp", int(ecmp))
        if self.ecmp_hash not in ECMP_HASHES:
            raise errors.NetloadConfigError(
                f"fake DUT ecmp_hash={self.ecmp_hash!r}: give one of {list(ECMP_HASHES)}")
        for key, low, high, example in (("routed", 0, 1, "1"), ("keep_ttl", 0, 1, "1"),
                                        ("remark_dscp", -1, 63, "10")):
            value = _number(getattr(self, key), key, example, integer=True)
            if not low <= value <= high:
                raise errors.NetloadConfigError(
                    f"fake DUT {key}={getattr(self, key)!r}: give a whole number from {low} "
                    f"to {high}, e.g. {example}")
            object.__setattr__(self, key, int(value))

    def capacity_at(self, frame_size: float) -> float:
        """The frames per second it forwards of frames of `frame_size` bytes (FCS included)."""
        if self.capacity_pps is not None:
            return self.capacity_pps
        assert self.capacity_bps is not None
        return self.capacity_bps / frame_bits(frame_size, self.capacity_layer)

    def params(self) -> dict[str, Any]:
        """The fields that differ from the defaults (plain types: what boots the fake host)."""
        default = FakeDut()
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None
                and (f.name == "capacity_pps" or getattr(self, f.name) != getattr(default, f.name))}

    def spec(self) -> str:
        """The engine setting that makes this DUT: 'fake:capacity_pps=50000,...'."""
        parts = []
        for key, value in self.params().items():
            if key == "capacity_bps":
                value = f"{value:g}bit/s@{self.capacity_layer}"
            elif key == "capacity_layer":
                continue
            parts.append(f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}")
        return "fake:" + ",".join(parts)

    def describe(self) -> str:
        cap = (f"{self.capacity_pps:,.0f} pps" if self.capacity_pps is not None else
               f"{self.capacity_bps:,.0f} bit/s ({self.capacity_layer})")
        return (f"capacity {cap}, loss {self.loss_ratio:g}, delay {self.delay_s * 1e6:g} us"
                + (f" + up to {self.jitter_s * 1e6:g} us jitter" if self.jitter_s else "")
                + f", buffer {self.buffer_frames} frames, ports {self.port_rate_bps:g} bit/s, "
                f"seed {self.seed}"
                + (f", ECMP over {self.ecmp} members ({self.ecmp_hash.upper()} hash)"
                   if self.ecmp else ""))


FAKE_KEYS = tuple(f.name for f in fields(FakeDut))


def hashed_flows(fields: Sequence[Any], l3_offset: int, l4_offset: int) -> tuple[int, int]:
    """(L3, L4) flows of a stream: how many distinct (addresses) and (addresses, ports) its
    field ops make. They step together packet by packet, so each tuple repeats after the
    least common multiple of the fields' value counts; a field outside the IP addresses'
    header and the L4 ports is no part of a hash."""
    l3 = l4 = 1
    for f in fields:
        values = 1 if f.op == "set" else (f.max - f.min) // max(f.step, 1) + 1
        in_l3 = l3_offset >= 0 and l3_offset <= f.offset and (
            l4_offset < 0 or f.offset < l4_offset)
        in_ports = l4_offset >= 0 and l4_offset <= f.offset < l4_offset + 4
        if in_l3:
            l3 = math.lcm(l3, values)
        if in_l3 or in_ports:
            l4 = math.lcm(l4, values)
    return l3, l4


def ecmp_member(flow: int, members: int, seed: int) -> int:
    """The member (0-based) the fake ECMP router sends flow number `flow` to: a fixed hash
    of the flow and the DUT's seed, as a router's hash is fixed for its lifetime."""
    digest = hashlib.blake2b(f"{seed}:{flow}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % members
_FAKE_FIX = ("write fake or fake:key=value,... with keys " + ", ".join(FAKE_KEYS)
             + ", e.g. fake:capacity_pps=50000,loss_ratio=0,delay_s=100us,buffer_frames=1000")


def _parse_value(key: str, text: str) -> Any:
    try:
        if key in ("capacity_bps", "port_rate_bps"):
            rate = as_rate(text, what=f"fake DUT {key}")
            if rate.kind != "bps":
                raise errors.NetloadConfigError(
                    f"fake DUT {key}={text!r}: give a bit rate such as '20Mbit/s'"
                    + (" (capacity_pps takes a frame rate)" if key == "capacity_bps" else ""))
            return (rate.value, rate.layer) if key == "capacity_bps" else rate.value
        if key in ("delay_s", "jitter_s"):
            return as_duration(text, what=f"fake DUT {key}").seconds
        if key in ("capacity_layer", "ecmp_hash"):
            return text
        if key == "capacity_pps" and text[-1:].isalpha():
            rate = as_rate(text, what="fake DUT capacity_pps")
            if rate.kind != "pps":
                raise errors.NetloadConfigError(
                    f"fake DUT capacity_pps={text!r}: give a frame rate such as 50000 or "
                    "'50kpps' (capacity_bps takes a bit rate)")
            return rate.value
        number = float(text)
    except errors.NetloadConfigError:
        raise
    except ValueError:
        raise errors.NetloadConfigError(
            f"fake DUT {key}={text!r} is not a number; {_FAKE_FIX}") from None
    if key in ("buffer_frames", "seed", "ecmp", "routed", "keep_ttl", "remark_dscp") and \
            number.is_integer():
        return int(number)
    return number


def parse_fake_engine(value: str) -> FakeDut | None:
    """The DUT of an engine setting 'fake' or 'fake:key=value,...'; None for any other
    setting (an execnet gateway). NetloadConfigError names the key and the fix."""
    name, colon, rest = value.strip().partition(":")
    if name.strip() != "fake":
        return None
    params: dict[str, Any] = {}
    if colon and not rest.strip():
        raise errors.NetloadConfigError(f"{value!r} has no DUT parameters after ':'; "
                                        f"{_FAKE_FIX}")
    for item in rest.split(",") if rest.strip() else ():
        key, eq, text = (s.strip() for s in item.partition("="))
        if not eq or not key or not text:
            raise errors.NetloadConfigError(f"{value!r}: {item.strip()!r} is not key=value; "
                                            f"{_FAKE_FIX}")
        if key not in FAKE_KEYS:
            raise errors.NetloadConfigError(f"{value!r}: the fake DUT has no parameter "
                                            f"{key!r}; {_FAKE_FIX}")
        if key in params:
            raise errors.NetloadConfigError(f"{value!r}: {key} is given twice; give it once")
        parsed = _parse_value(key, text)
        if key == "capacity_bps":
            params[key], layer = parsed
            if "@" in text:
                params["capacity_layer"] = layer
        else:
            params[key] = parsed
    return FakeDut(**params)


def as_fake_dut(value: FakeDut | Mapping[str, Any] | str) -> FakeDut:
    """A FakeDut from itself, its parameters (a mapping) or a spec ('fake:...' or the
    part after the colon)."""
    if isinstance(value, FakeDut):
        return value
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - set(FAKE_KEYS))
        if unknown:
            raise errors.NetloadConfigError(f"fake DUT: no parameter {unknown[0]!r}; "
                                            f"{_FAKE_FIX}")
        return FakeDut(**value)
    if isinstance(value, str):
        text = value.strip()
        dut = parse_fake_engine(text if text.startswith("fake") else f"fake:{text}")
        if dut is None:  # pragma: no cover - the prefix makes it a fake setting
            raise errors.NetloadConfigError(f"fake={value!r}: {_FAKE_FIX}")
        return dut
    raise errors.NetloadConfigError(
        f"fake={value!r}: give a FakeDut, a mapping of its parameters or a spec; {_FAKE_FIX}")
