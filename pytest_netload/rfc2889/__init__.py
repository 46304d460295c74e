"""RFC 2889 (benchmarking methodology for LAN switching devices) procedures as pure
logic over the search core's one `Measurer` protocol, each standard trial's
specialisation named by an alias (`ForwardingMeasurer = Measurer[float, MeshTrial]`, ...),
their common settings (duration, retries, on_trial) as one `TrialSettings`.

Nothing here imports the engine: the bench binds each protocol to real trials, and unit
tests bind them to fake switches. Procedures and what they measure:

* `fully_meshed` (§5.1, `ForwardingMeasurer`): forwarding rate at the maximum offered
  load and throughput of N ports all sending to all.
* `partially_meshed` (§5.2, `PartialMeshMeasurer`): the same two figures for one port
  sending to the N - 1 others (one-to-many) or receiving from them (many-to-one).
* `maximum_forwarding_rate` (§5.6, `ForwardingMeasurer`): the highest forwarding rate
  over a range of loads, and forward pressure at an 88-bit gap where the generator
  can send it (else skipped with the reason).
* `errored_frame_filtering` (§5.9, `ErroredMeasurer`): undersized, oversized and
  bad-FCS frames counted as forwarded or filtered, each kind the generator cannot send
  skipped with the reason.
* `congestion_control` (§5.5, `CongestionMeasurer`): head-of-line blocking and back
  pressure over 4 ports with one port congested at 150 %.
* `address_caching_capacity` (§5.7) and `address_learning_rate` (§5.8,
  `AddressMeasurer`): the address table's size and how fast it fills.
* `broadcast_forwarding` (§5.10, `BroadcastMeasurer`): broadcast throughput, forwarding
  rate and per-port latency from one port to all others.

Defaults. TRIAL_S, 30 s, is the trial duration RFC 2889 recommends for its forwarding
tests (like RFC 2544 §24's throughput trials; the RFC lets it range from 1 to 300 s);
the RFC text could not be consulted from this workplace, so the figure is stated
from the RFC as commonly read and applied to every timed procedure here. The address
defaults are this package's choice, not the RFC's: the RFC leaves the initial counts
and the rates to the tester (they depend on the switch and its aging time), so the
high count is 64 Ki addresses and both rates 1,000 fps, slow enough for any switch to
forward. Search resolutions follow RFC 2544 (0.5 % of the lower bound for loads), 1 %
for learning rates.
"""

from ..search.resolution import DEFAULT_RESOLUTION_RATIO, DEFAULT_RETRIES
from ._search import TRIAL_S
from .address import (
    DEFAULT_HIGH_ADDRESSES,
    DEFAULT_LEARNING_MAX_TRIALS,
    DEFAULT_LEARNING_RATE_FPS,
    DEFAULT_LEARNING_RESOLUTION,
    DEFAULT_MIN_RATE_FPS,
    DEFAULT_TEST_RATE_FPS,
    AddressCapacityResult,
    AddressLoad,
    AddressMeasurer,
    AddressTrial,
    LearningRateResult,
    address_caching_capacity,
    address_learning_rate,
)
from .broadcast import BroadcastMeasurer, BroadcastResult, BroadcastTrial, broadcast_forwarding
from .congestion import (
    CONGESTED_OVERLOAD,
    DEFAULT_TOLERANCE,
    EXPECTED_CONGESTED_LOSS,
    CongestionMeasurer,
    CongestionResult,
    CongestionTrial,
    StreamCounts,
    congestion_control,
)
from .errored import (
    ERRORED_KINDS,
    ErroredCase,
    ErroredKind,
    ErroredMeasurer,
    ErroredOutcome,
    ErroredResult,
    ErroredTrial,
    errored_frame_filtering,
)
from .mesh import ForwardingMeasurer, MeshResult, MeshTrial, fully_meshed
from .partial import (
    PARTIAL_DIRECTIONS,
    PartialDirection,
    PartialMeshMeasurer,
    PartialMeshResult,
    PartialMeshTrial,
    partially_meshed,
)
from .ports import EXAMPLE_TOPOLOGY, MIN_PORTS, check_port_count
from .pressure import (
    DEFAULT_LOAD_STEPS,
    MIN_GAP_BITS,
    PRESSURE_GAP_BITS,
    ForwardPressure,
    MfrResult,
    load_steps,
    maximum_forwarding_rate,
    pressure_load_pps,
)

__all__ = [
    "CONGESTED_OVERLOAD",
    "DEFAULT_HIGH_ADDRESSES",
    "DEFAULT_LOAD_STEPS",
    "ERRORED_KINDS",
    "MIN_GAP_BITS",
    "PARTIAL_DIRECTIONS",
    "PRESSURE_GAP_BITS",
    "ErroredCase",
    "ErroredKind",
    "ErroredMeasurer",
    "ErroredOutcome",
    "ErroredResult",
    "ErroredTrial",
    "ForwardPressure",
    "MfrResult",
    "PartialDirection",
    "PartialMeshMeasurer",
    "PartialMeshResult",
    "PartialMeshTrial",
    "errored_frame_filtering",
    "load_steps",
    "maximum_forwarding_rate",
    "partially_meshed",
    "pressure_load_pps",
    "DEFAULT_LEARNING_MAX_TRIALS",
    "DEFAULT_LEARNING_RATE_FPS",
    "DEFAULT_LEARNING_RESOLUTION",
    "DEFAULT_MIN_RATE_FPS",
    "DEFAULT_RESOLUTION_RATIO",
    "DEFAULT_RETRIES",
    "DEFAULT_TEST_RATE_FPS",
    "DEFAULT_TOLERANCE",
    "EXAMPLE_TOPOLOGY",
    "EXPECTED_CONGESTED_LOSS",
    "MIN_PORTS",
    "TRIAL_S",
    "AddressCapacityResult",
    "AddressLoad",
    "AddressMeasurer",
    "AddressTrial",
    "BroadcastMeasurer",
    "BroadcastResult",
    "BroadcastTrial",
    "CongestionMeasurer",
    "CongestionResult",
    "CongestionTrial",
    "ForwardingMeasurer",
    "LearningRateResult",
    "MeshResult",
    "MeshTrial",
    "StreamCounts",
    "address_caching_capacity",
    "address_learning_rate",
    "broadcast_forwarding",
    "check_port_count",
    "congestion_control",
    "fully_meshed",
]
