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
    from ..bench.y1564 import Y1564Mark, Y1564Runner

__all__ = ["Y1564_ARGS", "Y1564_HELP", "parse_y1564", "y1564"]

Y1564_HELP = (
    "y1564(services=[...], steps=[0.25, 0.5, 0.75, 1.0], step_duration='10s', eir_step=True, "
    "policing=True, policing_overshoot=1.25, ir_tolerance=0.02, spt_duration='15m', "
    "interval='1s', availability_threshold=0.5, availability_n=10, fdv_quantile=99.9, "
    "drain='0.1s', retries=2, wire=0, learning_frames=10, checkpoint=True, "
    "checkpoint_every='10s'): ITU-T Y.1564 "
    "service activation with the y1564 fixture. Each service: {'name', 'cir' (e.g. "
    "'10Mbit/s', L2 with FCS), 'eir', 'cbs', 'ebs', 'frame_size', 'dscp', 'pcp', 'vlan', "
    "'dport', 'sac': {'flr': '0.1%', 'ftd': '10ms', 'fdv': '1ms', 'availability': "
    "'99.9%'}}. Provided by pytest-netload.")
Y1564_ARGS = ("services", "steps", "step_duration", "eir_step", "policing",
              "policing_overshoot", "ir_tolerance", "spt_duration", "interval",
              "availability_threshold", "availability_n", "fdv_quantile", "drain", "retries",
              "wire", "learning_frames", "checkpoint", "checkpoint_every")


def _ratio(name: str, value: Any, low: float, high: float, example: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not low <= value <= high:
        raise NetloadConfigError(f"{name}={value!r}: give a number from {low:g} to {high:g}, "
                                 f"e.g. {example}")
    return float(value)


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise NetloadConfigError(f"{name}={value!r}: give True or False")
    return value


def parse_y1564(mark: pytest.Mark) -> Y1564Mark:
    """The marker's arguments as a `Y1564Mark`; the services checked (without a line
    rate: the fixture checks CIR against the topology's)."""
    from ..bench.y1564 import Y1564Mark
    from ..units import run_seconds
    from ..y1564 import check_services
    from .markers import _count, _kwargs

    kw = _kwargs(mark, Y1564_ARGS)
    out: dict[str, Any] = {}
    for key, value in kw.items():
        if key == "services":
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                raise NetloadConfigError(f"services={value!r}: give a list of services, each "
                                         "a dict like {'name': 'data', 'cir': '10Mbit/s'}")
            out["services"] = check_services(list(value), None)
        elif key == "steps":
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                raise NetloadConfigError(f"steps={value!r}: give shares of the CIR, e.g. "
                                         "[0.25, 0.5, 0.75, 1.0]")
            out["steps"] = tuple(value)  # the procedure checks them (names `steps`)
        elif key in ("step_duration", "spt_duration", "interval", "checkpoint_every"):
            out[f"{key}_s"] = run_seconds(value, what=key)
        elif key == "drain":
            out["drain_s"] = run_seconds(value, what="drain", zero_ok=True)
        elif key in ("eir_step", "policing", "checkpoint"):
            out[key] = _flag(key, value)
        elif key == "policing_overshoot":
            out[key] = _ratio(key, value, 1.0001, 10.0, "1.25 (125 % of CIR+EIR)")
        elif key == "ir_tolerance":
            out[key] = _ratio(key, value, 0.0, 0.5, "0.02 (2 %)")
        elif key == "availability_threshold":
            out[key] = _ratio(key, value, 0.0, 1.0, "0.5 (an interval losing over half)")
        elif key == "fdv_quantile":
            out[key] = _ratio(key, value, 50.0, 100.0, "99.9")
        elif key == "availability_n":
            out[key] = _count(key, value, 1, 3600)
        elif key == "retries":
            out[key] = _count(key, value, 0, 100)
        elif key == "wire":
            out[key] = _count(key, value, 0, 1023)
        elif key == "learning_frames":
            out[key] = _count(key, value, 0, 1_000_000)
    if "steps" in out:
        from ..y1564.sct import check_steps

        out["steps"] = check_steps(out["steps"])
    return Y1564Mark(**out)



@pytest.fixture
def y1564(request: pytest.FixtureRequest, netload_engine: Any, netload_ports: Any) -> Y1564Runner:
    """Y.1564 procedures on the marker's services and wire: `y1564.sct()`,
    `y1564.spt()`, `y1564.run()` (docs/y1564.md)."""
    from ..bench.y1564 import Y1564Mark, Y1564Runner
    from .fixtures import _engine_of_wire, _settings, report_dir

    mark = request.node.get_closest_marker("y1564")
    parsed = parse_y1564(mark) if mark is not None else Y1564Mark()
    settings = _settings(request.config)
    try:
        return Y1564Runner(_engine_of_wire(netload_ports, parsed.wire, netload_engine),
                           netload_ports, parsed, test=request.node.nodeid,
                           step_override_s=settings.trial_duration_s,
                           checkpoint_dir=report_dir(request.config))
    except NetloadConfigError as exc:
        raise NetloadConfigError(f"@pytest.mark.y1564: {exc}") from None
