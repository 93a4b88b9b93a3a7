#!/usr/bin/env bash
# The unit tests built with AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer and run: any finding
# fails the run. They are built in the fuzz build (BUILD/fuzz, kept between runs; ccache when installed): clang
# with ASan, UBSan and libFuzzer's coverage in every library (HPCLAUNCH_FUZZ, cmake/Sanitizers.cmake), which t0065
# runs the fuzz targets from, so the launcher's layers are instrumented and compiled once for both. No trainer, no
# plot. docs/fuzzing.md says what it costs.
source "$(dirname "$0")/lib.sh"

build=$HPCLAUNCH_BUILD_DIR/fuzz
configure_fuzz_build "$HPCLAUNCH_SOURCE_DIR" "$build" >"$test_tmp/configure.log" 2>&1 ||
  fail "configure failed: $(tail -n 20 "$test_tmp/configure.log")"
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
