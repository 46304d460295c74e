"""conftest_examples/hil/: the shipped topology loads with its PCI ports, and the CI
template is valid YAML whose jobs run the commands README.md gives
(tests/integration/test_hil_example.py runs the tests themselves on virtual ports)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from pytest_netload.topology import load_topology

HIL = Path(__file__).resolve().parents[2] / "conftest_examples" / "hil"


def test_the_topology_names_pci_ports_with_lcores_and_a_line_rate() -> None:
    topo = load_topology(HIL / "lab.toml")
    assert topo.line_rate_bps == 10_000_000_000
    assert [p.device for p in topo.ports] == ["0000:3b:00.0", "0000:3b:00.1"]
    assert all(p.lcores and p.ip and p.peer_ip for p in topo.ports)
    assert {(w.tx, w.rx) for w in topo.wires} == {("p0", "p1"), ("p1", "p0")}


def _jobs() -> dict[str, dict]:
    doc = yaml.safe_load((HIL / ".gitlab-ci.yml").read_text())
    return {name: job for name, job in doc.items() if isinstance(job, dict) and "script" in job}


@pytest.mark.parametrize("job", ["hil-smoke", "hil-acceptance"])
def test_each_ci_job_runs_the_readme_command(job: str) -> None:
    readme = (HIL / "README.md").read_text()
    command = re.search(r"```\n(bash scripts/setup.sh --client-only)\n(.*?)```", readme, re.S)
    assert command, "README.md lost its command block"
    readme_args = shlex.split(command.group(2).replace("\\\n", " "))
    script = " ".join(_jobs()[job]["script"])
    args = shlex.split(script)
    assert args[:4] == readme_args[:4] == [".venv/bin/python", "-m", "pytest",
                                          "conftest_examples/hil"]
    options = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    assert {"--netload-topology", "--netload-engine", "--netload-port-wait",
            "--junitxml"} <= options
    assert {a.split("=", 1)[0] for a in readme_args if a.startswith("--")} >= options - {
        "--netload-trial-duration"}
    assert "--netload-topology=conftest_examples/hil/lab.toml" in args


def test_the_ci_install_is_client_only_and_keeps_the_results() -> None:
    doc = yaml.safe_load((HIL / ".gitlab-ci.yml").read_text())
    assert "bash scripts/setup.sh --client-only" in doc[".hil"]["before_script"]
    assert doc[".hil"]["artifacts"]["paths"] == ["netload-results/"]
    assert _jobs()["hil-smoke"]["variables"] == {"HIL_QUICK": "1"}
    assert doc["variables"]["NETLOAD_ENGINE"].startswith("ssh=")


def test_port_waits_are_within_what_the_option_takes() -> None:
    from pytest_netload.plugin.options import _port_wait

    for job in _jobs().values():
        for word in shlex.split(" ".join(job["script"])):
            if word.startswith("--netload-port-wait="):
                _port_wait(word.split("=", 1)[1])
