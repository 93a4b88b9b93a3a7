#!/usr/bin/env bash
# README's static build configures as README writes it (issue 53): `cmake -S . -B b -DHPCLAUNCH_STATIC=ON`, with no
# other flag, generates (the test suite, which links the shared libraries, is left out by itself). Asking for the
# tests beside it is refused in one line, before anything is generated. (t0720 builds and runs the static binary.)
source "$(dirname "$0")/lib.sh"
command -v cmake >/dev/null || skip "no cmake"
cd "$test_tmp"
cmake -S "$HPCLAUNCH_SOURCE_DIR" -B b -DHPCLAUNCH_STATIC=ON >"$test_tmp/out" 2>&1 || fail "README's static configure failed: $(cat "$test_tmp/out")"
assert_contains "$(cat "$test_tmp/out")" "Generating done" "the static configure"
assert_eq OFF "$(sed -n 's/^HPCLAUNCH_BUILD_TESTS:BOOL=//p' b/CMakeCache.txt)" "the tests beside a static launcher"
rc=0
cmake -S "$HPCLAUNCH_SOURCE_DIR" -B b2 -DHPCLAUNCH_STATIC=ON -DHPCLAUNCH_BUILD_TESTS=ON >"$test_tmp/out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "a static build with its tests was configured"
assert_contains "$(tr '\n' ' ' <"$test_tmp/out" | tr -s ' ')" "HPCLAUNCH_STATIC builds the launcher alone, and the test suite links the shared libraries: drop -DHPCLAUNCH_BUILD_TESTS=ON" "the refusal"
[ ! -f b2/build.ninja ] && [ ! -f b2/Makefile ] || fail "the refused configure generated a build"
