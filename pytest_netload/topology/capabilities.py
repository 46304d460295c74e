"""What a topology can test, and what a test needs of it.

A suite written for any DUT still has tests that need something of it: a policer
whose CIR is known, four switch ports, traffic both ways, a DUT whose counters or
reset the plugin can use. The test says so with ``@pytest.mark.netload_requires(...)``
(plugin/capabilities.py), and on a topology that lacks it the test is skipped with a
reason that names what is missing and what the topology has, instead of failing on a
DUT it was never meant for.

`Capabilities` holds a topology's facts: those read from its shape (ports, wires,
line rate), those its DUT declares (a built-in DUT in its ``info``: ``cir_bps``,
``rate_bps``, ``limit_bytes``, ``loss_ratio``; a topology file in its
``[capabilities]`` table, docs/topology-files.md) and those of the session (commands,
counters and reset hooks). Pure: no I/O, no pytest.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_netload.errors import NetloadConfigError

__all__ = ["DECLARED", "REQUIREMENTS", "Capabilities", "check_declared", "check_requirements"]

DECLARED = {
    "policer": "policer_bps",
    "policer_cbs": "policer_cbs_bytes",
    "shaper": "shaper_bps",
    "shaper_queue": "shaper_queue_bytes",
    "loss_ratio": "loss_ratio",
}
"""A topology file's ``[capabilities]`` keys, and the `Capabilities` field each fills."""

REQUIREMENTS = ("ports", "both_ways", "line_rate", "dut", "dut_counters", "dut_reset",
                "policer", "shaper", "loss")
"""The ``netload_requires`` marker's arguments."""

RATE_MATCH = 0.01
"""A required policer or shaper rate matches a declared one within this share."""

_SIZES = {
    "policer_cbs": "the committed burst in bytes as a positive integer (e.g. 12500)",
    "shaper_queue": "the bytes the shaper queues before it drops, as a positive integer "
                    "(e.g. 35000)",
}
"""The ``[capabilities]`` keys that are a size in bytes, and what to give."""

_EXAMPLE = ('netload_requires(ports=4, both_ways=True, dut=True, dut_counters=True, '
            'dut_reset=True, line_rate=True, policer="10Mbit/s", shaper=True, loss=True)')


def _bit_rate(value: object, key: str) -> int:
    """``value`` (a bit rate string such as "10Mbit/s" or an integer in bit/s) in bit/s."""
    if isinstance(value, int) and not isinstance(value, bool):
        bps = float(value)
    elif isinstance(value, str):
        from pytest_netload.units import as_rate

        rate = as_rate(value, what=key)
        if rate.kind != "bps":
            raise NetloadConfigError(f"{key} = {value!r} is not a bit rate; give one such as "
                                     "\"10Mbit/s\" or an integer in bit/s")
        bps = rate.value
    else:
        raise NetloadConfigError(f"{key} = {value!r}: give a bit rate such as \"10Mbit/s\" "
                                 "or an integer in bit/s")
    if not math.isfinite(bps) or bps <= 0:
        raise NetloadConfigError(f"{key} = {value!r}: give a bit rate above zero")
    return int(round(bps))


def check_declared(table: Mapping[str, object], where: str) -> dict[str, float | int]:
    """A topology file's ``[capabilities]`` table as `Capabilities` fields; errors name
    ``where`` (the file) and the key."""
    out: dict[str, float | int] = {}
    for key, value in table.items():
        field = DECLARED.get(key)
        name = f"{where}: capabilities.{key}"
        if field is None:
            raise NetloadConfigError(
                f"{name} is not a known key; use one of {', '.join(DECLARED)}, or remove it "
                "(ports, wiring, line rate and the DUT's commands are read from the rest "
                "of the file)")
        if key in ("policer", "shaper"):
            out[field] = _bit_rate(value, name)
        elif key in _SIZES:
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise NetloadConfigError(f"{name} = {value!r}: give {_SIZES[key]}")
            out[field] = value
        else:  # loss_ratio
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    not 0 < value < 1:
                raise NetloadConfigError(f"{name} = {value!r}: give the share of frames the "
                                         "DUT drops, above 0 and below 1 (e.g. 0.01)")
            out[field] = float(value)
    for size, rate, what in (("policer_cbs", "policer", "its CIR"),
                             ("shaper_queue", "shaper", "its rate")):
        if DECLARED[size] in out and DECLARED[rate] not in out:
            raise NetloadConfigError(f"{where}: capabilities.{size} without {rate}; add "
                                     f"{rate} = \"10Mbit/s\" ({what}) or remove {size}")
    return out


