#!/usr/bin/env bash
# README command 2: install what is needed, build, and run every test (unit and integration) with CTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
# Only the tests need a Debian 13 root (t0515: hpclaunch and the trainer against LibTorch 2.6): 2.5 GiB, ~2 min, once.
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo "$root/scripts/debian13-root.sh" /opt/hpclaunch/debian13-root
build=${HPCLAUNCH_BUILD_DIR:-$root/build}
# ccache (install-deps.sh): rebuilds, and t0710's launcher-only build beside this one, reuse the objects.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=1
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
