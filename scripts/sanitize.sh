#!/usr/bin/env bash
# The native core under AddressSanitizer and UndefinedBehaviorSanitizer.
#
# Builds the cffi extension a second time, with -fsanitize=address,undefined, in a
# throwaway copy of the tree (the normal native/pytest_netload_engine/_netload_native*.so
# is never touched), then runs tests/native and the RX fuzz test (random frames through
# the engine's RX classifier, tests/integration/test_rx_fuzz.py; expected frames compared
# in the RX path, test_engine_expect_ring.py; runs of frames cut every way,
# test_rx_runs.py) against it, with the
# sanitizer runtimes preloaded into pytest and the engine host. In this build every RX
# buffer is poisoned outside its frame's bytes (native/src/rx.c, asan_fence), so a read
# past a frame's end aborts. Any sanitizer report fails the script and is printed.
#
# Needs what scripts/setup.sh installs (gcc's libasan and libubsan come with
# build-essential) and root (the fuzz test starts DPDK). Used by .ci/run. It runs with
# scripts/setup.sh's .venv/bin/python when there is one (PYTHON=... chooses another).
# NETLOAD_SANITIZE_KEEP=1 keeps the copy (its path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
if [[ -z ${PYTHON:-} ]]; then
  if [[ -x $ROOT/.venv/bin/python ]]; then PYTHON=$ROOT/.venv/bin/python; else PYTHON=python3; fi
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/netload-sanitize.XXXXXX")
if [[ ${NETLOAD_SANITIZE_KEEP:-0} == 1 ]]; then
  echo "sanitize: the copy stays in $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi
started=$SECONDS

# The tree without VCS data, the venv, builds, results and the normal extension.
tar -C "$ROOT" --exclude=./.git --exclude=./.venv --exclude=./build --exclude='*.so' --exclude='__pycache__' \
  --exclude=./netload-results --exclude='*.egg-info' -cf - . | tar -C "$WORK" -xf -

echo "sanitize: building the native core with ASan and UBSan in $WORK"
cd "$WORK"
# -fno-wrapv: Python's CFLAGS make signed overflow wrap; here it is the UB it is in C.
NETLOAD_NATIVE_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined \
-fno-wrapv -fno-omit-frame-pointer -O1 -g" \
NETLOAD_NATIVE_LDFLAGS="-fsanitize=address,undefined" \
  "$PYTHON" native/setup.py -q build_ext --inplace >"$WORK/build.log" 2>&1 \
  || { tail -n 40 "$WORK/build.log"; echo "sanitize: the build failed"; exit 1; }
# (grep without -q: with pipefail, ldd must not die of SIGPIPE)
ldd "$WORK"/native/pytest_netload_engine/_netload_native*.so | grep libasan >/dev/null \
  || { echo "sanitize: the extension is not linked with libasan"; exit 1; }

REPORTS=$WORK/sanitizer-reports
mkdir -p "$REPORTS"
LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
export LD_PRELOAD
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:log_path=$REPORTS/asan"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$REPORTS/ubsan"
export PYTHONPATH=$WORK:$WORK/native  # pytest_netload and pytest_netload_engine, the copy's
export NETLOAD_FUZZ_SEEDS=${NETLOAD_FUZZ_SEEDS:-1,2,3}

"$PYTHON" -c "import pytest_netload_engine._netload_native as m, sys; \
sys.exit(0 if m.__file__.startswith('$WORK/') else 'sanitize: imported ' + m.__file__)"
status=0
"$PYTHON" -m pytest -p no:cacheprovider -q -o addopts="" \
  tests/native tests/integration/test_rx_fuzz.py tests/integration/test_engine_expect_ring.py \
  tests/integration/test_rx_runs.py || status=$?
unset LD_PRELOAD

if compgen -G "$REPORTS/*" >/dev/null; then
  for report in "$REPORTS"/*; do
    echo "===== $report"
    cat "$report"
  done
  echo "sanitize: the sanitizers reported the errors above"
  status=1
fi
echo "sanitize: done in $((SECONDS - started)) s, status $status"
exit "$status"