def check_requirements(kwargs: Mapping[str, Any], args: tuple[Any, ...] = ()
                       ) -> dict[str, Any]:
    """The ``netload_requires`` marker's arguments, checked: ``ports`` a count, the
    others True (or False: not needed), ``policer`` and ``shaper`` also a bit rate."""
    if args:
        raise NetloadConfigError(f"give requirements as keywords, e.g. {_EXAMPLE}")
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        if key not in REQUIREMENTS:
            raise NetloadConfigError(f"no requirement {key!r}; the requirements are "
                                     f"{', '.join(REQUIREMENTS)}")
        if key == "ports":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise NetloadConfigError(f"ports={value!r}: give a number of ports, e.g. 4")
            out[key] = value
        elif key in ("policer", "shaper") and not isinstance(value, bool):
            out[key] = _bit_rate(value, key)
        elif not isinstance(value, bool):
            raise NetloadConfigError(f"{key}={value!r}: give True (needed) or False")
        elif value:
            out[key] = True
    return out


def _int(info: Mapping[str, str], key: str) -> int | None:
    try:
        return int(info[key])
    except (KeyError, ValueError):
        return None


def _from_dut_info(info: Mapping[str, str]) -> dict[str, float | int]:
    """What a built-in DUT declares in its info (netns-policed, netns-shaped,
    netns-lossy, netns-bridge with port_rate_bps, ovs-dpdk with a policer). A shaper's
    queue (its ``limit_bytes``: netns-shaped's, each of netns-bridge's port shapers')
    only with the shaper's rate."""
    out: dict[str, float | int] = {}
    for field, keys in (("policer_bps", ("cir_bps", "policer_cir_bps")),
                        ("policer_cbs_bytes", ("cbs_bytes", "policer_cbs_bytes")),
                        ("shaper_bps", ("rate_bps", "port_rate_bps"))):
        for key in keys:
            value = _int(info, key)
            if value is not None:
                out[field] = value
                break
    queue = _int(info, "limit_bytes")
    if queue is not None and "shaper_bps" in out:
        out["shaper_queue_bytes"] = queue
    try:
        out["loss_ratio"] = float(info["loss_ratio"])
    except (KeyError, ValueError):
        pass
    return out


def _rate_text(bps: float) -> str:
    from pytest_netload import format as fmt

    return fmt.bitrate(bps)


