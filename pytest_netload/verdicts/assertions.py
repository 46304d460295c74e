"""Assertion helpers (one module per verdict: latency_verdict, loss_verdict,
throughput_verdict; explain holds the conditions every message carries): a DUT verdict with the measured value beside the required one.

``assert_latency``, ``assert_loss`` and ``assert_throughput`` return None when the check
passes and raise ``AssertionError`` (pytest: FAIL) when it does not, with a message of the form::

    p99 latency 61.2us is not < 50us
    measured: p99 61.2us [95% CI 59.8us, 63.1us], 100,003 samples
    required: p99 < 50us (point estimate)
    conditions: frame size 64B, offered 1,000,000 pps (672.0 Mbit/s at L1), duration 10s, ...

Bad arguments (an unknown keyword, a bound that does not parse, a result without the data the
check needs) raise :class:`~pytest_netload.errors.NetloadConfigError` (pytest: ERROR). A
throughput the generator bounded (a lower bound: the DUT passed the highest load the generator
could offer) that does not clear ``at_least`` raises :class:`~pytest_netload.errors.GeneratorLimit`
(pytest: ERROR): the DUT was not judged. Every
check, passed or failed, is kept with :func:`recording.record_verdict` before anything is
raised. Methods: percentiles and their confidence intervals are those of
:class:`~pytest_netload.measure.latency.LatencyResult`; loss bounds are Clopper-Pearson
(:func:`stats.clopper_pearson_upper`). ``assert_spread``, ``assert_delivered_to`` and
``assert_not_delivered`` (landing_verdict) judge where a stream's frames landed.
"""

from __future__ import annotations

from .landing_verdict import assert_delivered_to, assert_not_delivered, assert_spread
from .frames_verdict import assert_frames_match
from .latency_verdict import assert_latency
from .loss_verdict import assert_loss
from .sac_verdict import assert_sac
from .switch_verdict import assert_rfc2889
from .throughput_verdict import assert_throughput

__all__ = ["assert_delivered_to", "assert_frames_match", "assert_latency", "assert_loss",
           "assert_not_delivered", "assert_rfc2889", "assert_sac", "assert_spread",
           "assert_throughput"]
