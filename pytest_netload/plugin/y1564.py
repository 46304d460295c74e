"""The `y1564` marker and fixture: ITU-T Y.1564 service activation as pytest checks.

``@pytest.mark.y1564(services=[...])`` names the services (y1564/services.py) and the
test settings; its arguments are checked at collection, so a SAC without units, an
EIR without a CIR or two services whose classifiers overlap fail the test before any
traffic, naming the service and the field. The `y1564` fixture gives a
`bench.y1564.Y1564Runner` on the marker's wire (docs/y1564.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..errors import NetloadConfigError

if TYPE_CHECKING:
    from ..bench.settings import Y1564Mark
    from ..bench.y1564 import Y1564Runner

__all__ = ["Y1564_ARGS", "Y1564_HELP", "parse_y1564", "y1564"]

Y1564_HELP = (
    "y1564(services=[...], steps=[0.25, 0.5, 0.75, 1.0], step_duration='10s', eir_step=True, "
    "policing=True, policing_overshoot=1.25, ir_tolerance=0.02, spt_duration='15m', "
    "interval='1s', availability_threshold=0.5, availability_n=10, fdv_quantile=99.9, "
    "drain='0.1s', retries=2, wire=0, learning_frames=10, checkpoint=True, "
    "checkpoint_every='10s', bursts=False, burst_sizes=[1.0], burst_idle=None, "
    "burst_tolerance=1, direction='one', expect=None): ITU-T Y.1564 "
    "service activation with the y1564 fixture. Each service: {'name', 'cir' (e.g. "
    "'10Mbit/s', L2 with FCS), 'eir', 'cbs', 'ebs', 'frame_size', 'dscp', 'pcp', 'vlan', "
    "'dport', 'colour' ('dscp' or 'pcp'), 'green', 'yellow', 'sac': {'flr': '0.1%', "
    "'ftd': '10ms', 'fdv': '1ms', 'availability': '99.9%'}, 'stream' (its traffic: any "
    "form rfc2544's stream= takes; default UDP)}; expect: the frames every run compares "
    "(y1564.frames). Provided by pytest-netload.")
Y1564_ARGS = ("services", "steps", "step_duration", "eir_step", "policing",
              "policing_overshoot", "ir_tolerance", "spt_duration", "interval",
              "availability_threshold", "availability_n", "fdv_quantile", "drain", "retries",
              "wire", "learning_frames", "checkpoint", "checkpoint_every", "bursts",
              "burst_sizes", "burst_idle", "burst_tolerance", "direction", "expect")


def parse_y1564(mark: pytest.Mark) -> Y1564Mark:
    """The marker's settings (bench/settings.py reads and checks them: the services
    without a line rate, the fixture checks CIR against the topology's)."""
    from ..bench.settings import Y1564Mark

    return Y1564Mark.from_marker(mark)


@pytest.fixture
def y1564(request: pytest.FixtureRequest, netload_engine: Any, netload_ports: Any,
          _netload_built: Any) -> Y1564Runner:
    """Y.1564 procedures on the marker's services and wire: `y1564.sct()`,
    `y1564.bursts()`, `y1564.spt()`, `y1564.run()` (docs/y1564.md); the DUT's hooks
    (docs/hooks.md) run around every step, interval and burst."""
    from ..bench.settings import Y1564Mark
    from ..bench.y1564 import Y1564Runner
    from .fixtures import _engine_of_wire, _settings, declared_burst_limit, report_dir, trial_hooks

    mark = request.node.get_closest_marker("y1564")
    parsed = parse_y1564(mark) if mark is not None else Y1564Mark()
    settings = _settings(request.config)
    try:
        return Y1564Runner(_engine_of_wire(netload_ports, parsed.wire, netload_engine),
                           netload_ports, parsed, test=request.node.nodeid,
                           step_override_s=settings.trial_duration_s,
                           checkpoint_dir=report_dir(request.config),
                           hooks=trial_hooks(request, _netload_built[1]),
                           burst_limit=declared_burst_limit(request.config,
                                                            _netload_built))
    except NetloadConfigError as exc:
        raise NetloadConfigError(f"@pytest.mark.y1564: {exc}") from None