@dataclass(frozen=True)
class Capabilities:
    """A topology's capabilities (``netload_capabilities`` fixture).

    ``dut``: commands run on the DUT (``dut.run``); ``dut_counters`` / ``dut_reset``: the
    DUT's counters are read around trials / it can be reset (a built-in DUT, or a
    ``pytest_netload_dut_counters`` / ``pytest_netload_dut_reset`` hook of the session);
    ``policer_bps`` and ``policer_cbs_bytes``: a policer's CIR and CBS on the first
    wire; ``shaper_bps`` and ``shaper_queue_bytes``: a shaper's rate there and the bytes
    it queues before it drops; ``loss_ratio``: the share of frames the DUT drops there.
    """

    topology: str
    ports: int
    both_ways: bool
    line_rate_bps: int | None = None
    dut: bool = False
    dut_counters: bool = False
    dut_reset: bool = False
    policer_bps: int | None = None
    policer_cbs_bytes: int | None = None
    shaper_bps: int | None = None
    shaper_queue_bytes: int | None = None
    loss_ratio: float | None = None

    @classmethod
    def of(cls, topology: Any, *, dut_info: Mapping[str, str] | None = None,
           dut: bool = False, dut_counters: bool = False,
           dut_reset: bool = False) -> Capabilities:
        """The capabilities of ``topology`` (a `Topology`): its shape, what its file
        declares (``topology.capabilities``) and what ``dut_info`` (a built-in DUT's
        ``info``) declares, with the session's facts about the DUT."""
        pairs = {(w.tx, w.rx) for w in topology.wires}
        declared = {**_from_dut_info(dut_info or {}), **topology.capabilities}
        return cls(topology.name, len(topology.ports),
                   any((rx, tx) in pairs for tx, rx in pairs), topology.line_rate_bps,
                   dut, dut_counters, dut_reset, **declared)

    def describe(self) -> str:
        """What it has, in words: '2 ports wired both ways, no line rate, ...'."""
        parts = [f"{self.ports} port{'s' if self.ports != 1 else ''} wired "
                 + ("both ways" if self.both_ways else "one way"),
                 f"line rate {_rate_text(self.line_rate_bps)}" if self.line_rate_bps
                 else "no line rate"]
        hooks = [name for name, has in (("commands", self.dut), ("counters", self.dut_counters),
                                         ("reset", self.dut_reset)) if has]
        parts.append("a DUT with " + ", ".join(hooks) if hooks
                     else "no DUT commands, counters or reset")
        if self.policer_bps is not None:
            cbs = (f" (CBS {self.policer_cbs_bytes:,} B)"
                   if self.policer_cbs_bytes is not None else "")
            parts.append(f"a policer at {_rate_text(self.policer_bps)}{cbs}")
        if self.shaper_bps is not None:
            queue = (f" (queue {self.shaper_queue_bytes:,} B)"
                     if self.shaper_queue_bytes is not None else "")
            parts.append(f"a shaper at {_rate_text(self.shaper_bps)}{queue}")
        if self.loss_ratio is not None:
            parts.append(f"a known loss of {self.loss_ratio:.4g}")
        if self.policer_bps is None and self.shaper_bps is None and self.loss_ratio is None:
            parts.append("no declared policer, shaper or loss")
        return ", ".join(parts)

    def missing(self, requirements: Mapping[str, Any]) -> list[str]:
        """What ``requirements`` (checked by `check_requirements`) ask that this lacks, in
        words; empty when it has everything."""
        out: list[str] = []
        need = requirements.get
        if need("ports") and self.ports < need("ports"):
            out.append(f"{need('ports')} ports")
        if need("both_ways") and not self.both_ways:
            out.append("ports wired both ways")
        if need("line_rate") and self.line_rate_bps is None:
            out.append("a line rate")
        for key, what in (("dut", "a DUT that runs commands (namespace or [dut] ssh)"),
                          ("dut_counters", "the DUT's counters (a built-in DUT or a "
                                           "pytest_netload_dut_counters hook)"),
                          ("dut_reset", "a DUT reset (a built-in DUT or a "
                                        "pytest_netload_dut_reset hook)")):
            if need(key) and not getattr(self, key):
                out.append(what)
        for key, field in (("policer", "policer_bps"), ("shaper", "shaper_bps")):
            wanted, have = need(key), getattr(self, field)
            if wanted is True and have is None:
                out.append(f"a {key} of known rate")
            elif wanted and wanted is not True and (
                    have is None or abs(have - wanted) > RATE_MATCH * wanted):
                out.append(f"a {key} at {_rate_text(wanted)}")
        if need("loss") and self.loss_ratio is None:
            out.append("a DUT that drops a known share of frames")
        return out
