"""The DUT hooks around Y.1564's and RFC 2889's trials on the fake engine, through the
path RFC 2544's take (bench/dut_trial.py DutTrials): each trial tells the hooks its
procedure, the DUT's counters are read before and after it, its loss is attributed in
results.json, and an unhealthy DUT makes a step invalid (retried) as in RFC 2544."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_netload.reports.load import load

pytest_plugins = ["pytester"]

FAKE = ("--netload-engine=fake:capacity_bps=10Mbit/s,capacity_layer=l2,loss_ratio=0,"
        "delay_s=100e-6,buffer_frames=20")
SERVICE = ('{"name": "data", "cir": "10Mbit/s", "cbs": "10240B", "frame_size": 512, '
           '"sac": {"flr": "0.1%"}}')

CONFTEST = """
    from pytest_netload import DutCounter

    DROPS = [0]

    def _log(what):
        with open("calls.log", "a") as f:
            f.write(what + "\\n")

    def pytest_netload_before_trial(trial, dut):
        _log(f"before {trial.procedure} {trial.number}")

    def pytest_netload_dut_counters(trial, dut):
        DROPS[0] += 3 if trial.phase == "after" else 0
        _log(f"counters {trial.procedure} {trial.phase}")
        return [DutCounter("drops", DROPS[0], "queue_drop", "egress queue q0")]

    def pytest_netload_dut_health(trial, dut, result):
        _log(f"health {trial.procedure} {trial.number} {result.lost}")
        return None
"""


def _run(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\nnetload_dut_health = true\n")
    pytester.makepyfile(test_std=body)
    return pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", FAKE, *args)


def _measurements(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    path = pytester.path / "netload-results" / "results.json"
    load(path)  # valid against the schema
    data: dict[str, Any] = json.loads(path.read_text())
    return [m for t in data["tests"] for m in t["measurements"]]


def _calls(pytester: pytest.Pytester) -> list[str]:
    return (pytester.path / "calls.log").read_text().splitlines()


def _attributed(record: dict[str, Any]) -> None:
    """A trial record with the hooks' findings: 3 drops per trial, the rest unaccounted."""
    table = record["loss_attribution"]
    assert table["counters"] == {"drops (egress queue q0)": 3}, table
    assert table["unaccounted"] == table["lost"] - 3
    assert record["dut_health"] == "ok"


def test_y1564_steps_intervals_and_bursts_run_between_the_hooks(
        pytester: pytest.Pytester) -> None:
    result = _run(pytester, f"""
        import pytest

        @pytest.mark.y1564(services=[{SERVICE}], step_duration="1s", spt_duration="3s",
                           bursts=True)
        def test_activation(y1564):
            y1564.run()
    """)
    result.assert_outcomes(passed=1)
    calls = _calls(pytester)
    for procedure in ("y1564_sct", "y1564_burst", "y1564_spt"):
        mine = [c for c in calls if f" {procedure} " in c or c.endswith(f" {procedure}")]
        # per trial: before_trial, counters before, counters after, health
        assert mine[:4] == [f"before {procedure} 1", f"counters {procedure} before",
                            f"counters {procedure} after", f"health {procedure} 1 0"], mine
    # the SPT is one engine run (its intervals snapshotted in it): one trial to the hooks
    assert len([c for c in calls if c.startswith("before y1564_spt")]) == 1
    records = {m["kind"]: m for m in _measurements(pytester)}
    for step in records["y1564_sct"]["steps"]:
        _attributed(step)
    for step in records["y1564_bursts"]["steps"]:
        _attributed(step)
    spt = records["y1564_spt"]["loss_attribution"]  # the one run's, all intervals
    assert spt["counters"] == {"drops (egress queue q0)": 3}, spt


def test_an_unhealthy_dut_makes_a_y1564_step_invalid_and_retried(
        pytester: pytest.Pytester) -> None:
    result = _run(pytester, f"""
        import pytest

        @pytest.fixture(autouse=True)
        def _sick_once(request):
            seen = []

            @pytest.hookimpl
            def pytest_netload_dut_health(trial, dut, result):
                if trial.procedure == "y1564_sct" and not seen:
                    seen.append(trial.number)
                    return "the DUT's CPU was taken"
                return None

            request.config.pluginmanager.register(
                type("Sick", (), {{"pytest_netload_dut_health":
                                  staticmethod(pytest_netload_dut_health)}})(), "sick")
            yield
            request.config.pluginmanager.unregister(name="sick")

        @pytest.mark.y1564(services=[{SERVICE}], step_duration="1s", steps=[1.0],
                           policing=False)
        def test_sct(y1564):
            (step,) = y1564.sct("data").steps
            assert step.tries == 2
            assert step.invalid_reasons == ("DUT health: the DUT's CPU was taken",)
    """)
    result.assert_outcomes(passed=1)


