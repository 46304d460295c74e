#!/usr/bin/env bash
# The two distributions on a host that has nothing of ours: a release check.
#
# Builds pytest-netload's and pytest-netload-engine's sdists and wheels from a clean clone
# of HEAD, makes a minimal Debian 12 (debootstrap --variant=minbase) with only Python,
# its venv and headers, a compiler, pkg-config and DPDK 22.11's packages (libdpdk-dev
# pulls its runtime), and in it:
#   1. installs both wheels into a fresh venv (the rest from PyPI) and sends 1,000,000
#      frames on net_null;
#   2. builds the engine from its sdist there (build requirements from PyPI) and does
#      the same;
#   3. installs the pure wheel alone and, as a user that is not root, runs an RFC 2544
#      session on the fake engine (--netload-engine=fake:...);
#   4. on that install, starts a local engine: the error names what to install;
#   5. as that user without a topology: the usage error that names the fix, exit 4.
# Prints each step's result, and "clean_host: ok" last when every check held.
#
# Not part of .ci/run: it downloads about 200 MB of Debian packages and wheels and takes
# about 5 minutes. Needs root, debootstrap (apt-get install debootstrap) and the
# network; the host's CA bundle and pip.conf travel into the chroot, so a proxy that
# the host trusts works there too. NETLOAD_CLEAN_HOST_KEEP=1 keeps the chroot (its
# path is printed); it is removed otherwise, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
[[ $EUID == 0 ]] || { echo "clean_host: run as root (debootstrap and chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null ||
  { echo "clean_host: needs debootstrap: apt-get install debootstrap" >&2; exit 2; }
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
[[ -x $PYTHON ]] || PYTHON=python3
MIRROR=${MIRROR:-http://deb.debian.org/debian}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/netload-clean-host.XXXXXX")
CHROOT=$WORK/root

cleanup() {
  local m
  for m in dev/pts dev sys proc; do
    mountpoint -q "$CHROOT/$m" 2>/dev/null && umount "$CHROOT/$m"
  done
  if [[ ${NETLOAD_CLEAN_HOST_KEEP:-0} == 1 ]]; then
    echo "clean_host: the chroot stays in $CHROOT"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

echo "clean_host: building the sdists and wheels from a clean clone of HEAD"
git clone -q "$ROOT" "$WORK/src"
"$PYTHON" -m build -o "$WORK/dist" "$WORK/src" >"$WORK/build.log" 2>&1 &&
  "$PYTHON" -m build -o "$WORK/dist" "$WORK/src/native" >>"$WORK/build.log" 2>&1 ||
  { tail -20 "$WORK/build.log"; echo "clean_host: the build failed" >&2; exit 1; }
ls "$WORK/dist"

echo "clean_host: debootstrap of a minimal Debian 12 (a few minutes)"
debootstrap --variant=minbase \
  --include=python3,python3-venv,python3-dev,build-essential,pkg-config,libdpdk-dev \
  bookworm "$CHROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
  { tail -20 "$WORK/debootstrap.log"; echo "clean_host: debootstrap failed" >&2; exit 1; }
cp /etc/resolv.conf "$CHROOT/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$CHROOT/etc/ssl/certs/ca-certificates.crt"
printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$CHROOT/etc/pip.conf"
mkdir -p "$CHROOT/dist" "$CHROOT/check"
cp "$WORK"/dist/* "$CHROOT/dist/"
for m in proc sys dev dev/pts; do mount --bind "/$m" "$CHROOT/$m"; done

cat >"$CHROOT/check/tx.py" <<'EOF'
import pytest_netload_engine._netload_native as native
from pytest_netload.engine.client import Engine
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.streams import Stream

print("extension", native.__file__)
with Engine(memory_mb=256) as engine:
    port = engine.port("net_null0")
    stream = engine.load(port, Stream((Eth() / IPv4() / UDP()).build(), size=64, name="s"))
    (result,) = engine.run([stream], count=1_000_000).streams
    print("dpdk", engine.hello.get("dpdk_version"), "tx_packets", result.tx_packets)
    assert result.tx_packets == 1_000_000, result.tx_packets
EOF
cat >"$CHROOT/check/test_router.py" <<'EOF'
import pytest
from pytest_netload import assert_throughput


@pytest.mark.rfc2544(frame_sizes=[64, 1518], trial_duration="2s")
def test_router(rfc2544, frame_size):
    assert_throughput(rfc2544.throughput(), at_least="45kpps")


def test_plain():
    assert 1 + 1 == 2
EOF
cat >"$CHROOT/check/run.sh" <<'EOF'
#!/bin/bash
set -euo pipefail
WHEEL=$(ls /dist/pytest_netload-*-py3-none-any.whl)
PIP=(-q --disable-pip-version-check --find-links /dist)
echo "== host: $(. /etc/os-release; echo "$PRETTY_NAME"), $(dpkg -l | grep -c ^ii) packages," \
     "$(python3 -V), libdpdk-dev $(dpkg-query -W -f='${Version}' libdpdk-dev)"
echo "== 1. both wheels in a fresh venv"
python3 -m venv /opt/gen && /opt/gen/bin/pip install "${PIP[@]}" "$WHEEL[engine]"
(cd /check && /opt/gen/bin/python -I tx.py)
echo "== 2. the engine built from its sdist"
python3 -m venv /opt/gen2
/opt/gen2/bin/pip install "${PIP[@]}" --no-cache-dir --no-binary pytest-netload-engine \
  "$WHEEL[engine]"
(cd /check && /opt/gen2/bin/python -I tx.py)
echo "== 3. the pure wheel alone, a session on the fake engine, not root"
python3 -m venv /opt/client && /opt/client/bin/pip install "${PIP[@]}" "$WHEEL"
echo "$(/opt/client/bin/pip list 2>/dev/null | tail -n +3 | wc -l) distributions in the venv"
useradd -m tester && cp /check/test_router.py /home/tester/ && chown tester /home/tester/*
su tester -c "cd ~ && /opt/client/bin/python -m pytest -p no:cacheprovider \
  --netload-engine=fake:capacity_pps=50000 test_router.py" | grep -v "^netload: test_"
echo "== 4. a local engine on the client-only install"
if su tester -c "/opt/client/bin/python -c 'from pytest_netload.engine.client import Engine
Engine(memory_mb=256).start()'" >/check/local.txt 2>&1; then
  echo "a local engine started without the engine package"; exit 1
fi
tail -1 /check/local.txt; grep -q "pip install 'pytest-netload\[engine\]'" /check/local.txt
echo "== 5. not root, no topology"
set +e
su tester -c "cd ~ && /opt/client/bin/python -m pytest -p no:cacheprovider test_router.py" \
  >/check/usage.txt 2>&1
rc=$?
set -e
head -1 /check/usage.txt; echo "exit status $rc"
[[ $rc == 4 ]] && grep -q -- "--netload-topology=lab.toml" /check/usage.txt
EOF
chmod +x "$CHROOT/check/run.sh"
chroot "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root /check/run.sh
echo "clean_host: ok"
