"""ITU-T Y.1564 Ethernet service activation as pure procedures over a `ServiceMeasurer`.

services.py declares the services (bandwidth profile, classifier, SAC) and checks them
together; sct.py is the service configuration test (one service, step by step), spt.py the
service performance test (all services at CIR for 15 min .. 24 h, with availability from
availability.py and a resumable checkpoint from checkpoint.py), bursts.py the CBS and EBS
burst tests of the 2016 edition. Nothing here imports the
engine: the bench binds the measurer to real runs, unit tests to fake DUT models.
"""

from .availability import (AVAILABILITY_N, AVAILABILITY_THRESHOLD, AvailabilityResult,
                           AvailabilityTracker, availability)
from .bursts import (BURST_SHARES, BURST_TOLERANCE_FRAMES, Burst, BurstMeasurer, BurstResult,
                     BurstSample, BurstStep, bucket_passes, burst_plan, burst_test,
                     full_burst_frames)
from .checks import Check
from .measurer import FDV_QUANTILE, ServiceMeasurer, ServiceSample
from .sct import (IR_TOLERANCE, POLICING_OVERSHOOT, SCT_STEP_S, SCT_STEPS, SctResult, SctStep,
                  service_configuration_test)
from .services import Classifier, Sac, Service, check_services, check_stream_directions
from .spt import (CHECKPOINT_EVERY_S, INTERVAL_S, MAX_INVALID_RATIO, SPT_DURATION_S,
                  SptResult, SptService, service_performance_test)

__all__ = [
    "AVAILABILITY_N",
    "AVAILABILITY_THRESHOLD",
    "BURST_SHARES",
    "BURST_TOLERANCE_FRAMES",
    "CHECKPOINT_EVERY_S",
    "FDV_QUANTILE",
    "INTERVAL_S",
    "IR_TOLERANCE",
    "MAX_INVALID_RATIO",
    "POLICING_OVERSHOOT",
    "SCT_STEPS",
    "SCT_STEP_S",
    "SPT_DURATION_S",
    "AvailabilityResult",
    "AvailabilityTracker",
    "Burst",
    "BurstMeasurer",
    "BurstResult",
    "BurstSample",
    "BurstStep",
    "Check",
    "Classifier",
    "Sac",
    "Service",
    "ServiceMeasurer",
    "ServiceSample",
    "SctResult",
    "SctStep",
    "SptResult",
    "SptService",
    "availability",
    "bucket_passes",
    "burst_test",
    "check_services",
    "check_stream_directions",
    "full_burst_frames",
    "service_configuration_test",
    "service_performance_test",
]
