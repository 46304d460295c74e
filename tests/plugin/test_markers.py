"""Markers: arguments checked at collection, frame-size parametrisation ids."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_netload.plugin.markers import parse_rfc2544

pytest_plugins = ["pytester"]


def test_frame_size_parametrisation_has_readable_ids(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        @pytest.mark.rfc2544(frame_sizes=[64, 1518, "imix"])
        def test_x(frame_size):
            pass

        @pytest.mark.netload(frame_sizes=[128])
        def test_y(frame_size):
            assert frame_size == 128

        @pytest.mark.netload  # a netload test taking frame_size: the RFC's sizes
        def test_default(frame_size):
            pass

        @pytest.mark.parametrize("frame_size", [99])
        @pytest.mark.rfc2544(frame_sizes=[64])
        def test_own(frame_size):
            assert frame_size == 99
    """)
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines([
        "*test_x[[]64B[]]", "*test_x[[]1518B[]]", "*test_x[[]imix[]]", "*test_y[[]128B[]]",
        "*test_default[[]64B[]]", "*test_default[[]1280B[]]", "*test_default[[]1518B[]]",
        "*test_own[[]99[]]",
    ])
    assert "test_default[" in result.stdout.str() and result.stdout.str().count("test_default[") == 7
    result = pytester.runpytest("-k", "test_y or test_own")
    result.assert_outcomes(passed=2)


@pytest.mark.parametrize(("marker", "expected"), [
    ("rfc2544(frame_sizes=[32])", ("*test_bad: @pytest.mark.rfc2544: frame_sizes: 32 is not a "
                                  "frame size; give bytes with FCS from 64 to 9216*")),
    ("rfc2544(frame_sizes=[])", "*test_bad: @pytest.mark.rfc2544: frame_sizes is empty*"),
    ("rfc2544(loss_tolerance=1.5)", ("*test_bad: @pytest.mark.rfc2544: loss_tolerance=1.5: give a "
                                    "ratio in [[]0, 1)*")),
    ("rfc2544(trial_duration='-1s')", "*test_bad: @pytest.mark.rfc2544: *trial_duration*"),
    ("rfc2544(trial_duration=0)", ("*test_bad: @pytest.mark.rfc2544: trial_duration 0 is zero; "
                                  "give a duration > 0*")),
    ("rfc2544(trial_duration='25h')", ("*test_bad: @pytest.mark.rfc2544: trial_duration '25h' is "
                                      "90000 s, more than 24 h (86400 s)*")),
    ("rfc2544(drain='nan')", "*test_bad: @pytest.mark.rfc2544: drain 'nan' is not finite*"),
    ("rfc2544(warmup='-2s')", "*test_bad: @pytest.mark.rfc2544: warmup '-2s' is negative*"),
    ("rfc2544(steady_state='strict')", ("*test_bad: @pytest.mark.rfc2544: steady_state='strict': "
                                       "use one of [[]'warn', 'fail', 'off'[]]*")),
    ("rfc2544(framesizes=[64])", ("*test_bad: @pytest.mark.rfc2544: unknown argument "
                                 "'framesizes'; rfc2544 takes frame_sizes, *")),
    ("rfc2544(search='golden')", "*search='golden': use one of [[]'binary', 'mlrsearch'[]]*"),
    ("rfc2544(64)", "*positional arguments [[]64[]]: write them as keywords*"),
    ("rfc2544(goals='ci-fast')", ("*goals applies to search='mlrsearch', but the search is "
                                 "binary*")),
    ("rfc2544(search='mlrsearch', max_trials=3)", ("*max_trials and resolution bound the binary "
                                                  "search*")),
    ("rfc2544(search='mlrsearch', goals='fastest')", "*fastest*"),
    ("rfc2544(resolution=0)", ("*test_bad: @pytest.mark.rfc2544: resolution=0: give a ratio of "
                              "the lower bound in (0, 1), e.g. 0.005 (0.5 %), or a rate, e.g. "
                              "'100pps' or '1Mbit/s'*")),
    ("rfc2544(resolution=1)", "*resolution=1: give a ratio of the lower bound in (0, 1)*"),
    ("rfc2544(resolution=-0.1)", "*resolution=-0.1: give a ratio of the lower bound*"),
    ("rfc2544(resolution=float('nan'))", "*resolution=nan: give a ratio of the lower bound*"),
    ("rfc2544(resolution=True)", "*resolution=True: give a ratio of the lower bound*"),
    ("rfc2544(resolution='fast')", "*resolution='fast': give a ratio of the lower bound*"),
    ("rfc2544(resolution='0pps')", "*resolution='0pps': give a ratio of the lower bound*"),
    ("rfc2544(resolution='1%')", ("*resolution='1%': a share of the line rate is not a search "
                                 "resolution*")),
    ("rfc2544(max_trials=3)", ("*resolution 0.5% of the lower bound cannot be reached within "
                              "max_trials=3: it takes 10 trials*raise max_trials to 10 or "
                              "coarsen the resolution, e.g. resolution=0.5*")),
    ("netload(rate='fast')", "*test_bad: @pytest.mark.netload: *rate*fast*"),
    ("netload(pattern='zigzag')", "*test_bad: @pytest.mark.netload: *zigzag*"),
    ("netload(flows=0)", "*test_bad: @pytest.mark.netload: flows=0: give a whole number from 1*"),
])
def test_wrong_marker_arguments_fail_at_collection(pytester: pytest.Pytester, marker: str,
                                                   expected: str) -> None:
    pytester.makepyfile(f"""
        import pytest

        @pytest.mark.{marker}
        def test_bad():
            pass

        def test_fine():
            pass
    """)
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(["*ERROR collecting*", expected])
    assert "Traceback" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_rfc2544_defaults_follow_the_rfc() -> None:
    from pytest_netload.bench.settings import Rfc2544Mark

    mark = Rfc2544Mark()
    assert mark.frame_sizes == (64, 128, 256, 512, 1024, 1280, 1518)
    assert mark.trial_duration_s == 60.0 and mark.drain_s == 2.0 and mark.loss_tolerance == 0
    assert mark.steady_state == "warn"


@pytest.mark.parametrize("mode", ["warn", "fail", "off"])
def test_steady_state_modes(mode: str) -> None:
    assert parse_rfc2544(pytest.mark.rfc2544(steady_state=mode).mark).steady_state == mode


@pytest.mark.parametrize(("kwargs", "ratio", "pps_at_64B"), [
    ({}, 0.005, None),
    ({"resolution": 0.01}, 0.01, None),
    ({"resolution": 0.5, "max_trials": 3}, 0.5, None),
    ({"resolution": "100pps"}, None, 100.0),
    ({"resolution": "1Mbit/s"}, None, 1e6 / (64 * 8)),          # at L2: 64 bytes a frame
    ({"resolution": "1Mbit/s@l1"}, None, 1e6 / (84 * 8)),
    ({"resolution": "100pps", "max_trials": 2}, None, 100.0),   # its reach needs the maximum
])
def test_resolution_is_a_ratio_or_a_rate(kwargs: dict[str, Any], ratio: float | None,
                                        pps_at_64B: float | None) -> None:
    mark = parse_rfc2544(pytest.mark.rfc2544(**kwargs).mark)
    assert mark.resolution_ratio == ratio
    assert mark.resolution_pps(64.0) == pytest.approx(pps_at_64B)
