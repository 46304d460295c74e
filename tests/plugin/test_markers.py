"""Markers: arguments checked at collection, frame-size parametrisation ids."""

from __future__ import annotations

import pytest

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
    ("rfc2544(trial_duration=0)", ("*test_bad: @pytest.mark.rfc2544: trial_duration=0: give a "
                                  "duration > 0*")),
    ("rfc2544(framesizes=[64])", ("*test_bad: @pytest.mark.rfc2544: unknown argument "
                                 "'framesizes'; rfc2544 takes frame_sizes, *")),
    ("rfc2544(search='golden')", "*search='golden': use one of [[]'binary', 'mlrsearch'[]]*"),
    ("rfc2544(64)", "*positional arguments [[]64[]]: write them as keywords*"),
    ("rfc2544(goals='ci-fast')", ("*goals applies to search='mlrsearch', but the search is "
                                 "binary*")),
    ("rfc2544(search='mlrsearch', max_trials=3)", ("*max_trials and resolution bound the binary "
                                                  "search*")),
    ("rfc2544(search='mlrsearch', goals='fastest')", "*fastest*"),
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
    from pytest_netload.markers import Rfc2544Mark

    mark = Rfc2544Mark()
    assert mark.frame_sizes == (64, 128, 256, 512, 1024, 1280, 1518)
    assert mark.trial_duration_s == 60.0 and mark.drain_s == 2.0 and mark.loss_tolerance == 0
