#!/usr/bin/env bash
# README command 1: install what is needed, build, and run the main job on the embedded `local` site
# (examples/local-autoencoder.yaml: hpclaunch-train's MNIST auto-encoder on Fashion-MNIST, 2 emulated nodes x
# 2 workers under hpclaunch agent), then plot its curves. Only what that job needs is installed
# (`install-deps.sh demo`) and built (hpclaunch and hpclaunch-train, no tests); the time is printed at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
start=$SECONDS
"$root/scripts/install-deps.sh" demo
installed=$SECONDS
build=${HPCLAUNCH_BUILD_DIR:-$root/build}
# A rebuild, and scripts/test.sh's build of the same folder afterwards, reuse the objects (ccache). In ccache's depend
# mode a miss compiles at once, its key taken from the compiler's -MD list; the default mode runs the preprocessor
# first (LibTorch's headers again in each unit): the demo's cold build took 85 s so, 98 s in the default mode (2
# cores, docs/install.md). Not for the tests: their static build (t0720) finds the main build's objects only through
# the default mode's preprocessed lookup (its units are compiled with one -D fewer, Boost.Filesystem's DYN_LINK).
export CCACHE_DEPEND=${CCACHE_DEPEND:-1}
source "$root/scripts/lib-build.sh"
configure_build "$root" "$build" -DHPCLAUNCH_BUILD_TESTS=OFF
cmake --build "$build" -j "$(nproc)" --target hpclaunch hpclaunch-train
built=$SECONDS
export PATH=$build/launcher:$build/trainer:$PATH

run=${HPCLAUNCH_DEMO_DIR:-$root/demo-run/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$run"
cd "$run"
hpclaunch submit --spec "$root/examples/local-autoencoder.yaml" --job-dir "$run/job"
hpclaunch plot metrics/autoencoder.jsonl -o "$run/curves.png"
hpclaunch plot metrics/autoencoder.jsonl -o "$run/curves.svg"
echo "demo: job directory $run/job; metrics $run/metrics/autoencoder.jsonl; curves $run/curves.png"
echo "demo: $((SECONDS - start)) s in all: packages $((installed - start)) s, build $((built - installed)) s," \
  "job and plots $((SECONDS - built)) s"
