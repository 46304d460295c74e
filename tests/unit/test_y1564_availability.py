"""Y.1563 availability over one-second intervals: the state machine and its edge cases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.y1564 import AvailabilityTracker, availability

flrs = st.lists(st.one_of(st.sampled_from([0.0, 0.1, 0.5, 0.51, 0.9, 1.0]), st.none(),
                          st.floats(0, 1)), max_size=200)


def test_defaults_are_those_of_y1563() -> None:
    t = AvailabilityTracker()
    assert (t.threshold, t.n) == (0.5, 10)


def test_an_outage_of_n_seconds_or_more_is_unavailable_exactly_over_it() -> None:
    r = availability([0.0] * 5 + [1.0] * 12 + [0.0] * 20)
    assert r.flags == (True,) * 5 + (False,) * 12 + (True,) * 20
    assert (r.available, r.unavailable, r.ses, r.excluded) == (25, 12, 12, 0)
    assert r.ratio == 25 / 37


def test_a_run_of_fewer_than_n_ses_stays_available() -> None:
    r = availability([0.0] * 3 + [1.0] * 9 + [0.0] * 3)
    assert all(r.flags) and r.ratio == 1.0 and r.ses == 9


def test_fewer_than_n_clean_intervals_do_not_end_unavailable_time() -> None:
    seq = [1.0] * 10 + [0.0] * 9 + [1.0] * 10 + [0.0] * 10
    r = availability(seq)
    assert r.flags == (False,) * 29 + (True,) * 10
    # at the end, a clean run shorter than n keeps the state: still unavailable
    assert availability([1.0] * 10 + [0.0] * 3).flags == (False,) * 13


def test_the_threshold_is_exceeded_not_reached() -> None:
    assert availability([0.5] * 20).ratio == 1.0
    assert availability([0.51] * 20).ratio == 0.0
    assert availability([0.1] * 3, threshold=0.0, n=3).ratio == 0.0


def test_excluded_intervals_neither_count_nor_break_a_run() -> None:
    seq = [1.0] * 5 + [None] * 3 + [1.0] * 5 + [0.0] * 10
    r = availability(seq)
    assert r.flags == (False,) * 5 + (None,) * 3 + (False,) * 5 + (True,) * 10
    assert (r.available, r.unavailable, r.excluded) == (10, 10, 3)
    assert availability([None] * 5).ratio is None  # nothing judged
    assert availability([]).ratio is None


def test_streaming_tells_each_decision_at_most_n_minus_1_intervals_late() -> None:
    decided: list[tuple[int, bool]] = []
    t = AvailabilityTracker(0.5, 3, on_decide=lambda i, a: decided.append((i, a)))
    for k, flr in enumerate([0.0, 1.0, 1.0, 1.0, 0.0, 0.0]):
        t.add(flr)
        assert t.pending < 3 and all(i <= k for i, _ in decided)
    assert decided == [(0, True), (1, False), (2, False), (3, False)]
    assert t.pending == 2
    assert t.flags == (True, False, False, False, False, False)  # pending read as the state
    r = t.finish()
    assert decided[-2:] == [(4, False), (5, False)] and r.unavailable == 5 and t.finish() == r
    with pytest.raises(NetloadConfigError, match="after finish"):
        t.add(0.0)


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"threshold": 1.0}, "availability_threshold=1.0"), ({"threshold": -0.1}, "threshold"),
    ({"threshold": "0.5"}, "threshold"), ({"n": 0}, "availability_n=0"),
    ({"n": 2.5}, "availability_n"), ({"n": True}, "availability_n"),
])
def test_bad_parameters_name_themselves(kwargs: dict[str, object], word: str) -> None:
    with pytest.raises(NetloadConfigError, match=word):
        AvailabilityTracker(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("flr", [-0.1, 1.5, float("nan"), "0", True])
def test_a_bad_flr_names_its_interval(flr: object) -> None:
    t = AvailabilityTracker()
    t.add(0.0)
    with pytest.raises(NetloadConfigError, match=r"interval 1: flr="):
        t.add(flr)  # type: ignore[arg-type]


def _reference(seq: list[float | None], threshold: float, n: int) -> list[bool | None]:
    """Y.1563 by its words, quadratic: at each judged interval look ahead n judged ones."""
    judged = [i for i, f in enumerate(seq) if f is not None]
    ses = [seq[i] > threshold for i in judged]  # type: ignore[operator]
    out: list[bool | None] = [None] * len(seq)
    state, k = True, 0
    while k < len(judged):
        window = ses[k:k + n]
        if len(window) == n and all(s == state for s in window):
            state = not state
            for j in range(k, k + n):
                out[judged[j]] = state
            k += n
        else:
            out[judged[k]] = state
            k += 1
    return out


@settings(max_examples=300)
@given(flrs, st.sampled_from([0.0, 0.5, 0.9]), st.integers(1, 12))
def test_properties(seq: list[float | None], threshold: float, n: int) -> None:
    r = availability(seq, threshold, n)
    assert r.ratio is None or 0.0 <= r.ratio <= 1.0
    assert r.available + r.unavailable + r.excluded == len(seq) == len(r.flags)
    assert [f is None for f in r.flags] == [f is None for f in seq]
    assert list(r.flags) == _reference(seq, threshold, n)
    t = AvailabilityTracker(threshold, n)  # streaming == batch
    for f in seq:
        t.add(f)
    assert t.available_count == r.available and t.unavailable_count == r.unavailable
    assert t.availability_ratio == r.ratio and t.flags == r.flags


@given(st.lists(st.sampled_from([0.0, 0.5]), max_size=300), st.integers(1, 10))
def test_all_clean_is_fully_available(seq: list[float], n: int) -> None:
    r = availability(seq, 0.5, n)
    assert r.ratio == (1.0 if seq else None) and r.unavailable == 0


@given(st.lists(st.integers(0, 9), max_size=30), st.integers(2, 10))
def test_runs_shorter_than_n_never_make_it_unavailable(runs: list[int], n: int) -> None:
    seq: list[float] = []
    for length in runs:
        seq += [1.0] * min(length, n - 1) + [0.0]
    assert availability(seq, 0.5, n).unavailable == 0


@given(st.integers(0, 30), st.integers(1, 12), st.integers(0, 40), st.booleans())
def test_one_run_of_n_or_more_is_unavailable_exactly_over_it(before: int, n: int, extra: int,
                                                            tail: bool) -> None:
    length = n + extra
    seq = [0.0] * before + [1.0] * length + ([0.0] * n if tail else [])
    r = availability(seq, 0.5, n)
    assert r.flags == (True,) * before + (False,) * length + ((True,) * n if tail else ())


def test_a_day_of_intervals_is_fast_and_small() -> None:
    import time
    t0 = time.perf_counter()
    r = availability(([0.0] * 3590 + [1.0] * 10) * 24)
    assert r.unavailable == 240 and r.available == 86_400 - 240
    assert time.perf_counter() - t0 < 5