def test_an_unhealthy_dut_after_the_spt_run_is_no_pass(pytester: pytest.Pytester) -> None:
    """The SPT is one engine run, its intervals counted as it runs: a DUT the health hooks
    find unwell after it makes the test an error naming why, never a PASS."""
    result = _run(pytester, f"""
        import pytest

        @pytest.fixture(autouse=True)
        def _sick(request):
            @pytest.hookimpl
            def pytest_netload_dut_health(trial, dut, result):
                return "the DUT rebooted" if trial.procedure == "y1564_spt" else None

            request.config.pluginmanager.register(
                type("Sick", (), {{"pytest_netload_dut_health":
                                  staticmethod(pytest_netload_dut_health)}})(), "sick")
            yield
            request.config.pluginmanager.unregister(name="sick")

        @pytest.mark.y1564(services=[{SERVICE}], spt_duration="3s")
        def test_spt(y1564):
            y1564.spt()
    """)
    outcomes = result.parseoutcomes()
    assert "passed" not in outcomes, outcomes
    result.stdout.fnmatch_lines(["*the service performance test's run: DUT health: the DUT "
                                 "rebooted*"])


def test_rfc2889_trials_run_between_the_hooks(pytester: pytest.Pytester) -> None:
    result = _run(pytester, """
        import pytest

        @pytest.mark.rfc2889(trial_duration="1s", max_rate="2kpps", resolution=0.25,
                             max_trials=4, frame_size=512)
        def test_broadcast(rfc2889):
            rfc2889.broadcast_forwarding()

        @pytest.mark.rfc2889(trial_duration="1s", test_rate="500pps", max_frame=1000)
        def test_errored(rfc2889):
            rfc2889.errored_frame_filtering()
    """)
    result.assert_outcomes(passed=2)
    calls = _calls(pytester)
    for procedure in ("rfc2889_broadcast_forwarding", "rfc2889_errored_frame_filtering"):
        assert f"before {procedure} 1" in calls, calls
        assert f"counters {procedure} after" in calls
    records = {m["kind"]: m for m in _measurements(pytester)}
    for kind in ("rfc2889_broadcast_forwarding", "rfc2889_errored_frame_filtering"):
        assert records[kind]["trials"], kind
        for trial in records[kind]["trials"]:
            _attributed(trial)


TWO_WAY = """
[topology]
name = "lab-switch"

[[ports]]
name = "p0"
device = "net_fake0"
mac = "02:00:00:00:00:01"
ip = "198.18.0.2"
peer_mac = "02:00:00:00:00:02"
peer_ip = "198.18.0.3"

[[ports]]
name = "p1"
device = "net_fake1"
mac = "02:00:00:00:00:02"
ip = "198.18.0.3"
peer_mac = "02:00:00:00:00:01"
peer_ip = "198.18.0.2"

[[ports]]
name = "p2"
device = "net_fake2"
mac = "02:00:00:00:00:03"
ip = "198.18.0.4"
peer_mac = "02:00:00:00:00:01"
peer_ip = "198.18.0.2"

[[wires]]
tx = "p0"
rx = "p1"

[[wires]]
tx = "p0"
rx = "p2"

[[wires]]
tx = "p1"
rx = "p0"
"""

ADDRESS_TESTS = """
    import pytest

    @pytest.mark.rfc2889(low=1, high=16, learning_rate="2000pps", test_rate="2000pps",
                         learning_count=8, max_rate="4000pps")
    def test_addresses(rfc2889):
        rfc2889.address_caching_capacity()
        rfc2889.address_learning_rate()
"""


def _switch(pytester: pytest.Pytester, conftest: str) -> pytest.RunResult:
    pytester.makeconftest(conftest)
    (pytester.path / "lab.toml").write_text(TWO_WAY)
    pytester.makepyfile(test_addr=ADDRESS_TESTS)
    return pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider",
                              "--netload-engine=fake:capacity_pps=50000,delay_s=50e-6",
                              f"--netload-topology={pytester.path / 'lab.toml'}")


