#!/usr/bin/env bash
# Install everything pytest-netload needs on a fresh Debian 12 machine, as root.
#
# Two Python distributions come from this checkout: pytest-netload (pure Python: the
# plugin, procedures, reports, the engine client) and pytest-netload-engine (native/: the
# cffi extension over DPDK 22.11, the extra `pytest-netload[engine]`). They go into a
# virtual environment under the checkout, .venv (made with --system-site-packages, so what
# the base Python already has is not downloaded again), installed editable: Debian's own
# python3 is externally managed (PEP 668) and refuses `pip install`; a pyenv python3 works
# the same. Run everything afterwards with .venv/bin/python (or `. .venv/bin/activate`;
# .venv/bin/netload is the console script). Idempotent: a second run installs nothing new.
# Used by README and by .ci/run. After changing native/, rebuild the extension in place
# with `.venv/bin/python native/setup.py build_ext --inplace`.
#
#   bash scripts/setup.sh                  this repository's development and CI host: DPDK,
#                                          compiler, both packages with every extra and the
#                                          test tooling (built-in DUTs, OVS-DPDK, sshd for
#                                          the remote tests, chromium, ASan)
#   bash scripts/setup.sh --generator      a traffic-generator host that runs engines for
#                                          other machines: DPDK, compiler, python venv and the
#                                          two packages only (no test tooling, no DUTs)
#   bash scripts/setup.sh --client-only    a CI runner that drives a remote engine: no DPDK,
#                                          no compiler, no engine package
#   bash scripts/setup.sh --hugepages[=MB] also reserves MB MiB of 2 MiB hugepages (default
#                                          1024; a dev/CI host as root gets 2048 without
#                                          asking) and mounts hugetlbfs on /dev/hugepages: for
#                                          DPDK DUTs that need them (OVS-DPDK); the engine
#                                          runs without (memfd memory) where too few are free
#   PYTHON=/usr/bin/python3 bash scripts/setup.sh   the Python the venv is made from
#                                                    (default: the first python3 on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=dev  # dev: everything; generator: the engine only; client: no engine
HUGEPAGES_MB=  # unset: 2048 on a dev/CI host as root (the DPDK DUT tests), else none
for arg in "$@"; do
  case $arg in
    --client-only) MODE=client ;;
    --generator) MODE=generator ;;
    --hugepages) HUGEPAGES_MB=1024 ;;
    --hugepages=*)
      HUGEPAGES_MB=${arg#--hugepages=}
      if ! [[ $HUGEPAGES_MB =~ ^[0-9]+$ ]] || ((HUGEPAGES_MB < 2)); then
        echo "setup: --hugepages=$HUGEPAGES_MB: give MiB of hugepages, e.g. --hugepages=2048" >&2
        exit 2
      fi ;;
    -h|--help) sed -n '2,30p' "$0" | cut -c3-; exit 0 ;;
    *) echo "setup: unknown argument '$arg' (options: --generator, --client-only," \
            "--hugepages[=MB])" >&2
       exit 2 ;;
  esac
done
if [[ -z $HUGEPAGES_MB ]]; then
  # the test suite's DPDK DUTs on hugepages next to an engine that takes 1 GiB of them
  HUGEPAGES_MB=0; [[ $MODE == dev && $EUID == 0 ]] && HUGEPAGES_MB=2048
fi
PYTHON=${PYTHON:-python3}
VENV=.venv

APT_PACKAGES=(python3 python3-venv)  # Debian's python3 makes venvs only with python3-venv
if [[ $MODE != generator ]]; then
  # report.pdf: WeasyPrint (the pdf extra, in the test extras) lays out with Pango, in
  # DejaVu Sans as report.html's style asks; poppler's pdfinfo, pdftotext and pdftoppm
  # read the PDF back in its tests
  APT_PACKAGES+=(libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core poppler-utils)
fi
if [[ $MODE != client ]]; then
  APT_PACKAGES+=(
    build-essential pkg-config python3-dev  # the engine's cffi extension is compiled here
    dpdk libdpdk-dev                   # DPDK 22.11 LTS: EAL, PMDs, pkg-config libdpdk
    libpcap-dev libbpf-dev libxdp-dev  # net_pcap, net_af_xdp
    iproute2 ethtool                   # ports' links and addresses
  )
