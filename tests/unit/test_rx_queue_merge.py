"""A stream that RSS (or AF_PACKET fanout) spread over RX queues: what its merged results
mean. The engine tracks sequence numbers per queue and merges the queues per stream
(native/src/results.c); build_run_result turns that into a StreamResult.

Counts merge exactly (lost = sent - received - duplicates, whatever the queue); loss-event
timing does not, so it is None beside rx_queues > 1, and procedures that time losses or
silences refuse such a stream (docs/engine.md, "Several RX queues")."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_netload._native_facts import (RX_QUEUE_STATS_FIELDS, RX_STREAM_STATS_FIELDS,
                                          TX_STATS_FIELDS)
from pytest_netload.bench.lanes import require_loss_timing
from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure.results import build_run_result


def _per_queue_tracking(seqs: list[int]) -> dict[str, int]:
    """What one RX queue's tracker makes of the sequence numbers it saw (in order): the
    engine's rules (native/src/rx_account.c `track`) for arrivals within the window."""
    nxt = gaps = dups = reordered = 0
    seen: set[int] = set()
    for seq in seqs:
        if seq >= nxt:
            gaps += seq > nxt
            nxt = seq + 1
        elif seq in seen:
            dups += 1
            continue
        else:
            reordered += 1
        seen.add(seq)
    return {"gap_events": gaps, "duplicates": dups, "reordered": reordered, "max_seq": nxt}


def _merged(queues: list[list[int]], sent: int) -> dict[str, np.ndarray]:
    """The engine's arrays for one stream received on `queues` (one list of sequence
    numbers per RX queue, in arrival order), merged as results.c merges them."""
    rx = np.zeros(1, dtype=list(RX_STREAM_STATS_FIELDS))
    for q in queues:
        if not q:
            continue
        t = _per_queue_tracking(q)
        rx["rx_queues"] += 1
        rx["packets"] += len(q)
        rx["bytes"] += 60 * len(q)
        rx["by_tx_end"] += len(q)
        rx["duplicates"] += t["duplicates"]
        rx["reordered"] += t["reordered"]
        rx["gap_events"] += t["gap_events"]
        rx["max_seq"] = max(int(rx["max_seq"][0]), t["max_seq"])
        if t["gap_events"]:
            rx["last_gap_tx_ns"] = max(int(rx["last_gap_tx_ns"][0]), 1000 * t["max_seq"])
    tx = np.zeros(1, dtype=list(TX_STATS_FIELDS))
    tx["packets"] = sent
    tx["bytes"] = 60 * sent
    return {"tx": tx, "rx": rx,
            "rx_queues": np.zeros(len(queues), dtype=list(RX_QUEUE_STATS_FIELDS))}


@st.composite
def spread(draw: st.DrawFn) -> tuple[int, list[list[int]], set[int]]:
    """A stream of `sent` frames, some lost, some duplicated (on the queue of the original,
    as RSS hashes a copy like its original), each frame put on one of 1 to 4 queues."""
    sent = draw(st.integers(1, 300))
    n_queues = draw(st.integers(1, 4))
    lost = set(draw(st.lists(st.integers(0, sent - 1), max_size=sent)))
    queues: list[list[int]] = [[] for _ in range(n_queues)]
    for seq in range(sent):
        if seq in lost:
            continue
        q = queues[draw(st.integers(0, n_queues - 1))]
        q.append(seq)
        if draw(st.integers(0, 19)) == 0:
            q.append(seq)  # a duplicate, right behind its original
    return sent, queues, lost


@given(spread())
def test_counts_merge_exactly_and_loss_timing_only_from_one_queue(
        case: tuple[int, list[list[int]], set[int]]) -> None:
    sent, queues, lost = case
    (s,) = build_run_result(["spread"], [0], _merged(queues, sent), {}).streams
    used = sum(1 for q in queues if q)
    assert s.rx_queues == used
    assert s.lost == len(lost)  # from counts: exact however the frames were spread
    assert s.rx_unique == sent - len(lost)
    if used <= 1:
        assert s.loss_timing_unavailable is None
        only = next((q for q in queues if q), [])
        assert s.gap_events == _per_queue_tracking(only)["gap_events"]
        assert s.gap_events == 0 or lost
        require_loss_timing([s], "recovery")
    else:
        assert s.gap_events is None and s.last_gap_tx_ns is None
        assert f"arrived on {used} RX queues" in (s.loss_timing_unavailable or "")
        with pytest.raises(NetloadConfigError, match=r"recovery: stream 'spread' arrived on"):
            require_loss_timing([s], "recovery")


def test_a_lossless_stream_spread_over_two_queues_shows_gaps_on_each() -> None:
    """Why the per-queue gaps are withheld: every frame after the first on each queue
    follows one the other queue received."""
    even, odd = list(range(0, 1000, 2)), list(range(1, 1000, 2))
    assert _per_queue_tracking(even)["gap_events"] == 499
    assert _per_queue_tracking(odd)["gap_events"] == 500
    arrays = _merged([even, odd], 1000)
    assert int(arrays["rx"]["gap_events"][0]) == 999  # the engine's raw sum
    (s,) = build_run_result(["spread"], [0], arrays, {}).streams
    assert (s.lost, s.duplicates, s.reordered, s.rx_queues) == (0, 0, 0, 2)
    assert (s.gap_events, s.last_gap_tx_ns) == (None, None)


def test_arrays_of_an_engine_before_abi_13_read_as_one_queue() -> None:
    arrays = _merged([[0, 2]], 3)
    old = [(n, t) for n, t in RX_STREAM_STATS_FIELDS if n != "rx_queues"]
    rx = np.zeros(1, dtype=old)
    for name, _ in old:
        rx[name] = arrays["rx"][name]
    (s,) = build_run_result(["s"], [0], {**arrays, "rx": rx}, {}).streams
    assert (s.rx_queues, s.gap_events, s.lost) == (1, 1, 1)


def test_require_loss_timing_names_the_stream_and_the_fix() -> None:
    ok = SimpleNamespace(loss_timing_unavailable=None)
    require_loss_timing([ok, ok], "reset")
    bad = SimpleNamespace(loss_timing_unavailable="stream 'x' arrived on 2 RX queues ...")
    with pytest.raises(NetloadConfigError, match=r"^reset: stream 'x' arrived on 2 RX"):
        require_loss_timing([ok, bad], "reset")
