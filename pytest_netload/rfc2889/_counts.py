"""What a meshed trial (fully or partially) derives from its per-port counts: a mixin
of properties and one check, so that both trials' dataclass fields stay as the engine
binding builds them (a base with fields would reorder them)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import NetloadConfigError
from ..measure.dut import dut_record
from ..search.bisection import check_rate

__all__ = ["PortCounts", "counts"]


def counts(value: object, what: str) -> tuple[int, ...]:
    """`value` as one count >= 0 per port; `what` names it in the error."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise NetloadConfigError(f"mesh trial {what}={value!r}: give one count per port")
    out = tuple(value)
    for x in out:
        if isinstance(x, bool) or not isinstance(x, int) or x < 0:
            raise NetloadConfigError(f"mesh trial {what}: {x!r} is not a count >= 0")
    return out


class PortCounts:
    """Per port, the frames it sent (`tx`) and received (`rx`), in the topology's port
    order, over `duration_s`; the subclass (a frozen dataclass) holds those fields and
    `valid`, `invalid_reason`, `port_names`, `attribution` and `dut_health`."""

    tx: tuple[int, ...]
    rx: tuple[int, ...]
    duration_s: float
    valid: bool
    invalid_reason: str | None
    port_names: tuple[str, ...]
    attribution: Any
    dut_health: str | None

    def _check_counts(self, what: str, min_ports: int, order: str, load: float,
                      load_name: str) -> None:
        """Normalise tx and rx and check them, the names and `load` (`what` names the
        trial in errors; `order` says which port comes first, if one does)."""
        object.__setattr__(self, "tx", counts(self.tx, "tx"))
        object.__setattr__(self, "rx", counts(self.rx, "rx"))
        if len(self.tx) != len(self.rx) or len(self.tx) < min_ports:
            raise NetloadConfigError(
                f"{what}: tx has {len(self.tx)} ports and rx {len(self.rx)}: give one "
                f"count per port, for the same >= {min_ports} ports{order}")
        if self.port_names and len(self.port_names) != len(self.tx):
            raise NetloadConfigError(f"{what} port_names={list(self.port_names)!r}: give "
                                     f"one name per port ({len(self.tx)})")
        check_rate(load, f"{what} {load_name}")
        check_rate(self.duration_s, f"{what} duration_s")

    @property
    def ports(self) -> int:
        return len(self.tx)

    @property
    def tx_total(self) -> int:
        return sum(self.tx)

    @property
    def rx_total(self) -> int:
        return sum(self.rx)

    @property
    def lost(self) -> int:
        """Frames sent and not received, over all ports (duplicates do not offset loss)."""
        return max(self.tx_total - self.rx_total, 0)

    @property
    def loss_ratio(self) -> float:
        return self.lost / self.tx_total if self.tx_total else 0.0

    @property
    def forwarding_pps(self) -> float:
        """Frames received on all ports per second of the trial."""
        return self.rx_total / self.duration_s

    def _counts_dict(self, totals: bool = False) -> dict[str, Any]:
        """The record's fields that come of the counts (as_dict adds the load's), with
        the totals of tx and rx if asked."""
        both = {"tx_total": self.tx_total, "rx_total": self.rx_total} if totals else {}
        return {"duration_s": self.duration_s, "port_names": list(self.port_names),
                "tx": list(self.tx), "rx": list(self.rx), **both, "lost": self.lost,
                "loss_ratio": self.loss_ratio, "forwarding_pps": self.forwarding_pps,
                "valid": self.valid, "invalid_reason": self.invalid_reason,
                **dut_record(self.attribution, self.dut_health)}
