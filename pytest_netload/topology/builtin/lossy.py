"""The ``netns-lossy`` topology: netns-router dropping a random share of p0 -> p1.

An nftables rule (``numgen random``, resolution 1e-6, nft.py) in the DUT's
forward chain drops ``loss_ratio`` of the frames forwarded from ``d0`` to
``d1`` and counts them itself (``dut.loss_rule.dropped()``); p1 -> p0 loses
nothing. The ratio is checked against the rule's resolution before anything
is built.
"""

from __future__ import annotations

import contextlib
from functools import partial

from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology.builtin.cleanup import _managed
from pytest_netload.topology.builtin.dut import BuiltTopology, Dut
from pytest_netload.topology.builtin.names import (
    _LOSSY_CODE,
    PREFIX,
    _check_backend,
    _check_prefix,
)
from pytest_netload.topology.builtin.router import NEIGHBOURS, _build_routed, _check_choice
from pytest_netload.topology.nft import RANDOM_SCALE, drop_random

__all__ = ["netns_lossy"]

LOSS_RATIO = 0.01  # netns-lossy default


def _make_lossy(dut: Dut, *, loss_ratio: float) -> None:
    """The nftables rule dropping ``loss_ratio`` of what is forwarded d0 -> d1 (p0 -> p1)."""
    d0, d1 = dut.interfaces
    dut.loss_rule = drop_random(dut, loss_ratio, match=f"iifname {d0} oifname {d1}")
    dut.info.update(
        model="Linux kernel IPv4 router (network namespace), nftables random drop p0->p1",
        loss_ratio=str(loss_ratio),
        loss_wire="p0->p1",
        loss_rule=dut.loss_rule.rule,
    )


def _check_loss_ratio(loss_ratio: object) -> float:
    if (
        isinstance(loss_ratio, bool)
        or not isinstance(loss_ratio, (int, float))
        or not 0.0 <= loss_ratio <= 1.0
    ):
        raise NetloadConfigError(
            f"loss_ratio = {loss_ratio!r} must be a number from 0 to 1 "
            "(the share of p0->p1 frames dropped, e.g. 0.01)"
        )
    steps = loss_ratio * RANDOM_SCALE
    if abs(steps - round(steps)) > 1e-6:
        raise NetloadConfigError(
            f"loss_ratio = {loss_ratio!r} is finer than the rule's resolution of "
            f"1/{RANDOM_SCALE}; give a multiple of {1 / RANDOM_SCALE:g}, e.g. "
            f"{round(steps) / RANDOM_SCALE:g}"
        )
    return round(steps) / RANDOM_SCALE


def netns_lossy(
    backend: str = "af_packet", *, loss_ratio: float = LOSS_RATIO, prefix: str = PREFIX,
    neighbours: str = "arp",
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """netns-router dropping a random ``loss_ratio`` of the frames it forwards p0 -> p1.

    An nftables rule (``numgen random``, resolution 1e-6) in the DUT's forward
    chain, with its own counter: ``dut.loss_rule.dropped()``. p1 -> p0 loses nothing.
    """
    _check_backend(backend)
    _check_prefix(prefix)
    ratio = _check_loss_ratio(loss_ratio)
    configure = partial(_make_lossy, loss_ratio=ratio)
    builder = partial(_build_routed, name="netns-lossy", code=_LOSSY_CODE, configure=configure,
                      neighbours=_check_choice("neighbours", neighbours, NEIGHBOURS))
    return _managed(builder, backend, prefix)
