#!/usr/bin/env bash
# README command 2: install what is needed, build, and run every test (unit and integration) with CTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
# Only the tests need the Debian 13 roots, made once per machine (docs/install.md, "Tests and their cost"):
# t0515 builds hpclaunch and the trainer against LibTorch 2.6 (2.5 GiB, ~2 min); t0513 the trainer against the
# CUDA LibTorch 2.6 with CUDA 12.4 and NCCL 2.22 (~2.9 GB downloaded, 8.3 GiB, 8.5 min or more: made while the build
# below runs, and waited for before the tests).
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo "$root/scripts/debian13-root.sh" /opt/hpclaunch/debian13-root
$sudo "$root/scripts/debian13-cuda-root.sh" /opt/hpclaunch/debian13-cuda-root &
cuda_root=$!
trap 'wait' EXIT  # a failed build leaves no half-made root behind it still being written
build=${HPCLAUNCH_BUILD_DIR:-$root/build}
# ccache (install-deps.sh): rebuilds, and t0710's launcher-only build beside this one, reuse the objects.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=1
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build "$build" -j "$(nproc)"
wait "$cuda_root" || { echo "test.sh: the Debian 13 CUDA root could not be made (above)" >&2; exit 1; }
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