fi
if [[ $MODE == dev ]]; then
  APT_PACKAGES+=(
    dpdk-dev                           # dpdk-testpmd, the dpdk-testpmd DUT
    libasan8 libubsan1                 # gcc 12's ASan/UBSan runtimes: scripts/sanitize.sh
    openvswitch-switch-dpdk            # OVS 3.1 on DPDK 22.11: the ovs-dpdk DUT (a private one)
    nftables tcpdump                   # built-in netns DUTs and loss injection
    chromium                           # the HTML report's browser test (headless)
    openssh-client openssh-server      # the remote-engine tests' second host (their own sshd)
  )
fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if ((EUID != 0)); then
    echo "setup: these Debian packages are missing: ${missing[*]}; run this script as root" >&2
    exit 1
  fi
  echo "setup: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # No service starts from these packages (openssh-server would start a system sshd; the
  # tests run their own in a namespace): a policy-rc.d of our own for the install only.
  policy=""
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
    trap 'rm -f "$policy"' EXIT
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [[ " ${missing[*]} " == *" openssh-server "* ]] && command -v systemctl >/dev/null; then
    systemctl disable ssh.service >/dev/null 2>&1 || true  # installed for the tests only
  fi
  # The ovs-dpdk DUT starts an OVS of its own (its own database, sockets and CPU) and runs
  # /usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk by path: the system's OVS service
  # is neither started nor enabled, and the ovs-vswitchd alternative is left as it is.
  if [[ " ${missing[*]} " == *" openvswitch-switch-dpdk "* ]] && command -v systemctl >/dev/null; then
    systemctl disable openvswitch-switch.service ovsdb-server.service ovs-vswitchd.service \
      >/dev/null 2>&1 || true
  fi
  if [[ -n $policy ]]; then rm -f "$policy"; fi
fi

# The venv is made again only when it is missing, broken, or from another base Python.
base=$("$PYTHON" -c 'import sys; print(sys.base_prefix, *sys.version_info[:3])')
if [[ $("$VENV/bin/python" -c 'import sys; print(sys.base_prefix, *sys.version_info[:3])' \
        2>/dev/null || true) != "$base" ]]; then
  echo "setup: python -m venv --system-site-packages $VENV (from $PYTHON: $base)"
  "$PYTHON" -m venv --clear --system-site-packages "$VENV"
fi

# The packages, editable: the engine's extension is built in place (native/, linking the
# system DPDK; its build checks DPDK's version); pip resolves the [engine] extra to that
# checkout. pip's cache makes a second run quick.
case $MODE in
  dev) PACKAGES=(-e ./native -e ".[engine,test]") ;;
  generator) PACKAGES=(-e ./native -e ".[engine]") ;;
  client) PACKAGES=(-e ".[test]") ;;
esac
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PACKAGES[@]}"
if [[ $MODE == client ]]; then
  "$VENV/bin/python" -c 'import pytest_netload.plugin, pytest_netload.engine.client'
  echo "setup: done, client only ($VENV/bin/python; no native engine: engines run elsewhere)"
else
  label=done; [[ $MODE == dev ]] || label="done, $MODE host"
  echo "setup: $label ($VENV/bin/python; $("$VENV/bin/python" -c \
    'import pytest_netload_engine._netload_native as m; print(m.__file__)'))"
fi

# Hugepages for DPDK DUTs that need them (a dev/CI host as root: 2048 MiB by default). Raised to MB MiB of free 2 MiB pages
# (never lowered: other DPDK processes may hold some), hugetlbfs mounted where none is.
if ((HUGEPAGES_MB > 0)); then
  if ((EUID != 0)); then
    echo "setup: --hugepages reserves kernel memory: run this script as root" >&2
    exit 1
  fi
  pages=/sys/kernel/mm/hugepages/hugepages-2048kB
  want=$(((HUGEPAGES_MB + 1) / 2))
  free=$(<"$pages/free_hugepages")
  total=$(<"$pages/nr_hugepages")
  if ((free < want)); then
    echo $((total + want - free)) >"$pages/nr_hugepages"
  fi
  free=$(<"$pages/free_hugepages")
  if ((free < want)); then
    echo "setup: asked for $want free 2 MiB hugepages, the kernel gave $free (memory" \
         "too fragmented or too small): reboot, or ask for fewer (--hugepages=MB)" >&2
    exit 1
  fi
  if ! awk '$3 == "hugetlbfs" {found = 1} END {exit !found}' /proc/mounts; then
    mkdir -p /dev/hugepages
    mount -t hugetlbfs nodev /dev/hugepages
  fi
  echo "setup: $((free * 2)) MiB of hugepages free, hugetlbfs mounted"
fi

