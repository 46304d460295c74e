"""ITU-T Y.1564 service activation on the built-in netns-policed DUT (about 20 s, root
needed): `.venv/bin/python -m pytest conftest_examples/y1564`; on a DUT of your own:
`... --netload-topology=lab.toml`.

netns-policed polices p0 -> p1 at a CIR of 10 Mbit/s with a 12,500-byte bucket (CBS),
counting frames with their FCS as Y.1564 does. The service configuration test (SCT)
steps one service up to its CIR and then overshoots by 25 % to test the policer; the
service performance test (SPT) runs every service at its CIR at once and judges each
one-second interval for availability. Durations here are short so CI can run it; the
standard's are 15 min / 2 h / 24 h for the SPT (the marker's default is 15 min).

netns-policed is the suite's own topology: a topology given to the session
(--netload-topology, its ini key) replaces it. The service configuration test needs a
DUT that polices at the service's CIR, which a topology file declares with
`[capabilities] policer = "10Mbit/s"` (docs/topology-files.md); on a topology without
one it is skipped, naming what is missing. The service performance test runs anywhere
that carries 8 Mbit/s.
"""

import pytest

from pytest_netload import assert_sac

pytestmark = pytest.mark.netload_topology("netns-policed:cir_bps=10000000,cbs_bytes=12500",
                                          ids=["policed"], default=True)

# The service the policer was configured for: 10 Mbit/s committed, nothing in excess.
INTERNET = {"name": "internet", "cir": "10Mbit/s", "cbs": "12500B", "frame_size": 512,
            "sac": {"flr": "0.1%", "ftd": "10ms", "fdv": "5ms", "availability": "99%"}}

# Two services sharing the policed port, told apart by their DSCP (EF and best effort).
VOICE = {"name": "voice", "cir": "2Mbit/s", "frame_size": 128, "dscp": 46,
         "sac": {"flr": "0.1%", "ftd": "10ms", "fdv": "5ms", "availability": "99.9%"}}
DATA = {"name": "data", "cir": "6Mbit/s", "frame_size": 1024, "dscp": 0,
        "sac": {"flr": "0.1%", "ftd": "20ms", "availability": "99%"}}


@pytest.mark.netload_requires(policer=INTERNET["cir"])
@pytest.mark.y1564(services=[INTERNET], step_duration="1s")
def test_service_configuration(y1564):
    """CIR 25/50/75/100 %, then 125 %: the policer holds the IR at the CIR (+ its
    bucket's burst) and nothing below the CIR is lost."""
    result = y1564.sct("internet")
    assert_sac(result)
    policing = result.steps[-1]
    assert policing.name == "policing"
    assert policing.sample.lost > 0, "the policer dropped nothing at 125 % of its CIR"


@pytest.mark.y1564(services=[VOICE, DATA], spt_duration="6s", interval="1s")
def test_service_performance(y1564):
    """Both services at their CIR at once for 6 s: 8 Mbit/s into the 10 Mbit/s policer,
    every interval available, no frame lost."""
    result = y1564.spt()
    assert_sac(result)
    for service in result.services:
        assert service.availability.ratio == 1.0
