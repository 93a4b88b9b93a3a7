#!/usr/bin/env bash
# The unit tests built with AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer (HPCLAUNCH_SANITIZE,
# cmake/Sanitizers.cmake) and run: any finding fails the run. Its own build directory (BUILD/sanitize, kept between
# runs; ccache when installed), the launcher's layers and the unit tests only: no trainer, no plot.
# docs/fuzzing.md says what it costs.
source "$(dirname "$0")/lib.sh"

build=${HPCLAUNCH_SANITIZE_BUILD_DIR:-$HPCLAUNCH_BUILD_DIR/sanitize}
use_ccache "$HPCLAUNCH_SOURCE_DIR"
# -O0 and line tables only: the shortest build (the unit tests run in seconds either way), traces that still
# name file:line.
cmake -S "$HPCLAUNCH_SOURCE_DIR" -B "$build" -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS_SANITIZE="-O0 -g1" \
  -DHPCLAUNCH_SANITIZE=ON -DHPCLAUNCH_BUILD_TRAINER=OFF -DHPCLAUNCH_PLOT=OFF -DHPCLAUNCH_INSTALL_TORCHRUN=OFF \
  "${ccache_launcher[@]}" >"$test_tmp/configure.log" 2>&1 || fail "configure failed: $(tail -n 20 "$test_tmp/configure.log")"
cmake --build "$build" -j "$(nproc)" --target hpclaunch_unit_tests >"$test_tmp/build.log" 2>&1 ||
  fail "the sanitizer build failed: $(grep -m 5 -E 'error' "$test_tmp/build.log" || tail -n 20 "$test_tmp/build.log")"
prepared

# halt_on_error/abort_on_error: the first finding ends the run with a non-zero exit and its report.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
rc=0
"$build/tests/hpclaunch_unit_tests" --no-version >"$test_tmp/unit.log" 2>&1 || rc=$?
if [ $rc -ne 0 ]; then
  grep -m 5 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY:|ERROR:' "$test_tmp/unit.log" >&2 || true
  fail "the unit tests under ASan + UBSan exited $rc: $(tail -n 30 "$test_tmp/unit.log")"
fi
note "$(grep -m 1 -E '^\[doctest\] test cases:' "$test_tmp/unit.log")"
echo "ok"
