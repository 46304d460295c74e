"""RFC 2889 §5.9 on fake switches: each kind the generator can send is one trial,
counted forwarded or filtered; a kind it cannot send is skipped with the binding's
reason and the others still run; bad inputs name their field."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.rfc2889 import (
    ERRORED_KINDS,
    ErroredCase,
    ErroredTrial,
    errored_frame_filtering,
)
from pytest_netload.search import TrialSettings

ONE_S = TrialSettings(duration_s=1.0, retries=1)


class Filter:
    """Forwards `share[kind]` of each kind; the first `invalid` trials are invalid."""

    def __init__(self, share: Mapping[str, float], invalid: int = 0) -> None:
        self.share, self.invalid = share, invalid
        self.calls: list[tuple[str, float]] = []

    def measure(self, case: ErroredCase, duration_s: float) -> ErroredTrial:
        self.calls.append((case.kind, duration_s))
        if len(self.calls) <= self.invalid:
            return ErroredTrial(case, 0, 0, duration_s, valid=False, invalid_reason="tx short")
        tx = 1000
        return ErroredTrial(case, tx, round(tx * self.share[case.kind]), duration_s)


def test_a_skipped_kind_keeps_its_reason_and_the_others_run() -> None:
    cases = (ErroredCase("undersized", skipped_reason="the engine pads"),
             ErroredCase("oversized", frame_size=1519),
             ErroredCase("bad_fcs", skipped_reason="the MAC computes the FCS"))
    switch = Filter({"oversized": 0.0})
    result = errored_frame_filtering(switch, cases=cases, settings=ONE_S)
    assert switch.calls == [("oversized", 1.0)]
    verdicts = {o.case.kind: o.verdict for o in result.outcomes}
    assert verdicts == {"undersized": "skipped", "oversized": "filtered", "bad_fcs": "skipped"}
    assert result.outcome("undersized").reason == "the engine pads"
    assert result.all_filtered is True
    d = result.as_dict()
    assert d["procedure"] == "rfc2889_errored_frame_filtering"
    over = d["outcomes"][1]
    assert over == {"kind": "oversized", "frame_size": 1519, "verdict": "filtered",
                    "skipped_reason": None, "tx": 1000, "forwarded": 0, "filtered": 1000}
    assert d["outcomes"][0]["tx"] is None and len(d["trials"]) == 1


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3))
def test_verdicts_follow_the_counts(shares: list[float]) -> None:
    share: dict[str, float] = dict(zip(ERRORED_KINDS, shares))
    cases = [ErroredCase(k, frame_size=100) for k in ERRORED_KINDS]
    result = errored_frame_filtering(Filter(share), cases=cases, settings=ONE_S)
    for o in result.outcomes:
        assert o.trial is not None and o.trial.forwarded + o.trial.filtered == o.trial.tx
        fwd = round(1000 * share[o.case.kind])
        assert o.verdict == ("filtered" if fwd == 0 else "forwarded" if fwd == 1000
                             else "partly forwarded")
    assert result.all_filtered is all(round(1000 * s) == 0 for s in shares)


def test_every_kind_skipped_judges_nothing_and_failed_trials_skip_with_reason() -> None:
    skipped = [ErroredCase(k, skipped_reason="cannot") for k in ERRORED_KINDS]
    assert errored_frame_filtering(Filter({}), cases=skipped, settings=ONE_S).all_filtered \
        is None
    result = errored_frame_filtering(Filter({"oversized": 1.0}, invalid=5),
                                     cases=[ErroredCase("oversized", frame_size=1519)],
                                     settings=ONE_S)
    (o,) = result.outcomes
    assert o.verdict == "skipped" and o.reason is not None and "tx short" in o.reason
    assert len(result.trials) == 2


@pytest.mark.parametrize(("make", "match"), [
    (lambda: ErroredCase("runt", frame_size=60),  # type: ignore[arg-type]
     r"errored frame kind 'runt': give one of"),
    (lambda: ErroredCase("oversized"), r"give its frame_size or the reason"),
    (lambda: ErroredCase("oversized", frame_size=1519, skipped_reason="x"),
     r"not both nor neither"),
    (lambda: ErroredCase("bad_fcs", skipped_reason=" "), r"skipped_reason is empty"),
    (lambda: errored_frame_filtering(Filter({}), cases=[]), r"cases=\[\]: give one"),
    (lambda: errored_frame_filtering(Filter({}), cases=[
        ErroredCase("bad_fcs", skipped_reason="x")] * 2), r"each kind once"),
    (lambda: ErroredTrial(ErroredCase("bad_fcs", frame_size=64), -1, 0, 1.0),
     r"errored trial tx=-1"),
])
def test_bad_values_name_their_field(make: object, match: str) -> None:
    with pytest.raises(NetloadConfigError, match=match):
        make()  # type: ignore[operator]
