"""The package as users install it: an sdist made from a clean copy of the tree, pip-installed
into a fresh virtual environment, builds and loads the native extension; a client-only
wheel (NETLOAD_CLIENT_ONLY=1) has none, runs the plugin on the fake engine, and refuses
to start a local engine, naming the fix.

Nothing is downloaded: the temporary venvs see this interpreter's site-packages (a .pth
file, so its other .pth files, this checkout's editable install among them, are not
read), pip installs with --no-deps --no-build-isolation, and pytest_netload must come
from the venv, which every check asserts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine needs root (run as root or in CI)"),
]

ROOT = Path(__file__).resolve().parents[2]
JUNK = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*.so", "*.o",
        ".pytest_cache", ".hypothesis", "netload-results", "_netload_native.c")
WHERE = ("import json, pytest_netload, pytest_netload.plugin, pytest_netload.engine.client; "
         "out = {'package': pytest_netload.__file__}\n"
         "try:\n"
         "    import pytest_netload.engine._netload_native as m\n"
         "    out['native'] = m.__file__\n"
         "except ImportError as exc:\n"
         "    out['missing'] = str(exc)\n"
         "print(json.dumps(out))")


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None,
        timeout: float = 120) -> str:
    out = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                         timeout=timeout, check=False, env={**os.environ, **(env or {})})
    assert out.returncode == 0, f"{args}: exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out.stdout


def venv(path: Path) -> Path:
    """A venv without pip whose site-packages read this interpreter's (pip, setuptools,
    cffi, the dependencies) after its own; its python."""
    run(sys.executable, "-m", "venv", "--without-pip", path, cwd=path.parent)
    python = path / "bin" / "python"
    purelib = run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))",
                  cwd=path.parent).strip()
    ours = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    (Path(purelib) / "outer-site-packages.pth").write_text("\n".join(ours) + "\n")
    return python


def pip_install(python: Path, target: Path, cwd: Path, **env: str) -> None:
    run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
        "--no-build-isolation", "--ignore-installed", "--no-index", target, cwd=cwd, env=env)


def where(python: Path, cwd: Path) -> dict[str, str]:
    """Where the venv's python imports pytest_netload and its extension from (-I: not from
    the working directory)."""
    out: dict[str, str] = json.loads(run(python, "-I", "-c", WHERE, cwd=cwd))
    return out


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build --sdist` in a clean copy of the tree (no build outputs)."""
    pytest.importorskip("build", reason="the test extras install build (pip install -e .[test])")
    top = tmp_path_factory.mktemp("sdist")
    shutil.copytree(ROOT, top / "src", ignore=shutil.ignore_patterns(*JUNK))
    run(sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", top / "dist",
        top / "src", cwd=top)
    (found,) = (top / "dist").glob("pytest_netload-*.tar.gz")
    return found


def test_the_sdist_carries_the_native_sources(sdist: Path) -> None:
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    needed = {str(p.relative_to(ROOT)) for p in (ROOT / "native").rglob("*")
              if p.suffix in (".c", ".h", ".py")}
    assert "native/include/netload_api.h" in needed and "native/gen_facts.py" in needed
    assert needed <= names, sorted(needed - names)
    assert {"pytest_netload/engine/_build.py", "pytest_netload/_native_facts.py", "setup.py",
            "pytest_netload/reports/results.schema.json"} <= names
    assert not [n for n in names if n.endswith((".so", ".o"))]


def test_the_sdist_builds_and_loads_the_extension(sdist: Path, tmp_path: Path) -> None:
    python = venv(tmp_path / "venv")
    pip_install(python, sdist, cwd=tmp_path)
    found = where(python, tmp_path)
    site = str(tmp_path / "venv")
    assert found["package"].startswith(site), found
    assert "native" in found, found
    assert found["native"].startswith(site), found
    assert Path(found["native"]).name.endswith(sysconfig.get_config_var("SHLIB_SUFFIX"))
    run(python, "-I", "-c", "from pytest_netload.engine import facade; "
        "assert facade.constants()['abi_version'] > 0; print(facade.dpdk_version())",
        cwd=tmp_path)


def test_a_client_only_wheel_runs_everything_but_a_local_engine(
        sdist: Path, tmp_path: Path) -> None:
    """NETLOAD_CLIENT_ONLY=1 makes a pure wheel (with no DPDK and no compiler in sight);
    installed, the plugin runs on the fake engine, and a local engine start is an error
    naming the extension and the fix."""
    with tarfile.open(sdist) as tar:
        # the "data" filter where this Python has it (3.11.4 and later; Debian 12: 3.11.2)
        if hasattr(tarfile, "data_filter"):
            tar.extractall(tmp_path / "unpacked", filter="data")
        else:
            tar.extractall(tmp_path / "unpacked")
    (src,) = (tmp_path / "unpacked").iterdir()
    run(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
        tmp_path / "dist", src, cwd=tmp_path,
        env={"NETLOAD_CLIENT_ONLY": "1", "PKG_CONFIG_PATH": "/nonexistent", "CC": "no-cc"})
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    python = venv(tmp_path / "venv")
    pip_install(python, wheel, cwd=tmp_path)
    found = where(python, tmp_path)
    assert found["package"].startswith(str(tmp_path / "venv")), found
    assert "native" not in found, found

    (tmp_path / "test_fake.py").write_text(
        "import pytest\nfrom pytest_netload import assert_throughput\n\n"
        "@pytest.mark.rfc2544(frame_sizes=[64])\ndef test_throughput(rfc2544):\n"
        "    assert_throughput(rfc2544.throughput(), at_least='45kpps')\n")
    out = run(python, "-I", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_fake.py",
              "--netload-engine=fake:capacity_pps=50000", cwd=tmp_path)
    assert "1 passed" in out, out

    local = ("from pytest_netload import errors\n"
             "from pytest_netload.engine.client import Engine\n"
             "try:\n    Engine(memory_mb=256).start()\n"
             "except errors.NetloadEnvironmentError as exc:\n    print(exc)\n"
             "else:\n    raise SystemExit('a local engine started on a client-only install')")
    message = run(python, "-I", "-c", local, cwd=tmp_path, timeout=60)
    assert "pytest_netload.engine._netload_native" in message, message
    assert "NETLOAD_CLIENT_ONLY" in message and "scripts/setup.sh" in message, message
