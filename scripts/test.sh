#!/usr/bin/env bash
# README command 2: install what is needed, build, and run every test (unit and integration) with CTest.
#
# In phases, each printed with its time (docs/install.md, "Tests and their cost", has the figures of cold runs):
#   1. packages (scripts/install-deps.sh);
#   2. the main build;
#   3. prepare: the tests' one-time builds in folders of their own (the sanitizer and fuzz builds, the static
#      x86_64 and aarch64 launchers, the trainer against the torch 2.15 wheel with and without gloo headers), one
#      at a time, each with both cores. Each is
#      the test's own build code (HPCLAUNCH_PREPARE=1: the test stops after it; tests/integration/lib.sh), so a
#      test run alone still builds what it needs, and under CTest, later, it finds the build done;
#   4. CTest runs every test, two more at a time than there are CPUs (4 on 2 cores): the *-slurm-* tests, which
#      mostly wait on Slurm's clocks, run in two lanes (two test clusters, tests/CMakeLists.txt), and the others
#      beside them at least as many at a time as there are CPUs. On 2 cores the phase is bound by the CPU and took
#      as long as at three with one Slurm lane (cold runs 19-21, docs/install.md); with more cores one Slurm lane of
#      ~560 s would end it. The longest test, t0513, starts first (its COST, tests/CMakeLists.txt), so that it does
#      not run alone at the end.
# Big compiles never run beside each other or inside a test's time limit, where they would race the tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
start=$SECONDS
phase_start=$SECONDS
phase() {  # NAME: ends the phase begun before it
  echo "test.sh: $1: $((SECONDS - phase_start)) s (total $((SECONDS - start)) s)"
  phase_start=$SECONDS
}
"$root/scripts/install-deps.sh"
phase "packages"

# HPCLAUNCH_ROOTS: where the roots are made (default /opt/hpclaunch; a fresh folder measures a cold run).
roots=${HPCLAUNCH_ROOTS:-/opt/hpclaunch}
export HPCLAUNCH_AARCH64_SYSROOT=$roots/aarch64-sysroot
build=${HPCLAUNCH_BUILD_DIR:-$root/build}
# The static launcher (t0720), the launcher-only build (t0710) and rebuilds reuse the main build's objects (ccache).
source "$root/scripts/lib-build.sh"
configure_build "$root" "$build" -DHPCLAUNCH_BUILD_TESTS=ON
cmake --build "$build" -j "$(nproc)"
phase "main build"

# The tests with one-time builds (tests/CMakeLists.txt, "Prepared tests"), one after another.
echo "test.sh: prepare: the tests' own builds, one at a time"
# A failed build here does not stop the run: CTest below runs that test again and reports it with the rest.
HPCLAUNCH_PREPARE=1 ctest --test-dir "$build" -L prepared -j 1 --output-on-failure ||
  echo "test.sh: a prepared build failed (above); its test runs again below and fails there"
phase "prepare"

# Every test has its own time limit (tests/CMakeLists.txt, trainer/CMakeLists.txt; t0068 checks that none lacks
# one). The JUnit file keeps each test's output, where a skipped test said why.
junit=$build/Testing/junit.xml
rc=0
ctest --test-dir "$build" --output-on-failure -j "$(($(nproc) + 2))" --output-junit "$junit" "$@" || rc=$?
phase "tests"
# What did not run, and why; a skip that tests/skips-allowed.txt does not allow on this machine fails the run.
python3 "$root/scripts/skips.py" "$junit" "$root/tests/skips-allowed.txt" "$build" || { [ "$rc" != 0 ] || rc=1; }
exit "$rc"