def test_the_flush_hook_empties_the_table_before_each_address_trial(
        pytester: pytest.Pytester) -> None:
    result = _switch(pytester, """
        def _log(what):
            with open("calls.log", "a") as f:
                f.write(what + "\\n")

        def pytest_netload_dut_flush_addresses(trial, dut):
            _log(f"flush {trial.procedure} {trial.number}")
            return True

        def pytest_netload_before_trial(trial, dut):
            _log(f"before {trial.procedure} {trial.number}")
    """)
    result.assert_outcomes(passed=1)
    calls = _calls(pytester)
    for procedure in ("rfc2889_address_caching_capacity", "rfc2889_address_learning_rate"):
        flushes = [c for c in calls if c.startswith(f"flush {procedure} ")]
        assert flushes, calls
        # each trial: the flush, then the trial's before_trial, with the same number
        for line in flushes:
            number = line.rsplit(" ", 1)[1]
            assert calls[calls.index(line) + 1] == f"before {procedure} {number}", calls
    records = {m["kind"]: m for m in _measurements(pytester)}
    trials = records["rfc2889_address_caching_capacity"]["trials"]
    assert len(trials) == len([c for c in calls if "flush rfc2889_address_caching" in c])
    assert all("loss_attribution" in t for t in trials)


def test_without_a_flush_the_address_trial_names_the_hook(pytester: pytest.Pytester) -> None:
    result = _switch(pytester, "")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*empty address table*implement "
                                 "pytest_netload_dut_flush_addresses (docs/hooks.md), or give*"
                                 "age_time=*"])


def test_a_flush_hook_answering_wrong_names_itself(pytester: pytest.Pytester) -> None:
    result = _switch(pytester, """
        def pytest_netload_dut_flush_addresses(trial, dut):
            return "flushed"
    """)
    result.assert_outcomes(errors=1)  # a hook's error is the test's ERROR, as RFC 2544's
    result.stdout.fnmatch_lines(["*pytest_netload_dut_flush_addresses of plugin *conftest.py*"
                                 " returned str 'flushed': return True once the address table "
                                 "is empty, or None*"])


def test_y1564_both_ways_tests_each_direction_as_a_service(pytester: pytest.Pytester) -> None:
    (pytester.path / "lab.toml").write_text(TWO_WAY)
    pytester.makepyfile(test_both="""
        import pytest
        from pytest_netload import assert_sac

        @pytest.mark.y1564(services=[{"name": "data", "cir": "4Mbit/s", "frame_size": 512,
                                      "sac": {"flr": "0.1%"}}], step_duration="1s",
                           steps=[1.0], policing=False, spt_duration="2s", direction="both")
        def test_both(y1564):
            forward, back = y1564.sct("data")
            assert (forward.service.name, back.service.name) == ("data p0->p1",
                                                                 "data p1->p0")
            assert y1564.sct("data p1->p0").service.name == "data p1->p0"
            spt = y1564.spt()
            assert [s.service.name for s in spt.services] == ["data p0->p1", "data p1->p0"]
            assert_sac(spt)

        @pytest.mark.y1564(services=[{"name": "data", "cir": "4Mbit/s",
                                      "sac": {"flr": "0.1%"}}], wire=1, direction="both")
        def test_no_reverse(y1564):
            pass
    """)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider",
                                "--netload-engine=fake:capacity_pps=50000,delay_s=50e-6",
                                f"--netload-topology={pytester.path / 'lab.toml'}")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*direction='both' sends on wire 1 (p0->p2) and its reverse "
                                 "p2->p0 at once, but topology 'lab-switch' has no p2->p0*"])
    records = [m for m in _measurements(pytester) if m["kind"] in ("y1564_sct", "y1564_spt")]
    sct = [m for m in records if m["kind"] == "y1564_sct"]
    assert [m["traffic"]["wire"] for m in sct] == ["p0->p1", "p1->p0", "p1->p0"]
    (spt,) = [m for m in records if m["kind"] == "y1564_spt"]
    assert spt["traffic"]["wire"] == "p0->p1 + p1->p0"
    assert spt["traffic"]["direction"] == "both"
