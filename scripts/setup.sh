#!/usr/bin/env bash
# Install everything pytest-netload needs on a fresh Debian 12 machine, as root.
# Idempotent: a second run installs nothing new. Used by README and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential pkg-config python3-dev
  libasan8 libubsan1                 # gcc 12's ASan/UBSan runtimes: scripts/sanitize.sh
  dpdk dpdk-dev libdpdk-dev          # DPDK 22.11 LTS: EAL, PMDs, dpdk-testpmd
  libpcap-dev libbpf-dev libxdp-dev  # net_pcap, net_af_xdp
  iproute2 nftables ethtool tcpdump  # built-in netns DUTs and loss injection
  chromium                           # the HTML report's browser test (headless)
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
# The package itself, built in place (the cffi extension links the system DPDK),
# with its test dependencies (the reports' jinja2, matplotlib and jsonschema among them).
"$PYTHON" -m pip install -q --disable-pip-version-check -e ".[test]"
echo "setup: done ($("$PYTHON" -c 'import pytest_netload.engine._netload_native as m; print(m.__file__)'))"
