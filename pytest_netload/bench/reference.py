"""The reference DUT: a known delay, for checking latency meters.

netem is not on every kernel (not on the project's CI machine), so the
reference DUT is a delay line that runs inside the engine's own worker
loop. It needs no core of its own; two busy-polling loops sharing a core
would ruin the very latency it exists to produce.

    generator TX -> ingress (net_ring) -> delay line -> egress (net_ring) -> generator RX

Each frame leaves `delay` after the line polled it, plus the next value of
an optional jitter table (a frozen scipy distribution or an array, in
seconds). `loss` drops that share of frames at random. Release times never
decrease, so the line never reorders. The generator's latency for a frame
is therefore delay + jitter + the time to the next turn of the worker loop.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Self

import numpy as np

from ..engine.client import Engine, Port
from ..errors import NetloadConfigError
from ..units import Duration, as_duration, run_seconds

_names = itertools.count()


@dataclass(frozen=True)
class Forward:
    """One delay line of a run: frames polled on `rx` leave on `tx` after `delay_ns`."""

    rx: Port
    tx: Port
    delay_ns: int
    jitter_ps: bytes = b""
    loss_ppm: int = 0
    seed: int = 1

    def spec(self) -> dict[str, Any]:
        return {"rx_port": self.rx.port_id, "tx_port": self.tx.port_id,
                "delay_ns": self.delay_ns, "jitter_ps": self.jitter_ps,
                "n_jitter": len(self.jitter_ps) // 8, "loss_ppm": self.loss_ppm,
                "seed": self.seed}


def _jitter_table(jitter: Any, seed: int, size: int = 65536) -> bytes:
    if jitter is None:
        return b""
    if callable(getattr(jitter, "rvs", None)):
        values = np.asarray(jitter.rvs(size=size, random_state=np.random.default_rng(seed)),
                            dtype=float)
    else:
        values = np.asarray(jitter, dtype=float).ravel()
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values < 0):
        bad = values[~np.isfinite(values) | (values < 0)][:1]
        raise NetloadConfigError(
            f"reference DUT jitter: values must be finite and >= 0 seconds (found {bad.tolist()}); "
            "give a scipy distribution of non-negative delays or such an array"
        )
    return np.round(values * 1e12).astype("<u8").tobytes()


class ReferenceDut:
    """Two net_ring ports and the delay line between them. Use as a context manager."""

    def __init__(self, engine: Engine, delay: Duration | str | float = "100us", *,
                 jitter: Any = None, loss: float = 0.0, seed: int = 1) -> None:
        run_seconds(delay, what="reference DUT delay", zero_ok=True)  # finite, at most 24 h
        d = as_duration(delay, what="reference DUT delay")
        if not isinstance(loss, (int, float)) or not math.isfinite(loss) or not 0 <= loss <= 1:
            raise NetloadConfigError(f"reference DUT loss {loss!r}: give a ratio in [0, 1]")
        table = _jitter_table(jitter, seed)  # bad input fails before any port opens
        n = next(_names)
        self.engine = engine
        self.delay = d
        self.ingress = engine.port(f"net_ring_refin{n}")
        self.egress = engine.port(f"net_ring_refout{n}")
        self.forward = Forward(self.ingress, self.egress, d.ns, table,
                               round(loss * 1_000_000), seed)

    def close(self) -> None:
        self.ingress.close()
        self.egress.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
